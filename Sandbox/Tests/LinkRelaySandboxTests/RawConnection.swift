import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain TCP connection to the sandbox, for sending what no HTTP client sends: a header line
/// that never ends, a request that stops halfway, a body that trickles.
///
/// Every call that can block runs on a Dispatch thread, never on the cooperative pool the
/// server's handlers run on (two threads on this machine).
final class RawConnection: @unchecked Sendable {
    // @unchecked: `descriptor` is set once in init; the socket calls are thread-safe.
    let descriptor: Int32

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Connects to `127.0.0.1:port`.
    init(port: Int) throws {
        #if canImport(Glibc)
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            descriptor = socket(AF_INET, SOCK_STREAM, 0)
            var on: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let error = errno
            close(descriptor)
            throw Failure(description: "connect() failed: errno \(error)")
        }
    }

    deinit { close(descriptor) }

    /// Sends `bytes` (blocking until the kernel took them all); `false` once the server has
    /// closed the connection.
    func send(_ bytes: [UInt8]) async -> Bool {
        await Self.offPool { [descriptor] in
            var sent = 0
            while sent < bytes.count {
                let result = bytes[sent...].withUnsafeBytes { buffer in
                    #if canImport(Glibc)
                        Glibc.send(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
                    #else
                        Darwin.send(descriptor, buffer.baseAddress, buffer.count, 0)
                    #endif
                }
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { return false }
                sent += result
            }
            return true
        }
    }

    func send(_ text: String) async -> Bool { await send(Array(text.utf8)) }

    /// Reads until the server closes the connection (or resets it) and returns what arrived.
    func readToEnd() async -> [UInt8] {
        await Self.offPool { [descriptor] in
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return received }
                received += buffer[0..<count]
            }
        }
    }

    /// Reads one response head and the body its Content-Length promises (a keep-alive
    /// connection stays open after it); `nil` if the connection ends first.
    func readResponse() async -> (status: Int, head: String, body: [UInt8])? {
        await Self.offPool { [descriptor] in
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let separator: [UInt8] = Array("\r\n\r\n".utf8)
            while true {
                if let end = received.firstRange(of: separator) {
                    let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                    let lines = head.split(separator: "\r\n")
                    let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
                    let length =
                        lines.dropFirst().first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if received.count - end.upperBound >= length {
                        return (status, head, Array(received[end.upperBound..<(end.upperBound + length)]))
                    }
                }
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return nil }
                received += buffer[0..<count]
            }
        }
    }

    /// Runs `work` on a Dispatch thread and returns its result.
    private static func offPool<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}

/// Waits until the server has closed every one of `connections` (a read returns end of file or
/// an error), watching them all with `poll`; returns how many it closed. It gives up when a
/// minute passes with none closing.
func waitUntilClosed(_ connections: [RawConnection]) async -> Int {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            var open = Dictionary(uniqueKeysWithValues: connections.map { ($0.descriptor, $0) })
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !open.isEmpty {
                var descriptors = open.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                let ready = poll(&descriptors, nfds_t(descriptors.count), 60_000)
                guard ready > 0 else { break }
                for watched in descriptors where watched.revents != 0 {
                    let count = buffer.withUnsafeMutableBytes { recv(watched.fd, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { open[watched.fd] = nil }
                }
            }
            continuation.resume(returning: connections.count - open.count)
        }
    }
}
