import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

/// The one place where LimeLink's field names meet LinkRelay's model.
enum LimeLinkMapping {
    /// `"iOS 18_7"`: the OS name and version with `_` for `.`, as LimeLink fingerprints installs.
    static func userAgent(_ device: DeviceInfo) -> String {
        "\(device.osName) \(device.osVersion.replacing(".", with: "_"))"
    }

    /// The screen in points, truncated; `nil` when unknown.
    static func screenPoints(_ device: DeviceInfo) -> (width: Int?, height: Int?) {
        (device.screen.map { $0.width.saturatingInt }, device.screen.map { $0.height.saturatingInt })
    }

    /// A link LimeLink resolved to `uri`. The link keeps its own URL, path and query (and those
    /// of an `original-url` it carries); the `uri` is its destination.
    static func resolvedLink(
        _ uri: String, url: URL, parsed: ParsedLink, suffix: String?, project: String?, via endpoint: String,
        origin: DeepLink.Origin? = nil
    ) throws -> DeepLink {
        guard let destination = URL.absolute(uri) else {
            throw DeepLinkError(.decoding, "LimeLink resolved the link to something that is not a URL.", backend: .limeLink, url: url)
        }
        var link = parsed.deepLink(provider: .limeLink, resolution: .server, origin: origin)
        link.destination = destination
        link.shortCode = suffix
        let original = mergeOriginalURL(of: parsed, into: &link)
        var metadata: [String: JSONValue] = ["uri": .string(uri), "resolvedBy": .string(endpoint)]
        if let original { metadata["original_url"] = .string(original) }
        if let suffix { metadata["suffix"] = .string(suffix) }
        if let project { metadata["project"] = .string(project) }
        link.metadata = metadata
        return link
    }

    /// A link delivered without LimeLink's answer: the URL parsed on the device with the suffix
    /// as its short code, the project, and the parameters of an `original-url`.
    static func localLink(url: URL, parsed: ParsedLink, route: LimeLinkEndpoints.Route?, reason: DeepLink.LocalReason) -> DeepLink {
        var link = parsed.deepLink(provider: .limeLink, resolution: .local(reason))
        let original = mergeOriginalURL(of: parsed, into: &link)
        let (suffix, project): (String?, String?) =
            switch route {
            case .projectLink(let project, let suffix): (suffix, project)
            case .projectHost(let project): (project, project)
            case .direct(let suffix): (suffix, nil)
            case .legacy(let subdomain, _): (nil, subdomain)
            case .unresolvable, nil: (nil, nil)
            }
        link.shortCode = suffix
        var metadata: [String: JSONValue] = [:]
        if let suffix { metadata["suffix"] = .string(suffix) }
        if let project { metadata["project"] = .string(project) }
        if let original { metadata["original_url"] = .string(original) }
        link.metadata = metadata
        return link
    }

    /// A custom-scheme link may carry the LimeLink link it came from in `original-url`; its query
    /// items are the link's real parameters (LimeLink's SDK reads only those; the link's own
    /// other items are kept too), and the `original-url` item itself is not one: the URL is in
    /// `metadata["original_url"]`, as the SDK's `getScheme` gives it. Returns that URL.
    @discardableResult
    private static func mergeOriginalURL(of parsed: ParsedLink, into link: inout DeepLink) -> String? {
        guard let original = parsed.parameters["original-url"], let inner = try? LinkParser.parse(original) else { return nil }
        link.parameters["original-url"] = nil
        for (name, value) in inner.parameters { link.parameters[name] = value }
        if !inner.utm.isEmpty { link.utm = inner.utm }
        if let campaign = inner.campaign { link.campaign = campaign }
        return original
    }

    /// The deferred link: the clicked `full_request_url` (or, when LimeLink does not say, the
    /// link's direct URL) with its query, resolved to `uri`.
    static func deferredMatch(
        uri: String, suffix: String, fullRequestURL: String?, providerDomain: String
    ) throws -> InstallMatch {
        let clicked =
            URL.absolute(fullRequestURL)
            ?? URL(string: "https://\(providerDomain)/api/v1/app/dynamic_link/\(LimeLinkEndpoints.encodePath(suffix))")
        guard let clicked, let parsed = try? LinkParser.parse(clicked) else {
            throw DeepLinkError(.decoding, "LimeLink's deferred match named a link that is not a URL.", backend: .limeLink)
        }
        var link = try resolvedLink(
            uri, url: clicked, parsed: parsed, suffix: suffix, project: nil, via: "deferred", origin: .deferred)
        if let fullRequestURL { link.metadata["full_request_url"] = .string(fullRequestURL) }
        let attribution = InstallAttribution(
            isAttributed: true, confidence: nil, matchedFactors: ["screen", "os_version"], method: .fingerprint)
        return InstallMatch(attribution: attribution, link: link)
    }

    /// The stats body for a delivered link, from its resolved URI as LimeLink's SDK and guide
    /// do: `suffix` is the URI's first path segment and `handle` its third. `nil` when the URI
    /// has no path, as LimeLink then sends nothing.
    static func statsRequest(for uri: URL, apiKey: String, firstRun: Bool) -> LimeLinkStatsRequest? {
        let segments = uri.path.split(separator: "/").map(String.init)
        guard let suffix = segments.first, !suffix.isEmpty else { return nil }
        return LimeLinkStatsRequest(
            privateKey: apiKey, suffix: suffix, handle: segments.count > 2 ? segments[2] : nil,
            eventType: firstRun ? "first_run" : "rerun", operatingSystem: "ios")
    }

    // MARK: Errors

    /// A resolve answer without a `uri`: a 5xx or 429 is a server error (retried), another 4xx
    /// too (not retried), a 404 or a 2xx that resolved nothing means LimeLink does not know the
    /// link.
    static func unresolved(_ response: HTTPResponse, url: URL, now: Date) -> DeepLinkError {
        let message = "LimeLink did not resolve the link (HTTP \(response.status))."
        if response.isSuccess || response.status == 404 {
            return DeepLinkError(.notFound, message, backend: .limeLink, status: response.status, url: url)
        }
        return response.serverError(message, backend: .limeLink, url: url, now: now)
    }

    /// A deferred step that did not answer 200: its status, and LimeLink's body text.
    static func deferredFailure(_ response: HTTPResponse, _ what: String, now: Date) -> DeepLinkError {
        let text = String(decoding: response.body.prefix(200), as: UTF8.self)
        return response.serverError(
            "LimeLink answered \(response.status) to \(what)\(text.isEmpty ? "" : ": \(text)")",
            backend: .limeLink, now: now)
    }
}
