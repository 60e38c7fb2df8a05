import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

extension BackendID {
    /// Paylisher.
    public static let paylisher: BackendID = "paylisher"
}

/// Paylisher's deep links: campaign links resolved by their key, short links on their own host,
/// and the deferred match by device fingerprint.
///
/// ```swift
/// let client = DeepLinkClient(backend: PaylisherBackend(try .init(apiKey: "phc_…", appSchemes: ["diyetim"])))
/// ```
///
/// Where Paylisher's SDK is wrong, this adapter is right: only the app's schemes and domains
/// (and the short-link hosts) are claimed; a bare single path segment is a campaign key only on a
/// short-link host; keys are encoded; a campaign payload with a plain string `_id` still decodes.
public struct PaylisherBackend: EventBatchingBackend, LinkEventObservingBackend {
    /// Where Paylisher is, which links are the app's, and how events travel.
    public let configuration: Configuration
    /// When each link held for sign-in was held, by link id: for "… Completed" and its peers.
    private let holds = Locked([String: Date]())

    /// A backend for the Paylisher project `configuration` describes.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    public var id: BackendID { .paylisher }

    public var appSchemes: Set<String> { configuration.appSchemes }

    public var secrets: [String] { [configuration.apiKey] }

    /// Paylisher's SDK's data (``PaylisherSDKImporter``): its `distinct_id` goes on, its unsent
    /// events are sent once.
    public var previousSDKImporters: [any PreviousSDKImporter] { [PaylisherSDKImporter()] }

    /// The app's schemes and universal-link domains, and the short-link hosts, but not their
    /// `…/bridge` pages, which are web pages, not app links.
    public func canHandle(_ url: URL) -> Bool {
        let hosts = configuration.linkDomains.union(configuration.shortLinkHosts)
        guard HostPattern.claims(url, hosts: hosts, schemes: configuration.appSchemes) else { return false }
        let isShortHost = url.host.map { configuration.shortLinkHosts.contains($0.lowercased()) } ?? false
        return !(isShortHost && url.lastPathComponent == "bridge")
    }

    /// A keyed link is resolved (short links on their own host, others at the campaign API); a
    /// link without a key is delivered as it is, with no lookup.
    public func resolve(_ parsed: ParsedLink, context: BackendContext) async throws -> DeepLink {
        let url = parsed.url
        let link = try PaylisherMapping.parse(parsed, configuration: configuration)
        guard let key = link.campaignKey else { return PaylisherMapping.deepLink(link, campaign: nil) }
        let endpoint: URL?
        if link.isShortLink, let host = link.parsed.host {
            endpoint = PaylisherEndpoints.shortLinkResolve(host: host, scheme: link.parsed.scheme, key: key)
        } else {
            endpoint = PaylisherEndpoints.campaignResolve(base: configuration.campaignResolveBaseURL, key: key)
        }
        guard let endpoint else { throw DeepLinkError(.invalidURL, "The campaign key cannot be looked up.", backend: id, url: url) }
        let campaign = try await api.fetch(
            PaylisherCampaign.self, HTTPRequest(method: .get, url: endpoint), "the campaign lookup", url: url, context: context)
        return PaylisherMapping.deepLink(link, campaign: campaign)
    }

    /// The link as Paylisher's SDK reads it on the device (§3.2–3.3): the campaign key from
    /// `keyName`/`key`/`k` or the path (`/campaign/KEY`, `/c/KEY`, a short link's code), the
    /// campaign id, journey and source, the raw destination, and the auth requirement.
    public func localLink(for url: URL, parsed: ParsedLink, reason: DeepLink.LocalReason) -> DeepLink {
        guard let link = try? PaylisherMapping.parse(parsed, configuration: configuration) else {
            return parsed.deepLink(provider: id, resolution: .local(reason))
        }
        var local = PaylisherMapping.deepLink(link, campaign: nil)
        local.resolution = .local(reason)
        return local
    }

    /// Send, status, decode: Paylisher's APIs as every call here makes them.
    private var api: ProviderAPI {
        ProviderAPI(backend: .paylisher, name: "Paylisher") { response, what, url, now in
            PaylisherMapping.error(for: response, what, url: url, now: now)
        }
    }

    static let distinctIDKey = "distinctId"

    /// How events travel: ``Configuration-swift.struct/eventBatching``.
    public var eventBatching: EventBatching { configuration.eventBatching }

    /// `POST {analytics host}/batch`, gzip-compressed, all of `events` in one request, with the
    /// install's anonymous `distinct_id` (kept in the client's storage) and the session's
    /// campaign. Any 2xx is success. As in Paylisher's SDK (§7), a 5xx, a 3xx (a redirect
    /// LinkRelay's transport did not follow, thrown as `.network`) and a 413 keep the events;
    /// any other 4xx drops them.
    public func send(_ events: [ConversionEvent], context: BackendContext) async throws {
        let distinctID =
            context.storage.value(String.self, forKey: Self.distinctIDKey)
            ?? {
                // Anonymous until identify, a UUIDv7 as Paylisher's SDK makes it (§7); an id stored
                // by an earlier version is kept.
                let created = UUID.version7(at: context.clock.currentDate).uuidString.uppercased()
                context.storage.set(created, forKey: Self.distinctIDKey)
                return created
            }()
        let session = configuration.autoRegisterCampaignKeys ? context.sessionAttribution : nil
        let batch = PaylisherBatch(
            apiKey: configuration.apiKey,
            batch: events.map { PaylisherMapping.batchEvent($0, distinctID: distinctID, device: context.device, session: session) },
            sentAt: ISO8601Timestamp.string(from: context.clock.currentDate, fractional: true))
        let request = HTTPRequest(
            method: .post, url: PaylisherEndpoints.batch(host: configuration.analyticsHost), headers: PaylisherEndpoints.batchHeaders,
            body: Gzip.compress(try api.encode(batch)))
        // A redirect the transport did not follow is a .network error: the events are kept.
        _ = try await api.send(
            request, "the event batch",
            otherwise: { response, what, url, now in
                let error = PaylisherMapping.error(for: response, what, url: url, now: now)
                guard (300...399).contains(response.status) else { return error }
                return DeepLinkError(
                    .network, error.message + " (a redirect; the events are kept)", backend: .paylisher, status: response.status)
            }, context: context)
    }

    /// `GET {deferred endpoint}?fingerprint=…`: `"status": "match"` with a `url` is the deferred
    /// link (with `keyName` and `jid` added when missing); any other status is organic. With
    /// ``Configuration-swift.struct/deferredDeepLinksEnabled`` off, organic without a request.
    public func matchInstall(context: BackendContext) async throws -> InstallMatch {
        guard configuration.deferredDeepLinksEnabled else { return .organic() }
        let idfa = context.device.advertisingID?.uuidString
        let request = HTTPRequest(
            method: .get,
            url: PaylisherEndpoints.deferred(
                endpoint: configuration.deferredEndpoint, fingerprint: PaylisherMapping.fingerprint(context.device), idfa: idfa),
            headers: PaylisherEndpoints.deferredHeaders(apiKey: configuration.apiKey, idfa: idfa))
        let response = try await api.send(request, "the deferred match", context: context)
        let decoded: PaylisherDeferredResponse
        do {
            decoded = try PaylisherDeferredResponse(json: response.body)
        } catch {
            throw api.decodingError("the deferred match", status: response.status, underlying: error)
        }
        guard decoded.status == "match" else { return .organic(PaylisherMapping.attribution(decoded, matched: false)) }
        let attribution = PaylisherMapping.attribution(decoded, matched: true)
        guard let matched = URL.absolute(decoded.url) else {
            return InstallMatch(attribution: attribution, link: nil)
        }
        let enriched = PaylisherMapping.enrich(matched, campaignKey: decoded.campaignKey, jid: decoded.jid)
        guard let link = try? PaylisherMapping.parse(enriched, configuration: configuration) else {
            return InstallMatch(attribution: attribution, link: nil)
        }
        // As Paylisher's auto-handling does, the matched link's campaign is looked up; a failed
        // lookup leaves the link as matched.
        let matchedLink = PaylisherMapping.deepLink(link, campaign: nil, origin: .deferred)
        var deepLink = (try? await resolve(link.parsed, context: context)) ?? matchedLink
        deepLink.origin = .deferred
        deepLink.id = matchedLink.id
        deepLink.resolution = .server
        if let text = decoded.url { deepLink.metadata["deferred_url"] = .string(text) }
        // When the link was clicked, as LinkForty's adapter reports it too.
        deepLink.clickedAt = attribution.clickedAt
        var answer: [String: JSONValue] = [:]
        if let key = decoded.campaignKey { answer["campaign_key"] = .string(key) }
        if let jid = decoded.jid { answer["jid"] = .string(jid) }
        if let window = decoded.attributionWindow { answer["attribution_window_seconds"] = .int(window) }
        if let clicked = decoded.clickTimestamp { answer["click_timestamp"] = .string(clicked) }
        if let method = decoded.attributionMethod { answer["attribution_method"] = .string(method) }
        if let metadata = decoded.metadata { answer["metadata"] = .object(metadata) }
        deepLink.metadata["deferred"] = .object(answer)
        return InstallMatch(attribution: attribution, link: deepLink)
    }

    // MARK: Lifecycle events

    /// Paylisher's lifecycle events for what the client published, queued through the client's
    /// persisted event queue: "Deep Link Opened" when a link is delivered or held for sign-in;
    /// "… Completed", "… Cancelled", "… Timeout" when a held link is released or dropped;
    /// "… Failed" for a link that could not be parsed; the "Deferred Deep Link" events for the
    /// install outcome; and the diagnostics when enabled.
    public func didPublish(_ event: DeepLinkEvent, at now: Date, context: BackendContext) async {
        var events: [PaylisherMapping.LifecycleEvent] = []
        let capture = configuration.captureDeepLinkEvents
        switch event {
        case .authenticationRequired(let link):
            holds.withLock { $0[link.id] = now }
            if capture { events.append(PaylisherMapping.opened(link)) }
            if configuration.captureDeepLinkDiagnostics, let diagnostic = PaylisherMapping.diagnostic(link, at: now) {
                events.append(diagnostic)
            }
        case .link(let link) where PaylisherMapping.isUnparseable(link):
            if capture { events.append(PaylisherMapping.failed(link.url)) }
        case .link(let link):
            if let heldAt = holds.withLock({ $0.removeValue(forKey: link.id) }) {
                if capture {
                    events.append(PaylisherMapping.holdEnded(link, as: "Deep Link Completed", after: now.timeIntervalSince(heldAt)))
                }
            } else {
                if capture { events.append(PaylisherMapping.opened(link)) }
                if configuration.captureDeepLinkDiagnostics, let diagnostic = PaylisherMapping.diagnostic(link, at: now) {
                    events.append(diagnostic)
                }
            }
        case .pendingLinkDropped(let link, let reason):
            let heldAt = holds.withLock { $0.removeValue(forKey: link.id) } ?? now
            let name: String? =
                switch reason {
                case .cancelled: "Deep Link Cancelled"
                case .expired: "Deep Link Timeout"
                case .replaced: nil  // Paylisher's SDK replaces a held link silently
                }
            if capture, let name { events.append(PaylisherMapping.holdEnded(link, as: name, after: now.timeIntervalSince(heldAt))) }
        case .failure(let error):
            if capture, error.code == .invalidURL, let url = error.url { events.append(PaylisherMapping.failed(url)) }
        case .install(let outcome):
            if configuration.deferredDeepLinksEnabled, let deferred = PaylisherMapping.deferred(outcome) { events.append(deferred) }
        }
        for lifecycle in events {
            var properties = lifecycle.properties
            for (key, value) in configuration.additionalEventProperties { properties[key] = value }
            await context.enqueueEvent(ConversionEvent(name: lifecycle.name, properties: properties, timestamp: now))
        }
    }
}
