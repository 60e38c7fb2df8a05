import Foundation
import LinkRelay

/// The bodies and answers of the Sandbox's admin API (`/_admin/…`), shared by the server and
/// `SandboxAdminClient`.
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

            /// Provider `name`, served at `baseURL` and on `hosts`.
            public init(name: SandboxProvider, baseURL: URL, hosts: [String]) {
                self.name = name
                self.baseURL = baseURL
                self.hosts = hosts
            }
        }

        /// The sandbox's own address.
        public var baseURL: URL
        /// The hosts and keys the sandbox runs with.
        public var settings: SandboxSettings
        /// Every provider, in the order of `SandboxProvider.allCases`.
        public var providers: [Provider]

        /// A sandbox at `baseURL` with `settings`, serving `providers`.
        public init(baseURL: URL, settings: SandboxSettings, providers: [Provider]) {
            self.baseURL = baseURL
            self.settings = settings
            self.providers = providers
        }

        /// The provider `name`'s entry.
        public func provider(_ name: SandboxProvider) -> Provider? {
            providers.first { $0.name == name }
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

    /// `PUT /_admin/faults`: a fault on a route (see ``ProviderSimulator/Fault``).
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

/// Scripting a sandbox, in process (`Sandbox`) or over its admin API (`SandboxAdminClient`),
/// with the same calls.
public protocol SandboxControl: Sendable {
    /// Where each provider is served.
    func describe() async throws -> SandboxAPI.Description
    /// Creates a link on the provider whose admin body `link` is (`SandboxAPI.LinkFortyLink`,
    /// `SandboxAPI.LimeLinkLink`, `SandboxAPI.DynalinksLink`, `SandboxAPI.PaylisherCampaign`).
    func createLink<Link: SandboxAdminLink>(_ link: Link) async throws
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

extension SandboxAPI.Failure: Error, CustomStringConvertible {
    public var description: String { error }
}
