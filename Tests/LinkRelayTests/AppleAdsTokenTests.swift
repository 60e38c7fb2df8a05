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
            let client = makeClient(InMemoryBackend()) { $0.appleAds = AppleAdsAttribution(source: ScriptedSource(clock: ManualClock()), timeout: given) }
            #expect(client.configuration.appleAds?.timeout == expected, "\(given)")
        }
        let backend = InMemoryBackend(hosts: ["go.acme.app"], acceptsAppleAdsToken: true)
        let source = ScriptedSource(clock: ManualClock())
        await client(backend, source: source, timeout: 0).start()
        #expect(source.asked.withLock { $0 } == 0 && backend.contexts.last?.appleAdsToken == nil)
    }

    @Test("off on Linux by default: no AdServices here")
    func defaultHere() {
        #expect(DeepLinkClient.Configuration().appleAds == nil)
    }
}
