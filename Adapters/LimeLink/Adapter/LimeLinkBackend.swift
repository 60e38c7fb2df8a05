import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

extension BackendID {
    /// LimeLink.
    public static let limeLink: BackendID = "limelink"
}

/// LimeLink, as its SDK speaks to its server: link resolution (project subdomains, direct API
/// paths, the legacy resolver for the app's own domains), deferred deep links, and stats.
///
/// ```swift
/// let client = DeepLinkClient(backend: LimeLinkBackend(try .init(apiKey: "lk_live_…")))
/// ```
///
/// Where LimeLink's own SDK is wrong, this adapter is right: `www.limelink.org` links are direct
/// links; hosts compare case-insensitively; link suffixes are percent-encoded (no crash on spaces
/// or unicode); `full_request_url` and the legacy `path` are fully encoded; the HTTP status of a
/// resolve is respected for errors (a body with a string `uri` still means "resolved"); the link's
/// own query parameters are kept; stats say `first_run` for the first link of an install; and a
/// deferred match survives a failed second step. LimeLink has no event or link-creation API, so
/// `track` and `createLink` throw `.unsupported` with this backend.
public struct LimeLinkBackend: LinkEventObservingBackend {
    /// Where LimeLink is and which domains and schemes are the app's.
    public let configuration: Configuration

    /// A backend for the LimeLink project `configuration` describes.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    public var id: BackendID { .limeLink }

    public var appSchemes: Set<String> { configuration.appSchemes }

    public var secrets: [String] { [configuration.apiKey] }

    /// LimeLink's SDK's data (``LimeLinkSDKImporter``).
    public var previousSDKImporters: [any PreviousSDKImporter] { [LimeLinkSDKImporter()] }

    public func canHandle(_ url: URL) -> Bool {
        let domain = configuration.providerDomain
        return HostPattern.claims(
            url, hosts: configuration.linkDomains.union([domain, "*." + domain]), schemes: configuration.appSchemes)
    }

    /// An app-scheme URL with no host (`acme:`, `acme://`, which open the app and nothing
    /// more) names no LimeLink link: it is delivered as it is, without a request.
    public func resolveOnDevice(_ link: ParsedLink) -> DeepLink? {
        let url = link.url
        guard url.host?.isEmpty ?? true, let scheme = url.scheme?.lowercased(), configuration.appSchemes.contains(scheme) else {
            return nil
        }
        return localLink(for: url, parsed: link, reason: .onDevice)
    }

    // MARK: Resolve

    public func resolve(_ parsed: ParsedLink, context: BackendContext) async throws -> DeepLink {
        let url = parsed.url
        guard let route = LimeLinkEndpoints.route(for: url, providerDomain: configuration.providerDomain) else {
            throw DeepLinkError(.invalidURL, "A LimeLink link needs a host.", backend: id, url: url)
        }
        switch route {
        case .unresolvable:
            throw DeepLinkError(.notFound, "This LimeLink URL names no link.", backend: id, url: url)
        case .direct(let suffix):
            return try await resolveDynamicLink(suffix: suffix, project: nil, headers: [:], url: url, parsed: parsed, context: context)
        case .projectHost(let project):
            return try await resolveDynamicLink(suffix: project, project: project, headers: [:], url: url, parsed: parsed, context: context)
        case .projectLink(let project, let suffix):
            let forwarded = await forwardedHeaders(project: project, scheme: parsed.scheme, context: context)
            return try await resolveDynamicLink(
                suffix: suffix, project: project, headers: forwarded, url: url, parsed: parsed, context: context)
        case .legacy(let subdomain, let path):
            let request = HTTPRequest(
                method: .get, url: LimeLinkEndpoints.legacy(configuration.legacyResolveURL, subdomain: subdomain, path: path))
            let response = try await api.send(request, "the legacy resolve", url: url, accepting: ProviderAPI.anyStatus, context: context)
            let decoded = try decode(LimeLinkLegacyResponse.self, from: response, what: "the legacy resolve", url: url, context: context)
            guard let target = decoded.deeplinkURL else {
                throw LimeLinkMapping.unresolved(response, url: url, now: context.clock.currentDate)
            }
            return try LimeLinkMapping.resolvedLink(target, url: url, parsed: parsed, suffix: nil, project: subdomain, via: "legacy")
        }
    }

    /// What LimeLink's SDK reads from the URL itself (§3, §8): the link's suffix (the short
    /// code) and project, and the query of an `original-url` a custom-scheme link carries.
    public func localLink(for url: URL, parsed: ParsedLink, reason: DeepLink.LocalReason) -> DeepLink {
        LimeLinkMapping.localLink(
            url: url, parsed: parsed, route: LimeLinkEndpoints.route(for: url, providerDomain: configuration.providerDomain), reason: reason
        )
    }

    /// The HEAD on the project host, for the five request-context headers LimeLink's edge
    /// reflects. A failed HEAD does not stop the resolve: it goes on without them.
    private func forwardedHeaders(project: String, scheme: String, context: BackendContext) async -> HTTPHeaders {
        guard let url = LimeLinkEndpoints.head(project: project, providerDomain: configuration.providerDomain, scheme: scheme) else {
            return [:]
        }
        do {
            let response = try await context.transport.send(HTTPRequest(method: .head, url: url))
            var headers = HTTPHeaders()
            for name in LimeLinkEndpoints.forwardedHeaders {
                if let value = response.headers[name] { headers[name] = value }
            }
            return headers
        } catch {
            context.logger.info(
                "The LimeLink header fetch failed (\(DeepLinkError.wrapping(error, as: .network, "HEAD failed").code)); resolving without it."
            )
            return [:]
        }
    }

    private func resolveDynamicLink(
        suffix: String, project: String?, headers: HTTPHeaders, url: URL, parsed: ParsedLink, context: BackendContext
    ) async throws -> DeepLink {
        var requestHeaders = LimeLinkEndpoints.jsonHeaders
        for field in headers { requestHeaders[field.name] = field.value }
        let request = HTTPRequest(
            method: .get,
            url: LimeLinkEndpoints.dynamicLink(
                base: configuration.apiBaseURL, suffix: suffix, fullRequestURL: url.absoluteString, setup: false),
            headers: requestHeaders)
        let response = try await api.send(request, "the resolve request", url: url, accepting: ProviderAPI.anyStatus, context: context)
        let decoded = try decode(LimeLinkResolveResponse.self, from: response, what: "the resolve request", url: url, context: context)
        guard let uri = decoded.uri else {
            throw LimeLinkMapping.unresolved(response, url: url, now: context.clock.currentDate)
        }
        return try LimeLinkMapping.resolvedLink(uri, url: url, parsed: parsed, suffix: suffix, project: project, via: "dynamic_link")
    }

    /// A resolve body: JSON (whatever the status), or, for a 2xx, a decoding error; an error
    /// status with a body that is not JSON is classified by its status.
    private func decode<Body: Decodable>(
        _ type: Body.Type, from response: HTTPResponse, what: String, url: URL, context: BackendContext
    ) throws -> Body {
        do {
            return try api.decode(Body.self, from: response, what, url: url)
        } catch  where !response.isSuccess {
            throw LimeLinkMapping.unresolved(response, url: url, now: context.clock.currentDate)
        }
    }

    /// Send, status, decode: LimeLink's API as every call here makes it. A resolve's body is
    /// read whatever the status; an answer that names no link is "unresolved".
    private var api: ProviderAPI {
        ProviderAPI(backend: .limeLink, name: "LimeLink") { response, what, url, now in
            url.map { LimeLinkMapping.unresolved(response, url: $0, now: now) }
                ?? ProviderAPI.defaultFailure(name: "LimeLink", backend: .limeLink, for: response, what, url: nil, now: now)
        }
    }

    // MARK: Deferred

    static let pendingMatchKey = "pendingDeferredMatch"

    public func matchInstall(context: BackendContext) async throws -> InstallMatch {
        let pending: LimeLinkPendingMatch
        if let stored = context.storage.value(LimeLinkPendingMatch.self, forKey: Self.pendingMatchKey) {
            pending = stored
        } else {
            let screen = LimeLinkMapping.screenPoints(context.device)
            let found = try await deferredStep(
                LimeLinkDeferredResponse.self, step: "match",
                url: LimeLinkEndpoints.deferred(
                    base: configuration.apiBaseURL, width: screen.width, height: screen.height,
                    userAgent: LimeLinkMapping.userAgent(context.device)),
                context: context)
            guard let suffix = found.suffix, !suffix.isEmpty else { return .organic() }
            pending = LimeLinkPendingMatch(suffix: suffix, fullRequestURL: found.fullRequestURL)
            // The server uses a match up once; keep it until the second step has succeeded.
            context.storage.set(pending, forKey: Self.pendingMatchKey)
        }
        let resolved = try await deferredStep(
            LimeLinkResolveResponse.self, step: "resolve",
            url: LimeLinkEndpoints.dynamicLink(
                base: configuration.apiBaseURL, suffix: pending.suffix, fullRequestURL: pending.fullRequestURL, setup: true),
            context: context)
        guard let uri = resolved.uri else {
            throw api.decodingError("the deferred resolve", status: 200, underlying: DeepLinkError(.decoding, "no uri", backend: id))
        }
        let match = try LimeLinkMapping.deferredMatch(
            uri: uri, suffix: pending.suffix, fullRequestURL: pending.fullRequestURL, providerDomain: configuration.providerDomain)
        context.storage.set(LimeLinkPendingMatch?.none, forKey: Self.pendingMatchKey)
        return match
    }

    /// One deferred step: a GET that must answer exactly 200 with a body that decodes.
    private func deferredStep<Body: Decodable>(
        _ type: Body.Type, step: String, url: URL, context: BackendContext
    ) async throws -> Body {
        try await api.fetch(
            Body.self, HTTPRequest(method: .get, url: url, headers: LimeLinkEndpoints.jsonHeaders), "the deferred \(step)",
            accepting: 200...200, otherwise: { response, what, _, now in LimeLinkMapping.deferredFailure(response, what, now: now) },
            context: context)
    }

    // MARK: Stats

    static let firstRunSentKey = "statsFirstRunSent"

    /// After a link LimeLink resolved was delivered: `POST api/v1/stats/event`, `first_run` for
    /// the install's first, `rerun` after. Failures are logged and change nothing else.
    public func didPublish(_ event: DeepLinkEvent, at date: Date, context: BackendContext) async throws {
        guard case .link(let link) = event, link.provider == id, link.origin != .deferred, link.resolution == .server,
            let uri = link.destination
        else {
            return
        }
        let firstRun = context.storage.value(Bool.self, forKey: Self.firstRunSentKey) != true
        guard let body = LimeLinkMapping.statsRequest(for: uri, apiKey: configuration.apiKey, firstRun: firstRun),
            let data = try? api.encode(body)
        else { return }
        let request = HTTPRequest(
            method: .post, url: LimeLinkEndpoints.stats(base: configuration.apiBaseURL), headers: LimeLinkEndpoints.jsonHeaders,
            body: data)
        do {
            // Not sent again, as LimeLink's SDK does; a 401 or 403 reaches the app as a rejected key.
            _ = try await api.send(
                request, "the stats event", accepting: 200...200,
                otherwise: { response, what, _, now in
                    response.serverError(
                        "LimeLink answered \(response.status) to \(what); it is not sent again.", backend: .limeLink, now: now)
                }, context: context)
        } catch let error as DeepLinkError where error.status != nil {
            throw error
        } catch {
            throw DeepLinkError.wrapping(error, as: .network, "The LimeLink stats event was not sent.", backend: id)
        }
        if firstRun { context.storage.set(true, forKey: Self.firstRunSentKey) }
    }
}
