import Foundation
import LinkRelay
import LinkRelaySimulatorCore

extension SandboxProvider {
    /// Dynalinks, at `/dynalinks`.
    public static let dynalinks = SandboxProvider(rawValue: "dynalinks")
}

extension SandboxSetting {
    /// The client key Dynalinks expects as a bearer token. Default `dyn_sandbox_key`.
    public static let dynalinksAPIKey = SandboxSetting(
        provider: .dynalinks, key: "apiKey", kind: .text, default: ["dyn_sandbox_key"], option: "--dynalinks-key",
        summary: "the client key Dynalinks expects as a bearer token")
    /// The Dynalinks project's link host. Default `sandbox.dynalinks.app`.
    public static let dynalinksProjectHost = SandboxSetting(
        provider: .dynalinks, key: "projectHost", kind: .host, default: ["sandbox.dynalinks.app"], option: "--dynalinks-project-host",
        summary: "the Dynalinks project's link host")
    /// Dynalinks' API host. Default `dynalinks.app`.
    public static let dynalinksAPIHost = SandboxSetting(
        provider: .dynalinks, key: "apiHost", kind: .host, default: ["dynalinks.app"], summary: "Dynalinks' API host")
}

extension SandboxSettings {
    /// The client key Dynalinks expects as a bearer token. Default `dyn_sandbox_key`.
    public var dynalinksAPIKey: String {
        get { self[.dynalinksAPIKey] }
        set { self[.dynalinksAPIKey] = newValue }
    }

    /// The Dynalinks project's link host. Default `sandbox.dynalinks.app`.
    public var dynalinksProjectHost: String {
        get { self[.dynalinksProjectHost] }
        set { self[.dynalinksProjectHost] = newValue }
    }

    /// Dynalinks' API host. Default `dynalinks.app`.
    public var dynalinksAPIHost: String {
        get { self[.dynalinksAPIHost] }
        set { self[.dynalinksAPIHost] = newValue }
    }
}

extension SandboxAPI {
    /// `POST /_admin/dynalinks/links`: a link at `path` on the project host.
    public struct DynalinksLink: SandboxAdminLink, Hashable {
        /// The provider this body is for: `.dynalinks`.
        public static let sandboxProvider: SandboxProvider = .dynalinks

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
}

extension DynalinksEmulation: SandboxEmulation {
    /// `.dynalinks`.
    public static let sandboxProvider: SandboxProvider = .dynalinks
    /// The key, the project host and the API host.
    public static let sandboxSettings: [SandboxSetting] = [.dynalinksAPIKey, .dynalinksProjectHost, .dynalinksAPIHost]

    /// The API host.
    public static func apiHost(in settings: SandboxSettings) -> String { settings.dynalinksAPIHost }

    /// The API host. (Links on the project host are resolved through the API, not served.)
    public static func hosts(in settings: SandboxSettings) -> [String] { [settings.dynalinksAPIHost] }

    /// Dynalinks on `simulator` with the settings' key and hosts.
    public static func add(to simulator: ProviderSimulator, settings: SandboxSettings) -> DynalinksEmulation {
        simulator.addDynalinks(
            clientAPIKey: settings.dynalinksAPIKey, projectHost: settings.dynalinksProjectHost, apiHost: settings.dynalinksAPIHost)
    }

    /// Creates `link` on the project host.
    public func createLink(_ link: SandboxAPI.DynalinksLink) throws {
        createLink(path: link.path, url: link.url, deepLinkValue: link.deepLinkValue)
    }
}

extension EmulationDirectory {
    /// The running Dynalinks emulation, to script its links and clicks and read what it received.
    public var dynalinks: DynalinksEmulation { emulation(DynalinksEmulation.self) }
}
