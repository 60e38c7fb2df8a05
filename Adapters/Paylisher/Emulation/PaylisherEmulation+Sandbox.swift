import Foundation
import LinkRelay
import LinkRelaySimulatorCore

extension SandboxProvider {
    /// Paylisher, at `/paylisher`.
    public static let paylisher = SandboxProvider(rawValue: "paylisher")
}

extension SandboxSetting {
    /// The key Paylisher expects (bearer token for the deferred match, `api_key` in batches).
    /// Default `phc_sandbox_key`.
    public static let paylisherAPIKey = SandboxSetting(
        provider: .paylisher, key: "apiKey", kind: .text, default: ["phc_sandbox_key"], option: "--paylisher-key",
        summary: "the key Paylisher expects")
    /// Paylisher's campaign API host. Default `api.paylisher.com`.
    public static let paylisherAPIHost = SandboxSetting(
        provider: .paylisher, key: "apiHost", kind: .host, default: ["api.paylisher.com"], summary: "Paylisher's campaign API host")
    /// Paylisher's short-link hosts. Default `link.paylisher.com`, `link.usepublisher.com`.
    public static let paylisherShortLinkHosts = SandboxSetting(
        provider: .paylisher, key: "shortLinkHosts", kind: .hosts, default: ["link.paylisher.com", "link.usepublisher.com"],
        summary: "Paylisher's short-link hosts")
    /// Paylisher's analytics host. Default `us.i.paylisher.com`.
    public static let paylisherAnalyticsHost = SandboxSetting(
        provider: .paylisher, key: "analyticsHost", kind: .host, default: ["us.i.paylisher.com"], summary: "Paylisher's analytics host")
}

extension SandboxSettings {
    /// The key Paylisher expects (bearer token for the deferred match, `api_key` in batches).
    /// Default `phc_sandbox_key`.
    public var paylisherAPIKey: String {
        get { self[.paylisherAPIKey] }
        set { self[.paylisherAPIKey] = newValue }
    }

    /// Paylisher's campaign API host. Default `api.paylisher.com`.
    public var paylisherAPIHost: String {
        get { self[.paylisherAPIHost] }
        set { self[.paylisherAPIHost] = newValue }
    }

    /// Paylisher's short-link hosts. Default `link.paylisher.com`, `link.usepublisher.com`.
    public var paylisherShortLinkHosts: Set<String> {
        get { Set(self[values: .paylisherShortLinkHosts]) }
        set { self[values: .paylisherShortLinkHosts] = newValue.sorted() }
    }

    /// Paylisher's analytics host. Default `us.i.paylisher.com`.
    public var paylisherAnalyticsHost: String {
        get { self[.paylisherAnalyticsHost] }
        set { self[.paylisherAnalyticsHost] = newValue }
    }
}

extension SandboxAPI {
    /// `POST /_admin/paylisher/links`: a campaign, resolvable by its key.
    public struct PaylisherCampaign: SandboxAdminLink, Hashable {
        /// The provider this body is for: `.paylisher`.
        public static let sandboxProvider: SandboxProvider = .paylisher

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
}

extension PaylisherEmulation: SandboxEmulation {
    /// `.paylisher`.
    public static let sandboxProvider: SandboxProvider = .paylisher
    /// The key, the API host, the short-link hosts and the analytics host.
    public static let sandboxSettings: [SandboxSetting] = [
        .paylisherAPIKey, .paylisherAPIHost, .paylisherShortLinkHosts, .paylisherAnalyticsHost,
    ]

    /// The campaign API host.
    public static func apiHost(in settings: SandboxSettings) -> String { settings.paylisherAPIHost }

    /// The API host, the analytics host and the short-link hosts.
    public static func hosts(in settings: SandboxSettings) -> [String] {
        [settings.paylisherAPIHost, settings.paylisherAnalyticsHost] + settings.paylisherShortLinkHosts.sorted()
    }

    /// Paylisher on `simulator` with the settings' key and hosts.
    public static func add(to simulator: ProviderSimulator, settings: SandboxSettings) -> PaylisherEmulation {
        simulator.addPaylisher(
            apiKey: settings.paylisherAPIKey, apiHost: settings.paylisherAPIHost, shortLinkHosts: settings.paylisherShortLinkHosts,
            analyticsHost: settings.paylisherAnalyticsHost)
    }

    /// Creates the campaign, as ``createCampaign(keyName:title:scheme:iosUniversalUrl:jid:metaData:)`` does.
    public func createLink(_ link: SandboxAPI.PaylisherCampaign) throws {
        createCampaign(keyName: link.keyName, title: link.title, scheme: link.scheme, iosUniversalUrl: link.iosUniversalUrl, jid: link.jid)
    }

    /// Records the tap with the click's campaign key and journey.
    public func recordWebClick(_ click: SandboxAPI.WebClick, ip: String, at date: Date) throws {
        try recordWebClick(url: click.url, campaignKey: click.campaignKey, jid: click.jid, from: click.device, ip: ip, at: date)
    }

    /// The batch events received, with `distinct_id` and `uuid` among their properties.
    public var sandboxEvents: [SandboxAPI.ReceivedEvent] {
        events.map { event in
            var properties = event.properties
            properties["distinct_id"] = .string(event.distinctID)
            properties["uuid"] = .string(event.uuid)
            return .init(name: event.event, properties: properties)
        }
    }
}

extension SandboxControl {
    /// Creates a Paylisher campaign: `createLink(_:)` with a campaign.
    public func createCampaign(_ campaign: SandboxAPI.PaylisherCampaign) async throws {
        try await createLink(campaign)
    }
}

extension EmulationDirectory {
    /// The running Paylisher emulation, to script its links and clicks and read what it received.
    public var paylisher: PaylisherEmulation { emulation(PaylisherEmulation.self) }
}
