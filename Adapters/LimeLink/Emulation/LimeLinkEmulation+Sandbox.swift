import Foundation
import LinkRelay
import LinkRelaySimulatorCore

extension SandboxProvider {
    /// LimeLink, at `/limelink`.
    public static let limeLink = SandboxProvider(rawValue: "limelink")
}

extension SandboxSetting {
    /// The key LimeLink's stats endpoint expects as `private_key`. Default `lk_sandbox_key`.
    public static let limeLinkAPIKey = SandboxSetting(
        provider: .limeLink, key: "apiKey", kind: .text, default: ["lk_sandbox_key"], option: "--limelink-key",
        summary: "the key LimeLink's stats endpoint expects")
    /// LimeLink's link domain (projects are its subdomains). Default `limelink.org`.
    public static let limeLinkDomain = SandboxSetting(
        provider: .limeLink, key: "domain", kind: .host, default: ["limelink.org"], option: "--limelink-domain",
        summary: "LimeLink's link domain; projects are its subdomains")
}

extension SandboxSettings {
    /// The key LimeLink's stats endpoint expects as `private_key`. Default `lk_sandbox_key`.
    public var limeLinkAPIKey: String {
        get { self[.limeLinkAPIKey] }
        set { self[.limeLinkAPIKey] = newValue }
    }

    /// LimeLink's link domain (projects are its subdomains). Default `limelink.org`.
    public var limeLinkDomain: String {
        get { self[.limeLinkDomain] }
        set { self[.limeLinkDomain] = newValue }
    }
}

extension SandboxAPI {
    /// `POST /_admin/limelink/links`: `https://{project}.{domain}/link/{suffix}` → `uri`.
    public struct LimeLinkLink: SandboxAdminLink, Hashable {
        /// The provider this body is for: `.limeLink`.
        public static let sandboxProvider: SandboxProvider = .limeLink

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
}

extension LimeLinkEmulation: SandboxEmulation {
    /// `.limeLink`.
    public static let sandboxProvider: SandboxProvider = .limeLink
    /// The key and the link domain.
    public static let sandboxSettings: [SandboxSetting] = [.limeLinkAPIKey, .limeLinkDomain]

    /// The link domain, which also serves the API.
    public static func apiHost(in settings: SandboxSettings) -> String { settings.limeLinkDomain }

    /// The link domain and each of its subdomains (the projects).
    public static func hosts(in settings: SandboxSettings) -> [String] {
        [settings.limeLinkDomain, "*." + settings.limeLinkDomain]
    }

    /// LimeLink on `simulator` with the settings' key and domain.
    public static func add(to simulator: ProviderSimulator, settings: SandboxSettings) -> LimeLinkEmulation {
        simulator.addLimeLink(apiKey: settings.limeLinkAPIKey, linkDomain: settings.limeLinkDomain)
    }

    /// Creates `link`, as ``createLink(project:suffix:uri:)`` does.
    public func createLink(_ link: SandboxAPI.LimeLinkLink) throws {
        createLink(project: link.project, suffix: link.suffix, uri: link.uri)
    }

    /// The stats events received: type, suffix, operating system and handle.
    public var sandboxEvents: [SandboxAPI.ReceivedEvent] {
        statsEvents.map { event in
            var properties: [String: JSONValue] = ["suffix": .string(event.suffix), "operating_system": .string(event.operatingSystem)]
            if let handle = event.handle { properties["handle"] = .string(handle) }
            return .init(name: event.eventType, properties: properties)
        }
    }
}

extension EmulationDirectory {
    /// The running LimeLink emulation, to script its links and clicks and read what it received.
    public var limeLink: LimeLinkEmulation { emulation(LimeLinkEmulation.self) }
}
