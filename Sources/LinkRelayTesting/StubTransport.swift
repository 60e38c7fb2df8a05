import Foundation
import LinkRelay

/// An ``/LinkRelay/HTTPTransport`` that answers from canned responses and records every request.
///
/// ```swift
/// let transport = StubTransport()
/// transport.stub(.get, "/api/sdk/v1/resolve/abc", .json(#"{"shortCode":"abc"}"#))
/// transport.stub(.post, "/api/sdk/v1/event", [.status(503), .status(200)])   // then 200 again
/// transport.stub(.get, "/slow", .json("{}"), delay: 10)                      // on the clock
/// // … run the code under test …
/// #expect(transport.requests.map(\.url.path) == ["/api/sdk/v1/resolve/abc"])
/// ```
///
/// Routes match by method and URL path. A route with several replies uses them in turn and
/// repeats the last. A request with no route gets a 404 with the body `no stub`. Delays run on
/// the clock given at creation, so a `ManualClock` controls them.
public final class StubTransport: HTTPTransport, Sendable {
    /// One canned answer: a response or a transport failure.
    public struct Reply: Sendable {
        /// The response, or the error the transport throws.
        public var result: Result<HTTPResponse, DeepLinkError>

        /// A reply from a result.
        public init(_ result: Result<HTTPResponse, DeepLinkError>) {
            self.result = result
        }

        /// A response with this status and body.
        public static func status(_ status: Int, body: Data = Data(), headers: HTTPHeaders = [:]) -> Reply {
            Reply(.success(HTTPResponse(status: status, headers: headers, body: body)))
        }

        /// A JSON response.
        public static func json(_ text: String, status: Int = 200, headers: HTTPHeaders = [:]) -> Reply {
            var headers = headers
            headers["Content-Type"] = "application/json"
            return Reply(.success(HTTPResponse(status: status, headers: headers, body: Data(text.utf8))))
        }

        /// No response: the transport throws `error`.
        public static func failure(_ error: DeepLinkError) -> Reply {
            Reply(.failure(error))
        }
    }

    private struct Route: Sendable {
        var replies: [Reply]
        var delay: TimeInterval
        var served = 0
    }

    private struct Key: Hashable, Sendable {
        let method: HTTPMethod
        let path: String
    }

    private struct State: Sendable {
        var routes: [Key: Route] = [:]
        var requests: [HTTPRequest] = []
    }

    private let state = Locked(State())
    private let clock: any LinkRelayClock

    /// A transport whose delays run on `clock`.
    public init(clock: any LinkRelayClock = SystemClock()) {
        self.clock = clock
    }

    /// Answers `method` requests for `path` with `reply`, after `delay` seconds.
    public func stub(_ method: HTTPMethod, _ path: String, _ reply: Reply, delay: TimeInterval = 0) {
        stub(method, path, [reply], delay: delay)
    }

    /// Answers `method` requests for `path` with `replies` in turn, repeating the last.
    public func stub(_ method: HTTPMethod, _ path: String, _ replies: [Reply], delay: TimeInterval = 0) {
        precondition(!replies.isEmpty, "A stub needs at least one reply")
        state.withLock { $0.routes[Key(method: method, path: path)] = Route(replies: replies, delay: delay) }
    }

    /// Every request sent so far, in order.
    public var requests: [HTTPRequest] { state.withLock { $0.requests } }

    /// Answers `request` with the next reply stubbed for its method and path (after its delay on the
    /// clock), or 404 when none is; records the request in ``requests``.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (reply, delay): (Reply?, TimeInterval) = state.withLock { state in
            state.requests.append(request)
            let key = Key(method: request.method, path: request.url.path)
            guard var route = state.routes[key] else { return (nil, 0) }
            let reply = route.replies[min(route.served, route.replies.count - 1)]
            route.served += 1
            state.routes[key] = route
            return (reply, route.delay)
        }
        if delay > 0 {
            do {
                try await clock.sleep(for: delay)
            } catch {
                throw DeepLinkError(.cancelled, "The request was cancelled.")
            }
        }
        guard let reply else { return HTTPResponse(status: 404, body: Data("no stub".utf8)) }
        return try reply.result.get()
    }
}
