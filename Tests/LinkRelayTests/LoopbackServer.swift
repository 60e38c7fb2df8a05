import Foundation

@testable import LinkRelay

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 and an ephemeral port, for testing URLSessionTransport
/// against a real socket. Each connection reads one request and writes the bytes the handler
/// returns, then closes, so the handler can also send a truncated response.
final class LoopbackServer: Sendable {
    struct Request: Sendable {
        let head: String
        let body: Data

        var requestLine: String { head.components(separatedBy: "\r\n").first ?? "" }

        func header(_ name: String) -> String? {
            for line in head.components(separatedBy: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    let port: UInt16
    private let listener: Int32
    private let received = Locked<[Request]>([])

    var requests: [Request] { received.withLock { $0 } }

    /// Writes to one connection; `write` returns false once the peer is gone.
    struct Writer: Sendable {
        fileprivate let connection: Int32

        @discardableResult
        func write(_ chunk: Data) -> Bool {
            chunk.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let sent = send(connection, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                    if sent <= 0 { return false }
                    offset += sent
                }
                return true
            }
        }
    }

    /// A server that answers each request with the chunks `handler` returns.
    convenience init(handler: @escaping @Sendable (Request) -> [Data]) throws {
        try self.init(streaming: { request, writer in
            for chunk in handler(request) where !writer.write(chunk) { break }
        })
    }

    /// A server whose handler writes the response itself, for as long as it likes.
    init(streaming handler: @escaping @Sendable (Request, Writer) -> Void) throws {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = UInt16(bigEndian: address.sin_port)
        self.listener = fd
        let received = self.received
        Thread.detachNewThread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else {
                    // Closed here, not in deinit: closed there while this thread was still
                    // answering, the descriptor could be reused by another test's socket before
                    // this loop called accept on it again, and answer that test's request
                    // with this server's handler.
                    close(fd)
                    return
                }
                #if canImport(Darwin)
                    // A client that hung up must not kill the test process with SIGPIPE (Linux:
                    // MSG_NOSIGNAL on each send; older Darwin kernels know only this option).
                    var noSignal: Int32 = 1
                    setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &noSignal, socklen_t(MemoryLayout<Int32>.size))
                #endif
                let request = LoopbackServer.read(connection)
                received.withLock { $0.append(request) }
                handler(request, Writer(connection: connection))
                LoopbackServer.closeGracefully(connection)
            }
        }
    }

    deinit {
        // Wakes the accepting thread, which closes the socket as it leaves.
        shutdown(listener, Int32(SHUT_RDWR))
    }

    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    private static func read(_ connection: Int32) -> Request {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let separator = Data("\r\n\r\n".utf8)
        while data.range(of: separator) == nil {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        guard let end = data.range(of: separator) else { return Request(head: "", body: Data()) }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self)
        var body = Data(data[end.upperBound...])
        let partial = Request(head: head, body: Data())
        let expected = Int(partial.header("Content-Length") ?? "0") ?? 0
        while body.count < expected {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count <= 0 { break }
            body.append(contentsOf: buffer[0..<count])
        }
        return Request(head: head, body: body)
    }

    /// Closes after the peer has read everything: a plain `close` with unread bytes in the
    /// receive buffer sends a reset, which can reach the client before the response it has
    /// not read yet and turn a good response into a network error.
    private static func closeGracefully(_ connection: Int32) {
        shutdown(connection, Int32(SHUT_WR))
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var scratch = [UInt8](repeating: 0, count: 1024)
        while recv(connection, &scratch, scratch.count, 0) > 0 {}
        close(connection)
    }

    /// A whole response with a Content-Length.
    static func response(status: Int, headers: [String: String] = [:], body: Data) -> [Data] {
        var head = "HTTP/1.1 \(status) Status\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return [Data((head + "\r\n").utf8), body]
    }
}
