import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// `clearData()` and `shutdown()` racing everything else: work started before them commits
/// nothing, and after `shutdown()` every call returns at once or throws `.shutdown`.
@Suite("clearData and shutdown at the edges", .timeLimit(.minutes(1)))
struct LifecycleEdgeTests {
    @Test("start and clearData racing from many tasks leave a record that matches on the next start and the next launch", arguments: 0..<20)
    func startRacingClearData(_ round: Int) async throws {
        let backend = InMemoryBackend()
        let organic = InstallOutcome.organic(.organic(installID: "i-\(round)"))
        backend.scriptInstall(.success(.organic(.organic(installID: "i-\(round)"))))
        let store = InMemoryStore()
        let client = makeClient(backend, store: store) { $0.retryPolicy = .none }
        var calls = Array(repeating: true, count: 100) + Array(repeating: false, count: 50)
        calls.shuffle()
        await withTaskGroup(of: Void.self) { group in
            for isStart in calls {
                group.addTask {
                    if isStart { await client.start() } else { await client.clearData() }
                }
            }
        }
        // Whatever the interleaving, this launch and the next ask the provider if they must, and
        // never give up on runs that were cleared away.
        await client.start()
        #expect(await client.installOutcome() == organic)
        let record = try #require(store.load(InstallRecord.self, forKey: InstallRecord.key, logger: .silent))
        #expect(record.matchLaunches <= 1)
        #expect(record.matched == organic)
        let nextLaunch = makeClient(backend, store: store) { $0.retryPolicy = .none }
        await nextLaunch.start()
        #expect(await nextLaunch.installOutcome() == organic)
    }

    @Test("a clear, then a start, is a first launch that asks the provider once")
    func clearThenStartAsksOnce() async throws {
        let backend = InMemoryBackend()
        backend.scriptInstall(.success(.organic(.organic(installID: "i"))))
        let store = InMemoryStore()
        let client = makeClient(backend, store: store) { $0.retryPolicy = .none }
        await client.start()
        await client.clearData()
        await client.start()
        #expect(backend.installMatchCount == 2)
        #expect(store.load(InstallRecord.self, forKey: InstallRecord.key, logger: .silent)?.matchLaunches == 1)
    }

    @Test("a run from before a clear writes nothing: not its launch, not its result")
    func staleRunCommitsNothing() async throws {
        let backend = InMemoryBackend()
        let clock = ManualClock()
        backend.scriptInstall(.success(.organic(.organic(installID: "old"))), delay: 5)
        let store = InMemoryStore()
        let client = makeClient(backend, clock: clock, store: store) { $0.retryPolicy = .none }
        let started = Task { await client.start() }
        await clock.waitForSleepers(count: 2)  // the match's 5 s and its 10 s deadline
        await client.clearData()
        #expect(store.load(InstallRecord.self, forKey: InstallRecord.key, logger: .silent) == nil)
        clock.advance(by: 5)
        _ = await started.value
        #expect(store.load(InstallRecord.self, forKey: InstallRecord.key, logger: .silent) == nil)
        backend.scriptInstall(.success(.organic(.organic(installID: "new"))))
        await client.start()
        #expect(await client.installOutcome() == .organic(.organic(installID: "new")))
        #expect(store.load(InstallRecord.self, forKey: InstallRecord.key, logger: .silent)?.matchLaunches == 1)
    }

    @Test("a flush from before a clear does not clear the flush started after it")
    func staleFlushKeepsNewFlush() async throws {
        let backend = InMemoryBackend()
        let client = makeClient(backend) { $0.retryPolicy = .none }
        await client.start()
        for round in 0..<20 {
            try await client.track("before-\(round)")
            await client.clearData()
            await client.start()
            try await client.track("after-\(round)")
            await client.flushEvents()
        }
        #expect(await client.queuedEventCount == 0)
        #expect(Set(backend.sentEvents.map(\.name)).isSuperset(of: (0..<20).map { "after-\($0)" }))
    }

    @Test("after shutdown every call returns at once or throws shutdown, and nothing is sent or stored")
    func everyCallAfterShutdown() async throws {
        let backend = InMemoryBackend()
        let store = InMemoryStore()
        let client = makeClient(backend, store: store)
        await client.shutdown()
        let link = url("myapp://products/1")

        #expect(client.handle(link) == false)
        #expect(await client.linkEvents().prefixArray(1).isEmpty)
        await client.start()
        guard case .failed(let failure) = await client.installOutcome() else {
            Issue.record("expected a failed outcome after shutdown")
            return
        }
        #expect(failure.code == .shutdown)
        for call in [
            { try await client.track("signup") },
            { try await client.trackRevenue(amount: 5, currency: "EUR") },
            { _ = try await client.resolve(link) },
            { _ = try await client.createLink(LinkRequest()) },
        ] as [@Sendable () async throws -> Void] {
            let error = await #expect(throws: DeepLinkError.self) { try await call() }
            #expect(error?.code == .shutdown)
        }
        await client.flushEvents()
        try await client.saveQueuedEvents()
        #expect(await client.queuedEventCount == 0)
        #expect(await client.completePendingLink() == nil)
        #expect(backend.calls.isEmpty)
        #expect(store.keys.isEmpty)
    }

    @Test("installOutcome waiting at shutdown returns, and start after it sends nothing")
    func waitersReleasedAtShutdown() async throws {
        let backend = InMemoryBackend()
        let client = makeClient(backend)
        let waiting = Task { await client.installOutcome() }
        await client.shutdown()
        guard case .failed(let failure) = await waiting.value else {
            Issue.record("expected a failed outcome")
            return
        }
        #expect(failure.code == .shutdown)
        await client.start()
        #expect(backend.installMatchCount == 0)
    }

    @Test("a match that answers after shutdown is not stored, and its link is not delivered")
    func lateMatchAfterShutdown() async throws {
        let backend = InMemoryBackend()
        let clock = ManualClock()
        let store = InMemoryStore()
        backend.scriptInstall(
            .success(
                InstallMatch(attribution: .init(isAttributed: true, method: .fingerprint), link: .fixture(path: "/late", origin: .deferred))
            ), delay: 2)
        let client = makeClient(backend, clock: clock, store: store) { $0.retryPolicy = .none }
        let started = Task { await client.start() }
        await clock.waitForSleepers(count: 2)
        await client.shutdown()
        clock.advance(by: 2)
        _ = await started.value
        let record = store.load(InstallRecord.self, forKey: InstallRecord.key, logger: .silent)
        #expect(record?.matched == nil)
        #expect(record?.deferredLinkDelivered != true)
    }
}
