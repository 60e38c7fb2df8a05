import Foundation
@_spi(Backend) import LinkRelay

/// An in-process world that speaks the providers' HTTP APIs, exposed as an ``/LinkRelay/HTTPTransport``.
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
    /// What a route does instead of answering normally. A faulted request never reaches the
    /// emulation, so nothing it carries is recorded.
    ///
    /// Faults are `Codable` as the Sandbox's admin API writes them: `{"kind": "delay",
    /// "seconds": 5}`, `{"kind": "status", "status": 503, "body": "…", "headers": {…}}`,
    /// `{"kind": "malformedBody"}`, `{"kind": "oversizedBody", "bytes": 5000000}`,
    /// `{"kind": "drop"}`. Decoding refuses what no test needs and could stop a server: a
    /// delay outside 0…86,400 s (NaN included), a status outside 100…599, a body over 64 MiB;
    /// the Sandbox answers such a request 400 with the reason.
    public enum Fault: Sendable, Hashable, Codable {
        /// Answer normally, after this many seconds on the simulator's clock.
        case delay(TimeInterval)
        /// Answer with this status, body and headers instead (`Content-Type: application/json`
        /// unless `headers` names one).
        case status(Int, body: String = "", headers: [String: String] = [:])
        /// Answer 200 with a body that is not JSON.
        case malformedBody
        /// Answer 200 with a JSON body of this many bytes (an array of zeros).
        case oversizedBody(Int)
        /// Drop the connection before the response is complete. In process this is a
        /// `.network` error; the Sandbox sends the headers and part of the body, then closes.
        case drop

        private enum CodingKeys: String, CodingKey {
            case kind, seconds, status, body, headers, bytes
        }

        /// The longest delay a decoded fault (the Sandbox's admin API) may ask for: a day.
        public static let longestDecodedDelay: TimeInterval = 86_400
        /// The largest oversized body a decoded fault may ask for: 64 MiB.
        public static let largestDecodedBody = 64 << 20

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let kind = try container.decode(String.self, forKey: .kind)
            switch kind {
            case "delay":
                let seconds = try container.decode(TimeInterval.self, forKey: .seconds)
                guard (0...Self.longestDecodedDelay).contains(seconds) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .seconds, in: container,
                        debugDescription: "A delay is 0 to \(Self.longestDecodedDelay.saturatingInt) seconds; got \(seconds).")
                }
                self = .delay(seconds)
            case "status":
                let status = try container.decode(Int.self, forKey: .status)
                guard (100...599).contains(status) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .status, in: container, debugDescription: "A status is 100 to 599; got \(status).")
                }
                self = .status(
                    status, body: try container.decodeIfPresent(String.self, forKey: .body) ?? "",
                    headers: try container.decodeIfPresent([String: String].self, forKey: .headers) ?? [:])
            case "malformedBody": self = .malformedBody
            case "oversizedBody":
                let bytes = try container.decode(Int.self, forKey: .bytes)
                guard (0...Self.largestDecodedBody).contains(bytes) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .bytes, in: container,
                        debugDescription: "An oversized body is 0 to \(Self.largestDecodedBody) bytes; got \(bytes).")
                }
                self = .oversizedBody(bytes)
            case "drop": self = .drop
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .kind, in: container,
                    debugDescription: "Unknown fault kind '\(kind)'; use delay, status, malformedBody, oversizedBody or drop.")
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .delay(let seconds):
                try container.encode("delay", forKey: .kind)
                try container.encode(seconds, forKey: .seconds)
            case .status(let status, let body, let headers):
                try container.encode("status", forKey: .kind)
                try container.encode(status, forKey: .status)
                try container.encode(body, forKey: .body)
                try container.encode(headers, forKey: .headers)
            case .malformedBody: try container.encode("malformedBody", forKey: .kind)
            case .oversizedBody(let bytes):
                try container.encode("oversizedBody", forKey: .kind)
                try container.encode(bytes, forKey: .bytes)
            case .drop: try container.encode("drop", forKey: .kind)
            }
        }
    }

    /// A request as an emulation sees it: the HTTP request, the address it came from, and when.
    public struct Request: Sendable {
        /// The request as the app sent it (the provider's host, method, headers and body).
        public let http: HTTPRequest
        /// The client's address: the `X-Forwarded-For` header's first entry, else
        /// ``ProviderSimulator/clientIP``.
        public let clientIP: String
        /// The simulator clock's date when the request arrived.
        public let receivedAt: Date
    }

    private struct Route: Hashable, Sendable {
        let method: HTTPMethod?
        let host: String?
        let path: String
    }

    private struct ScheduledFault: Sendable {
        var fault: Fault
        /// How many more requests it applies to; `nil` for all.
        var remaining: Int?
    }

    private struct State: Sendable {
        var emulations: [String: any ProviderEmulation] = [:]
        var faults: [Route: ScheduledFault] = [:]
        var clientIP = ProviderSimulator.defaultClientIP
        var isReachable = true
        /// The most recent requests, oldest first from `requestsStart`.
        var requests: [HTTPRequest] = []
        var requestsStart = 0
        /// Requests received in all, the ones no longer kept included.
        var receivedCount = 0
        /// Requests handled so far, by path.
        var handled: [String: Int] = [:]

        /// The emulation for `host`: an exact registration, else a `*.suffix` one.
        func emulation(for host: String) -> (any ProviderEmulation)? {
            if let exact = emulations[host] { return exact }
            return emulations.first { pattern, _ in
                pattern.hasPrefix("*.") && HostPattern.matches(host, anyOf: [pattern])
            }?.value
        }

        /// Keeps `request` among the last `limit`: memory stays bounded however long a sandbox
        /// runs. The dropped prefix is released once it is as long as the limit.
        mutating func record(_ request: HTTPRequest, limit: Int) {
            receivedCount += 1
            guard limit > 0 else { return }
            requests.append(request)
            if requests.count - requestsStart > limit { requestsStart += 1 }
            if requestsStart >= limit {
                requests.removeFirst(requestsStart)
                requestsStart = 0
            }
        }

        /// The fault for a request, most specific route first; a counted fault is used up.
        mutating func takeFault(for request: HTTPRequest) -> Fault? {
            let host = request.url.host?.lowercased()
            let path = request.url.path
            let candidates = [
                Route(method: request.method, host: host, path: path), Route(method: nil, host: host, path: path),
                Route(method: request.method, host: nil, path: path), Route(method: nil, host: nil, path: path),
            ]
            guard let route = candidates.first(where: { faults[$0] != nil }), var scheduled = faults[route] else { return nil }
            if let remaining = scheduled.remaining {
                scheduled.remaining = remaining - 1
                faults[route] = remaining > 1 ? scheduled : nil
            }
            return scheduled.fault
        }
    }

    private let state = Locked(State())
    private let waiters = Locked([String: ConditionWaiters]())
    /// The clock delays run on, and the time emulations stamp.
    public let clock: any LinkRelayClock
    /// Responses larger than this are refused, as ``/LinkRelay/URLSessionTransport`` refuses them.
    public let maximumResponseSize: Int
    /// How many of the most recent requests ``requests`` keeps (at least 0). Default 1,000.
    public let requestHistoryLimit: Int

    /// A simulator with no emulations yet, timing delays and dating requests on `clock` (a
    /// `ManualClock` in tests), refusing responses over `maximumResponseSize` bytes, keeping the
    /// last `requestHistoryLimit` requests.
    public init(clock: any LinkRelayClock = SystemClock(), maximumResponseSize: Int = 1 << 20, requestHistoryLimit: Int = 1_000) {
        self.requestHistoryLimit = max(requestHistoryLimit, 0)
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

    /// The address a simulator's requests come from until ``clientIP`` is set: `203.0.113.10`
    /// (a documentation address). Web clicks are recorded from it by default, so a click and the
    /// install after it look like one phone on one network.
    public static let defaultClientIP = "203.0.113.10"

    /// The address requests come from unless they carry `X-Forwarded-For`: the device's public
    /// IP as the provider would see it. Default ``defaultClientIP``.
    public var clientIP: String {
        get { state.withLock { $0.clientIP } }
        set { state.withLock { $0.clientIP = newValue } }
    }

    /// `false` makes every request fail as if the network were down.
    public var isReachable: Bool {
        get { state.withLock { $0.isReachable } }
        set { state.withLock { $0.isReachable = newValue } }
    }

    /// Makes requests to `path` (with `method`, or any method when `nil`; on `host`, or any
    /// host when `nil`) fail with `fault`, for the next `times` requests or, when `nil`, until
    /// cleared; `nil` clears it. The most specific route wins.
    public func setFault(_ fault: Fault?, method: HTTPMethod? = nil, host: String? = nil, path: String, times: Int? = nil) {
        let route = Route(method: method, host: host?.lowercased(), path: path)
        state.withLock { state in
            if let fault, (times ?? 1) > 0 {
                state.faults[route] = ScheduledFault(fault: fault, remaining: times)
            } else {
                state.faults[route] = nil
            }
        }
    }

    /// Clears every fault.
    public func clearFaults() {
        state.withLock { $0.faults.removeAll() }
    }

    /// The most recent requests received (at most ``requestHistoryLimit``), in order.
    public var requests: [HTTPRequest] { state.withLock { Array($0.requests[$0.requestsStart...]) } }

    /// How many requests the history holds in memory, the dropped prefix not yet released
    /// included: never more than twice ``requestHistoryLimit``.
    var storedRequestCount: Int { state.withLock { $0.requests.count } }

    /// How many requests were received in all, the ones no longer kept included. The `n`th
    /// request received has the sequence number `n`.
    public var receivedRequestCount: Int { state.withLock { $0.receivedCount } }

    /// Up to `limit` of the kept requests whose sequence number is greater than `sequence`,
    /// oldest first: a page of ``requests``, for reading a long run a page at a time.
    public func requests(after sequence: Int, limit: Int) -> RequestPage {
        state.withLock { state in
            let kept = state.requests.count - state.requestsStart
            let firstKept = state.receivedCount - kept + 1
            let from = max(sequence + 1, firstKept)
            let count = max(0, min(limit, state.receivedCount - from + 1))
            let start = state.requestsStart + (from - firstKept)
            let page = count > 0 ? Array(state.requests[start..<(start + count)]) : []
            return RequestPage(
                requests: page, nextAfter: count > 0 ? from + count - 1 : max(sequence, 0),
                received: state.receivedCount, dropped: max(0, firstKept - max(sequence, 0) - 1))
        }
    }

    /// A page of received requests (``requests(after:limit:)``).
    public struct RequestPage: Sendable, Hashable {
        /// The requests, oldest first.
        public var requests: [HTTPRequest]
        /// The sequence number to ask for the next page after.
        public var nextAfter: Int
        /// How many requests were received in all.
        public var received: Int
        /// How many requests after the one asked for are no longer kept.
        public var dropped: Int
    }

    /// Whether an emulation serves `host` (exactly or through a `*.suffix` registration).
    public func serves(host: String) -> Bool {
        state.withLock { $0.emulation(for: host.lowercased()) != nil }
    }

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

    /// Hands `request` to the emulation serving its host, after any fault scheduled for its route,
    /// and records it.
    ///
    /// - Throws: `.network` when the simulator is unreachable, no emulation serves the host, or a
    ///   ``Fault/drop`` fault applies; `.cancelled` when the task is cancelled during a
    ///   ``Fault/delay(_:)``; `.responseTooLarge` for an answer over ``maximumResponseSize``.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (emulation, fault, clientIP, reachable) = state.withLock { state in
            state.record(request, limit: requestHistoryLimit)
            let fault = state.takeFault(for: request)
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
        case .status(let status, let body, let headers):
            var fields = HTTPHeaders(headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            if fields["Content-Type"] == nil { fields["Content-Type"] = "application/json" }
            response = HTTPResponse(status: status, headers: fields, body: Data(body.utf8))
        case .malformedBody:
            response = HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data("{\"truncated\": [1, 2".utf8))
        case .oversizedBody(let size):
            response = HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Self.jsonFiller(size))
        case .drop:
            throw DeepLinkError(.network, "The connection was lost before the response was complete.")
        case nil:
            break
        }
        let forwarded = request.headers["X-Forwarded-For"]?.split(separator: ",").first
            .map { $0.trimmingCharacters(in: .whitespaces) }
        let answer =
            response
            ?? emulation.handle(Request(http: request, clientIP: forwarded ?? clientIP, receivedAt: clock.currentDate))
        guard answer.body.count <= maximumResponseSize else {
            throw DeepLinkError(.responseTooLarge, "The response is larger than \(maximumResponseSize) bytes and was refused.")
        }
        return answer
    }
}

extension ProviderSimulator {
    /// A JSON array of zeros `size` bytes long (`[0,0,…,0]`), so an oversized body is valid JSON
    /// and only its size is wrong.
    static func jsonFiller(_ size: Int) -> Data {
        guard size >= 3 else { return Data(repeating: 0x20, count: max(size, 0)) }
        var data = Data(capacity: size)
        data.append(UInt8(ascii: "["))
        var remaining = size - 2
        data.append(UInt8(ascii: "0"))
        remaining -= 1
        while remaining >= 2 {
            data.append(UInt8(ascii: ","))
            data.append(UInt8(ascii: "0"))
            remaining -= 2
        }
        if remaining == 1 { data.append(UInt8(ascii: " ")) }
        data.append(UInt8(ascii: "]"))
        return data
    }
}

/// One provider's server, emulated: answers requests routed to its hosts.
public protocol ProviderEmulation: Sendable {
    /// Answers `request` as the provider's server would: every status, error bodies included.
    func handle(_ request: ProviderSimulator.Request) -> HTTPResponse
}

extension HTTPResponse {
    /// A JSON response from a `JSONValue` (keys sorted), for an emulation's answers.
    public static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: body)
    }
}
