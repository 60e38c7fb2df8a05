import Foundation
import LinkRelay
import LinkRelayTesting

/// The ways a provider fails to resolve a link, each answered to every request: what every
/// adapter's local link is tested against.
public enum ProviderOutage: String, CaseIterable, Sendable, CustomStringConvertible {
    /// 404 with a JSON error body.
    case notFound
    /// 503 after every retry.
    case serverError
    /// No answer before the link's deadline.
    case timeout
    /// 200 with a body that is not JSON.
    case undecodable

    public var description: String { rawValue }

    /// Resolves `url` through a client over `backend` while the provider fails this way, and
    /// returns the link the client delivers instead; throws when that link is not a local one.
    public func localLink(for url: URL, backend: any DeepLinkBackend) async throws -> DeepLink {
        let clock = ManualClock()
        let transport = OutageTransport(outage: self, clock: clock)
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: clock, transport: transport)
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 2, initialBackoff: 0)
        configuration.deviceInfo = StaticDeviceInfo()
        let client = DeepLinkClient(backend: backend, configuration: configuration)
        let resolving = Task { try await client.resolve(url) }
        if self == .timeout {
            await transport.waitForRequest()
            clock.advance(by: configuration.resolutionTimeout)
        }
        defer { resolving.cancel() }
        let link = try await resolving.value
        guard case .local = link.resolution else {
            throw ConformanceFailure(description: "\(self): expected a local link for \(url), got \(link.resolution)")
        }
        return link
    }

    /// Checks that the local link for `link` with ``plusQuery`` reads the query as
    /// `URLComponents`, and so every provider's iOS SDK, reads it: a `+` stays a plus (in
    /// values, UTM values and names), only percent escapes decode. Throws what differs.
    public func checkPlusStaysAPlus(on link: String, backend: any DeepLinkBackend) async throws {
        guard let url = URL(string: "\(link)?\(Self.plusQuery)") else {
            throw ConformanceFailure(description: "\(link) cannot take a query")
        }
        let local = try await localLink(for: url, backend: backend)
        var differences: [String] = []
        for (name, expected) in [("q", "running+shoes"), ("tag", "a+b"), ("x+y", "1")] where local.parameters[name] != expected {
            differences.append("\(name): \(local.parameters[name] ?? "nil") instead of \(expected)")
        }
        if local.utm.campaign != "spring+sale" { differences.append("utm.campaign: \(local.utm.campaign ?? "nil")") }
        guard differences.isEmpty else {
            throw ConformanceFailure(description: "\(self): \(url): " + differences.joined(separator: "; "))
        }
    }

    /// The query ``checkPlusStaysAPlus(on:backend:)`` sends.
    public static let plusQuery = "q=running+shoes&tag=a%2Bb&utm_campaign=spring+sale&x+y=1"
}

/// Answers every request as `outage` says.
private final class OutageTransport: HTTPTransport {
    let outage: ProviderOutage
    let clock: ManualClock
    private let requests = Locked(0)
    private let waiters = ConditionWaiters()

    init(outage: ProviderOutage, clock: ManualClock) {
        self.outage = outage
        self.clock = clock
    }

    func waitForRequest() async {
        await waiters.wait(until: 1) { [requests] in requests.withLock { $0 } }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let count = requests.withLock { count -> Int in
            count += 1
            return count
        }
        waiters.update(count)
        switch outage {
        case .notFound:
            return HTTPResponse(status: 404, headers: ["Content-Type": "application/json"], body: Data(#"{"error":"Link not found"}"#.utf8))
        case .serverError:
            return HTTPResponse(status: 503, headers: [:], body: Data())
        case .timeout:
            try await clock.sleep(untilUptime: .infinity)
            throw CancellationError()
        case .undecodable:
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data("<html>Service".utf8))
        }
    }
}
