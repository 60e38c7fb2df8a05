import Foundation
import LinkRelay
import LinkRelaySandbox
import LinkRelaySimulator
import LinkRelayTesting
import Synchronization
import Testing

@Suite("The sandbox server", .timeLimit(.minutes(1)))
struct ServerTests {
    @Test("one log line per request: method, path, who answered, status; never headers or bodies")
    func logLines() async throws {
        let lines = LogLines()
        let server = try SandboxServer(sandbox: Sandbox(), port: 0, log: { lines.append($0) })
        let baseURL = try await server.start()
        let transport = URLSessionTransport()
        let secret = "phc_SECRET_KEY"
        let batch = HTTPRequest(
            method: .post, url: baseURL.appendingPathComponent("paylisher/batch"), headers: ["Authorization": "Bearer \(secret)"],
            body: Data(#"{"api_key":"\#(secret)","batch":[]}"#.utf8))
        #expect(try await transport.send(batch).status == 401)
        _ = try await transport.send(HTTPRequest(method: .get, url: baseURL.appendingPathComponent("nowhere")))
        await server.stop()

        let logged = lines.all
        #expect(logged.count == 2)
        #expect(logged.first?.hasPrefix("POST /paylisher/batch [paylisher → api.paylisher.com/batch] 401 ") == true)
        #expect(logged.last?.hasPrefix("GET /nowhere [none] 404 ") == true)
        #expect(logged.allSatisfy { !$0.contains(secret) })
    }

    @Test("the admin client reports the sandbox's refusal with its status and message")
    func adminErrors() async throws {
        let server = try SandboxServer(sandbox: Sandbox(), port: 0)
        let admin = SandboxAdminClient(baseURL: try await server.start())
        let click = SandboxAPI.WebClick(url: url("https://go.sandbox.test/missing"), device: phone)
        await #expect(throws: DeepLinkError.self) { try await admin.recordWebClick(click, on: .linkForty) }
        do {
            try await admin.recordWebClick(click, on: .linkForty)
        } catch let error as DeepLinkError {
            #expect(error.code == .server(status: 400))
            #expect(error.message.contains("The LinkForty emulation has no link for https://go.sandbox.test/missing."))
        }
        await server.stop()
        do {
            _ = try await admin.describe()
            Issue.record("a stopped sandbox answered")
        } catch let error as DeepLinkError {
            #expect(error.code == .network)
        }
    }

    @Test("a port in use is a clear error at start")
    func portInUse() async throws {
        let first = try SandboxServer(sandbox: Sandbox(), port: 0)
        let taken = try await first.start()
        let port = try #require(taken.port.flatMap { UInt16(exactly: $0) })
        let second = try SandboxServer(sandbox: Sandbox(), port: port)
        await #expect(throws: (any Error).self) { try await second.start() }
        await first.stop()
    }
}

/// Lines collected from the server's log closure.
final class LogLines: Sendable {
    private let lines = Mutex([String]())
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
