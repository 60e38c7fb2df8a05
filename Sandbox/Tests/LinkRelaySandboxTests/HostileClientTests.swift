import Foundation
import LinkRelay
import LinkRelaySandbox
import LinkRelaySimulator
import Testing

/// What an attacker on the network can send the sandbox (the README shows `--host 0.0.0.0`).
/// Timeouts here are short real ones; every wait is for an event (an answer, a closed socket),
/// so a slow machine makes a test slower, never wrong.
@Suite("The sandbox server under hostile clients", .timeLimit(.minutes(1)))
struct HostileClientTests {
    /// A server with `limits`, its port, and its log lines as they come.
    struct Running {
        let server: SandboxServer
        let baseURL: URL
        let port: Int
        let log: AsyncStream<String>

        init(limits: SandboxServer.Limits = SandboxServer.Limits()) async throws {
            let (log, lines) = AsyncStream.makeStream(of: String.self)
            self.log = log
            server = try SandboxServer(sandbox: Sandbox(), port: 0, limits: limits, log: { lines.yield($0) })
            baseURL = try await server.start()
            port = try #require(baseURL.port)
        }

        /// The admin API answers.
        func adminAnswers() async throws -> Bool {
            try await SandboxAdminClient(baseURL: baseURL).describe().providers.count == 4
        }

        /// Waits for the first log line containing `text`.
        func logLine(containing text: String) async -> String? {
            for await line in log where line.contains(text) { return line }
            return nil
        }
    }

    @Test("a 1 MB header line is refused with 431 and the connection closed; the admin API answers meanwhile")
    func megabyteHeaderLine() async throws {
        let running = try await Running()
        let connection = try RawConnection(port: running.port)
        let line = "GET /_admin HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + String(repeating: "a", count: 1 << 20) + "\r\n\r\n"
        // The server answers as soon as the line passes its limit and closes before the rest is
        // sent: send and read at once.
        async let sent = connection.send(line)
        let response = await connection.readResponse()
        _ = await sent
        #expect(response?.status == 431)
        let message = String(decoding: response?.body ?? [], as: UTF8.self)
        #expect(message.contains("over 32768 bytes"))
        #expect(try await running.adminAnswers())
        #expect(await running.logLine(containing: "[refused] 431") != nil)
        await running.server.stop()
    }

    @Test("a request line over the limit, and more header fields than the limit, are refused with 431")
    func headerLimits() async throws {
        let running = try await Running(limits: .init(maximumHeaderSize: 4096, maximumHeaderCount: 20))
        let longTarget = try RawConnection(port: running.port)
        #expect(await longTarget.send("GET /_admin?" + String(repeating: "q", count: 5000) + " HTTP/1.1\r\nHost: a\r\n\r\n"))
        #expect(await longTarget.readResponse()?.status == 431)

        let manyFields = try RawConnection(port: running.port)
        let fields = (0..<21).map { "X-F\($0): v\r\n" }.joined()
        #expect(await manyFields.send("GET /_admin HTTP/1.1\r\nHost: a\r\n" + fields + "\r\n"))
        #expect(await manyFields.readResponse()?.status == 431)

        // At the limits, the request is served.
        let atLimit = try RawConnection(port: running.port)
        let nineteen = (0..<19).map { "X-F\($0): v\r\n" }.joined()
        #expect(await atLimit.send("GET /_admin HTTP/1.1\r\nHost: a\r\n" + nineteen + "\r\n"))
        #expect(await atLimit.readResponse()?.status == 200)
        await running.server.stop()
    }

    @Test("2,000 connections that stop halfway through their request: the admin API answers, and each is closed at the idle timeout")
    func slowloris() async throws {
        let running = try await Running(limits: .init(idleTimeout: 1))
        var connections: [RawConnection] = []
        for index in 0..<2_000 {
            let connection = try RawConnection(port: running.port)
            // Half send a head that never ends; half send nothing at all.
            if index.isMultiple(of: 2) {
                #expect(await connection.send("GET /_admin HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "))
            }
            connections.append(connection)
        }
        #expect(try await running.adminAnswers())
        #expect(await waitUntilClosed(connections) == 2_000)
        #expect(try await running.adminAnswers())
        await running.server.stop()
    }

    @Test("a head sent a byte at a time does not keep the connection: the idle timeout counts from when it opened")
    func trickledHead() async throws {
        let running = try await Running(limits: .init(idleTimeout: 0.5))
        let connection = try RawConnection(port: running.port)
        let head = Array("GET /_admin HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + String(repeating: "s", count: 10_000))
        var sent = 0
        // A client pacing itself, 20 ms a byte: the server closes after about 25 of them.
        for byte in head {
            guard await connection.send(String(byte)) else { break }
            sent += 1
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(sent < head.count)
        #expect(await connection.readToEnd().isEmpty)
        await running.server.stop()
    }

    @Test("a body over the limit is refused with 413: declared by Content-Length before it is sent, or chunked as it arrives")
    func bodyLimit() async throws {
        let running = try await Running(limits: .init(maximumBodySize: 1024))
        let declared = try RawConnection(port: running.port)
        #expect(await declared.send("POST /_admin/faults HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000000\r\n\r\n"))
        let refused = await declared.readResponse()
        #expect(refused?.status == 413)
        let message = String(decoding: refused?.body ?? [], as: UTF8.self)
        #expect(message.contains("over 1024 bytes"))
        #expect(await declared.readToEnd().isEmpty)

        let chunked = try RawConnection(port: running.port)
        let chunk = "200\r\n" + String(repeating: "x", count: 512) + "\r\n"
        async let sent = chunked.send(
            "POST /_admin/faults HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + chunk + chunk)
        #expect(await chunked.readResponse()?.status == 413)
        _ = await sent

        // A body of exactly the limit reaches the sandbox (which refuses it as a fault rule).
        let atLimit = try RawConnection(port: running.port)
        let body = String(repeating: " ", count: 1024)
        #expect(await atLimit.send("PUT /_admin/faults HTTP/1.1\r\nHost: a\r\nContent-Length: 1024\r\n\r\n" + body))
        #expect(await atLimit.readResponse()?.status == 400)
        await running.server.stop()
    }

    @Test("a body that stops arriving is answered 408 at the transfer timeout")
    func stalledBody() async throws {
        let running = try await Running(limits: .init(transferTimeout: 0.5))
        let connection = try RawConnection(port: running.port)
        #expect(await connection.send("PUT /_admin/faults HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{\"path\":"))
        #expect(await connection.readResponse()?.status == 408)
        #expect(await connection.readToEnd().isEmpty)
        await running.server.stop()
    }

    @Test("a client that does not read its response loses the connection at the transfer timeout")
    func unreadResponse() async throws {
        let running = try await Running(limits: .init(transferTimeout: 0.5))
        let admin = SandboxAdminClient(baseURL: running.baseURL)
        try await admin.setFault(.init(path: "/api/sdk/v1/resolve/big", fault: .oversizedBody(64 << 20)))
        let connection = try RawConnection(port: running.port)
        #expect(await connection.send("GET /linkforty/api/sdk/v1/resolve/big HTTP/1.1\r\nHost: a\r\n\r\n"))
        let line = await running.logLine(containing: "/api/sdk/v1/resolve/big")
        #expect(line?.contains("response not taken within 0.5 s, connection closed") == true)
        let received = await connection.readToEnd()
        #expect(received.count < 64 << 20)
        #expect(try await running.adminAnswers())
        await running.server.stop()
    }

    @Test("bytes that are not HTTP are answered 400 and the connection closed")
    func notHTTP() async throws {
        let running = try await Running()
        let connection = try RawConnection(port: running.port)
        #expect(await connection.send("\u{16}\u{03}\u{01}\u{02}\u{00} hello\r\n\r\n"))
        #expect(await connection.readResponse()?.status == 400)
        #expect(await connection.readToEnd().isEmpty)
        await running.server.stop()
    }

    @Test(
        "limits no server can use are refused when the server is made",
        arguments: [
            SandboxServer.Limits(maximumHeaderSize: 0), .init(maximumHeaderCount: -1), .init(maximumBodySize: 0),
            .init(idleTimeout: 0), .init(idleTimeout: -1), .init(transferTimeout: .nan),
        ])
    func invalidLimits(_ limits: SandboxServer.Limits) throws {
        #expect(throws: DeepLinkError.self) { try SandboxServer(sandbox: Sandbox(), port: 0, limits: limits) }
        do {
            _ = try SandboxServer(sandbox: Sandbox(), port: 0, limits: limits)
        } catch let error as DeepLinkError {
            #expect(error.code == .invalidConfiguration)
        }
    }

    @Test("an infinite or huge timeout is taken (as none, or as a day)")
    func unboundedTimeouts() async throws {
        let running = try await Running(limits: .init(idleTimeout: .infinity, transferTimeout: 1e300))
        #expect(try await running.adminAnswers())
        await running.server.stop()
    }
}
