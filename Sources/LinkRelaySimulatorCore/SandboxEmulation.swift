import Foundation
import LinkRelay

/// One provider the Sandbox serves. Its raw value is its path prefix (`/linkforty`) and its name
/// in the admin API (`/_admin/linkforty/links`).
///
/// Each emulation declares its own (`.linkForty`, `.limeLink`, `.dynalinks`, `.paylisher`),
/// next to its ``SandboxEmulation`` conformance; `LinkRelaySimulator` lists them all as
/// `SandboxProvider.allCases`.
public struct SandboxProvider: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The name: lowercase, the path prefix without its slash.
    public let rawValue: String

    /// The provider called `rawValue` (lowercased).
    public init(rawValue: String) {
        self.rawValue = rawValue.lowercased()
    }

    public var description: String { rawValue }
}

/// One setting of one provider in the Sandbox: a host or a key, its default, and the
/// `linkrelay-sandbox` option that sets it.
public struct SandboxSetting: Sendable, Hashable {
    /// What the value is; hosts are kept lowercase.
    public enum Kind: Sendable, Hashable {
        /// One host name.
        case host
        /// Several host names.
        case hosts
        /// A key or any other text, kept as given.
        case text
    }

    /// Whose setting it is.
    public var provider: SandboxProvider
    /// Its name inside the provider's settings (`host`, `apiKey`).
    public var key: String
    /// What the value is.
    public var kind: Kind
    /// The value when nothing sets it (one element unless `kind` is ``Kind/hosts``).
    public var defaultValue: [String]
    /// The command-line option that sets it (`--linkforty-host`), when it has one.
    public var option: String?
    /// What it is, for the tool's usage text.
    public var summary: String

    /// A setting; see each property.
    public init(provider: SandboxProvider, key: String, kind: Kind, default defaultValue: [String], option: String? = nil, summary: String)
    {
        self.provider = provider
        self.key = key
        self.kind = kind
        self.defaultValue = defaultValue
        self.option = option
        self.summary = summary
    }

    func normalized(_ values: [String]) -> [String] {
        kind == .text ? values : values.map { $0.lowercased() }
    }
}

/// The Sandbox's settings: the hosts each provider answers for and the keys it expects. The
/// defaults are made-up values; start the sandbox with your app's own hosts and keys so your
/// Debug build only changes its transport.
///
/// Each provider's settings are properties its emulation module adds (`linkFortyHost`,
/// `limeLinkAPIKey`, …), each backed by a ``SandboxSetting``; a setting never set reads as its
/// default. As JSON (in `GET /_admin`) the settings are one object per provider:
/// `{"linkforty": {"host": "go.sandbox.test"}, …}`.
public struct SandboxSettings: Sendable, Hashable, Codable {
    private var providers: [String: [String: JSONValue]]

    /// Every provider at its defaults.
    public init() {
        providers = [:]
    }

    /// Reads the settings from their JSON form, one object per provider.
    public init(from decoder: any Decoder) throws {
        providers = try decoder.singleValueContainer().decode([String: [String: JSONValue]].self)
    }

    /// Writes the settings as one object per provider.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(providers)
    }

    /// The value of a one-value setting (a host or a key).
    public subscript(setting: SandboxSetting) -> String {
        get { values(of: setting).first ?? "" }
        set { self[values: setting] = [newValue] }
    }

    /// The values of a setting of several hosts.
    public subscript(values setting: SandboxSetting) -> [String] {
        get { values(of: setting) }
        set {
            let values = setting.normalized(newValue)
            providers[setting.provider.rawValue, default: [:]][setting.key] =
                setting.kind == .hosts ? .array(values.map(JSONValue.string)) : .string(values.first ?? "")
        }
    }

    /// Writes each of `settings` that is not set yet at its default, so that the JSON form
    /// lists every value in use.
    public mutating func fill(_ settings: [SandboxSetting]) {
        for setting in settings where providers[setting.provider.rawValue]?[setting.key] == nil {
            self[values: setting] = setting.defaultValue
        }
    }

    private func values(of setting: SandboxSetting) -> [String] {
        switch providers[setting.provider.rawValue]?[setting.key] {
        case .string(let value): setting.normalized([value])
        case .array(let values): setting.normalized(values.compactMap { if case .string(let text) = $0 { text } else { nil } })
        default: setting.defaultValue
        }
    }
}

/// A provider's emulation, as the Sandbox serves it: its name, settings and hosts, and its part
/// of the admin API (`/_admin/{provider}/links`, `/clicks`, `/events`).
///
/// An emulation conforms in its own folder; the Sandbox, its admin API and the
/// `linkrelay-sandbox` tool loop over `Sandbox.emulations` and name no provider.
public protocol SandboxEmulation: ProviderEmulation, WebClickRecording {
    /// The body of `POST /_admin/{provider}/links`.
    associatedtype AdminLink: SandboxAdminLink

    /// The provider's name and path prefix.
    static var sandboxProvider: SandboxProvider { get }
    /// The provider's settings, in the order the tool's usage text lists them.
    static var sandboxSettings: [SandboxSetting] { get }
    /// The host a path-prefixed request is served as (`/linkforty/x` → `https://{apiHost}/x`).
    static func apiHost(in settings: SandboxSettings) -> String
    /// Every host the provider answers for (`*.` for every subdomain).
    static func hosts(in settings: SandboxSettings) -> [String]
    /// Adds the emulation to `simulator`, configured by `settings`.
    static func add(to simulator: ProviderSimulator, settings: SandboxSettings) -> Self

    /// Creates a link from the admin API's body.
    func createLink(_ link: AdminLink) throws
    /// Records a web click posted to the admin API, from `ip` at `date`. The default records
    /// `click.url` from `click.device`.
    func recordWebClick(_ click: SandboxAPI.WebClick, ip: String, at date: Date) throws
    /// What the provider stored as events, in order, for `GET /_admin/{provider}/events`. The
    /// default: none.
    var sandboxEvents: [SandboxAPI.ReceivedEvent] { get }
}

extension SandboxEmulation {
    public func recordWebClick(_ click: SandboxAPI.WebClick, ip: String, at date: Date) throws {
        try recordWebClick(url: click.url, from: click.device, ip: ip, at: date)
    }

    public var sandboxEvents: [SandboxAPI.ReceivedEvent] { [] }
}

/// The body of `POST /_admin/{provider}/links` for one provider.
public protocol SandboxAdminLink: Sendable, Codable {
    /// The provider whose link it is.
    static var sandboxProvider: SandboxProvider { get }
}

/// Something that holds one running emulation per provider (the Sandbox). Each emulation module
/// adds a property for its own (`sandbox.linkForty`, `sandbox.paylisher`, …).
public protocol EmulationDirectory: Sendable {
    /// The running emulation of type `type`.
    ///
    /// - Precondition: `type` is one of the emulations served (every one in `Sandbox.emulations`).
    func emulation<Emulation: SandboxEmulation>(_ type: Emulation.Type) -> Emulation
}
