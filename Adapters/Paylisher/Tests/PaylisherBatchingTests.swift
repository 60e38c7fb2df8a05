import Foundation
@_spi(Backend) import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import Testing

@testable import LinkRelayPaylisher

/// Paylisher's SDK sends its queue in batches (paylisher.md §7): up to `maxBatchSize` (50) events
/// per `/batch` request, once `flushAt` (20) wait, every 30 s and on `flush()`; a network error,
/// 3xx, 5xx or 413 keeps the events and pauses `min(failures × 5 s, 30 s)`; a 413 halves the batch
/// size and `flushAt`; any other 4xx drops the batch.
@Suite("Paylisher batching", .timeLimit(.minutes(1)))
struct PaylisherBatchingTests {
    let clock = ManualClock()
    let simulator: ProviderSimulator
    let server: PaylisherEmulation

    init() {
        simulator = ProviderSimulator(clock: clock)
        server = simulator.addPaylisher(apiKey: apiKey)
    }

    /// A started client (organic, no deferred request) with `batching`.
    func client(_ batching: EventBatching = EventBatching(), routed: Bool = false) async throws -> DeepLinkClient {
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: clock, transport: simulator)
        configuration.deviceInfo = StaticDeviceInfo(istanbulPhone)
        configuration.retryPolicy = .none
        configuration.eventQueueCapacity = 1000  // Paylisher's own queue size
        let paylisher = PaylisherBackend(
            try .init(apiKey: apiKey, appSchemes: ["diyetim"], deferredDeepLinksEnabled: false, eventBatching: batching))
        let backend: any DeepLinkBackend = routed ? RoutingBackend(paylisher, [LocalBackend(.init(schemes: ["other"]))]) : paylisher
        let client = DeepLinkClient(backend: backend, configuration: configuration)
        await client.start()
        return client
    }

    func track(_ client: DeepLinkClient, _ range: ClosedRange<Int>) async throws {
        for index in range { try await client.track("e\(index)") }
    }

    /// The events' names in the order the server received them.
    var received: [String] { server.events.map(\.event) }

    @Test("nothing goes out below flushAt; at 20 waiting, one request carries all 20")
    func flushAt() async throws {
        let client = try await client()
        try await track(client, 1...19)
        // Below flushAt only the 30 s timer waits.
        await clock.waitForSleepers(count: 1, dueAtOrAfter: clock.uptime + 30)
        #expect(simulator.requestCount(path: "/batch") == 0)
        try await client.track("e20")
        await simulator.waitForRequests(path: "/batch", count: 1)
        #expect(received == (1...20).map { "e\($0)" })
        await client.flushEvents()  // the flush under way
        #expect(await client.queuedEventCount == 0)
        await client.shutdown()
    }

    @Test("fewer than flushAt go out together once the oldest has waited 30 s")
    func interval() async throws {
        let client = try await client()
        try await track(client, 1...5)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 29)
        #expect(await client.queuedEventCount == 5)
        clock.advance(by: 1)
        await simulator.waitForRequests(path: "/batch", count: 1)
        #expect(received == ["e1", "e2", "e3", "e4", "e5"])
        await client.shutdown()
    }

    @Test("flushEvents sends at once, at most 50 per request, oldest first; through a RoutingBackend too", arguments: [false, true])
    func batchSize(routed: Bool) async throws {
        let client = try await client(EventBatching(flushAt: 1000, flushInterval: .infinity), routed: routed)
        try await track(client, 1...120)
        #expect(simulator.requestCount(path: "/batch") == 0)
        await client.flushEvents()
        #expect(simulator.requestCount(path: "/batch") == 3)
        #expect(received == (1...120).map { "e\($0)" })
        #expect(await client.queuedEventCount == 0)
        await client.shutdown()
    }

    @Test("a 413 keeps the batch and halves the batch size: 60 events arrive once each, in batches of 25, 25 and 10")
    func tooLarge() async throws {
        let client = try await client(EventBatching(flushAt: 1000, flushInterval: .infinity))
        try await track(client, 1...60)
        simulator.setFault(.status(413), path: "/batch", times: 1)
        await client.flushEvents()
        #expect(received.isEmpty)
        #expect(await client.queuedEventCount == 60)
        await client.flushEvents()
        #expect(simulator.requestCount(path: "/batch") == 4)  // the refused 50, then 25, 25, 10
        #expect(received == (1...60).map { "e\($0)" })
        #expect(await client.queuedEventCount == 0)
        await client.shutdown()
    }

    @Test("a 413 halves flushAt too: after it, two waiting events go out on their own")
    func tooLargeHalvesFlushAt() async throws {
        let client = try await client(EventBatching(maximumBatchSize: 4, flushAt: 4, flushInterval: .infinity))
        simulator.setFault(.status(413), path: "/batch", times: 1)
        try await track(client, 1...4)
        await simulator.waitForRequests(path: "/batch", count: 1)
        // Kept, and paused 5 s; then batches of 2.
        await clock.waitForSleepers(count: 1, dueAtOrAfter: clock.uptime + 5)
        clock.advance(by: 5)
        await simulator.waitForRequests(path: "/batch", count: 3)
        #expect(received == ["e1", "e2", "e3", "e4"])
        await client.flushEvents()  // the flush under way ends (it would take e5 along)
        // No timer runs (flushInterval is infinite): only flushAt, now 2, can start a flush.
        try await track(client, 5...6)
        await simulator.waitForRequests(path: "/batch", count: 4)
        #expect(received == (1...6).map { "e\($0)" })
        await client.shutdown()
    }

    @Test("a single event refused with 413 can never go: it is dropped and reported, the next one is sent")
    func tooLargeAlone() async throws {
        let client = try await client(EventBatching(maximumBatchSize: 1, flushAt: 1000, flushInterval: .infinity))
        let events = client.linkEvents()
        try await track(client, 1...2)
        simulator.setFault(.status(413), path: "/batch", times: 1)
        await client.flushEvents()
        #expect(received == ["e2"])
        #expect(await client.queuedEventCount == 0)
        await client.shutdown()
        var failures: [DeepLinkError] = []
        for await event in events { if case .failure(let error) = event { failures.append(error) } }
        #expect(failures.map(\.code) == [.server(status: 413)])
    }

    @Test(
        "another 4xx drops the whole batch and reports it; a 3xx or 5xx keeps it",
        arguments: [
            (400, false), (422, false), (302, true), (500, true), (503, true),
        ])
    func status(_ status: Int, kept: Bool) async throws {
        let client = try await client(EventBatching(flushAt: 1000, flushInterval: .infinity))
        try await track(client, 1...3)
        simulator.setFault(.status(status), path: "/batch", times: 1)
        await client.flushEvents()
        #expect(await client.queuedEventCount == (kept ? 3 : 0))
        await client.flushEvents()
        #expect(received == (kept ? ["e1", "e2", "e3"] : []))
        await client.shutdown()
    }

    @Test("after each failure in a row automatic sending pauses 5 s more, at most 30 s; a success ends the pauses")
    func pauses() async throws {
        let client = try await client(EventBatching(flushAt: 1))
        simulator.setFault(.status(503), path: "/batch", times: 7)
        try await client.track("e1")
        for (attempt, pause) in [5.0, 10, 15, 20, 25, 30, 30].enumerated() {
            await simulator.waitForRequests(path: "/batch", count: attempt + 1)
            let failedAt = clock.uptime
            await clock.waitForSleepers(count: 1, dueAtOrAfter: failedAt + pause)
            #expect(clock.sleeperCount(dueAtOrAfter: failedAt + pause + 0.001) == 0)
            // An event tracked during the pause waits for it, although flushAt is 1.
            if attempt == 2 {
                try await client.track("e2")
                #expect(simulator.requestCount(path: "/batch") == 3)
            }
            clock.advance(by: pause)
        }
        await simulator.waitForRequests(path: "/batch", count: 8)
        #expect(received == ["e1", "e2"])
        // No pause after the success: the next event goes at once.
        try await client.track("e3")
        await simulator.waitForRequests(path: "/batch", count: 9)
        #expect(received == ["e1", "e2", "e3"])
        await client.shutdown()
    }

    @Test("events queued before the launch wait for flushAt or the timer, not for start alone")
    func queuedAtStart() async throws {
        let store = InMemoryStore()
        var configuration = DeepLinkClient.Configuration(store: store, clock: clock, transport: simulator)
        configuration.deviceInfo = StaticDeviceInfo(istanbulPhone)
        configuration.retryPolicy = .none
        let backend = PaylisherBackend(try .init(apiKey: apiKey, appSchemes: ["diyetim"], deferredDeepLinksEnabled: false))
        let before = DeepLinkClient(backend: backend, configuration: configuration)
        try await before.track("e1")
        try await before.track("e2")
        await before.shutdown()
        let after = DeepLinkClient(backend: backend, configuration: configuration)
        await after.start()
        await clock.waitForSleepers(count: 1, dueAtOrAfter: clock.uptime + 30)
        #expect(simulator.requestCount(path: "/batch") == 0)
        clock.advance(by: 30)
        await simulator.waitForRequests(path: "/batch", count: 1)
        #expect(received == ["e1", "e2"])
        await after.shutdown()
    }

    @Test("shutdown stops the timer: nothing is sent after it, and the events stay queued for the next launch")
    func shutdownStopsTimer() async throws {
        let client = try await client()
        try await track(client, 1...3)
        await clock.waitForSleepers(count: 1)
        await client.shutdown()
        #expect(clock.sleeperCount == 0)
        clock.advance(by: 60)
        #expect(simulator.requestCount(path: "/batch") == 0)
    }
}

@Suite("EventBatching values")
struct EventBatchingValueTests {
    @Test("Paylisher's defaults")
    func defaults() throws {
        let batching = try PaylisherBackend.Configuration(apiKey: apiKey).eventBatching
        #expect(batching == EventBatching(maximumBatchSize: 50, flushAt: 20, flushInterval: 30, pauseStep: 5, maximumPause: 30))
    }

    @Test(
        "every value is accepted: counts below 1 count as 1, NaN and negative durations as 0, .infinity kept",
        arguments: [
            (
                EventBatching(maximumBatchSize: 0, flushAt: -5, flushInterval: .nan, pauseStep: -1, maximumPause: .nan),
                EventBatching(maximumBatchSize: 1, flushAt: 1, flushInterval: 0, pauseStep: 0, maximumPause: 0)
            ),
            (
                EventBatching(
                    maximumBatchSize: .max, flushAt: .max, flushInterval: .infinity, pauseStep: .infinity, maximumPause: .infinity),
                EventBatching(
                    maximumBatchSize: .max, flushAt: .max, flushInterval: .infinity, pauseStep: .infinity, maximumPause: .infinity)
            ),
        ])
    func clamped(_ given: EventBatching, _ expected: EventBatching) {
        #expect(given.clamped() == expected)
    }

    @Test("pauses: min(failures × step, maximum), never NaN")
    func pauses() {
        let paylisher = EventBatching()
        #expect((0...8).map { paylisher.pause(afterFailures: $0) } == [0, 5, 10, 15, 20, 25, 30, 30, 30])
        #expect(paylisher.pause(afterFailures: .max) == 30)
        #expect(EventBatching(pauseStep: .infinity, maximumPause: .infinity).pause(afterFailures: 1) == .infinity)
        #expect(EventBatching(pauseStep: 0, maximumPause: .infinity).pause(afterFailures: 3) == 0)
        #expect(EventBatching(pauseStep: .nan, maximumPause: .nan).pause(afterFailures: 3) == 0)
    }
}
