import Foundation
import LinkRelayTesting
import Testing

@_spi(Backend) @testable import LinkRelay

@Suite("Mistakes are loud", .timeLimit(.minutes(1)))
struct LoudMistakesTests {
    let clock = ManualClock()

    /// The failures published until a marker link is delivered.
    func failures(_ client: DeepLinkClient, _ events: AsyncStream<DeepLinkEvent>) async -> [DeepLinkError] {
        client.handle(url("myapp://marker"))
        var failures: [DeepLinkError] = []
        for await event in events {
            if case .failure(let error) = event { failures.append(error) }
            if event.link?.path == "/marker" { break }
        }
        return failures
    }

    static let rejected = DeepLinkError(.server(status: 401), "in-memory answered 401.", backend: "in-memory", status: 401)
    static let forbidden = DeepLinkError(.server(status: 403), "in-memory answered 403.", backend: "in-memory", status: 403)

    @Test("a 401 or 403 from any call reaches the app once per client as a failure naming the API key, and the log as a warning")
    func rejectedKey() async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        backend.script(url("https://go.acme.app/a"), .failure(Self.rejected))
        backend.script(url("https://go.acme.app/b"), .failure(Self.forbidden))
        backend.script(url("myapp://marker"), .parsed)
        let logs = LogCollector()
        let client = makeClient(backend, clock: clock) {
            $0.retryPolicy = .none
            $0.logSink = logs.sink
        }
        let events = client.linkEvents()
        client.handle(url("https://go.acme.app/a"))
        client.handle(url("https://go.acme.app/b"))
        let published = await failures(client, events)
        let keyFailures = published.filter { $0.message.contains("rejected the API key") }
        #expect(keyFailures.count == 1, "\(published.map(\.message))")
        #expect(keyFailures.first?.status == 401)
        #expect(keyFailures.first?.message.contains("resolving the link") == true)
        #expect(logs.lines.filter { $0.contains("rejected the API key") }.count == 1)
    }

    @Test(
        "every kind of call: the install match, events, link creation",
        arguments: ["install", "events", "link"])
    func everyCall(_ call: String) async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        backend.script(url("myapp://marker"), .parsed)
        let client = makeClient(backend, clock: clock) { $0.retryPolicy = .none }
        let events = client.linkEvents()
        switch call {
        case "install":
            backend.scriptInstall(.failure(Self.forbidden))
            await client.start()
        case "events":
            backend.scriptInstall(.success(InstallMatch(attribution: .organic(), link: nil)))
            backend.scriptEventSending(.failure(Self.rejected))
            await client.start()
            try await client.track("signup")
            await client.flushEvents()
        default:
            backend.scriptInstall(.success(InstallMatch(attribution: .organic(), link: nil)))
            backend.scriptLinkCreation(Self.rejected)
            _ = try? await client.createLink(LinkRequest(deepLinkPath: "/x"))
        }
        let keyFailures = await failures(client, events).filter { $0.message.contains("rejected the API key") }
        #expect(keyFailures.count == 1)
        if call == "install" {
            // The message the getting-started article shows.
            #expect(
                keyFailures.first?.message
                    == "The provider rejected the API key: in-memory answered 403 while asking for the install match. Check the key (and its permissions) in the backend's configuration."
            )
        }
    }

    @Test("a 401 or 403 is .unauthorized, never retried, with its status")
    func unauthorizedCode() {
        for status in [401, 403] {
            let error = HTTPResponse(status: status).serverError("refused", backend: "in-memory")
            #expect(error.code == .unauthorized)
            #expect(error.status == status)
            #expect(!error.isRetryable)
        }
        #expect(HTTPResponse(status: 400).serverError("bad", backend: "in-memory").code == .server(status: 400))
    }

    @Test("an install match refused for the key is not asked again with the same key; a new key starts it over")
    func rejectedMatchWaitsForAnotherKey() async throws {
        let store = InMemoryStore()
        let refused = DeepLinkError(.unauthorized, "in-memory answered 401.", backend: "in-memory", status: 401)
        func launch(key: String, _ result: Result<InstallMatch, DeepLinkError>) async -> (InstallOutcome, matches: Int) {
            let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"], secrets: [key])
            backend.scriptInstall(result)
            let client = makeClient(backend, clock: clock, store: store) { $0.retryPolicy = .none }
            await client.start()
            let outcome = await client.installOutcome()
            await client.shutdown()
            return (outcome, backend.installMatchCount)
        }
        let first = await launch(key: "sk_old", .failure(refused))
        #expect(first.matches == 1)
        guard case .failed(let error) = first.0 else {
            Issue.record("expected a failure, got \(first.0)")
            return
        }
        #expect(error.code == .unauthorized)
        // The same key on the next launches: no request, the same failure.
        for _ in 0..<4 {
            let again = await launch(key: "sk_old", .success(InstallMatch(attribution: .organic(installID: "i"), link: nil)))
            #expect(again.matches == 0)
            #expect(again.0 == first.0)
        }
        // An update with another key: asked again, and it counts as a first try.
        let fixed = await launch(key: "sk_new", .success(InstallMatch(attribution: .organic(installID: "i"), link: nil)))
        #expect(fixed.matches == 1)
        #expect(fixed.0 == .organic(.organic(installID: "i")))
        // The stored record never holds the key.
        let stored = String(decoding: try #require(try store.data(forKey: InstallRecord.key)), as: UTF8.self)
        #expect(!stored.contains("sk_old") && !stored.contains("sk_new"))
    }

    @Test("installOutcome() before start() says why it waits; currentInstallOutcome reads without waiting")
    func outcomeBeforeStart() async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        backend.scriptInstall(.success(InstallMatch(attribution: .organic(installID: "i"), link: nil)))
        let logs = LogCollector()
        let client = makeClient(backend, clock: clock) {
            $0.retryPolicy = .none
            $0.logSink = logs.sink
        }
        #expect(await client.currentInstallOutcome == nil)
        let waiting = Task { await client.installOutcome() }
        // The waiter's reminder is a timer on the client's clock.
        await clock.waitForSleepers(count: 1, dueAtOrAfter: DeepLinkClient.outcomeWaitWarningDelay)
        clock.advance(by: DeepLinkClient.outcomeWaitWarningDelay)
        await logs.waitForLine(containing: "start() has not been called")
        #expect(logs.lines.filter { $0.contains("start() has not been called") }.count == 1)
        await client.start()
        #expect(await waiting.value == .organic(.organic(installID: "i")))
        #expect(await client.currentInstallOutcome == .organic(.organic(installID: "i")))
    }

    @Test("a link resolved on the device by design says so, not that a backend was offline; stored links still read")
    func onDevice() throws {
        let link = try LinkParser.parse(url("myapp://products/42")).deepLink(provider: "x", resolution: .local(.onDevice))
        #expect(link.resolution == .local(.onDevice))
        let stored = Data(#"{"local":{"_0":{"onDevice":{}}}}"#.utf8)
        #expect(try JSONDecoder().decode(DeepLink.Resolution.self, from: stored) == .local(.onDevice))
        let encoded = String(decoding: try JSONEncoder().encode(DeepLink.Resolution.local(.onDevice)), as: UTF8.self)
        #expect(encoded == #"{"local":{"_0":{"onDevice":{}}}}"#)
        #expect(try JSONDecoder().decode(DeepLink.Resolution.self, from: Data(encoded.utf8)) == .local(.onDevice))
    }
}
