import Foundation
import LinkRelay

/// An in-process world that speaks the providers' HTTP APIs, exposed as an ``HTTPTransport``.
///
/// Plug it into a client instead of the network, script it (create links, record web clicks
/// from a device and an IP), and read what it received:
///
/// ```swift
/// let simulator = ProviderSimulator()
/// let linkForty = simulator.addLinkForty(host: "go.acme.app")
/// linkForty.createLink(shortCode: "spring", deepLinkPath: "/products/42", appScheme: "acme")
///
/// var configuration = DeepLinkClient.Configuration()
/// configuration.transport = simulator
/// ```
///
/// Each request is routed by its URL's host to the emulation registered for it; an unknown host
/// is a network error, as a DNS failure would be. Faults can be set per route, and the whole
/// world can be made unreachable.
public final class ProviderSimulator: HTTPTransport {
    /// What a route does instead of answering normally.
    public enum Fault: Sendable, Hashable {
        /// Answer normally, after this many seconds on the simulator's clock.
        case delay(TimeInterval)
        /// Answer with this status and body instead.
        case status(Int, body: String = "")
        /// Answer 200 with a body that is not JSON.
        case malformedBody
        /// Answer 200 with a body of this many bytes.
        case oversizedBody(Int)
        /// Drop the connection: no response.
        case drop
    }

    /// A request as an emulation sees it: the HTTP request, the address it came from, and when.
    public struct Request: Sendable {
        public let http: HTTPRequest
        /// The client's address: the `X-Forwarded-For` header's first entry, else
        /// ``ProviderSimulator/clientIP``.
        public let clientIP: String
        public let receivedAt: Date
    }

    private struct Route: Hashable, Sendable {
        let method: HTTPMethod?
        let path: String
    }

    private struct State: Sendable {
        var emulations: [String: any ProviderEmulation] = [:]
        var faults: [Route: Fault] = [:]
        var clientIP = "203.0.113.10"
        var isReachable = true
        var requests: [HTTPRequest] = []
        /// Requests handled so far, by path.
        var handled: [String: Int] = [:]

        /// The emulation for `host`: an exact registration, else a `*.suffix` one.
        func emulation(for host: String) -> (any ProviderEmulation)? {
            if let exact = emulations[host] { return exact }
            return emulations.first { pattern, _ in
                pattern.hasPrefix("*.") && host.hasSuffix(pattern.dropFirst(1)) && host.count > pattern.count - 1
            }?.value
        }

    }

    private let state = Locked(State())
    private let waiters = Locked([String: ConditionWaiters]())
    /// The clock delays run on, and the time emulations stamp.
    public let clock: any LinkRelayClock
    /// Responses larger than this are refused, as ``URLSessionTransport`` refuses them.
    public let maximumResponseSize: Int

    public init(clock: any LinkRelayClock = SystemClock(), maximumResponseSize: Int = 1 << 20) {
        self.clock = clock
        self.maximumResponseSize = maximumResponseSize
    }

    /// Serves `emulation` for `hosts` (compared case-insensitively; `*.example.com` serves every
    /// subdomain that has no registration of its own).
    public func register(_ emulation: any ProviderEmulation, hosts: Set<String>) {
        state.withLock { state in
            for host in hosts { state.emulations[host.lowercased()] = emulation }
        }
    }

    /// The address requests come from unless they carry `X-Forwarded-For`: the device's public
    /// IP as the provider would see it. Default `203.0.113.10`.
    public var clientIP: String {
        get { state.withLock { $0.clientIP } }
        set { state.withLock { $0.clientIP = newValue } }
    }

    /// `false` makes every request fail as if the network were down.
    public var isReachable: Bool {
        get { state.withLock { $0.isReachable } }
        set { state.withLock { $0.isReachable = newValue } }
    }

    /// Makes requests to `path` (with `method`, or any method when `nil`) fail with `fault`;
    /// `nil` clears it.
    public func setFault(_ fault: Fault?, method: HTTPMethod? = nil, path: String) {
        state.withLock { $0.faults[Route(method: method, path: path)] = fault }
    }

    /// Clears every fault.
    public func clearFaults() {
        state.withLock { $0.faults.removeAll() }
    }

    /// Every request received, in order.
    public var requests: [HTTPRequest] { state.withLock { $0.requests } }

    /// How many requests went to `path`.
    public func requestCount(path: String) -> Int {
        requests.filter { $0.url.path == path }.count
    }

    /// Returns once at least `count` requests to `path` have been handled (or the calling task
    /// is cancelled): for work a client does after delivering a link, without polling.
    public func waitForRequests(path: String, count: Int) async {
        let waiters = self.waiters.withLock { all -> ConditionWaiters in
            if let existing = all[path] { return existing }
            let created = ConditionWaiters()
            all[path] = created
            return created
        }
        await waiters.wait(until: count) { [state] in state.withLock { $0.handled[path, default: 0] } }
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (emulation, fault, clientIP, reachable) = state.withLock { state in
            state.requests.append(request)
            let fault = state.faults[Route(method: request.method, path: request.url.path)]
                ?? state.faults[Route(method: nil, path: request.url.path)]
            return (state.emulation(for: request.url.host?.lowercased() ?? ""), fault, state.clientIP, state.isReachable)
        }
        // Those waiting for this request resume once it has been handled (or has failed).
        defer {
            let path = request.url.path
            let count = state.withLock { state -> Int in
                state.handled[path, default: 0] += 1
                return state.handled[path, default: 0]
            }
            waiters.withLock { $0[path] }?.update(count)
        }
        guard reachable else {
            throw DeepLinkError(.network, "The server is unreachable (simulated outage).")
        }
        guard let emulation else {
            throw DeepLinkError(.network, "The server's host name could not be resolved.")
        }
        var response: HTTPResponse?
        switch fault {
        case .delay(let seconds):
            do {
                try await clock.sleep(for: seconds)
            } catch {
                throw DeepLinkError(.cancelled, "The request was cancelled.")
            }
        case .status(let status, let body):
            response = HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        case .malformedBody:
            response = HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data("{\"truncated\": [1, 2".utf8))
        case .oversizedBody(let size):
            response = HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(repeating: 0x20, count: size))
        case .drop:
            throw DeepLinkError(.network, "The connection was lost before the response was complete.")
        case nil:
            break
        }
        let forwarded = request.headers["X-Forwarded-For"]?.split(separator: ",").first
            .map { $0.trimmingCharacters(in: .whitespaces) }
        let answer = response
            ?? emulation.handle(Request(http: request, clientIP: forwarded ?? clientIP, receivedAt: clock.currentDate))
        guard answer.body.count <= maximumResponseSize else {
            throw DeepLinkError(.responseTooLarge, "The response is larger than \(maximumResponseSize) bytes and was refused.")
        }
        return answer
    }
}

/// One provider's server, emulated: answers requests routed to its hosts.
public protocol ProviderEmulation: Sendable {
    func handle(_ request: ProviderSimulator.Request) -> HTTPResponse
}

extension HTTPResponse {
    /// A JSON response from a `JSONValue`.
    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: body)
    }
}
