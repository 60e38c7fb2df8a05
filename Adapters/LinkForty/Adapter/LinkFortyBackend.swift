import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

extension BackendID {
    /// LinkForty (Cloud, or a self-hosted LinkForty Core).
    public static let linkForty: BackendID = "linkforty"
}

/// LinkForty, as its server really speaks: install attribution, link resolution, events and
/// revenue, and link creation.
///
/// ```swift
/// let client = DeepLinkClient(
///     backend: LinkFortyBackend(try .init(baseURL: URL(string: "https://go.acme.app")!, apiKey: key))
/// )
/// ```
///
/// Where LinkForty's own iOS SDK and its server disagree, this adapter follows the server:
/// an organic install (`"deepLinkData": {}`) is `.organic`, not an error; `clickedAt` is read
/// with and without milliseconds; parameter values of any JSON type are kept; any 2xx to an
/// event is success; the install is reported once per install, not on every launch (the client
/// restores the outcome); transport failures are retried; a path prefix in the base URL is kept.
public struct LinkFortyBackend: EventTrackingBackend, LinkCreatingBackend, LateAppleAdsTokenBackend {
    /// Where LinkForty is and how the backend talks to it.
    public let configuration: Configuration

    /// A backend for the LinkForty server `configuration` describes.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    public var id: BackendID { .linkForty }

    /// Send, status, decode: LinkForty's API as every call here makes it.
    private var api: ProviderAPI {
        ProviderAPI(backend: .linkForty, name: "LinkForty") { response, what, url, now in
            LinkFortyMapping.error(for: response, what, url: url, now: now)
        }
    }

    public var appSchemes: Set<String> { configuration.appSchemes }

    public var secrets: [String] { configuration.apiKey.map { [$0] } ?? [] }

    /// A LinkRelay Server admin key (`lr_admin_…`) in an app: anyone who takes the app apart can
    /// then manage the project (its links' destinations, its keys' templates and apps). An app
    /// takes an SDK key (`lr_sdk_…`). The key itself is never named.
    public var configurationWarnings: [String] {
        guard let key = configuration.apiKey, key.hasPrefix("lr_admin_") else { return [] }
        return [
            "LinkFortyBackend was given a LinkRelay Server admin key (lr_admin_…): whoever unpacks the app can then change every link and key of the project. Give the app an SDK key (linkrelay-server keys create --scope sdk)."
        ]
    }

    /// LinkForty's SDK's data (``LinkFortySDKImporter``): its `installId` goes on.
    public var previousSDKImporters: [any PreviousSDKImporter] { [LinkFortySDKImporter(baseURL: configuration.baseURL)] }

    /// `true`: LinkForty names the install (the `installId` events need) only in its install
    /// answer.
    public var needsInstallReport: Bool { true }

    /// Links, deferred links, events and link creation, and the Apple Ads token in the install
    /// report (`appleAdsToken`: LinkRelay Server stores it; LinkForty Core strips the key) and
    /// after it (LinkRelay Server's `POST /api/sdk/v1/install/apple-ads-token`; Core answers
    /// 404 and the late token is dropped).
    public var capabilities: BackendCapabilities {
        [.linkResolution, .deferredLinks, .eventTracking, .linkCreation, .appleAdsToken, .lateAppleAdsToken]
    }

    public func canHandle(_ url: URL) -> Bool {
        HostPattern.claims(url, hosts: configuration.linkDomains, schemes: configuration.appSchemes)
    }

    // MARK: Resolve (E2/E3)

    public func resolve(_ parsed: ParsedLink, context: BackendContext) async throws -> DeepLink {
        let url = parsed.url
        guard parsed.origin == .universalLink else {
            // An app-scheme link is what LinkForty's redirect opens: the route itself, read as
            // LinkForty's SDK reads a link on the device.
            return localLink(for: url, parsed: parsed, reason: .onDevice)
        }
        let segments = LinkFortyEndpoints.linkSegments(of: parsed, base: configuration.baseURL)
        guard let code = segments.last else {
            throw DeepLinkError(.notFound, "The link has no short code to resolve.", backend: id, url: url)
        }
        let templateSlug = segments.count >= 2 ? segments[segments.count - 2] : nil
        let request = HTTPRequest(
            method: .get,
            url: LinkFortyEndpoints.resolve(
                configuration.baseURL, templateSlug: templateSlug, code: code,
                fingerprint: context.fingerprintWithheld ? [] : LinkFortyMapping.fingerprintQuery(device: context.device)),
            headers: headers(context))
        let data = try await api.fetch(LinkFortyLinkData.self, request, "the resolve request", url: url, context: context)
        return LinkFortyMapping.resolvedLink(data, url: url, parsed: parsed, templateSlug: templateSlug)
    }

    /// The local parse LinkForty's SDK falls back to (§7.3): the short code is the link's last
    /// path segment (after the base URL's own path; for an app-scheme link, after its host), the
    /// template slug is not kept; UTM values
    /// (first wins) and custom parameters (last wins, empty values kept) come from the query as
    /// the core reads them, without LinkForty's reserved names (`utm_*`, `fp_*`, `lf_click`,
    /// §12.1).
    public func localLink(for url: URL, parsed: ParsedLink, reason: DeepLink.LocalReason) -> DeepLink {
        var link = parsed.deepLink(provider: id, resolution: .local(reason))
        link.parameters = LinkFortyMapping.customParameters(link.parameters)
        if parsed.origin == .universalLink {
            link.shortCode = LinkFortyEndpoints.linkSegments(of: parsed, base: configuration.baseURL).last
        } else {
            // The SDK's URLParser takes the last of `url.pathComponents`, where a custom
            // scheme's host is not a segment: `myapp://deep/link123` gives `link123`,
            // `myapp://cart` none.
            link.shortCode = url.pathComponents.last { $0 != "/" }
        }
        return link
    }

    // MARK: Install (E1)

    public func matchInstall(context: BackendContext) async throws -> InstallMatch {
        var body = LinkFortyMapping.installRequest(
            device: context.device, appName: appName(context.device), attributionWindowHours: configuration.attributionWindowHours)
        // A certain link's token, only for a link of this server (a RoutingBackend's other
        // members' links name clicks elsewhere).
        if let certain = context.certainLink, canHandle(certain.url) { body.clickToken = certain.clickToken }
        body.appleAdsToken = context.appleAdsToken
        if context.fingerprintWithheld {
            // The user has not allowed tracking: nothing a fingerprint match uses beyond the
            // user agent the protocol requires, and LinkRelay Server is told not to match on it.
            body.timezone = nil
            body.language = nil
            body.screenWidth = nil
            body.screenHeight = nil
            body.deviceId = nil
            body.fingerprint = false
        }
        let request = HTTPRequest(
            method: .post, url: LinkFortyEndpoints.url(configuration.baseURL, path: LinkFortyEndpoints.installPath),
            headers: headers(context), body: try api.encode(body))
        let decoded = try await api.fetch(LinkFortyInstallResponse.self, request, "the install report", context: context)
        var match = LinkFortyMapping.installMatch(decoded, base: configuration.baseURL)
        if let link = match.link, link.metadata["deepLinkPath"] == nil, let code = link.shortCode {
            match.link = await routed(link, code: code, context: context)
        }
        return match
    }

    /// The deferred link with its link's route. Core's install answer names the clicked link's
    /// short code but not its `deepLinkPath` or `appScheme` (§3.4), so a deferred link would
    /// route as `/<short code>`; one resolve request (E2, the one-segment form, which finds the
    /// link whatever its template) fetches them, so the deferred link has the path, destination
    /// and parameters a tap on the link would give. It runs inside the install match, so within
    /// the install deadline, and once: a failure keeps the link as the install answer gave it,
    /// with `metadata["deferredRouteError"]` saying why, and never fails the match (a retried
    /// match would report the install again). No fingerprint goes with it: Core records a
    /// click for every resolve, and this one is not a tap.
    private func routed(_ link: DeepLink, code: String, context: BackendContext) async -> DeepLink {
        let request = HTTPRequest(
            method: .get, url: LinkFortyEndpoints.resolve(configuration.baseURL, templateSlug: nil, code: code, fingerprint: []),
            headers: headers(context))
        do {
            let data = try await api.fetch(LinkFortyLinkData.self, request, "the resolve request", url: link.url, context: context)
            return LinkFortyMapping.routedDeferredLink(link, by: data)
        } catch {
            let reason = DeepLinkError.wrapping(error, as: .network, "The deferred link's route could not be fetched.", backend: id)
            context.logger.warning(
                "The deferred link \(code) has no route (the install answer names none, and resolving it failed: \(reason.description)); it is delivered with its short code as its path."
            )
            var link = link
            link.metadata["deferredRouteError"] = .string(reason.description)
            return link
        }
    }

    // MARK: A late Apple Ads token (LinkRelay Server)

    /// `POST /api/sdk/v1/install/apple-ads-token` with `{"installId", "appleAdsToken"}`. A 404
    /// (LinkForty Core has no such route; LinkRelay Server does not know the install) is
    /// `.unsupported`: the token has nowhere to go.
    public func addAppleAdsToken(_ token: String, toInstall installID: String, context: BackendContext) async throws {
        let request = try post(
            LinkFortyLateAppleAdsToken(installId: installID, appleAdsToken: token), to: LinkFortyEndpoints.lateAppleAdsTokenPath,
            context: context)
        do {
            _ = try await api.send(request, "the late Apple Ads token", context: context)
        } catch let error as DeepLinkError where error.status == 404 {
            throw DeepLinkError(
                .unsupported, "This LinkForty server takes no Apple Ads token after the install report (404).", backend: id, status: 404)
        }
    }

    // MARK: Events (E4)

    public func send(_ event: ConversionEvent, context: BackendContext) async throws {
        guard let installID = context.installID else {
            throw DeepLinkError(
                .notStarted, "LinkForty needs the install id from the install report before events can be sent.",
                backend: id)
        }
        let request = HTTPRequest(
            method: .post, url: LinkFortyEndpoints.url(configuration.baseURL, path: LinkFortyEndpoints.eventPath),
            headers: headers(context), body: try api.encode(LinkFortyMapping.eventRequest(event, installID: installID)))
        // Any 2xx is success, whatever the body: Core answers {"eventId", "acknowledged"}.
        _ = try await api.send(request, "the event", context: context)
    }

    // MARK: Link creation (E5/E6)

    public func createLink(_ request: LinkRequest, context: BackendContext) async throws -> CreatedLink {
        guard configuration.apiKey != nil else {
            throw DeepLinkError(
                .invalidConfiguration, "LinkForty link creation needs an API key (configuration apiKey).", backend: id)
        }
        let body = LinkFortyMapping.createLinkRequest(request)
        if request.templateID != nil {
            guard body.originalUrl != nil else {
                throw DeepLinkError(
                    .invalidArgument,
                    "LinkForty needs the link's web URL (fallbackURL, sent as originalUrl) to create a link from a template.",
                    backend: id)
            }
            let row = try await api.fetch(
                LinkFortyLinkRow.self, post(body, to: LinkFortyEndpoints.linksPath, context: context), "the link creation", context: context
            )
            let slugPath = request.templateSlug.map { "/\($0)" } ?? ""
            return CreatedLink(
                url: LinkFortyEndpoints.url(configuration.baseURL, path: slugPath + "/" + row.shortCode),
                shortCode: row.shortCode, linkID: row.id)
        }
        let created = try await api.fetch(
            LinkFortyCreatedLink.self, post(body, to: LinkFortyEndpoints.sdkLinksPath, context: context), "the link creation",
            context: context)
        guard let url = URL.absolute(created.url) else {
            throw DeepLinkError(.decoding, "LinkForty returned a link that is not a URL.", backend: id)
        }
        return CreatedLink(url: url, shortCode: created.shortCode, linkID: created.linkId, deduplicated: created.deduplicated)
    }

    // MARK: Pieces

    /// A POST of `body` as JSON to `path`, with LinkForty's headers.
    private func post<Body: Encodable>(_ body: Body, to path: String, context: BackendContext) throws -> HTTPRequest {
        HTTPRequest(
            method: .post, url: LinkFortyEndpoints.url(configuration.baseURL, path: path), headers: headers(context),
            body: try api.encode(body))
    }

    private func headers(_ context: BackendContext) -> HTTPHeaders {
        LinkFortyEndpoints.headers(
            apiKey: configuration.apiKey, userAgent: LinkFortyMapping.userAgent(device: context.device, appName: appName(context.device)))
    }

    /// The configured name, else the device's (``/LinkRelay/DeviceInfo/appName``: the bundle's display
    /// name on a real device), else `App`.
    private func appName(_ device: DeviceInfo) -> String {
        configuration.appName ?? device.appName ?? "App"
    }
}
