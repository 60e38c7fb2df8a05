import Foundation
import LinkRelay
import LinkRelaySimulator
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A ``Sandbox`` on a real socket: SwiftNIO's HTTP/1.1 server serving the four provider
/// emulations and the admin API.
///
/// ```swift
/// let server = try SandboxServer(sandbox: Sandbox(), port: 0)   // 0: any free port
/// let baseURL = try await server.start()                        // http://127.0.0.1:54321
/// defer { Task { await server.stop() } }
/// ```
///
/// The server holds its ``Limits`` against any client: a request head over its size is answered
/// 431, a body over its size 413, a body that stops arriving 408, and each closes the
/// connection; a connection that sends no complete request head within the idle timeout is
/// closed. Time a request spends in the sandbox (a `delay` fault) is not limited.
public actor SandboxServer {
    /// What the server accepts from a client.
    ///
    /// Sizes below 1 and timeouts that are not positive are refused by
    /// ``SandboxServer/init(sandbox:host:port:limits:log:)`` with `.invalidConfiguration`;
    /// `.infinity` means no timeout, and a timeout over a day counts as a day.
    public struct Limits: Sendable, Hashable {
        /// The request line and headers of one request, in bytes. Default 32 KiB. Past it: 431.
        public var maximumHeaderSize: Int
        /// Header fields in one request. Default 100. Past it: 431.
        public var maximumHeaderCount: Int
        /// One request's body, in bytes, as declared by `Content-Length` or as sent. Default
        /// 1 MiB. Past it: 413.
        public var maximumBodySize: Int
        /// Seconds a connection may take to send a complete request head, counted from when it
        /// opens or from the end of its last response. Default 30. Past it, the connection
        /// closes without an answer.
        public var idleTimeout: TimeInterval
        /// Seconds a request's body may take to arrive, from its head, and a response may take
        /// to be taken by the client. Default 30. Past it: 408 (body) or a closed connection
        /// (response).
        public var transferTimeout: TimeInterval

        public init(
            maximumHeaderSize: Int = 32 * 1024, maximumHeaderCount: Int = 100, maximumBodySize: Int = 1 << 20,
            idleTimeout: TimeInterval = 30, transferTimeout: TimeInterval = 30
        ) {
            self.maximumHeaderSize = maximumHeaderSize
            self.maximumHeaderCount = maximumHeaderCount
            self.maximumBodySize = maximumBodySize
            self.idleTimeout = idleTimeout
            self.transferTimeout = transferTimeout
        }

        /// Refuses values no server can use.
        func validated() throws -> Limits {
            for (name, size) in [
                ("maximumHeaderSize", maximumHeaderSize), ("maximumHeaderCount", maximumHeaderCount), ("maximumBodySize", maximumBodySize),
            ] where size < 1 {
                throw DeepLinkError(.invalidConfiguration, "SandboxServer.Limits.\(name) must be at least 1; it is \(size).")
            }
            for (name, seconds) in [("idleTimeout", idleTimeout), ("transferTimeout", transferTimeout)] where !(seconds > 0) {
                throw DeepLinkError(.invalidConfiguration, "SandboxServer.Limits.\(name) must be more than 0 seconds; it is \(seconds).")
            }
            return self
        }

        /// `seconds` as NIO's time, `nil` for no limit; at most a day.
        static func timeAmount(_ seconds: TimeInterval) -> TimeAmount? {
            guard seconds.isFinite else { return nil }
            return .nanoseconds(Int64((min(seconds, 86_400) * 1e9).rounded()))
        }
    }

    /// The sandbox served.
    public nonisolated let sandbox: Sandbox
    /// The IPv4 address listened on. Default `127.0.0.1`.
    public nonisolated let host: String
    /// The port asked for (`0` for any free one); ``start()`` returns the one bound.
    public nonisolated let port: UInt16
    /// What the server accepts from a client.
    public nonisolated let limits: Limits
    private let log: (@Sendable (String) -> Void)?
    private var runner: Task<Void, Never>?

    /// A server for `sandbox` on `host:port`. `log` receives one line per request (method,
    /// path, provider, status, bytes, milliseconds), and one per refused request; request bodies
    /// and headers are never logged. Throws `.invalidConfiguration` for limits no server can use.
    public init(
        sandbox: Sandbox, host: String = "127.0.0.1", port: UInt16 = 8642, limits: Limits = Limits(),
        log: (@Sendable (String) -> Void)? = nil
    ) throws {
        self.sandbox = sandbox
        self.host = host
        self.port = port
        self.limits = try limits.validated()
        self.log = log
    }

    /// Starts listening and returns the base URL (`http://127.0.0.1:PORT`); the sandbox's
    /// ``Sandbox/baseURL`` is set to it. Throws when the address cannot be bound (a port in
    /// use) or the server already started.
    @discardableResult
    public func start() async throws -> URL {
        guard runner == nil else { throw DeepLinkError(.invalidConfiguration, "The sandbox server has already started.") }
        let decoderLimits = {
            var decoderLimits = NIOHTTPDecoderLimitConfiguration()
            decoderLimits.maxHeaderFieldSize = limits.maximumHeaderSize
            decoderLimits.maxHeaderListSize = limits.maximumHeaderSize
            decoderLimits.maxHeaderFieldCount = limits.maximumHeaderCount
            return decoderLimits
        }()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // A deadline closes a connection's input and still answers (408); without this, NIO
            // takes the closed input for the client leaving and closes everything.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .bind(host: host, port: Int(port)) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: true,
                        withEncoderConfiguration: .init(), withDecoderLimitConfiguration: decoderLimits)
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: channel)
                }
            }
        guard let bound = listener.channel.localAddress?.port, let url = URL(string: "http://\(host):\(bound)") else {
            try? await listener.channel.close()
            throw DeepLinkError(.network, "The sandbox started but its address could not be read.")
        }
        sandbox.baseURL = url
        let connection = Connection(sandbox: sandbox, limits: limits, log: log)
        runner = Task {
            await withDiscardingTaskGroup { group in
                try? await listener.executeThenClose { inbound in
                    for try await channel in inbound {
                        group.addTask { await connection.serve(channel) }
                    }
                }
            }
        }
        return url
    }

    /// Stops listening and closes every connection; requests parked in a `delay` fault end.
    /// Returns when all of them have.
    public func stop() async {
        runner?.cancel()
        await runner?.value
    }

    /// Waits until the server stops (the executable's main loop).
    public func wait() async {
        await runner?.value
    }
}

/// One connection's requests, one after another, turned into LinkRelay requests for the
/// sandbox, and its answers back.
private struct Connection: Sendable {
    let sandbox: Sandbox
    let limits: SandboxServer.Limits
    let log: (@Sendable (String) -> Void)?

    /// Why a connection stops taking requests.
    enum Refusal: Error {
        case respond(status: HTTPResponseStatus, message: String)
        case close
    }

    func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        let channel = connection.channel
        let deadline = ReadDeadline(channel: channel)
        await withTaskCancellationHandler {
            try? await connection.executeThenClose { inbound, outbound in
                var parts = inbound.makeAsyncIterator()
                do {
                    while true {
                        deadline.arm(limits.idleTimeout, closing: .input)
                        guard let request = try await readRequest(&parts, deadline: deadline),
                            try await respond(to: request, outbound: outbound, deadline: deadline)
                        else { return }
                    }
                } catch Refusal.respond(let status, let message) {
                    deadline.arm(limits.transferTimeout, closing: .all)
                    log?("- [refused] \(status.code) \(message)")
                    let body = (try? JSONEncoder().encode(SandboxAPI.Failure(error: message))) ?? Data()
                    let headers = NIOHTTP1.HTTPHeaders([
                        ("Content-Type", "application/json"), ("Content-Length", String(body.count)), ("Connection", "close"),
                    ])
                    try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body))))
                    try await outbound.write(.end(nil))
                } catch Refusal.close {
                    return
                }
            }
        } onCancel: {
            channel.close(promise: nil)
        }
        deadline.disarm()
    }

    /// A request's head and body.
    struct RequestParts {
        var head: HTTPRequestHead
        var body: ByteBuffer
    }

    /// The next request, whole; `nil` when the client closed the connection between requests.
    private func readRequest(
        _ parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator, deadline: ReadDeadline
    ) async throws -> RequestParts? {
        let head: HTTPRequestHead
        do {
            switch try await parts.next() {
            case .head(let received)?: head = received
            case nil: return nil
            case .body?, .end?: throw Refusal.respond(status: .badRequest, message: "The request is not valid HTTP/1.1.")
            }
        } catch let error as HTTPParserError {
            // An idle connection closed by its deadline gets no answer.
            if deadline.fired { throw Refusal.close }
            throw refusal(for: error)
        }
        deadline.arm(limits.transferTimeout, closing: .input)
        if let declared = head.headers.first(name: "Content-Length").flatMap(Int.init), declared > limits.maximumBodySize {
            throw Refusal.respond(status: .payloadTooLarge, message: "The request body is over \(limits.maximumBodySize) bytes.")
        }
        var body = ByteBuffer()
        while true {
            let part: HTTPServerRequestPart?
            do {
                part = try await parts.next()
            } catch {
                // Closing the input mid-body makes the parser report an unfinished message.
                if deadline.fired { throw bodyTimedOut }
                guard let error = error as? HTTPParserError else { throw error }
                throw refusal(for: error)
            }
            switch part {
            case .body(var piece)?:
                guard body.readableBytes + piece.readableBytes <= limits.maximumBodySize else {
                    throw Refusal.respond(status: .payloadTooLarge, message: "The request body is over \(limits.maximumBodySize) bytes.")
                }
                body.writeBuffer(&piece)
            case .end?:
                return RequestParts(head: head, body: body)
            case .head?:
                throw Refusal.respond(status: .badRequest, message: "The request is not valid HTTP/1.1.")
            case nil:
                // The input closed mid-body: the client left, or the transfer deadline closed it.
                throw deadline.fired ? bodyTimedOut : Refusal.close
            }
        }
    }

    private var bodyTimedOut: Refusal {
        .respond(status: .requestTimeout, message: "The request body did not arrive within \(limits.transferTimeout) seconds.")
    }

    /// What a parser error is answered with.
    private func refusal(for error: HTTPParserError) -> Refusal {
        if case .headerOverflow = error {
            return .respond(
                status: .requestHeaderFieldsTooLarge,
                message: "The request line and headers are over \(limits.maximumHeaderSize) bytes or \(limits.maximumHeaderCount) fields.")
        }
        return .respond(status: .badRequest, message: "The request is not valid HTTP/1.1.")
    }

    /// Hands `request` to the sandbox and writes its answer; `false` when the connection closes
    /// after it.
    private func respond(
        to request: RequestParts, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, deadline: ReadDeadline
    ) async throws -> Bool {
        deadline.disarm()
        let started = ContinuousClock.now
        let head = request.head
        let host = head.headers.first(name: "Host") ?? "127.0.0.1"
        let target = head.uri.hasPrefix("/") ? head.uri : "/" + head.uri
        guard let url = URL(string: "http://\(host)\(target)"), url.host != nil else {
            throw Refusal.respond(status: .badRequest, message: "The request's host and target do not make a URL.")
        }
        var headers = LinkRelay.HTTPHeaders()
        for (name, value) in head.headers { headers[name] = value }
        let incoming = LinkRelay.HTTPRequest(
            method: LinkRelay.HTTPMethod(rawValue: head.method.rawValue), url: url, headers: headers,
            body: request.body.readableBytes == 0 ? nil : Data(request.body.readableBytesView))
        let exchange = await sandbox.handle(incoming)

        deadline.arm(limits.transferTimeout, closing: .all)
        var summary: String
        var keepAlive = head.isKeepAlive
        do {
            switch exchange.outcome {
            case .respond(let answer):
                summary = "\(answer.status) \(answer.body.count) B"
                var fields = NIOHTTP1.HTTPHeaders()
                for field in answer.headers where !["content-length", "connection"].contains(field.name.lowercased()) {
                    fields.add(name: field.name, value: field.value)
                }
                fields.add(name: "Content-Length", value: String(answer.body.count))
                if !keepAlive { fields.add(name: "Connection", value: "close") }
                try await outbound.write(
                    .head(HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: answer.status), headers: fields)))
                if head.method != .HEAD {
                    // In pieces of NIO's write watermark, so a write waits while the client does
                    // not read, and the transfer deadline can pass.
                    let body = answer.body
                    for start in stride(from: body.startIndex, to: body.endIndex, by: 65_536) {
                        let piece = body[start..<min(start + 65_536, body.endIndex)]
                        try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: piece))))
                    }
                }
                try await outbound.write(.end(nil))
            case .closeMidResponse:
                // Headers promising 1 KiB of JSON, 40 bytes of it, then the connection closes.
                summary = "connection closed mid-response"
                keepAlive = false
                let partial = #"{"status":"ok","data":{"items":[1,2,3,"#
                let fields = NIOHTTP1.HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", "1024")])
                try await outbound.write(.head(HTTPResponseHead(version: head.version, status: .ok, headers: fields)))
                try await outbound.write(.body(.byteBuffer(ByteBuffer(string: partial))))
            }
        } catch {
            summary =
                deadline.fired
                ? "response not taken within \(limits.transferTimeout) s, connection closed"
                : "the client left before the response was sent"
            keepAlive = false
        }
        deadline.disarm()
        if let log {
            let elapsed = ContinuousClock.now - started
            let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            let routed = exchange.routedURL.map { " → \($0.host ?? "")\($0.path)" } ?? ""
            let path = head.uri.prefix { $0 != "?" }
            log("\(head.method.rawValue) \(path) [\(exchange.handler)\(routed)] \(summary) \(String(format: "%.1f", milliseconds)) ms")
        }
        return keepAlive
    }
}

/// The one deadline a connection has at a time: waiting for a request head, receiving a body,
/// or sending a response. When it passes, the connection's input (or all of it) is closed, so
/// the read or write under way ends.
private final class ReadDeadline: Sendable {
    private struct State {
        var scheduled: Scheduled<Void>?
        var fired = false
        /// Counts arms and disarms, so a deadline replaced as it fires changes nothing.
        var generation: UInt64 = 0
    }

    private let channel: any Channel
    private let state = Mutex(State())

    init(channel: any Channel) {
        self.channel = channel
    }

    /// Whether the deadline armed last has passed.
    var fired: Bool { state.withLock { $0.fired } }

    /// Replaces the deadline with one `seconds` from now (none for `.infinity`).
    func arm(_ seconds: TimeInterval, closing mode: CloseMode) {
        let generation = disarm()
        guard let delay = SandboxServer.Limits.timeAmount(seconds) else { return }
        let channel = channel
        let scheduled = channel.eventLoop.scheduleTask(in: delay) { [weak self] in
            let current = self?.state.withLock { state in
                guard state.generation == generation else { return false }
                state.fired = true
                return true
            }
            if current == true { channel.close(mode: mode, promise: nil) }
        }
        let replaced = state.withLock { state in
            guard state.generation == generation else { return true }
            state.scheduled = scheduled
            return false
        }
        if replaced { scheduled.cancel() }
    }

    /// Cancels the deadline; returns the new generation.
    @discardableResult
    func disarm() -> UInt64 {
        state.withLock { state in
            state.scheduled?.cancel()
            state.scheduled = nil
            state.fired = false
            state.generation &+= 1
            return state.generation
        }
    }
}
