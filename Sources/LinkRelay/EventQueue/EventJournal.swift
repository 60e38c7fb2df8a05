import Foundation

/// The event queue as stored: the queued events in memory and their journal in a
/// ``PersistentStore``, one line per change.
///
/// - `+`, the event's id, a space and its JSON: the event joined the queue (at the end). The
///   id up front lets a reader skip a line it knows without decoding it.
/// - `-` and an id: the event left it (sent, refused, dropped).
/// - `~` and an id: a client claimed the event to send it. Claimed and never removed (the
///   sender died, or could not write the removal), it is never sent again: at most once.
/// - `!` and an id: the claim was given back (the send failed and will be tried again).
///
/// An append adds one line, whatever the queue's length. When the journal is more than twice
/// the queue (and over 64 KiB), the whole queue is written again, one `+` line per event and a
/// `~` line per claim. A journal from before the claims, or a JSON array from before the
/// journal, reads the same way.
///
/// An event whose `+` line never reached the store (a full disk) is in no journal a later
/// launch can read, so it cannot be sent twice: when claims cannot be written it is claimed in
/// memory only (``unstored``), while events that are in the store wait for their claim.
/// Whether a line whose write failed landed after all (part of a write can) is read back from
/// the store first.
///
/// A ``FileStore`` folder may be shared by journals in several processes (an app and its
/// extension): every change happens under the folder's lock, a journal reads what the others
/// added before it claims an event or rewrites the file, and a claim it finds from a journal no
/// longer alive is settled as sent.
///
/// It knows nothing of clients or backends: the client asks it to ``claim(upTo:)`` events, sends
/// them, and ``remove(_:)``s or ``release(_:)``s them. It is used on one actor (the client's);
/// only its background writer runs elsewhere.
final class EventJournal {
    enum LineKind: UInt8 {
        case add = 0x2B  // "+"
        case remove = 0x2D  // "-"
        case claim = 0x7E  // "~"
        case release = 0x21  // "!"
        case generation = 0x23  // "#": the first line of a shared folder's journal file
    }

    static let queueKeptInMemory = "the queue is kept in memory and written again with the next change."

    let store: any PersistentStore
    let key: String
    let logger: LinkRelayLogger
    /// Reports the store's write failures once per run of them.
    let health: StoreWriteHealth
    /// The store, when other processes may share its folder.
    let shared: (any SharedJournalStore)?

    /// The queue, oldest first; `nil` until read from the store.
    var queue: [ConversionEvent]?
    /// The ids of ``queue``, for replaying the journal without scanning the queue.
    var ids: Set<UUID> = []
    /// Each queued event's `+` line body (its id, a space, its JSON), encoded once: a whole
    /// write joins them instead of encoding every event again.
    var encoded: [UUID: [UInt8]] = [:]
    /// Queued events claimed for sending, by this journal or another one sharing the folder:
    /// claimed and not removed, an event is never sent again.
    var claimed: Set<UUID> = []
    /// The claims this journal holds (the events its client is sending).
    var ownClaims: Set<UUID> = []
    /// Queued events whose `+` line may or may not be in the store: its write failed (perhaps
    /// after part of it landed), or went to the background writer and was not confirmed yet.
    /// Read back before it matters (``unstored``).
    var unsure: Set<UUID> = []
    /// Queued events whose `+` line is not in the store (read back after a failed write, or
    /// never written): no later launch can find them, so they need no claim to be sent at most
    /// once. A whole write of the queue puts them in the store.
    var unstored: Set<UUID> = []
    /// Writes the journal off the caller's path, for stores that prefer it (files); `nil` for
    /// a store written at once. In a shared folder it only adds lines, under the folder's lock.
    let writer: DeferredWriter?
    /// For a shared folder: the journal file this journal has read, and how far.
    var journalIdentity: String?
    var journalOffset = 0
    /// This journal's registration as a user of a shared folder, held for its lifetime.
    var membership: FolderMembership?
    /// The size of the queue written whole (one line per event).
    var wholeBytes = 0
    /// The size of the stored journal: the last whole write and the lines added since. Past
    /// twice ``wholeBytes`` (and 64 KiB) the next write is a whole one.
    var storedBytes = 0
    /// The stored journal must be written whole next: a write failed, it is in the format from
    /// before the journal, it ends in an unfinished line, or it holds events this run dropped.
    var needsWholeWrite = false

    /// A journal kept under `key` in `store`, logging to `logger`, its write failures reported
    /// through `health`. Nothing is read until it is first needed.
    init(store: any PersistentStore, key: String, logger: LinkRelayLogger, health: StoreWriteHealth) {
        self.store = store
        self.key = key
        self.logger = logger
        self.health = health
        let shared = store as? any SharedJournalStore
        self.shared = shared
        writer = store.prefersDeferredWrites ? Self.writer(for: store, key: key, health: health, shared: shared) : nil
    }

    // MARK: - The queue

    /// The queue this journal's client may send: every queued event but those another journal
    /// is sending. Read from the store on first use.
    var events: [ConversionEvent] {
        load()
        let events = queue ?? []
        let othersClaims = claimed.subtracting(ownClaims)
        return othersClaims.isEmpty ? events : events.filter { !othersClaims.contains($0.id) }
    }

    /// ``events`` after reading what other journals sharing the folder added.
    func currentEvents() -> [ConversionEvent] {
        load()
        if let shared {
            writer?.flush()
            do {
                try shared.withExclusiveLock { sync(shared) }
            } catch {
                logger.warning("Could not read the stored '\(key)'.")
            }
        }
        return events
    }

    /// Whether `id` is queued.
    func contains(_ id: UUID) -> Bool {
        load()
        return ids.contains(id)
    }

    /// Appends `event` to the queue and its line to the store; past `capacity` the oldest are
    /// dropped (in the same write) and returned.
    func append(_ event: ConversionEvent, capacity: Int) -> [ConversionEvent] {
        load()
        var lines: [UInt8] = []
        if let json = encodedJSON(of: event) {
            lines = Self.line(.add, json)
            wholeBytes += lines.count
        } else {
            logger.error("'\(event.name)' cannot be saved (it holds a value JSON cannot store); it is kept in memory only.")
            unstored.insert(event.id)
        }
        queue?.append(event)
        ids.insert(event.id)
        var dropped: [ConversionEvent] = []
        if let count = queue?.count, count > max(capacity, 1) {
            dropped = Array(queue?.prefix(count - max(capacity, 1)) ?? [])
            queue?.removeFirst(dropped.count)
            for old in dropped { lines += forget(old.id) }
        }
        if !lines.isEmpty {
            // Unsure until its line is known to be in the store, also while it is written: a
            // replay of the journal on the way keeps it. A failed write may have left part of
            // it, and a background one is not done yet: it is read back before it matters.
            let encodable = encoded[event.id] != nil
            if encodable { unsure.insert(event.id) }
            if persist(adding: Data(lines)), writer == nil { unsure.remove(event.id) }
        }
        return dropped
    }

    /// Drops every queued event (in a shared folder, the other journals' too).
    func removeAll() {
        load()
        reset()
        writeWhole(syncFirst: false)
    }

    /// Writes the queue now and says whether all of it is in the store.
    func save() -> Bool {
        load()
        if let writer {
            if !needsWholeWrite, writer.flush() { return true }
        } else if !needsWholeWrite {
            return true
        }
        // The last write failed (or the stored form is due for a rewrite): write it whole.
        return writeWhole(now: true)
    }

    /// Forgets the queue in memory (``DeepLinkClient/clearData()``), keeping the writer and the
    /// folder registration; the caller removes what is stored, after flushing the writer.
    func reset() {
        queue = []
        ids = []
        encoded = [:]
        claimed = []
        ownClaims = []
        unsure = []
        unstored = []
        journalIdentity = nil
        journalOffset = 0
        wholeBytes = 0
        storedBytes = 0
        needsWholeWrite = false
    }

    /// Writes what the background writer holds, and lets go of the shared folder (the others
    /// may then settle claims left behind). For a client's shutdown.
    func close() {
        writer?.flush()
        membership = nil
    }

    // MARK: - Claims

    /// Claims the first `limit` events this client may send (oldest first) and writes the
    /// claims, all in one write, before returning them; empty when there is none. When the
    /// claims cannot be written (reported), the first `limit` events that are not in the store
    /// are returned instead, claimed in memory only: no later launch can find them.
    func claim(upTo limit: Int) -> [ConversionEvent] {
        load()
        let limit = max(1, limit)
        let lines: ([ConversionEvent]) -> Data = { events in
            Data(events.flatMap { Self.line(.claim, Array($0.id.uuidString.utf8)) })
        }
        guard let shared else {
            let claimed = self.claimed
            let events = Array(self.events.lazy.filter { !claimed.contains($0.id) }.prefix(limit))
            guard !events.isEmpty else { return [] }
            // Claimed before the write, so that a whole write due now carries the claims too.
            markClaimed(events)
            if persist(adding: lines(events), now: true) { return events }
            unmarkClaimed(events)
            return claimUnstored(upTo: limit)
        }
        // Another journal may have claimed or removed them: decide on what the folder holds now.
        writer?.flush()
        /// What the folder holds now decides: nothing to send, or the claims written (or not).
        enum Claim { case nothing, written([ConversionEvent]), failed }
        var claim = Claim.failed
        do {
            claim = try shared.withExclusiveLock { () -> Claim in
                sync(shared)
                let claimed = self.claimed
                let events = Array((queue ?? []).lazy.filter { !claimed.contains($0.id) }.prefix(limit))
                guard !events.isEmpty else { return .nothing }
                let consequence = "the event is not sent until it can be written."
                let written = health.write(lines(events), forKey: key, to: store, append: true, consequence: consequence)
                return written ? .written(events) : .failed
            }
        } catch {
            logger.error("Could not lock the folder of '\(key)'; no event is sent.")
        }
        switch claim {
        case .nothing:
            return []
        case .failed:
            needsWholeWrite = true
            return claimUnstored(upTo: limit)
        case .written(let events):
            markClaimed(events)
            return events
        }
    }

    /// Gives the claims on `ids` back: the send failed and is tried again later.
    func release(_ ids: [UUID]) {
        var lines: [UInt8] = []
        for id in ids {
            claimed.remove(id)
            ownClaims.remove(id)
            lines += Self.line(.release, Array(id.uuidString.utf8))
        }
        persist(adding: Data(lines), now: true)
    }

    /// Removes sent or refused events by id, in one pass and one write (the queue may have
    /// changed while they were on their way). Should the removal not reach the store, their
    /// claims keep them from being sent again.
    func remove(_ ids: [UUID]) {
        load()
        let leaving = Set(ids)
        queue?.removeAll { leaving.contains($0.id) }
        var lines: [UInt8] = []
        for id in ids {
            self.ids.remove(id)
            ownClaims.remove(id)
            claimed.remove(id)
            lines += forget(id)
        }
        persist(adding: Data(lines))
    }

    private func markClaimed(_ events: [ConversionEvent]) {
        for event in events {
            claimed.insert(event.id)
            ownClaims.insert(event.id)
        }
    }

    private func unmarkClaimed(_ events: [ConversionEvent]) {
        for event in events {
            claimed.remove(event.id)
            ownClaims.remove(event.id)
        }
    }

    /// When claims cannot be written: the first `limit` unclaimed events whose `+` line is not
    /// in the store, claimed in memory. Sending them needs no claim: the store has nothing a
    /// later launch could send again. (A whole write of the queue while they are on their way
    /// writes their claims with them.)
    private func claimUnstored(upTo limit: Int) -> [ConversionEvent] {
        settleUnsure()
        let unstored = self.unstored
        guard !unstored.isEmpty else { return [] }
        let claimed = self.claimed
        let events = Array(self.events.lazy.filter { unstored.contains($0.id) && !claimed.contains($0.id) }.prefix(limit))
        guard !events.isEmpty else { return [] }
        markClaimed(events)
        logger.debug("Sending \(events.count) events that never reached the store from memory (they need no claim).")
        return events
    }

    /// Reads the stored journal back to learn which ``unsure`` events are in it: a whole `+`
    /// line with the event's id means it is; the others are ``unstored``. An unfinished last
    /// line is not in the store: the next launch leaves it out, and nothing finishes it later
    /// (a ``FileStore`` cuts it off before it adds a line; another store is written whole after
    /// a failed write). A journal that cannot be read (missing, or not a file) holds none of them.
    private func settleUnsure() {
        guard !unsure.isEmpty else { return }
        writer?.flush()
        let stored: Data?
        if let shared {
            stored = try? shared.withExclusiveLock { try shared.readJournal(forKey: key, from: 0) }
        } else {
            stored = try? store.data(forKey: key)
        }
        let inStore = stored.map { Self.addedIDs(in: [UInt8]($0)) } ?? []
        for id in unsure where !inStore.contains(id) { unstored.insert(id) }
        unsure = []
    }

    /// The ids of every finished `+` line in `bytes`.
    static func addedIDs(in bytes: [UInt8]) -> Set<UUID> {
        var ids = Set<UUID>()
        var start = 0
        while start < bytes.count, let end = bytes[start...].firstIndex(of: 0x0A) {
            if bytes[start] == LineKind.add.rawValue, end - start > 36,
                let id = UUID(uuidString: String(decoding: bytes[(start + 1)..<(start + 37)], as: UTF8.self))
            {
                ids.insert(id)
            }
            start = end + 1
        }
        return ids
    }
}
