import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// The delivery and queue promises under concurrency: many producers, subscribers joining and
/// leaving, and the client's API called from many tasks at once.
@Suite("Stress", .timeLimit(.minutes(1)))
struct StressTests {
    /// Takes links from `stream` until it has `count` of them or the stream ends.
    private static func take(_ stream: AsyncStream<DeepLink>, count: Int) async -> [URL] {
        var taken: [URL] = []
        for await link in stream {
            taken.append(link.url)
            if taken.count == count { break }
        }
        return taken
    }

    @Test("10,000 links from 16 tasks while subscribers join and leave: each gets a gap-free run of what was published, once, in order")
    func manyProducersAndSubscribers() async throws {
        let producers = 16, perProducer = 625, total = producers * perProducer
        let client = makeClient(LocalBackend(.init(hosts: ["go.acme.app"]))) { configuration in
            // Buffers large enough that nothing is dropped: this test is about ordering and
            // exactly-once, not about the bounds (tested on their own).
            configuration.undeliveredEventLimit = total
            configuration.linkBufferLimit = total
        }
        var generator = SystemRandomNumberGenerator()
        // The main subscriber is there from the start and stays: it must get every link.
        let everything = client.deepLinks()
        let master = Task { await Self.take(everything, count: total) }
        // Early visitors subscribe before any link and leave after a random number of links.
        let early = (0..<6).map { _ in
            let stream = client.deepLinks()
            let wanted = Int.random(in: 1..<2_000, using: &generator)
            return Task { await Self.take(stream, count: wanted) }
        }
        let producing = (0..<producers).map { producer in
            Task {
                for index in 0..<perProducer { client.handle(url("https://go.acme.app/p/\(producer)/\(index)")) }
            }
        }
        // Late visitors join at random points and leave after a random number of links.
        let late = (0..<6).map { _ in
            let delay = Int.random(in: 0..<200, using: &generator)
            let wanted = Int.random(in: 1..<2_000, using: &generator)
            return Task { () -> [URL] in
                for _ in 0..<delay { await Task.yield() }
                return await Self.take(client.deepLinks(), count: wanted)
            }
        }
        let visitors = early + late
        for task in producing { await task.value }
        // Everything handed over is published; then shutting down ends every stream, so no
        // subscriber can wait forever for more (awaiting a task is not cut short by a time limit).
        await client.waitUntilIdle()
        await client.shutdown()
        let all = await master.value
        var visits: [[URL]] = []
        for visitor in visitors { visits.append(await visitor.value) }

        // Every link exactly once.
        #expect(all.count == total)
        #expect(Set(all).count == total)
        // Each producer's links in the order it handed them over.
        let positions = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($0.element, $0.offset) })
        for producer in 0..<producers {
            let order = (0..<perProducer).compactMap { positions[url("https://go.acme.app/p/\(producer)/\($0)")] }
            #expect(order.count == perProducer && zip(order, order.dropFirst()).allSatisfy { $0 < $1 }, "producer \(producer)")
        }
        // Each visitor saw a contiguous run of the publication order: nothing skipped, nothing
        // twice, nothing out of order, for as long as it listened.
        for visit in visits where !visit.isEmpty {
            let start = try #require(positions[visit[0]])
            #expect(Array(all[start..<min(start + visit.count, all.count)]) == visit)
        }
        let received = visits.map(\.count).reduce(0, +)
        #expect(received > 0)
        let lost = total - Set(all).count, duplicated = all.count - Set(all).count
        print(
            "Stress: \(total) links from \(producers) tasks; the main subscriber got \(all.count) (\(lost) lost, "
                + "\(duplicated) duplicated); \(visits.count) visitors got \(received) links in gap-free runs.")
    }

    @Test("start, installOutcome, track and flushEvents from 64 tasks at once: one install request, every event sent once")
    func concurrentAPI() async throws {
        let backend = InMemoryBackend(schemes: ["myapp"])
        backend.scriptInstall(.success(.organic(.organic(installID: "i-1"))))
        backend.scriptEventSending(.success(()))
        let client = makeClient(backend)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<64 {
                group.addTask {
                    switch index % 4 {
                    case 0: await client.start()
                    case 1: _ = await client.installOutcome()
                    case 2: try await client.track("event-\(index)")
                    default: await client.flushEvents()
                    }
                }
            }
            try await group.waitForAll()
        }
        await client.start()
        await client.flushEvents()
        #expect(backend.calls.filter { $0 == .matchInstall }.count == 1)
        let sent = backend.sentEvents
        #expect(sent.count == 16)
        #expect(Set(sent.map(\.id)).count == 16)
        #expect(await client.queuedEventCount == 0)
        #expect(await client.installOutcome() == .organic(.organic(installID: "i-1")))
        await client.shutdown()
    }

    @Test("clearData racing track and flushEvents: no event is sent twice, and the queue ends empty")
    func clearDataRacingEvents() async throws {
        let backend = InMemoryBackend(schemes: ["myapp"])
        backend.scriptInstall(.success(.organic(.organic(installID: "i-2"))))
        backend.scriptEventSending(.success(()))
        let client = makeClient(backend)
        await client.start()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<90 {
                group.addTask {
                    switch index % 3 {
                    case 0: try await client.track("event-\(index)")
                    case 1: await client.flushEvents()
                    default: await client.clearData()
                    }
                }
            }
            try await group.waitForAll()
        }
        await client.start()
        await client.flushEvents()
        let sent = backend.sentEvents
        #expect(Set(sent.map(\.id)).count == sent.count)
        #expect(sent.count <= 30)
        #expect(await client.queuedEventCount == 0)
        await client.shutdown()
    }
}
