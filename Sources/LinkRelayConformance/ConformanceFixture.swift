import Foundation
import LinkRelay
import LinkRelaySimulator

/// What the conformance suite needs to know about one adapter: how to build it against the
/// simulator, and which of its links and routes to use.
public protocol ConformanceFixture: Sendable {
    /// The adapter's name, for messages.
    var name: String { get }
    /// Builds a fresh world: a simulator with the provider's emulation, and the backend
    /// configured to reach it.
    func makeWorld(simulator: ProviderSimulator) throws -> ConformanceWorld
}

/// One adapter wired to one simulator.
public struct ConformanceWorld: Sendable {
    /// The backend under test, configured to reach the simulator.
    public var backend: any DeepLinkBackend
    /// The API key the backend was configured with (it must never show up).
    public var apiKey: String
    /// Links the backend must claim.
    public var ownLinks: [URL]
    /// Links it must not claim.
    public var foreignLinks: [URL]
    /// A link the server resolves, and the path segments the resolved link must have.
    public var knownLink: URL
    /// The path segments ``knownLink`` resolves to.
    public var knownLinkPath: [String]
    /// A link the server does not know.
    public var unknownLink: URL
    /// The route that resolves ``knownLink`` and the route of the install match, for faults.
    public var resolveRoute: (method: HTTPMethod, path: String)
    /// The route of the install match.
    public var installRoute: (method: HTTPMethod, path: String)
    /// The device the client reports.
    public var device: DeviceInfo
    /// Scripts the provider so that the next install matches a click; returns what the deferred
    /// link must carry. A throw (a click on a link the provider does not have, say) fails the
    /// check with that error.
    public var scriptAttributedInstall: @Sendable () throws -> ExpectedDeferredLink

    /// A world; see each property.
    public init(
        backend: any DeepLinkBackend, apiKey: String, ownLinks: [URL], foreignLinks: [URL], knownLink: URL,
        knownLinkPath: [String], unknownLink: URL, resolveRoute: (method: HTTPMethod, path: String),
        installRoute: (method: HTTPMethod, path: String), device: DeviceInfo,
        scriptAttributedInstall: @escaping @Sendable () throws -> ExpectedDeferredLink
    ) {
        self.backend = backend
        self.apiKey = apiKey
        self.ownLinks = ownLinks
        self.foreignLinks = foreignLinks
        self.knownLink = knownLink
        self.knownLinkPath = knownLinkPath
        self.unknownLink = unknownLink
        self.resolveRoute = resolveRoute
        self.installRoute = installRoute
        self.device = device
        self.scriptAttributedInstall = scriptAttributedInstall
    }
}

/// The fields a deferred link must have after an attributed install.
public struct ExpectedDeferredLink: Sendable {
    /// The path segments, when the provider says which screen.
    public var pathSegments: [String]?
    /// Parameters the link must carry (others may come too).
    public var parameters: [String: String]
    /// The link's short code, when the provider has one.
    public var shortCode: String?

    /// What a deferred link must carry.
    public init(pathSegments: [String]? = nil, parameters: [String: String] = [:], shortCode: String? = nil) {
        self.pathSegments = pathSegments
        self.parameters = parameters
        self.shortCode = shortCode
    }
}

/// A conformance check that did not hold.
public struct ConformanceFailure: Error, CustomStringConvertible {
    /// The adapter, the check, and what did not hold.
    public let description: String
}
