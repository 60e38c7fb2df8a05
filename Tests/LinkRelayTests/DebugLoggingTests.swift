import Foundation
import LinkRelayTesting
import Testing

@_spi(Backend) @testable import LinkRelay

/// At debug level the log shows the conversation with the provider: one line per request with
/// its status and duration, and the client's decisions; never a key.
@Suite("Debug logging shows the conversation", .timeLimit(.minutes(1)))
struct DebugLoggingTests {
    /// A backend that puts its key where keys go: a header and the query.
    struct KeyedBackend: DeepLinkBackend {
        static let key = "sk_live_SECRET_42"
        let id: BackendID = "keyed"
        var secrets: [String] { [Self.key] }
        func canHandle(_ url: URL) -> Bool { url.host == "go.acme.app" }
        func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
            let url = link.url
            let request = HTTPRequest(
                method: .get, url: URL(string: "https://api.acme.test/v1/resolve?key=\(Self.key)&code=\(url.lastPathComponent)")!,
                headers: ["Authorization": "Bearer \(Self.key)"])
            let response = try await context.transport.send(request)
            guard response.status == 200 else {
                throw response.serverError("acme answered \(response.status) for key \(Self.key).", backend: id, url: url)
            }
            return try LinkParser.parse(url).deepLink(provider: id, resolution: .server)
        }
        func matchInstall(context: BackendContext) async throws -> InstallMatch { .organic(.organic()) }
    }

    func client(_ transport: StubTransport, logs: LogCollector, level: LogSink.Level = .debug) -> DeepLinkClient {
        makeClient(KeyedBackend(), transport: transport) {
            $0.retryPolicy = .none
            $0.logSink = LogSink(minimumLevel: level) { record in logs.sink.emit(record) }
        }
    }

    @Test("one line per provider call, with method, host, path, status, duration and size; the key nowhere")
    func providerCalls() async throws {
        let transport = StubTransport()
        transport.stub(.get, "/v1/resolve", [.json(#"{"ok":true}"#), .status(503)])
        let logs = LogCollector()
        let client = client(transport, logs: logs)
        var links = client.deepLinks().makeAsyncIterator()
        client.handle(URL(string: "https://go.acme.app/a")!)
        _ = await links.next()
        client.handle(URL(string: "https://go.acme.app/b")!)
        _ = await links.next()
        let calls = logs.lines.filter { $0.hasPrefix("GET api.acme.test/v1/resolve?… → ") }
        #expect(calls.count == 2, "\(logs.lines)")
        #expect(calls.first == "GET api.acme.test/v1/resolve?… → 200 in 0 ms, 11 bytes")
        #expect(calls.last?.hasPrefix("GET api.acme.test/v1/resolve?… → 503 in 0 ms") == true)
        // The decisions: what was delivered, and the fallback with its reason.
        #expect(logs.lines.contains { $0.hasPrefix("Delivering https://go.acme.app/a (keyed, resolved by the server)") })
        #expect(logs.lines.contains { $0.hasPrefix("Delivering the locally parsed link (the provider failed with server(503))") })
        #expect(logs.lines.allSatisfy { !$0.contains(KeyedBackend.key) }, "\(logs.lines)")
        await client.shutdown()
    }

    @Test("a request that gets no answer is a line too")
    func failedCall() async throws {
        let transport = StubTransport()
        transport.stub(.get, "/v1/resolve", .failure(DeepLinkError(.network, "connection lost")))
        let logs = LogCollector()
        let client = client(transport, logs: logs)
        var links = client.deepLinks().makeAsyncIterator()
        client.handle(URL(string: "https://go.acme.app/a")!)
        _ = await links.next()
        #expect(logs.lines.contains("GET api.acme.test/v1/resolve?… → failed (network) after 0 ms"), "\(logs.lines)")
        await client.shutdown()
    }

    @Test("below debug, requests go straight to the transport")
    func noCostWhenOff() async {
        let logs = LogCollector()
        let client = client(StubTransport(), logs: logs, level: .info)
        #expect(!(await client.makeContext().transport is LoggingTransport))
        #expect(
            await makeClient(KeyedBackend()) { $0.logSink = .console(minimumLevel: .debug) }.makeContext().transport is LoggingTransport)
    }
}
