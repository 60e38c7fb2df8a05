import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// The event journal on its own, with no client: its line format, replay, claims, the shared
/// folder and the full disk.
@Suite("The event journal, without a client", .timeLimit(.minutes(1)))
struct EventJournalTypeTests {
    typealias FailingStore = StoreWriteFailureTests.FailingStore

    /// The storage failures the journal reported.
    let failures = Locked([DeepLinkError]())

    func journal(_ store: any PersistentStore) -> EventJournal {
        let failures = self.failures
        let health = StoreWriteHealth(logger: .silent) { error in failures.withLock { $0.append(error) } }
        return EventJournal(store: store, key: "events", logger: .silent, health: health)
    }

    func event(_ name: String) -> ConversionEvent {
        ConversionEvent(name: name, timestamp: Date(timeIntervalSince1970: 1_800_000_000))
    }

    func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-journal-\(UUID().uuidString)")
    }

    @Test("one line per change: an append is a `+` line, a claim `~`, a release `!`, a removal `-`; a new journal replays them")
    func linesAndReplay() throws {
        let store = InMemoryStore()
        let journal = journal(store)
        let (a, b, c) = (event("a"), event("b"), event("c"))
        for event in [a, b, c] { _ = journal.append(event, capacity: 100) }
        #expect(journal.claim(upTo: 2).map(\.name) == ["a", "b"])
        journal.release([b.id])
        journal.remove([a.id])
        let text = String(decoding: try #require(try store.data(forKey: "events")), as: UTF8.self)
        let kinds = text.split(separator: "\n").map { $0.first.map(String.init) ?? "" }
        #expect(kinds == ["+", "+", "+", "~", "~", "!", "-"])

        let next = self.journal(store)
        #expect(next.events.map(\.name) == ["b", "c"])
        #expect(next.claimed.isEmpty)
    }

    @Test("past its capacity the oldest are dropped, in the same write, and returned")
    func capacity() throws {
        let store = InMemoryStore()
        let journal = journal(store)
        var dropped: [String] = []
        for index in 0..<5 { dropped += journal.append(event("e\(index)"), capacity: 3).map(\.name) }
        #expect(dropped == ["e0", "e1"])
        #expect(self.journal(store).events.map(\.name) == ["e2", "e3", "e4"])
    }

    @Test("a claim never removed (its sender was killed) is settled as sent: a new journal does not send it again")
    func deadClaimIsSettled() throws {
        let store = InMemoryStore()
        let journal = journal(store)
        for name in ["a", "b"] { _ = journal.append(event(name), capacity: 100) }
        #expect(journal.claim(upTo: 1).map(\.name) == ["a"])
        // Killed here, before the removal.
        let next = self.journal(store)
        #expect(next.events.map(\.name) == ["b"])
        #expect(next.claim(upTo: 10).map(\.name) == ["b"])
    }

    @Test("a kill mid-write leaves an unfinished last line: it is left out, and the next write is a whole one")
    func unfinishedLastLine() throws {
        let store = InMemoryStore()
        let journal = journal(store)
        _ = journal.append(event("whole"), capacity: 100)
        try store.appendData(Data("+\(UUID().uuidString) {\"name\":\"cut".utf8), forKey: "events")
        let next = self.journal(store)
        #expect(next.events.map(\.name) == ["whole"])
        #expect(next.needsWholeWrite)
        _ = next.append(event("after"), capacity: 100)
        #expect(self.journal(store).events.map(\.name) == ["whole", "after"])
    }

    @Test("the JSON array written before the journal reads as a queue")
    func formatBeforeTheJournal() throws {
        let store = InMemoryStore()
        let old = [event("one"), event("two")]
        try store.setData(try JSONEncoder.linkRelay().encode(old), forKey: "events")
        #expect(journal(store).events.map(\.name) == ["one", "two"])
    }

    @Test("a long journal is written whole again: its size stays within twice the queue's (past 64 KiB)")
    func compaction() throws {
        let store = InMemoryStore()
        let journal = journal(store)
        let padding = JSONValue.string(String(repeating: "p", count: 1000))
        for index in 0..<400 {
            let event = ConversionEvent(name: "e\(index)", properties: ["padding": padding], timestamp: Date(timeIntervalSince1970: 0))
            _ = journal.append(event, capacity: 1000)
            if index >= 10 { journal.remove([journal.events[0].id]) }
        }
        let stored = try #require(try store.data(forKey: "events"))
        #expect(stored.count <= max(64 << 10, 2 * journal.wholeBytes) + 2_000)
        #expect(self.journal(store).events.count == 10)
    }

    @Test("two journals on one folder (an app and its extension): each sees the other's events, and each event is claimed by one")
    func twoJournalsOneFolder() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let app = journal(FileStore(directory: folder))
        let widget = journal(FileStore(directory: folder))
        for index in 0..<5 { _ = app.append(event("app-\(index)"), capacity: 100) }
        for index in 0..<5 { _ = widget.append(event("widget-\(index)"), capacity: 100) }
        #expect(app.save() && widget.save())
        #expect(app.currentEvents().count == 10)
        var claimed: [String] = []
        while true {
            let byApp = app.claim(upTo: 3)
            let byWidget = widget.claim(upTo: 3)
            if byApp.isEmpty && byWidget.isEmpty { break }
            claimed += byApp.map(\.name) + byWidget.map(\.name)
            app.remove(byApp.map(\.id))
            widget.remove(byWidget.map(\.id))
        }
        #expect(claimed.count == 10)
        #expect(Set(claimed).count == 10)
        #expect(widget.currentEvents().isEmpty)
    }

    @Test("a full disk: what never reached the store is claimed in memory; what is in it waits for its claim")
    func fullDisk() throws {
        let store = FailingStore()
        let journal = journal(store)
        for index in 0..<3 { _ = journal.append(event("stored-\(index)"), capacity: 100) }
        store.fail()
        for index in 0..<3 { _ = journal.append(event("unstored-\(index)"), capacity: 100) }
        #expect(journal.claim(upTo: 10).map(\.name) == ["unstored-0", "unstored-1", "unstored-2"])
        #expect(journal.claim(upTo: 10).isEmpty)
        #expect(failures.withLock { $0.count } == 1)
        store.heal()
        journal.remove(journal.ownClaims.map { $0 })
        #expect(journal.claim(upTo: 10).map(\.name) == ["stored-0", "stored-1", "stored-2"])
    }

    @Test("a reset forgets the queue in memory; removeAll also empties the store")
    func resetAndRemoveAll() throws {
        let store = InMemoryStore()
        let journal = journal(store)
        for name in ["a", "b"] { _ = journal.append(event(name), capacity: 100) }
        journal.removeAll()
        #expect(journal.events.isEmpty)
        #expect(self.journal(store).events.isEmpty)
        _ = journal.append(event("c"), capacity: 100)
        journal.reset()
        #expect(journal.events.isEmpty)
    }
}
