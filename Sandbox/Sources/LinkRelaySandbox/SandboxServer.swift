import FlyingFox
import FlyingSocks
import Foundation
import LinkRelay
import LinkRelaySimulator
import Synchronization

/// A ``Sandbox`` on a real socket: FlyingFox serving the four provider emulations and the admin
/// API over HTTP/1.1.
///
/// ```swift
/// let server = SandboxServer(sandbox: Sandbox(), port: 0)   // 0: any free port
/// let baseURL = try await server.start()                    // http://127.0.0.1:54321
/// defer { Task { await server.stop() } }
/// ```
public actor SandboxServer {
    /// The sandbox served.
    public nonisolated let sandbox: Sandbox
    /// The IPv4 address listened on. Default `127.0.0.1`.
    public nonisolated let host: String
    /// The port asked for (`0` for any free one); ``start()`` returns the one bound.
    public nonisolated let port: UInt16
    private let log: (@Sendable (String) -> Void)?
    private let server: HTTPServer
    private var runner: Task<Void, any Error>?

    /// A server for `sandbox` on `host:port`. `log` receives one line per request (method,
    /// target, provider, status, bytes, milliseconds); request bodies and headers are never
    /// logged.
    public init(sandbox: Sandbox, host: String = "127.0.0.1", port: UInt16 = 8642, log: (@Sendable (String) -> Void)? = nil) throws {
        self.sandbox = sandbox
        self.host = host
        self.port = port
        self.log = log
        let handler = Handler(sandbox: sandbox, log: log)
        // A long handler timeout: a `delay` fault may hold a request far past FlyingFox's 15 s.
        server = HTTPServer(
            address: try .inet(ip4: host, port: port), timeout: 3600, pool: NoDelayPool(base: HTTPServer.defaultPool()),
            logger: .disabled, handler: handler)
    }

    /// Starts listening and returns the base URL (`http://127.0.0.1:PORT`); the sandbox's
    /// ``Sandbox/baseURL`` is set to it.
    @discardableResult
    public func start() async throws -> URL {
        let task = Task { [server] in try await server.run() }
        runner = task
        // Whichever comes first: the server listens, or run() ends (a port in use).
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let once = ResumeOnce(continuation)
            Task { [server] in
                do {
                    try await server.waitUntilListening(timeout: 10)
                    once.resume(with: .success(()))
                } catch {
                    once.resume(with: .failure(error))
                }
            }
            Task {
                if case .failure(let error) = await task.result { once.resume(with: .failure(error)) }
            }
        }
        guard case .ip4(_, let bound)? = await server.listeningAddress, let url = URL(string: "http://\(host):\(bound)") else {
            throw DeepLinkError(.network, "The sandbox started but its address could not be read.")
        }
        sandbox.baseURL = url
        return url
    }

    /// Stops listening and closes every connection; requests parked in a `delay` fault end.
    public func stop() async {
        await server.stop(timeout: 0)
        runner?.cancel()
    }

    /// Waits until the server stops (the executable's main loop).
    public func wait() async {
        _ = await runner?.result
    }
}

/// Turns FlyingFox requests into LinkRelay requests for the sandbox, and its answers back.
private struct Handler: HTTPHandler {
    let sandbox: Sandbox
    let log: (@Sendable (String) -> Void)?

    func handleRequest(_ request: FlyingFox.HTTPRequest) async throws -> FlyingFox.HTTPResponse {
        let started = ContinuousClock.now
        let host = request.headers[.host] ?? "127.0.0.1"
        var headers = LinkRelay.HTTPHeaders()
        for (name, value) in request.headers { headers[name.rawValue] = value }
        let target = request.target.rawValue
        let url = URL(string: "http://\(host)\(target.hasPrefix("/") ? target : "/" + target)") ?? URL(string: "http://\(host)/")!
        let body = try await request.bodyData
        let incoming = LinkRelay.HTTPRequest(
            method: LinkRelay.HTTPMethod(rawValue: request.method.rawValue), url: url, headers: headers, body: body.isEmpty ? nil : body)
        let exchange = await sandbox.handle(incoming)
        let response: FlyingFox.HTTPResponse
        let summary: String
        switch exchange.outcome {
        case .respond(let answer):
            response = Self.response(answer)
            summary = "\(answer.status) \(answer.body.count) B"
        case .closeMidResponse:
            response = Self.truncated()
            summary = "connection closed mid-response"
        }
        if let log {
            let elapsed = ContinuousClock.now - started
            let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            let routed = exchange.routedURL.map { " → \($0.host ?? "")\($0.path)" } ?? ""
            log("\(request.method.rawValue) \(request.path) [\(exchange.handler)\(routed)] \(summary) \(String(format: "%.1f", milliseconds)) ms")
        }
        return response
    }

    static func response(_ answer: LinkRelay.HTTPResponse) -> FlyingFox.HTTPResponse {
        var headers = FlyingFox.HTTPHeaders()
        for field in answer.headers where field.name.lowercased() != "content-length" {
            headers.addValue(field.value, for: FlyingFox.HTTPHeader(field.name))
        }
        return FlyingFox.HTTPResponse(
            statusCode: HTTPStatusCode(answer.status, phrase: Self.phrase(answer.status)), headers: headers, body: answer.body)
    }

    /// Headers promising 1 KiB of JSON, 40 bytes of it, then the connection closes.
    static func truncated() -> FlyingFox.HTTPResponse {
        let partial = Array(#"{"status":"ok","data":{"items":[1,2,3,"#.utf8)
        return FlyingFox.HTTPResponse(
            statusCode: .ok, headers: [.contentType: "application/json"],
            body: HTTPBodySequence(from: TruncatedBytes(bytes: partial), count: 1024))
    }

    static func phrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 422: "Unprocessable Entity"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}

/// FlyingFox's socket pool, with Nagle's algorithm turned off on every socket it waits for.
///
/// FlyingFox writes a response's headers and body in two writes. On a kept-alive connection,
/// Nagle holds the second until the first is acknowledged, and the client delays that
/// acknowledgement: every response after the first would wait about 40 ms. `TCP_NODELAY` sends
/// both at once.
private struct NoDelayPool<Base: AsyncSocketPool>: AsyncSocketPool {
    let base: Base

    func prepare() async throws { try await base.prepare() }

    func run() async throws { try await base.run() }

    func suspendSocket(_ socket: Socket, untilReadyFor events: Socket.Events) async throws {
        var on: Int32 = 1
        _ = setsockopt(socket.file.rawValue, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        try await base.suspendSocket(socket, untilReadyFor: events)
    }
}

/// A continuation resumed by the first of several tasks.
private final class ResumeOnce: Sendable {
    private let continuation: Mutex<CheckedContinuation<Void, any Error>?>

    init(_ continuation: CheckedContinuation<Void, any Error>) {
        self.continuation = Mutex(continuation)
    }

    func resume(with result: Result<Void, any Error>) {
        continuation.withLock { pending in
            let taken = pending
            pending = nil
            return taken
        }?.resume(with: result)
    }
}

/// Bytes that end in an error: FlyingFox closes the connection when a body fails.
private struct TruncatedBytes: AsyncBufferedSequence {
    typealias Element = UInt8
    let bytes: [UInt8]

    struct ConnectionClosed: Error {}

    struct AsyncIterator: AsyncBufferedIteratorProtocol {
        var bytes: [UInt8]

        mutating func next() async throws -> UInt8? {
            guard !bytes.isEmpty else { throw ConnectionClosed() }
            return bytes.removeFirst()
        }

        mutating func nextBuffer(suggested count: Int) async throws -> [UInt8]? {
            guard !bytes.isEmpty else { throw ConnectionClosed() }
            let buffer = Array(bytes.prefix(count))
            bytes.removeFirst(buffer.count)
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes) }
}
