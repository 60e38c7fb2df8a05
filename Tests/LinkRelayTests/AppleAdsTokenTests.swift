import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// The Apple Ads attribution token: asked once per install for a backend that takes it, the
/// install report waiting for it at most its timeout on the client's clock, links never, and
/// the token never in a log line.
@Suite("Apple Ads attribution token", .timeLimit(.minutes(1)))
struct AppleAdsTokenTests {
    static let token = "YWRzLXRva2VuLTEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5eg=="

    /// A token source that answers after `delay` seconds of the test's clock, or fails.
    final class ScriptedSource: AppleAdsTokenSource, Sendable {
        let clock: ManualClock
        let delay: TimeInterval
        let result: Result<String, DeepLinkError>
        let asked = Locked(0)

        init(clock: ManualClock, delay: TimeInterval = 0, result: Result<String, DeepLinkError> = .success(AppleAdsTokenTests.token)) {
            self.clock = clock
            self.delay = delay
            self.result = result
        }

        func attributionToken() async throws -> String {
            asked.withLock { $0 += 1 }
            if delay > 0 { try await clock.sleep(for: delay) }
            return try result.get()
        }
    }

    func client(
        _ backend: InMemoryBackend, source: ScriptedSource?, logs: LogCollector? = nil, timeout: TimeInterval = 0.5
    ) -> DeepLinkClient {
        makeClient(backend, clock: source?.clock ?? ManualClock()) {
            $0.retryPolicy = .none
            $0.appleAds = source.map { AppleAdsAttribution(source: $0, timeout: timeout) }
            if let logs { $0.logSink = logs.sink }
        }
    }

    @Test("a backend that takes it gets the token in its install report, once; one that does not is never asked")
    func offeredToThoseWhoTakeIt() async {
        let clock = ManualClock()
        let taking = InMemoryBackend(hosts: ["go.acme.app"], acceptsAppleAdsToken: true)
        let source = ScriptedSource(clock: clock)
        let client = client(taking, source: source)
        await client.start()
        #expect(taking.contexts.first?.appleAdsToken == Self.token)
        #expect(source.asked.withLock { $0 } == 1)

        let other = InMemoryBackend(hosts: ["go.acme.app"])
        let otherSource = ScriptedSource(clock: clock)
        await self.client(other, source: otherSource).start()
        #expect(other.installMatchCount == 1 && other.contexts.first?.appleAdsToken == nil)
        #expect(otherSource.asked.withLock { $0 } == 0)
    }

    @Test("the report waits at most the timeout (manual clock), then goes without it; a link handed over meanwhile is delivered at once")
    func boundedWait() async throws {
        let clock = ManualClock()
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"], acceptsAppleAdsToken: true)
        let source = ScriptedSource(clock: clock, delay: 30)
        let client = client(backend, source: source)
        let links = client.deepLinks()
        let started = Task { await client.start() }
        await clock.waitForSleepers(count: 2)  // the hanging system call and the 0.5 s deadline
        #expect(backend.installMatchCount == 0)
        // A link during the wait: delivered without waiting for the token.
        client.handle(url("myapp://cart"))
        var iterator = links.makeAsyncIterator()
        #expect(await iterator.next()?.path == "/cart")
        #expect(backend.installMatchCount == 0)
        clock.advance(by: 0.5)
        _ = await started.value
        #expect(backend.installMatchCount == 1 && backend.contexts.last?.appleAdsToken == nil)
        #expect(await client.installOutcome() == .organic(.organic()))
    }

    @Test("a failing system call or a malformed token is left out; the token never appears in a log line")
    func failuresAndLogs() async {
        for (result, name) in [
            (Result<String, DeepLinkError>.failure(DeepLinkError(.network, "no network")), "failure"),
            (.success(""), "empty"), (.success("has space"), "space"), (.success(String(repeating: "A", count: 4097)), "long"),
        ] {
            let backend = InMemoryBackend(hosts: ["go.acme.app"], acceptsAppleAdsToken: true)
            await client(backend, source: ScriptedSource(clock: ManualClock(), result: result)).start()
            #expect(backend.installMatchCount == 1 && backend.contexts.last?.appleAdsToken == nil, "\(name)")
        }
        let logs = LogCollector()
        let backend = InMemoryBackend(hosts: ["go.acme.app"], acceptsAppleAdsToken: true)
        let client = client(backend, source: ScriptedSource(clock: ManualClock()), logs: logs)
        await client.start()
        #expect(backend.contexts.last?.appleAdsToken == Self.token)
        #expect(!logs.lines.contains { $0.contains(Self.token) })
    }

    @Test("the timeout accepts every value: NaN, negative and 0 ask for no token; above 5 s (infinity too) counts as 5 s")
    func timeoutBounds() async {
        for (given, expected) in [(-1.0, 0.0), (.nan, 0), (0, 0), (0.25, 0.25), (60, 5), (.infinity, 5)] as [(Double, Double)] {
            let client = makeClient(InMemoryBackend()) {
                $0.appleAds = AppleAdsAttribution(source: ScriptedSource(clock: ManualClock()), timeout: given)
            }
            #expect(client.configuration.appleAds?.timeout == expected, "\(given)")
        }
        let backend = InMemoryBackend(hosts: ["go.acme.app"], acceptsAppleAdsToken: true)
        let source = ScriptedSource(clock: ManualClock())
        await client(backend, source: source, timeout: 0).start()
        #expect(source.asked.withLock { $0 } == 0 && backend.contexts.last?.appleAdsToken == nil)
    }

    @Test("off on Linux by default: no AdServices here; the wait defaults to 2 s (the call has been measured at 1.5 s)")
    func defaultHere() {
        #expect(DeepLinkClient.Configuration().appleAds == nil)
        #expect(AppleAdsAttribution(source: ScriptedSource(clock: ManualClock())).timeout == 2)
    }

    // MARK: Asked at once, kept when late (issue 62.3)

    @Test(
        "asked as soon as the run knows the install is new, in parallel: while the pasteboard waits for the user the token comes, and the report waits no longer"
    )
    func askedAtOnce() async {
        let clock = ManualClock()
        let backend = InMemoryBackend(hosts: ["go.acme.app"], acceptsAppleAdsToken: true)
        let source = ScriptedSource(clock: clock, delay: 1.5)
        let pasteboard = InMemoryPasteboard()
        pasteboard.copy("https://elsewhere.example/page")
        pasteboard.holdsReads = true
        let client = makeClient(backend, clock: clock) {
            $0.retryPolicy = .none
            $0.appleAds = AppleAdsAttribution(source: source, timeout: 2)
            $0.pasteboardCheck = PasteboardCheck(pasteboard: pasteboard)
        }
        let started = Task { await client.start() }
        while pasteboard.heldReadCount == 0 { await Task.yield() }
        // The pasteboard's read is held (the user has not answered "Allow Paste"), and the system
        // call for the token is under way beside it.
        await clock.waitForSleepers(count: 2)  // the system call's 1.5 s and the pasteboard's deadline
        #expect(source.asked.withLock { $0 } == 1)
        clock.advance(by: 1.5)
        pasteboard.answerReads()
        _ = await started.value
        #expect(backend.installMatchCount == 1 && backend.contexts.last?.appleAdsToken == Self.token)
        #expect(clock.uptime == 1.5)
        #expect(source.asked.withLock { $0 } == 1)
    }

    /// A backend that names its installs and takes a late token, with its install match.
    func lateTaking() -> InMemoryBackend {
        let backend = InMemoryBackend(hosts: ["go.acme.app"], acceptsLateAppleAdsToken: true)
        backend.scriptInstall(.success(.organic(.organic(installID: "inst-1"))))
        return backend
    }

    func lateClient(
        _ backend: InMemoryBackend, clock: ManualClock, store: InMemoryStore, source: ScriptedSource, logs: LogCollector? = nil
    ) -> DeepLinkClient {
        makeClient(backend, clock: clock, store: store) {
            $0.retryPolicy = .none
            $0.processLaunch = UUID()
            $0.appleAds = AppleAdsAttribution(source: source, timeout: 2)
            if let logs { $0.logSink = logs.sink }
        }
    }

    /// Starts `client` with a system call that answers after 30 s: the report goes without the
    /// token at 2 s, and the token comes 28 s later.
    func startWithLateToken(_ client: DeepLinkClient, clock: ManualClock) async {
        let started = Task { await client.start() }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 2)
        _ = await started.value
        clock.advance(by: 28)
    }

    func storedLateToken(_ store: InMemoryStore) -> LateAppleAdsToken? {
        store.load(InstallRecord.self, forKey: InstallRecord.key, logger: .silent)?.lateAppleAdsToken
    }

    @Test("a token that comes after the report is kept and added to the install the report named, once; nothing is left stored")
    func lateTokenAdded() async {
        let clock = ManualClock()
        let store = InMemoryStore()
        let backend = lateTaking()
        let logs = LogCollector()
        let client = lateClient(backend, clock: clock, store: store, source: ScriptedSource(clock: clock, delay: 30), logs: logs)
        await startWithLateToken(client, clock: clock)
        #expect(backend.contexts.first?.appleAdsToken == nil)
        await client.appleAdsTokenSettled()
        #expect(backend.lateAppleAdsTokens.map(\.token) == [Self.token] && backend.lateAppleAdsTokens.map(\.installID) == ["inst-1"])
        #expect(storedLateToken(store) == nil)
        #expect(await client.installOutcome() == .organic(.organic(installID: "inst-1")))
        #expect(!logs.lines.contains { $0.contains(Self.token) })
        // The next launch has nothing to add, and asks the system for nothing.
        let source = ScriptedSource(clock: clock)
        await lateClient(backend, clock: clock, store: store, source: source).start()
        #expect(backend.lateAppleAdsTokens.count == 1 && source.asked.withLock { $0 } == 0)
    }

    @Test("a late token whose request fails is added on the next launch; one older than 24 hours is dropped unsent")
    func lateTokenNextLaunch() async {
        for (hours, added) in [(1.0, true), (24.5, false)] {
            let clock = ManualClock()
            let store = InMemoryStore()
            let backend = lateTaking()
            backend.scriptLateAppleAdsToken(.failure(DeepLinkError(.network, "offline")))
            let client = lateClient(backend, clock: clock, store: store, source: ScriptedSource(clock: clock, delay: 30))
            await startWithLateToken(client, clock: clock)
            await client.appleAdsTokenSettled()
            #expect(storedLateToken(store)?.token == Self.token, "kept after a failure")
            await client.shutdown()

            clock.advance(by: hours * 3600)
            backend.scriptLateAppleAdsToken(.success(()))
            let next = lateClient(backend, clock: clock, store: store, source: ScriptedSource(clock: clock))
            await next.start()
            #expect(backend.lateAppleAdsTokens.count == (added ? 2 : 1), "\(hours) h")
            #expect(storedLateToken(store) == nil, "\(hours) h")
            #expect(backend.installMatchCount == 1)
        }
    }

    @Test(
        "a server without the endpoint (LinkForty Core: .unsupported) and a backend that takes no late token: the token is dropped, not tried again"
    )
    func lateTokenRefused() async {
        let clock = ManualClock()
        let store = InMemoryStore()
        let backend = lateTaking()
        backend.scriptLateAppleAdsToken(.failure(DeepLinkError(.unsupported, "no such route")))
        let client = lateClient(backend, clock: clock, store: store, source: ScriptedSource(clock: clock, delay: 30))
        await startWithLateToken(client, clock: clock)
        await client.appleAdsTokenSettled()
        #expect(storedLateToken(store) == nil)

        let reportOnly = InMemoryBackend(hosts: ["go.acme.app"], acceptsAppleAdsToken: true)
        reportOnly.scriptInstall(.success(.organic(.organic(installID: "inst-2"))))
        let otherStore = InMemoryStore()
        let logs = LogCollector()
        let other = lateClient(reportOnly, clock: clock, store: otherStore, source: ScriptedSource(clock: clock, delay: 30), logs: logs)
        await startWithLateToken(other, clock: clock)
        await other.appleAdsTokenSettled()
        #expect(logs.lines.contains { $0.contains("cannot take it later, so it is dropped") })
        #expect(reportOnly.lateAppleAdsTokens.isEmpty && storedLateToken(otherStore) == nil)
    }
}
