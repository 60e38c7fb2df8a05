import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// A store that cannot be written loses no event (issue 40): an event whose line never
/// reached the store is in no journal a later launch can read, so it is sent from memory in
/// this run without a claim; events that are in the store keep waiting for theirs.
@Suite("Events that never reached the store are sent from memory", .timeLimit(.minutes(1)))
struct UnstoredEventTests {
    typealias FailingStore = StoreWriteFailureTests.FailingStore

    /// A store whose writes of the event journal report failure although the bytes landed (as
    /// a write whose sync fails can): `+` lines land and throw; other lines neither land nor
    /// succeed.
    final class LandsAnywayStore: PersistentStore {
        private let base = InMemoryStore()
        private let failing = Locked(false)

        func fail() { failing.withLock { $0 = true } }
        func heal() { failing.withLock { $0 = false } }

        func data(forKey key: String) throws -> Data? { try base.data(forKey: key) }
        func setData(_ data: Data, forKey key: String) throws {
            guard failing.withLock({ $0 }) else { return try base.setData(data, forKey: key) }
            throw POSIXError(.ENOSPC)
        }
        func appendData(_ data: Data, forKey key: String) throws {
            guard failing.withLock({ $0 }) else { return try base.appendData(data, forKey: key) }
            if data.first == UInt8(ascii: "+") { try base.appendData(data, forKey: key) }
            throw POSIXError(.EIO)
        }
        func removeData(forKey key: String) throws { try base.removeData(forKey: key) }
        func removeAll() throws { try base.removeAll() }
    }

    let backend = InMemoryBackend(schemes: ["myapp"])

    func launch(_ store: any PersistentStore) -> DeepLinkClient {
        makeClient(backend, store: store) { $0.retryPolicy = .none }
    }

    /// The ids and the names of the events the backend was asked to send, in order.
    var sendAttempts: [UUID] { backend.sentEvents.map(\.id) }
    var sentNames: [String] { backend.sentEvents.map(\.name) }

    @Test(
        "events tracked once the store refuses are sent in this run; those in the store wait for their claim, and the next launch sends them, each once"
    )
    func trackedOnAFullStore() async throws {
        let store = FailingStore()
        let first = launch(store)
        for index in 0..<10 { try await first.track("stored-\(index)") }
        store.fail()
        for index in 0..<10 { try await first.track("unstored-\(index)") }
        #expect(await first.queuedEventCount == 20)
        await first.start()
        await first.flushEvents()
        #expect(sentNames == (0..<10).map { "unstored-\($0)" })
        #expect(await first.queuedEventCount == 10)
        await first.shutdown()

        store.heal()
        let second = launch(store)
        await second.start()
        await second.flushEvents()
        #expect(await second.queuedEventCount == 0)
        #expect(sentNames.sorted() == ((0..<10).map { "stored-\($0)" } + (0..<10).map { "unstored-\($0)" }).sorted())
        #expect(Set(sendAttempts).count == sendAttempts.count, "\(sendAttempts.count - Set(sendAttempts).count) sent twice")
        await second.shutdown()
    }

    @Test("a store that cannot be written from the start: every event tracked is sent")
    func neverWritable() async throws {
        let store = FailingStore()
        store.fail()
        let client = launch(store)
        await client.start()
        for index in 0..<20 { try await client.track("event-\(index)") }
        await client.flushEvents()
        #expect(sentNames == (0..<20).map { "event-\($0)" })
        #expect(await client.queuedEventCount == 0)
        await client.shutdown()
    }

    @Test(
        "a failed write whose line landed anyway is read back: that event waits for its claim; those that never landed go now; each is sent once"
    )
    func failedWriteThatLanded() async throws {
        let store = LandsAnywayStore()
        let first = launch(store)
        store.fail()
        // The first line lands (and reports a failure); after a failure the journal is written
        // whole, which fails: the other four never reach the store.
        for index in 0..<5 { try await first.track("event-\(index)") }
        await first.start()
        await first.flushEvents()
        // Sending event-0 now would let the next launch, which finds its line, send it again.
        #expect(sentNames == (1..<5).map { "event-\($0)" })
        await first.shutdown()

        store.heal()
        let second = launch(store)
        await second.start()
        await second.flushEvents()
        #expect(sentNames == (1..<5).map { "event-\($0)" } + ["event-0"])
        #expect(await second.queuedEventCount == 0)
        await second.shutdown()
    }

    @Test("a store folder whose journal is a directory (a damaged install): every event tracked is sent")
    func journalIsADirectory() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-journal-dir-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fileStore = FileStore(directory: folder)
        try FileManager.default.createDirectory(at: fileStore.fileURL(for: DeepLinkClient.eventQueueKey), withIntermediateDirectories: true)
        let client = launch(fileStore)
        for index in 0..<20 { try await client.track("event-\(index)") }
        await client.start()
        await client.flushEvents()
        #expect(sentNames == (0..<20).map { "event-\($0)" })
        #expect(await client.queuedEventCount == 0)
        await client.shutdown()
    }

    @Test(
        "on a 64 KiB tmpfs: 50 events stored, the disk full, 10 more: those not in the store go in this run, all 60 once in the two launches",
        arguments: [nil, 50])
    func fullTmpfs(batchSize: Int?) async throws {
        guard let disk = try TinyDisk(kilobytes: 64) else { return }
        defer { disk.unmount() }
        // One event per request, or Paylisher's batches of 50.
        let batches = batchSize.map { BatchRecorder(size: $0) }
        let sent: () -> [String] = { batches?.batches.flatMap { $0 } ?? sentNames }
        func launch() -> DeepLinkClient {
            makeClient(batches ?? backend, store: FileStore(directory: disk.folder)) { $0.retryPolicy = .none }
        }
        let padding = String(repeating: "p", count: 400)
        let first = launch()
        for index in 0..<50 { try await first.track("stored-\(index)", properties: ["padding": .string(padding)]) }
        try await first.saveQueuedEvents()
        try disk.fill()
        for index in 0..<10 { try await first.track("unstored-\(index)", properties: ["padding": .string(padding)]) }
        await first.start()
        await first.flushEvents()
        let sentByFirst = sent()
        await first.shutdown()
        // The journal's last page had room for a line or two after the disk filled: those
        // events are in the store and wait for a claim (short claim lines may still fit, so some
        // of the stored ones go too); every event not in the store went now.
        let journal =
            (try? String(contentsOf: FileStore(directory: disk.folder).fileURL(for: DeepLinkClient.eventQueueKey), encoding: .utf8)) ?? ""
        let lines = journal.components(separatedBy: "\n").dropLast()  // an unfinished last line is not in the store
        let inStore = (0..<10).map { "unstored-\($0)" }.filter { name in lines.contains { $0.contains("\"name\":\"\(name)\"") } }
        #expect(Set((0..<10).map { "unstored-\($0)" }).subtracting(inStore).isSubset(of: Set(sentByFirst)))

        disk.removeFiller()
        let second = launch()
        await second.start()
        await second.flushEvents()
        #expect(await second.queuedEventCount == 0)
        await second.shutdown()
        let all = sent()
        print(
            "full 64 KiB disk, 10 events tracked after it filled, \(batchSize.map { "batches of \($0)" } ?? "one by one"): the first launch sent \(sentByFirst.count) (\(inStore.count) were in the store), the next \(all.count - sentByFirst.count); \(all.count - Set(all).count) sent twice"
        )
        #expect(all.count == Set(all).count)
        #expect(Set(all) == Set((0..<50).map { "stored-\($0)" } + (0..<10).map { "unstored-\($0)" }))
    }

    @Test("a FileStore cuts off a line a failed write left unfinished before it adds lines, so no later line finishes it")
    func unfinishedLineIsCutOff() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-cut-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileStore(directory: folder)
        let key = DeepLinkClient.eventQueueKey
        // What a write cut short leaves: a whole line, then all of a `+` line but its newline.
        try store.setData(Data("#generation\n+AAA\n+\(UUID().uuidString) {\"name\":\"cut\"}".utf8), forKey: key)
        try store.appendLines(Data("-BBB\n".utf8), forKey: key)
        #expect(String(decoding: try #require(try store.data(forKey: key)), as: UTF8.self) == "#generation\n+AAA\n-BBB\n")
        // A file that is all one unfinished line starts again with a generation line.
        try store.setData(Data("+unfinished".utf8), forKey: key)
        try store.appendLines(Data("-CCC\n".utf8), forKey: key)
        let text = String(decoding: try #require(try store.data(forKey: key)), as: UTF8.self)
        #expect(text.hasPrefix("#") && text.hasSuffix("\n-CCC\n") && !text.contains("unfinished"))
    }

    @Test("the ids of finished `+` lines, not of an unfinished one")
    func addedIDs() {
        let (a, b, c) = (UUID(), UUID(), UUID())
        let journal = "#g\n+\(a.uuidString) {}\n-\(a.uuidString)\n~\(b.uuidString)\n+\(b.uuidString) {}\n+\(c.uuidString) {\"unfinished"
        #expect(EventJournal.addedIDs(in: Array(journal.utf8)) == [a, b])
    }
}
