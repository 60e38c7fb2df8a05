import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

@Suite("First launch and the install outcome", .timeLimit(.minutes(1)))
struct InstallOutcomeTests {
    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
    let store = InMemoryStore()
    let clock = ManualClock()

    static let clicked = DeepLink.fixture(path: "/products/42", host: "go.acme.app", origin: .deferred, campaign: Campaign(id: "spring"))
    static let attribution = InstallAttribution(
        installID: "inst-1", isAttributed: true, confidence: .init(score: 90), matchedFactors: ["ip", "user_agent"],
        method: .fingerprint)

    func scriptAttributed(confidence: Int = 90, delay: TimeInterval = 0) {
        var attribution = Self.attribution
        attribution.confidence = .init(score: confidence)
        backend.scriptInstall(.success(InstallMatch(attribution: attribution, link: Self.clicked)), delay: delay)
    }

    /// A client on the shared store: each call is one launch of the app.
    func launch(_ configure: (inout DeepLinkClient.Configuration) -> Void = { _ in }) -> DeepLinkClient {
        makeClient(backend, clock: clock, store: store) {
            $0.retryPolicy = .none
            configure(&$0)
        }
    }

    @Test("an attributed install: one outcome, one deferred link, replayed outcome for later subscribers")
    func attributedOnce() async throws {
        scriptAttributed()
        let client = launch()
        let events = client.linkEvents()
        await client.start()
        let outcome = await client.installOutcome()
        #expect(outcome == .attributed(Self.clicked, Self.attribution))
        let received = await eventsUntilMarker(client, events)
        #expect(received == [.install(outcome), .link(Self.clicked)])
        #expect(received.compactMap(\.link).first?.origin == .deferred)
        // A later subscriber gets the outcome replayed, and no second link.
        let later = client.linkEvents()
        #expect(await eventsUntilMarker(client, later) == [.install(outcome)])
        #expect(backend.installMatchCount == 1)
    }

    @Test("a match without a link the app can open is attributed, never organic; nothing is delivered and it is not asked again")
    func attributedWithoutLink() async throws {
        var attribution = Self.attribution
        attribution.linkID = "c2f1a7e4"
        backend.scriptInstall(.success(InstallMatch(attribution: attribution, link: nil)))
        let client = launch()
        let events = client.linkEvents()
        await client.start()
        let outcome = await client.installOutcome()
        #expect(outcome == .attributedWithoutLink(attribution))
        #expect(outcome.isAttributed)
        #expect(outcome.attribution?.linkID == "c2f1a7e4")
        #expect(await eventsUntilMarker(client, events) == [.install(outcome)])
        await client.shutdown()
        // The next launch restores the outcome without a request, as the providers' SDKs mark
        // the check completed.
        let next = launch()
        await next.start()
        #expect(await next.installOutcome() == outcome)
        #expect(backend.installMatchCount == 1)
        await next.shutdown()
    }

    @Test("concurrent and repeated start calls share one install request")
    func startOnce() async throws {
        scriptAttributed()
        let client = launch()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<10 { group.addTask { await client.start() } }
        }
        await client.start()
        #expect(backend.installMatchCount == 1)
    }

    @Test("installOutcome waits for start, and callers share the result")
    func outcomeWaitsForStart() async throws {
        backend.scriptInstall(.success(.organic(.organic(installID: "i-9"))))
        let client = launch()
        let waiting = (0..<3).map { _ in Task { await client.installOutcome() } }
        await client.start()
        for task in waiting {
            #expect(await task.value == .organic(.organic(installID: "i-9")))
        }
    }

    @Test("a caller that stops waiting for the outcome gets a cancelled failure")
    func outcomeWaitCancelled() async throws {
        let client = launch()
        let waiting = Task { await client.installOutcome() }
        waiting.cancel()
        guard case .failed(let error) = await waiting.value else {
            Issue.record("expected a failed outcome")
            return
        }
        #expect(error.code == .cancelled)
    }

    @Test("an organic install is an outcome, not an error, and delivers no link")
    func organic() async throws {
        backend.scriptInstall(.success(.organic(.organic(installID: "inst-2"))))
        let client = launch()
        let events = client.linkEvents()
        await client.start()
        #expect(await client.installOutcome() == .organic(.organic(installID: "inst-2")))
        #expect(await eventsUntilMarker(client, events) == [.install(.organic(.organic(installID: "inst-2")))])
    }

    @Test("timed out at the deadline, then the late result is delivered, marked late")
    func timedOutThenLate() async throws {
        scriptAttributed(delay: 25)
        let client = launch()
        let events = client.linkEvents()
        let started = Task { await client.start() }
        await clock.waitForSleepers(count: 2)  // the backend's 25 s and the 10 s deadline
        clock.advance(by: 10)
        _ = await started.value
        #expect(await client.installOutcome() == .timedOut)
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .install(.timedOut))
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 15)
        var late = Self.attribution
        late.isLate = true
        #expect(await iterator.next() == .install(.attributed(Self.clicked, late)))
        #expect(await iterator.next() == .link(Self.clicked))
        #expect(await client.installOutcome() == .attributed(Self.clicked, late))
    }

    @Test("the deferred link is delivered once across three restarts while the backend keeps matching")
    func deferredOnceAcrossRestarts() async throws {
        // Launch 1 times out and the app is killed before the answer: nothing was matched.
        scriptAttributed(delay: 25)
        let first = launch()
        let started = Task { await first.start() }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 10)
        _ = await started.value
        await first.shutdown()
        clock.advance(by: 15)
        // Launches 2, 3 and 4: the backend matches at once, every time it is asked.
        scriptAttributed()
        var deferredDeliveries = 0
        for _ in 2...4 {
            let client = launch()
            let events = client.linkEvents()
            await client.start()
            deferredDeliveries += await eventsUntilMarker(client, events).compactMap(\.link).count
            #expect(await client.installOutcome() == .attributed(Self.clicked, Self.attribution))
            await client.shutdown()
        }
        #expect(deferredDeliveries == 1)
        #expect(backend.installMatchCount == 2)  // launch 1 and launch 2; later launches restore
    }

    @Test("an outcome is published once per install: a restart restores it without an event")
    func restoredWithoutEvent() async throws {
        scriptAttributed()
        let first = launch()
        await first.start()
        await first.shutdown()
        let second = launch()
        let events = second.linkEvents()
        await second.start()
        #expect(await second.installOutcome() == .attributed(Self.clicked, Self.attribution))
        #expect(await eventsUntilMarker(second, events).isEmpty)
    }

    @Test("a direct link that opened the app first: the deferred link is reported, not delivered")
    func directLinkFirst() async throws {
        scriptAttributed()
        let client = launch()
        let events = client.linkEvents()
        client.handle(url("myapp://opened/directly"))
        await client.waitUntilIdle()
        await client.start()
        let received = await eventsUntilMarker(client, events)
        #expect(received.compactMap(\.link).map(\.path) == ["/opened/directly"])
        #expect(await client.installOutcome() == .attributed(Self.clicked, Self.attribution))
    }

    @Test("a direct link handed over before start, still resolving when the match answers: the deferred link is not delivered on top")
    func directLinkStillResolving() async throws {
        scriptAttributed()
        let slow = url("myapp://opened/slowly")
        backend.script(slow, .parsed, delay: 2)
        let client = launch()
        let events = client.linkEvents()
        client.handle(slow)
        await client.start()  // the match answers while the direct link waits for its backend
        #expect(await client.installOutcome() == .attributed(Self.clicked, Self.attribution))
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 2)
        let received = await eventsUntilMarker(client, events)
        #expect(received.compactMap(\.link).map(\.path) == ["/opened/slowly"])
    }

    @Test("a match below minimumDeferredConfidence is reported, not delivered")
    func belowThreshold() async throws {
        scriptAttributed(confidence: 60)
        let client = launch { $0.minimumDeferredConfidence = 70 }
        let events = client.linkEvents()
        await client.start()
        let received = await eventsUntilMarker(client, events)
        #expect(received.compactMap(\.link).isEmpty)
        guard case .attributed(_, let attribution) = await client.installOutcome() else {
            Issue.record("expected an attributed outcome")
            return
        }
        #expect(attribution.confidence?.score == 60)
    }

    @Test("with deferred deep links off, the match is reported, not delivered")
    func deferredDisabled() async throws {
        scriptAttributed()
        let client = launch { $0.deferredDeepLinksEnabled = false }
        let events = client.linkEvents()
        await client.start()
        #expect(await eventsUntilMarker(client, events).compactMap(\.link).isEmpty)
        #expect(backend.installMatchCount == 1)
    }

    @Test("a failed match is .failed, retried on the next launch, and given up after the bound")
    func failureRetriedNextLaunch() async throws {
        let failure = DeepLinkError(.network, "offline", backend: backend.id)
        backend.scriptInstall(.failure(failure))
        for launchNumber in 1...3 {
            let client = launch()
            await client.start()
            #expect(await client.installOutcome() == .failed(failure), "launch \(launchNumber)")
            await client.shutdown()
        }
        #expect(backend.installMatchCount == 3)
        scriptAttributed()
        let fourth = launch()
        await fourth.start()
        #expect(await fourth.installOutcome() == .failed(failure))
        #expect(backend.installMatchCount == 3)  // the bound of 3 launches is reached
    }

    @Test("a match that fails once succeeds on the next launch")
    func failureThenSuccess() async throws {
        backend.scriptInstall(.failure(DeepLinkError(.server(status: 503), "down")))
        let first = launch()
        await first.start()
        await first.shutdown()
        scriptAttributed()
        let second = launch()
        let events = second.linkEvents()
        await second.start()
        #expect(await eventsUntilMarker(second, events) == [.install(.attributed(Self.clicked, Self.attribution)), .link(Self.clicked)])
    }

    @Test("a backend without install matching counts as organic, once")
    func unsupportedIsOrganic() async throws {
        let client = makeClient(LocalBackend(.init(schemes: ["myapp"])), clock: clock, store: store)
        await client.start()
        #expect(await client.installOutcome() == .organic(nil))
    }

    @Test("clearData makes the next start a first launch")
    func clearDataStartsOver() async throws {
        scriptAttributed()
        let client = launch()
        await client.start()
        try await client.track("signup")
        await client.clearData()
        #expect(store.keys.isEmpty)
        #expect(await client.queuedEventCount == 0)
        let events = client.linkEvents()
        await client.start()
        #expect(backend.installMatchCount == 2)
        #expect(await eventsUntilMarker(client, events) == [.install(.attributed(Self.clicked, Self.attribution)), .link(Self.clicked)])
    }

    @Test("a corrupt stored record is treated as absent, with a log line")
    func corruptRecordIgnored() async throws {
        scriptAttributed()
        let first = launch()
        await first.start()
        await first.shutdown()
        store.corrupt(InstallRecord.key)
        let logs = LogCollector()
        let second = launch { $0.logSink = logs.sink }
        await second.start()
        #expect(backend.installMatchCount == 2)
        #expect(logs.lines.contains { $0.contains("'install' is corrupt") })
    }

    @Test("the backend's install id reaches later calls through the context")
    func installIDInContext() async throws {
        scriptAttributed()
        let client = launch()
        await client.start()
        _ = try await client.resolve(url("myapp://after"))
        #expect(backend.contexts.last?.installID == "inst-1")
        #expect(backend.contexts.last?.device == StaticDeviceInfo.iPhone)
    }
}
