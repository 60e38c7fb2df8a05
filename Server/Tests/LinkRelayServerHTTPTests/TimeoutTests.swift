import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A client that stops sending is cut off: the connection is closed after the idle timeout,
/// whether it sent nothing, half a head, or half a body.
@Suite("Timeouts", .timeLimit(.minutes(1)))
struct TimeoutTests {
    @Test(
        "a stalled request (nothing, half a head, half a body) is closed after the idle timeout",
        arguments: [
            "", "POST /api/sdk/v1/install HTTP/1.1\r\nHost: x\r\n",
            "POST /api/sdk/v1/install HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"userAgent\":",
        ])
    func stalled(_ sent: String) async throws {
        try await ServerWorld.with { world in
            try await Self.serving(world, ServerConfiguration(port: 0, idleTimeout: .seconds(1))) { port in
                // Blocks until the server closes the connection (the suite's time limit fails a hang).
                let received = try await Self.sendAndReadUntilClosed(sent, port: port)
                #expect(!received.contains("200 OK"), "\(received)")
            }
        }
    }

    /// Runs the whole application (its idle timeout is the HTTP server's, not the router's) on a
    /// free port for `body`, then shuts it down gracefully.
    static func serving(_ world: ServerWorld, _ configuration: ServerConfiguration, _ body: (Int) async throws -> Void) async throws {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = ServerApplication.application(
            store: world.store, configuration: configuration, logger: Logger(label: "test"),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) })
        let group = ServiceGroup(services: [app], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            try await body(port)
            await group.triggerGracefulShutdown()
            try await tasks.next()
        }
    }

    @Test("a body trickled a byte at a time (never idle) is cut off with a 408 at the body timeout")
    func trickled() async throws {
        try await ServerWorld.with { world in
            try await Self.serving(world, ServerConfiguration(port: 0, idleTimeout: .seconds(1), bodyTimeout: .seconds(1))) { port in
                let head =
                    "POST /api/sdk/v1/install HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(world.sdkKey)\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                // The attacker's pace: a byte every 200 ms, well inside the idle timeout; 60
                // bytes would take 12 s.
                let received = try await Self.sendAndReadUntilClosed(
                    head, port: port, trickle: Array(repeating: UInt8(ascii: " "), count: 60))
                #expect(received.hasPrefix("HTTP/1.1 408"), "\(received)")
            }
        }
    }

    /// Connects, sends `text`, and reads until the peer closes; what was read.
    /// With `trickle`, its bytes follow one every 200 ms until they are sent or the peer answers.
    static func sendAndReadUntilClosed(_ text: String, port: Int, trickle: [UInt8] = []) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard connected == 0 else {
                    close(handle)
                    continuation.resume(throwing: POSIXError(.ECONNREFUSED))
                    return
                }
                _ = text.withCString { send(handle, $0, strlen($0), 0) }
                for byte in trickle {
                    // Stop once the server has answered (something to read) or closed.
                    var poller = pollfd(fd: handle, events: Int16(POLLIN), revents: 0)
                    if poll(&poller, 1, 200) != 0 { break }
                    guard send(handle, [byte], 1, Int32(MSG_NOSIGNAL)) == 1 else { break }
                }
                var received = [UInt8]()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = recv(handle, &buffer, buffer.count, 0)
                    if count <= 0 { break }
                    received += buffer[0..<count]
                }
                close(handle)
                continuation.resume(returning: String(decoding: received, as: UTF8.self))
            }
        }
    }
}
