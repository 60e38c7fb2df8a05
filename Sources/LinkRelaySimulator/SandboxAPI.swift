import Foundation
import LinkRelay

/// One of the four providers the Sandbox serves; its raw value is its path prefix
/// (`/linkforty`, `/limelink`, `/dynalinks`, `/paylisher`) and its name in the admin API.
public enum SandboxProvider: String, Sendable, Hashable, Codable, CaseIterable {
    /// LinkForty, at `/linkforty`.
    case linkForty = "linkforty"
    /// LimeLink, at `/limelink`.
    case limeLink = "limelink"
    /// Dynalinks, at `/dynalinks`.
    case dynalinks
    /// Paylisher, at `/paylisher`.
    case paylisher
}

/// The Sandbox's settings: the hosts it answers for and the keys it expects. The defaults are
/// made-up values; start the sandbox with your app's own hosts and keys so your Debug build
/// only changes its transport.
public struct SandboxSettings: Sendable, Hashable, Codable {
    /// LinkForty's link and API host. Default `go.sandbox.test`.
    public var linkFortyHost: String
    /// The key LimeLink's stats endpoint expects as `private_key`. Default `lk_sandbox_key`.
    public var limeLinkAPIKey: String
    /// LimeLink's link domain (projects are its subdomains). Default `limelink.org`.
    public var limeLinkDomain: String
    /// The client key Dynalinks expects as a bearer token. Default `dyn_sandbox_key`.
    public var dynalinksAPIKey: String
    /// The Dynalinks project's link host. Default `sandbox.dynalinks.app`.
    public var dynalinksProjectHost: String
    /// Dynalinks' API host. Default `dynalinks.app`.
    public var dynalinksAPIHost: String
    /// The key Paylisher expects (bearer token for the deferred match, `api_key` in batches).
    /// Default `phc_sandbox_key`.
    public var paylisherAPIKey: String
    /// Paylisher's campaign API host. Default `api.paylisher.com`.
    public var paylisherAPIHost: String
    /// Paylisher's short-link hosts. Default `link.paylisher.com`, `link.usepublisher.com`.
    public var paylisherShortLinkHosts: Set<String>
    /// Paylisher's analytics host. Default `us.i.paylisher.com`.
    public var paylisherAnalyticsHost: String

    /// Settings; every parameter has the default listed on its field.
    public init(
        linkFortyHost: String = "go.sandbox.test", limeLinkAPIKey: String = "lk_sandbox_key", limeLinkDomain: String = "limelink.org",
        dynalinksAPIKey: String = "dyn_sandbox_key", dynalinksProjectHost: String = "sandbox.dynalinks.app",
        dynalinksAPIHost: String = "dynalinks.app", paylisherAPIKey: String = "phc_sandbox_key",
        paylisherAPIHost: String = "api.paylisher.com",
        paylisherShortLinkHosts: Set<String> = ["link.paylisher.com", "link.usepublisher.com"],
        paylisherAnalyticsHost: String = "us.i.paylisher.com"
    ) {
        self.linkFortyHost = linkFortyHost.lowercased()
        self.limeLinkAPIKey = limeLinkAPIKey
        self.limeLinkDomain = limeLinkDomain.lowercased()
        self.dynalinksAPIKey = dynalinksAPIKey
        self.dynalinksProjectHost = dynalinksProjectHost.lowercased()
        self.dynalinksAPIHost = dynalinksAPIHost.lowercased()
        self.paylisherAPIKey = paylisherAPIKey
        self.paylisherAPIHost = paylisherAPIHost.lowercased()
        self.paylisherShortLinkHosts = Set(paylisherShortLinkHosts.map { $0.lowercased() })
        self.paylisherAnalyticsHost = paylisherAnalyticsHost.lowercased()
    }

    /// The host a provider's path-prefixed requests are served as.
    public func apiHost(of provider: SandboxProvider) -> String {
        switch provider {
        case .linkForty: linkFortyHost
        case .limeLink: limeLinkDomain
        case .dynalinks: dynalinksAPIHost
        case .paylisher: paylisherAPIHost
        }
    }

    /// Every host a provider answers for (`*.` for every subdomain).
    public func hosts(of provider: SandboxProvider) -> [String] {
        switch provider {
        case .linkForty: [linkFortyHost]
        case .limeLink: [limeLinkDomain, "*." + limeLinkDomain]
        case .dynalinks: [dynalinksAPIHost]
        case .paylisher: [paylisherAPIHost, paylisherAnalyticsHost] + paylisherShortLinkHosts.sorted()
        }
    }
}

/// The bodies and answers of the Sandbox's admin API (`/_admin/…`), shared by the server and
/// ``SandboxAdminClient``.
public enum SandboxAPI {
    /// `GET /_admin`: where each provider is served and with which settings.
    public struct Description: Sendable, Hashable, Codable {
        /// One provider: its path-prefixed base URL and the hosts it answers for.
        public struct Provider: Sendable, Hashable, Codable {
            /// Which provider.
            public var name: SandboxProvider
            /// `{sandbox}/{name}`: a base URL for adapters that take one.
            public var baseURL: URL
            /// The hosts routed to it by `X-Forwarded-Host` or `Host`.
            public var hosts: [String]
        }

        /// The sandbox's own address.
        public var baseURL: URL
        /// The hosts and keys the sandbox runs with.
        public var settings: SandboxSettings
        /// The four providers, in the order of `SandboxProvider.allCases`.
        public var providers: [Provider]

        /// The provider `name`'s entry.
        public func provider(_ name: SandboxProvider) -> Provider? {
            providers.first { $0.name == name }
        }
    }

    /// `POST /_admin/linkforty/links`.
    public struct LinkFortyLink: Sendable, Hashable, Codable {
        /// The link's short code: the last path segment of `https://{host}/{shortCode}`.
        public var shortCode: String
        /// A template's slug, for links of the form `https://{host}/{templateSlug}/{shortCode}`.
        public var templateSlug: String?
        /// Where a browser without the app goes; default `https://example.com/`.
        public var originalURL: String?
        /// The in-app path the resolve and the deferred answer carry (`/products/42`).
        public var deepLinkPath: String?
        /// The app's URL scheme (`acme`), for LinkForty's app-scheme destinations.
        public var appScheme: String?
        /// The link's UTM parameters (`source`, `medium`, `campaign`, …).
        public var utmParameters: [String: String]?
        /// Custom parameters the app receives with the link.
        public var deepLinkParameters: [String: JSONValue]?

        /// A link; only `shortCode` is required.
        public init(
            shortCode: String, templateSlug: String? = nil, originalURL: String? = nil, deepLinkPath: String? = nil,
            appScheme: String? = nil, utmParameters: [String: String]? = nil, deepLinkParameters: [String: JSONValue]? = nil
        ) {
            self.shortCode = shortCode
            self.templateSlug = templateSlug
            self.originalURL = originalURL
            self.deepLinkPath = deepLinkPath
            self.appScheme = appScheme
            self.utmParameters = utmParameters
            self.deepLinkParameters = deepLinkParameters
        }
    }

    /// `POST /_admin/limelink/links`: `https://{project}.{domain}/link/{suffix}` → `uri`.
    public struct LimeLinkLink: Sendable, Hashable, Codable {
        /// The project's subdomain; `nil` for a project-less link on the bare domain.
        public var project: String?
        /// The last path segment, `/link/{suffix}`.
        public var suffix: String
        /// What the link opens in the app (`abc123app://promo/summer`).
        public var uri: String

        /// A link `suffix` in `project` that opens `uri`.
        public init(project: String?, suffix: String, uri: String) {
            self.project = project
            self.suffix = suffix
            self.uri = uri
        }
    }

    /// `POST /_admin/dynalinks/links`: a link at `path` on the project host.
    public struct DynalinksLink: Sendable, Hashable, Codable {
        /// The link's path on the project host (`/product/shoes`).
        public var path: String
        /// The web page the link stands for; the app receives it as the link's destination.
        public var url: String
        /// The value the app receives to route on; default the path.
        public var deepLinkValue: String?

        /// A link at `path` standing for `url`.
        public init(path: String, url: String, deepLinkValue: String? = nil) {
            self.path = path
            self.url = url
            self.deepLinkValue = deepLinkValue
        }
    }

    /// `POST /_admin/paylisher/links`: a campaign, resolvable by its key.
    public struct PaylisherCampaign: Sendable, Hashable, Codable {
        /// The campaign's key, as links and the resolve endpoint name it (`SUMMER`).
        public var keyName: String
        /// The campaign's title.
        public var title: String?
        /// The app URL the campaign opens (`diyetim://products/42`).
        public var scheme: String?
        /// The campaign's universal link, when it has one.
        public var iosUniversalUrl: String?
        /// The journey the campaign belongs to.
        public var jid: String?

        /// A campaign `keyName`; every other field is optional.
        public init(keyName: String, title: String? = nil, scheme: String? = nil, iosUniversalUrl: String? = nil, jid: String? = nil) {
            self.keyName = keyName
            self.title = title
            self.scheme = scheme
            self.iosUniversalUrl = iosUniversalUrl
            self.jid = jid
        }
    }

    /// `POST /_admin/{provider}/clicks`: a tap on a link in a phone's browser before install,
    /// recorded the way that provider's landing page records it.
    ///
    /// `url` is the link tapped (LinkForty: its last path segment is the short code; Dynalinks:
    /// its path; LimeLink: the whole URL), except for Paylisher, whose bridge page stores the
    /// destination the app will receive, with `campaignKey` and `jid`.
    public struct WebClick: Sendable, Hashable, Codable {
        /// The link tapped (for Paylisher, the app URL handed on).
        public var url: URL
        /// The phone, as its browser shows it.
        public var device: DeviceInfo
        /// The phone's public IP; default the sandbox's client IP.
        public var ip: String?
        /// Paylisher only: the campaign the tap belongs to.
        public var campaignKey: String?
        /// Paylisher only: the campaign's journey.
        public var jid: String?

        /// A tap on `url` from `device`; see each property.
        public init(url: URL, device: DeviceInfo, ip: String? = nil, campaignKey: String? = nil, jid: String? = nil) {
            self.url = url
            self.device = device
            self.ip = ip
            self.campaignKey = campaignKey
            self.jid = jid
        }
    }

    /// `GET /_admin/{provider}/events`: what the provider stored (LinkForty's events,
    /// LimeLink's stats, Paylisher's batch events; Dynalinks has none).
    public struct ReceivedEvent: Sendable, Hashable, Codable {
        /// The event's name, as the provider stored it.
        public var name: String
        /// Its properties, as the provider stored them.
        public var properties: [String: JSONValue]

        /// An event `name` with `properties`.
        public init(name: String, properties: [String: JSONValue]) {
            self.name = name
            self.properties = properties
        }
    }

    /// `PUT /_admin/faults`: a fault on a route (see ``/LinkRelaySimulatorCore/ProviderSimulator/Fault``).
    public struct FaultRule: Sendable, Hashable, Codable {
        /// The path as the provider sees it, without the sandbox's prefix.
        public var path: String
        /// Only this method; any when `nil`.
        public var method: HTTPMethod?
        /// Only this provider host; any when `nil`.
        public var host: String?
        /// What the route answers instead of the provider.
        public var fault: ProviderSimulator.Fault
        /// Only the next this many requests; until cleared when `nil`.
        public var times: Int?

        /// A `fault` on `path`; see each property.
        public init(path: String, method: HTTPMethod? = nil, host: String? = nil, fault: ProviderSimulator.Fault, times: Int? = nil) {
            self.path = path
            self.method = method
            self.host = host
            self.fault = fault
            self.times = times
        }
    }

    /// `PUT /_admin/client-ip`: the address requests come from unless they carry
    /// `X-Forwarded-For`.
    public struct ClientIP: Sendable, Hashable, Codable {
        /// The address, as the provider would see it (`203.0.113.10`).
        public var ip: String

        /// Requests from `ip`.
        public init(ip: String) { self.ip = ip }
    }

    /// An admin API error: `{"error": "…"}` with a 4xx status.
    public struct Failure: Sendable, Hashable, Codable {
        /// What went wrong, in a sentence.
        public var error: String

        /// A failure saying `error`.
        public init(error: String) {
            self.error = error
        }
    }
}

/// Scripting a sandbox, in process (``Sandbox``) or over its admin API (``SandboxAdminClient``),
/// with the same calls.
public protocol SandboxControl: Sendable {
    /// Where each provider is served.
    func describe() async throws -> SandboxAPI.Description
    /// Creates a LinkForty link.
    func createLink(_ link: SandboxAPI.LinkFortyLink) async throws
    /// Creates a LimeLink link.
    func createLink(_ link: SandboxAPI.LimeLinkLink) async throws
    /// Creates a Dynalinks link.
    func createLink(_ link: SandboxAPI.DynalinksLink) async throws
    /// Creates a Paylisher campaign.
    func createCampaign(_ campaign: SandboxAPI.PaylisherCampaign) async throws
    /// Records a tap on a link before install (see ``SandboxAPI/WebClick``).
    func recordWebClick(_ click: SandboxAPI.WebClick, on provider: SandboxProvider) async throws
    /// The events `provider` stored, in order.
    func receivedEvents(_ provider: SandboxProvider) async throws -> [SandboxAPI.ReceivedEvent]
    /// Makes a route misbehave (see ``SandboxAPI/FaultRule``).
    func setFault(_ rule: SandboxAPI.FaultRule) async throws
    /// Removes every fault: each provider answers normally again.
    func clearFaults() async throws
    /// Sets the address requests come from (a phone that moved to another network, say).
    func setClientIP(_ ip: String) async throws
    /// Every request the emulations received, in order, as they saw them (provider host, no
    /// sandbox prefix).
    func receivedRequests() async throws -> [HTTPRequest]
}
