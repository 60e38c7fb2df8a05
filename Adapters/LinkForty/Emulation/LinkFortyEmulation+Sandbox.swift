import Foundation
import LinkRelay
import LinkRelaySimulatorCore

extension SandboxProvider {
    /// LinkForty, at `/linkforty`.
    public static let linkForty = SandboxProvider(rawValue: "linkforty")
}

extension SandboxSetting {
    /// LinkForty's link and API host. Default `go.sandbox.test`.
    public static let linkFortyHost = SandboxSetting(
        provider: .linkForty, key: "host", kind: .host, default: ["go.sandbox.test"], option: "--linkforty-host",
        summary: "LinkForty's link and API host")
}

extension SandboxSettings {
    /// LinkForty's link and API host. Default `go.sandbox.test`.
    public var linkFortyHost: String {
        get { self[.linkFortyHost] }
        set { self[.linkFortyHost] = newValue }
    }
}

extension SandboxAPI {
    /// `POST /_admin/linkforty/links`.
    public struct LinkFortyLink: SandboxAdminLink, Hashable {
        /// The provider this body is for: `.linkForty`.
        public static let sandboxProvider: SandboxProvider = .linkForty

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
}

extension LinkFortyEmulation: SandboxEmulation {
    /// `.linkForty`.
    public static let sandboxProvider: SandboxProvider = .linkForty
    /// The host, `SandboxSetting.linkFortyHost`.
    public static let sandboxSettings: [SandboxSetting] = [.linkFortyHost]

    /// The link host, which is also the API host.
    public static func apiHost(in settings: SandboxSettings) -> String { settings.linkFortyHost }

    /// The link host.
    public static func hosts(in settings: SandboxSettings) -> [String] { [settings.linkFortyHost] }

    /// LinkForty on `simulator` at the settings' host.
    public static func add(to simulator: ProviderSimulator, settings: SandboxSettings) -> LinkFortyEmulation {
        simulator.addLinkForty(host: settings.linkFortyHost)
    }

    /// Creates `link`, as `createLink(shortCode:…)` does with the same fields.
    public func createLink(_ link: SandboxAPI.LinkFortyLink) throws {
        createLink(
            shortCode: link.shortCode, templateSlug: link.templateSlug, originalURL: link.originalURL ?? "https://example.com/",
            deepLinkPath: link.deepLinkPath, appScheme: link.appScheme, utmParameters: link.utmParameters,
            deepLinkParameters: link.deepLinkParameters)
    }

    /// The events received, with their data as properties.
    public var sandboxEvents: [SandboxAPI.ReceivedEvent] {
        events.map { .init(name: $0.name, properties: $0.data) }
    }
}

extension EmulationDirectory {
    /// The running LinkForty emulation, to script its links and clicks and read what it received.
    public var linkForty: LinkFortyEmulation { emulation(LinkFortyEmulation.self) }
}
