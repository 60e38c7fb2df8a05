import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

extension BackendID {
    /// Dynalinks.
    public static let dynalinks: BackendID = "dynalinks"
}

/// Dynalinks, as its SDK speaks to its server: the deferred fingerprint match and link
/// attribution for opened links.
///
/// ```swift
/// let client = DeepLinkClient(
///     backend: DynalinksBackend(try .init(apiKey: key, linkDomains: ["acme.dynalinks.app"]))
/// )
/// ```
///
/// Where Dynalinks' SDK is wrong, this adapter is right: opening a link (even one whose
/// attribution fails) never cancels the install's deferred check; the client's first-launch rules
/// decide what is delivered (never a deferred link on top of a direct one, and once per
/// install); an unknown `confidence` or a bad URL field does not fail a whole answer; unknown links
/// still open, parsed on the device. Dynalinks' SDK has no event or link-creation API, so `track`
/// and `createLink` throw `.unsupported` with this backend.
public struct DynalinksBackend: DeepLinkBackend {
    /// Where Dynalinks is and which domains are the project's.
    public let configuration: Configuration

    /// A backend for the Dynalinks project `configuration` describes.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    public var id: BackendID { .dynalinks }

    public var appSchemes: Set<String> { configuration.appSchemes }

    public var secrets: [String] { [configuration.apiKey] }

    /// Dynalinks' SDK's data (``DynalinksSDKImporter``): its cached deferred result is not
    /// delivered again.
    public var previousSDKImporters: [any PreviousSDKImporter] {
        [DynalinksSDKImporter(projectHost: configuration.linkDomains.sorted().first { !$0.hasPrefix("*.") })]
    }

    public func canHandle(_ url: URL) -> Bool {
        HostPattern.claims(url, hosts: configuration.linkDomains, schemes: configuration.appSchemes)
    }

    /// `POST /links/attribute` with the URL exactly as opened. `{"matched": false}` is an unknown
    /// link: the client delivers it parsed on the device.
    public func resolve(_ parsed: ParsedLink, context: BackendContext) async throws -> DeepLink {
        let url = parsed.url
        let result = try await post(
            DynalinksAttributeRequest(url: url.absoluteString), to: DynalinksEndpoints.attribute(configuration.baseURL),
            what: "the link attribution", url: url, context: context)
        guard result.matched, let data = result.link else {
            throw DeepLinkError(.notFound, "Dynalinks does not know this link.", backend: id, url: url)
        }
        return DynalinksMapping.link(data, url: url, parsed: parsed, origin: parsed.origin)
    }

    /// Dynalinks' SDK reads nothing from a URL on the device (it has no local parse); so that
    /// the app finds the same field with or without Dynalinks, a link on a Dynalinks domain
    /// whose path is one segment (`/{shortened_path}`) gets it as its short code.
    public func localLink(for url: URL, parsed: ParsedLink, reason: DeepLink.LocalReason) -> DeepLink {
        var link = parsed.deepLink(provider: id, resolution: .local(reason))
        if parsed.origin == .universalLink, parsed.pathSegments.count == 1 { link.shortCode = parsed.pathSegments[0] }
        return link
    }

    /// `POST /fingerprints/match`. `{"matched": false}` is an organic install. On a simulator,
    /// unless ``Configuration/allowSimulator``, no request is made and the outcome says why.
    public func matchInstall(context: BackendContext) async throws -> InstallMatch {
        if context.device.isSimulator, !configuration.allowSimulator {
            throw DeepLinkError(
                .rejected, "The deferred match is skipped on a simulator; set allowSimulator to run it there.", backend: id)
        }
        let result = try await post(
            DynalinksMatchRequest(fingerprint: DynalinksMapping.fingerprint(context.device)),
            to: DynalinksEndpoints.match(configuration.baseURL), what: "the fingerprint match", url: nil, context: context)
        let projectHost = configuration.linkDomains.sorted().first { !$0.hasPrefix("*.") }
        return DynalinksMapping.installMatch(result, projectHost: projectHost)
    }

    /// Send, status, decode: Dynalinks' API as every call here makes it.
    private var api: ProviderAPI {
        ProviderAPI(backend: .dynalinks, name: "Dynalinks") { response, what, url, now in
            DynalinksMapping.error(for: response, what, url: url, now: now)
        }
    }

    private func post<Body: Encodable>(
        _ body: Body, to endpoint: URL, what: String, url: URL?, context: BackendContext
    ) async throws -> DynalinksResult {
        let request = HTTPRequest(
            method: .post, url: endpoint, headers: DynalinksEndpoints.headers(apiKey: configuration.apiKey), body: try api.encode(body))
        return try await api.fetch(DynalinksResult.self, request, what, url: url, context: context)
    }
}
