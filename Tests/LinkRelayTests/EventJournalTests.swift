import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// The stored event queue is a journal: a `track` adds one line, a send one more, and the whole
/// queue is written again only when the lines outgrow it.
@Suite("The event queue's journal", .timeLimit(.minutes(1)))
struct EventJournalTests {
    let backend = InMemoryBackend(schemes: ["myapp"])

    func launch(_ store: any PersistentStore, logs: LogCollector? = nil) -> DeepLinkClient {
        makeClient(backend, store: store) {
            $0.retryPolicy = .none
            $0.eventQueueCapacity = 10_000
            if let logs { $0.logSink = logs.sink }
        }
    }

    func stored(_ store: InMemoryStore) throws -> Data {
        try store.data(forKey: DeepLinkClient.eventQueueKey) ?? Data()
    }

    @Test("a track adds one line whatever the queue's length")
    func trackAddsOneLine() async throws {
        let store = InMemoryStore()
        let client = launch(store)
        var sizes: [Int] = []
        for index in 0..<2_000 {
            let before = try stored(store).count
            try await client.track("event", properties: ["index": .int(index)])
            sizes.append(try stored(store).count - before)
        }
        // Each line is the event's own size (about 130 bytes), at 10 events as at 2,000, except
        // the whole writes, which come ever more rarely as the queue grows.
        let lineSizes = sizes.filter { $0 < 200 }
        #expect(lineSizes.count >= 1_990, "\(sizes.count - lineSizes.count) writes were not a single line")
        #expect(await launch(store).queuedEventCount == 2_000)
        await client.shutdown()
    }

    @Test("sent events' removals are lines too, and the journal is written whole again once they outgrow the queue")
    func compaction() async throws {
        let store = InMemoryStore()
        let client = launch(store)
        for index in 0..<1_000 { try await client.track("event", properties: ["index": .int(index)]) }
        let full = try stored(store).count
        await client.start()
        await client.flushEvents()
        #expect(backend.sentEvents.count == 1_000)
        // 1,000 additions and 1,000 removals, but the file was rewritten along the way.
        let after = try stored(store).count
        #expect(after < 64 << 10 + 200, "the journal is \(after) bytes after the queue emptied (it held \(full) full)")
        #expect(await launch(store).queuedEventCount == 0)
        await client.shutdown()
    }

    @Test("a queue stored as a JSON array (before the journal) is read, and rewritten as a journal with the next change")
    func readsTheOldFormat() async throws {
        let store = InMemoryStore()
        let old = (0..<3).map {
            ConversionEvent(name: "old-\($0)", properties: [:], timestamp: Date(timeIntervalSince1970: 0), revenue: nil)
        }
        try store.setData(try JSONEncoder.linkRelay().encode(old), forKey: DeepLinkClient.eventQueueKey)
        let client = launch(store)
        #expect(await client.queuedEventCount == 3)
        try await client.track("new")
        #expect(try stored(store).first == UInt8(ascii: "+"))
        let reloaded = launch(store)
        #expect(await reloaded.queuedEventCount == 4)
        await reloaded.start()
        await reloaded.flushEvents()
        #expect(backend.sentEvents.map(\.name) == ["old-0", "old-1", "old-2", "new"])
        #expect(backend.sentEvents.map(\.id).prefix(3) == old.map(\.id)[...])
    }

    @Test("an unfinished last line (a kill mid-write) is left out quietly, and nothing is added after it")
    func tornLastLine() async throws {
        let store = InMemoryStore()
        let logs = LogCollector()
        let first = launch(store)
        try await first.track("kept")
        try await first.track("cut")
        await first.shutdown()
        // The kill came in the middle of the second line.
        let whole = try stored(store)
        try store.setData(whole.prefix(whole.count - 40), forKey: DeepLinkClient.eventQueueKey)
        let second = launch(store, logs: logs)
        #expect(await second.queuedEventCount == 1)
        try await second.track("after")
        let third = launch(store)
        #expect(await third.queuedEventCount == 2)
        #expect(logs.lines.filter { $0.contains("unfinished line") }.count == 1)
        #expect(!logs.lines.contains { $0.contains("corrupt") })
    }

    @Test("a damaged line in the middle is left out with a warning; the others are kept")
    func damagedLine() async throws {
        let store = InMemoryStore()
        let logs = LogCollector()
        let first = launch(store)
        for name in ["a", "b", "c"] { try await first.track(name) }
        await first.shutdown()
        var lines = try stored(store).split(separator: 0x0A).map { Data($0) }
        lines[1] = Data("+{\"name\": 12}".utf8)
        try store.setData(Data(lines.joined(separator: [0x0A]) + [0x0A]), forKey: DeepLinkClient.eventQueueKey)
        let second = launch(store, logs: logs)
        #expect(await second.queuedEventCount == 2)
        #expect(logs.lines.contains { $0.contains("is corrupt in 1 lines") })
    }

    @Test("after a failed write no line is added to a journal missing one: the next write is the whole queue", arguments: [false, true])
    func noHoleAfterAFailedWrite(deferred: Bool) async throws {
        let store = StoreWriteFailureTests.FailingStore(deferred: deferred)
        let client = launch(store)
        for name in ["a", "b", "c"] { try await client.track(name) }
        try await client.saveQueuedEvents()
        store.fail()
        try await client.track("d")
        await #expect(throws: DeepLinkError.self) { try await client.saveQueuedEvents() }
        store.heal()
        try await client.track("e")
        try await client.saveQueuedEvents()
        let reloaded = launch(store)
        await reloaded.start()
        await reloaded.flushEvents()
        #expect(backend.sentEvents.map(\.name) == ["a", "b", "c", "d", "e"])
    }
}
