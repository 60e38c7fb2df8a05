import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

extension PaylisherBackend {
    /// How to reach Paylisher.
    ///
    /// ```swift
    /// let backend = PaylisherBackend(try .init(apiKey: "phc_…", appSchemes: ["diyetim"], authRequiredDestinations: ["wallet"]))
    /// ```
    ///
    /// Unlike Paylisher's SDK, which accepts any URL, the app's schemes, its universal-link
    /// domains and the short-link hosts decide which links this backend claims.
    public struct Configuration: Sendable, Hashable, CustomStringConvertible {
        /// The project API key (`phc_…`): a Bearer token for the deferred match and `api_key` in
        /// analytics batches; never logged.
        public let apiKey: String
        /// The analytics host events are batched to (`{host}/batch`). Default
        /// `https://us.i.paylisher.com` (EU: `https://eu.i.paylisher.com`).
        public let analyticsHost: URL
        /// Where campaign keys are resolved. Default `https://api.paylisher.com`.
        public let campaignResolveBaseURL: URL
        /// The short-link hosts; their links are resolved on their own host. Default
        /// `link.paylisher.com`, `link.usepublisher.com`.
        public let shortLinkHosts: Set<String>
        /// The app's custom schemes (`diyetim`).
        public let appSchemes: Set<String>
        /// The app's universal-link domains.
        public let linkDomains: Set<String>
        /// The deferred-match endpoint (a full URL). Default
        /// `https://link.paylisher.com/v1/deferred-deeplink`.
        public let deferredEndpoint: URL
        /// Destinations (a custom-scheme link's host, a universal link's trimmed path) that need a
        /// signed-in user; such links are held by the client's sign-in gate.
        public let authRequiredDestinations: Set<String>
        /// Whether "Deep Link Opened", "… Completed", "… Cancelled", "… Timeout" and "… Failed"
        /// are reported. Default `true`. (The deferred events are always reported.)
        public let captureDeepLinkEvents: Bool
        /// Whether the diagnostic `deeplink_resolved` and `deeplink_resolve_failed` events are
        /// reported. Default `false`.
        public let captureDeepLinkDiagnostics: Bool
        /// Whether events are stamped with the campaign of the link that opened the session
        /// (`campaign_key`, `deeplink_key`, `campaign_source`). Default `true`.
        public let autoRegisterCampaignKeys: Bool
        /// Merged into every lifecycle event; these keys win over the event's own.
        public let additionalEventProperties: [String: JSONValue]
        /// Whether the deferred match is asked for: Paylisher's `deferredDeepLinkConfig.enabled`.
        /// Default `true`. When `false`, as in Paylisher's SDK, no request is made and no deferred
        /// event is sent: the install is organic at once. (The client's
        /// ``/LinkRelay/DeepLinkClient/Configuration-swift.struct/deferredDeepLinksEnabled`` is different:
        /// it still asks, for the attribution, and only withholds the link.)
        public let deferredDeepLinksEnabled: Bool
        /// How events travel (§7): up to `maxBatchSize` per `/batch` request (default 50), sent
        /// once `flushAt` wait (20) or every `flushIntervalSeconds` (30), and on
        /// ``/LinkRelay/DeepLinkClient/flushEvents()``; after a failure automatic sending pauses
        /// `min(failures × 5 s, 30 s)`; a 413 halves the batch size and `flushAt`. Stored
        /// `clamped()`. ``/LinkRelay/EventBatching/oneByOne`` sends each event as it is
        /// tracked.
        public let eventBatching: EventBatching

        /// `https://us.i.paylisher.com` (the US region).
        public static let defaultAnalyticsHost = URL(string: "https://us.i.paylisher.com")!
        /// `https://api.paylisher.com`.
        public static let defaultCampaignResolveBaseURL = URL(string: "https://api.paylisher.com")!
        /// `link.paylisher.com` and `link.usepublisher.com`.
        public static let defaultShortLinkHosts: Set<String> = ["link.paylisher.com", "link.usepublisher.com"]
        /// `https://link.paylisher.com/v1/deferred-deeplink`.
        public static let defaultDeferredEndpoint = URL(string: "https://link.paylisher.com/v1/deferred-deeplink")!

        /// A validated configuration; see each property for its default. Host names and schemes are
        /// compared in lower case; ``eventBatching`` is stored clamped.
        ///
        /// - Throws: ``/LinkRelay/DeepLinkError`` `.invalidConfiguration` naming the field: an empty API key, a
        ///   URL that is not HTTPS (plain HTTP only on `localhost`, `127.0.0.1`, `::1`).
        public init(
            apiKey: String,
            analyticsHost: URL = Configuration.defaultAnalyticsHost,
            campaignResolveBaseURL: URL = Configuration.defaultCampaignResolveBaseURL,
            shortLinkHosts: Set<String> = Configuration.defaultShortLinkHosts,
            appSchemes: Set<String> = [],
            linkDomains: Set<String> = [],
            deferredEndpoint: URL = Configuration.defaultDeferredEndpoint,
            authRequiredDestinations: Set<String> = [],
            captureDeepLinkEvents: Bool = true,
            captureDeepLinkDiagnostics: Bool = false,
            autoRegisterCampaignKeys: Bool = true,
            additionalEventProperties: [String: JSONValue] = [:],
            deferredDeepLinksEnabled: Bool = true,
            eventBatching: EventBatching = EventBatching()
        ) throws {
            try ConfigurationValidation.apiKey(apiKey, field: "apiKey", backend: .paylisher)
            try ConfigurationValidation.baseURL(analyticsHost, field: "analyticsHost", backend: .paylisher)
            try ConfigurationValidation.baseURL(campaignResolveBaseURL, field: "campaignResolveBaseURL", backend: .paylisher)
            try ConfigurationValidation.baseURL(deferredEndpoint, field: "deferredEndpoint", backend: .paylisher)
            self.apiKey = apiKey
            self.analyticsHost = analyticsHost
            self.campaignResolveBaseURL = campaignResolveBaseURL
            self.shortLinkHosts = Set(shortLinkHosts.map { $0.lowercased() })
            self.appSchemes = Set(appSchemes.map { $0.lowercased() })
            self.linkDomains = Set(linkDomains.map { $0.lowercased() })
            self.deferredEndpoint = deferredEndpoint
            self.authRequiredDestinations = authRequiredDestinations
            self.captureDeepLinkEvents = captureDeepLinkEvents
            self.captureDeepLinkDiagnostics = captureDeepLinkDiagnostics
            self.autoRegisterCampaignKeys = autoRegisterCampaignKeys
            self.additionalEventProperties = additionalEventProperties
            self.deferredDeepLinksEnabled = deferredDeepLinksEnabled
            self.eventBatching = eventBatching.clamped()
        }

        /// Never shows the key.
        public var description: String {
            "PaylisherBackend.Configuration(apiKey: [redacted], analyticsHost: \(analyticsHost.absoluteString), campaignResolveBaseURL: \(campaignResolveBaseURL.absoluteString), shortLinkHosts: \(shortLinkHosts.sorted()), appSchemes: \(appSchemes.sorted()), linkDomains: \(linkDomains.sorted()), deferredEndpoint: \(deferredEndpoint.absoluteString), authRequiredDestinations: \(authRequiredDestinations.sorted()), deferredDeepLinksEnabled: \(deferredDeepLinksEnabled), eventBatching: \(eventBatching))"
        }
    }
}
