import Foundation

/// The event queue in the store: a journal of lines, one per change.
///
/// - `+`, the event's id, a space and its JSON: the event joined the queue (at the end). The
///   id up front lets a reader skip a line it knows without decoding it.
/// - `-` and an id: the event left it (sent, refused, dropped).
/// - `~` and an id: a client claimed the event to send it. Claimed and never removed (the
///   sender died, or could not write the removal), it is never sent again: at most once.
/// - `!` and an id: the claim was given back (the send failed and will be tried again).
///
/// A `track` adds one line, whatever the queue's length. When the journal is more than twice
/// the queue (and over 64 KiB), the whole queue is written again, one `+` line per event and a
/// `~` line per claim. A journal from before the claims, or a JSON array from before the
/// journal, reads the same way.
///
/// An event whose `+` line never reached the store (a full disk) is in no journal a later
/// launch can read, so it cannot be sent twice: when claims cannot be written it is sent from
/// memory without one (``EventQueueState/unstored``), while events that are in the store wait
/// for their claim. Whether a line whose write failed landed after all (part of a write can)
/// is read back from the store first.
///
/// A ``FileStore`` folder may be shared by clients in several processes (an app and its
/// extension): every change happens under the folder's lock, a client reads what the others
/// added before it claims an event or rewrites the journal, and a claim it finds from a client
/// no longer alive is settled as sent.
extension DeepLinkClient {
    private enum LineKind: UInt8 {
        case add = 0x2B  // "+"
        case remove = 0x2D  // "-"
        case claim = 0x7E  // "~"
        case release = 0x21  // "!"
        case generation = 0x23  // "#": the first line of a shared folder's journal file
    }

    private static let queueKeptInMemory = "the queue is kept in memory and written again with the next change."

    /// The queue this client may send: every queued event but those another client is
    /// sending. Read from the store on first use.
    func loadQueue() -> [ConversionEvent] {
        ensureQueueLoaded()
        let events = eventQueue.events ?? []
        let othersClaims = eventQueue.claimed.subtracting(eventQueue.ownClaims)
        return othersClaims.isEmpty ? events : events.filter { !othersClaims.contains($0.id) }
    }

    /// ``loadQueue()`` after reading what other clients sharing the folder added.
    func currentQueue() -> [ConversionEvent] {
        ensureQueueLoaded()
        if let shared = sharedJournal() {
            eventQueue.writer?.flush()
            do {
                try shared.withExclusiveLock { syncJournal(shared) }
            } catch {
                logger.warning("Could not read the stored '\(Self.eventQueueKey)'.")
            }
        }
        return loadQueue()
    }

    /// Whether the store's folder may be shared with other processes (a ``FileStore``).
    var hasSharedJournal: Bool { sharedJournal() != nil }

    /// Appends to the persisted queue (dropping the oldest when full) and sends once started.
    func append(_ event: ConversionEvent) {
        ensureQueueLoaded()
        var lines: [UInt8] = []
        if let json = encodedJSON(of: event) {
            lines = Self.line(.add, json)
            eventQueue.wholeBytes += lines.count
        } else {
            logger.error("'\(event.name)' cannot be saved (it holds a value JSON cannot store); it is kept in memory only.")
            eventQueue.unstored.insert(event.id)
        }
        eventQueue.events?.append(event)
        eventQueue.ids.insert(event.id)
        let capacity = configuration.eventQueueCapacity
        if let events = eventQueue.events, events.count > capacity {
            let dropped = events.prefix(events.count - capacity)
            eventQueue.events?.removeFirst(dropped.count)
            for old in dropped { lines += forget(old.id) }
            var total: Int?
            for _ in dropped { total = eventDrops.note() ?? total }
            if let total {
                logger.warning("The event queue is full (\(capacity)); dropped the oldest: \(dropped.map(\.name).joined(separator: ", ")) (\(total) so far).")
            }
        }
        if !lines.isEmpty {
            // Unsure until its line is known to be in the store, also while it is written: a
            // replay of the journal on the way keeps it. A failed write may have left part of
            // it, and a background one is not done yet: it is read back before it matters.
            let encodable = eventQueue.encoded[event.id] != nil
            if encodable { eventQueue.unsure.insert(event.id) }
            if persist(adding: Data(lines)), eventQueue.writer == nil { eventQueue.unsure.remove(event.id) }
        }
        if isStarted { scheduleFlush() }
    }

    /// Drops every queued event unsent (in a shared folder, the other clients' too).
    public func clearQueuedEvents() {
        ensureQueueLoaded()
        eventQueue.events = []
        eventQueue.ids = []
        eventQueue.encoded = [:]
        eventQueue.claimed = []
        eventQueue.ownClaims = []
        eventQueue.unsure = []
        eventQueue.unstored = []
        writeWhole(syncFirst: false)
    }

    /// Writes the queue now and says whether all of it is in the store.
    func persistQueueNow() -> Bool {
        ensureQueueLoaded()
        if let writer = eventQueue.writer {
            if !eventQueue.needsWholeWrite, writer.flush() { return true }
        } else if !eventQueue.needsWholeWrite {
            return true
        }
        // The last write failed (or the stored form is due for a rewrite): write it whole.
        return writeWhole(now: true)
    }

    // MARK: - Claims

    /// Claims the first `limit` events this client may send (oldest first) and writes the
    /// claims, all in one write, before returning them; empty when there is none. When the
    /// claims cannot be written (reported), the first `limit` events that are not in the store
    /// are returned instead, claimed in memory only: no later launch can find them.
    func claimNextEvents(upTo limit: Int) -> [ConversionEvent] {
        ensureQueueLoaded()
        let limit = max(1, limit)
        let lines: ([ConversionEvent]) -> Data = { events in
            Data(events.flatMap { Self.line(.claim, Array($0.id.uuidString.utf8)) })
        }
        guard let shared = sharedJournal() else {
            let claimed = eventQueue.claimed
            let events = Array(loadQueue().lazy.filter { !claimed.contains($0.id) }.prefix(limit))
            guard !events.isEmpty else { return [] }
            // Claimed before the write, so that a whole write due now carries the claims too.
            markClaimed(events)
            if persist(adding: lines(events), now: true) { return events }
            unmarkClaimed(events)
            return claimUnstoredEvents(upTo: limit)
        }
        // Another client may have claimed or removed them: decide on what the folder holds now.
        eventQueue.writer?.flush()
        let health = writeHealth()
        /// What the folder holds now decides: nothing to send, or the claims written (or not).
        enum Claim { case nothing, written([ConversionEvent]), failed }
        var claim = Claim.failed
        do {
            claim = try shared.withExclusiveLock { () -> Claim in
                syncJournal(shared)
                let claimed = eventQueue.claimed
                let events = Array((eventQueue.events ?? []).lazy.filter { !claimed.contains($0.id) }.prefix(limit))
                guard !events.isEmpty else { return .nothing }
                let consequence = "the event is not sent until it can be written."
                let written = health.write(lines(events), forKey: Self.eventQueueKey, to: store(), append: true, consequence: consequence)
                return written ? .written(events) : .failed
            }
        } catch {
            logger.error("Could not lock the folder of '\(Self.eventQueueKey)'; no event is sent.")
        }
        switch claim {
        case .nothing:
            return []
        case .failed:
            eventQueue.needsWholeWrite = true
            return claimUnstoredEvents(upTo: limit)
        case .written(let events):
            markClaimed(events)
            return events
        }
    }

    private func markClaimed(_ events: [ConversionEvent]) {
        for event in events {
            eventQueue.claimed.insert(event.id)
            eventQueue.ownClaims.insert(event.id)
        }
    }

    private func unmarkClaimed(_ events: [ConversionEvent]) {
        for event in events {
            eventQueue.claimed.remove(event.id)
            eventQueue.ownClaims.remove(event.id)
        }
    }

    /// When claims cannot be written: the first `limit` unclaimed events whose `+` line is not
    /// in the store, claimed in memory. Sending them needs no claim: the store has nothing a
    /// later launch could send again. (A whole write of the queue while they are on their way
    /// writes their claims with them.)
    private func claimUnstoredEvents(upTo limit: Int) -> [ConversionEvent] {
        settleUnsureEvents()
        let unstored = eventQueue.unstored
        guard !unstored.isEmpty else { return [] }
        let claimed = eventQueue.claimed
        let events = Array(loadQueue().lazy.filter { unstored.contains($0.id) && !claimed.contains($0.id) }.prefix(limit))
        guard !events.isEmpty else { return [] }
        markClaimed(events)
        logger.debug("Sending \(events.count) events that never reached the store from memory (they need no claim).")
        return events
    }

    /// Reads the stored journal back to learn which ``EventQueueState/unsure`` events are in
    /// it: a whole `+` line with the event's id means it is; the others are
    /// ``EventQueueState/unstored``. An unfinished last line is not in the store: the next
    /// launch leaves it out, and nothing finishes it later (a ``FileStore`` cuts it off before
    /// it adds a line; another store is written whole after a failed write). A journal that
    /// cannot be read (missing, or not a file) holds none of them.
    private func settleUnsureEvents() {
        guard !eventQueue.unsure.isEmpty else { return }
        eventQueue.writer?.flush()
        let stored: Data?
        if let shared = sharedJournal() {
            stored = try? shared.withExclusiveLock { try shared.readJournal(forKey: Self.eventQueueKey, from: 0) }
        } else {
            stored = try? store().data(forKey: Self.eventQueueKey)
        }
        let inStore = stored.map { Self.addedIDs(in: [UInt8]($0)) } ?? []
        for id in eventQueue.unsure where !inStore.contains(id) { eventQueue.unstored.insert(id) }
        eventQueue.unsure = []
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

    /// Gives the claims on `ids` back: the send failed and is tried again later.
    func releaseClaims(on ids: [UUID]) {
        var lines: [UInt8] = []
        for id in ids {
            eventQueue.claimed.remove(id)
            eventQueue.ownClaims.remove(id)
            lines += Self.line(.release, Array(id.uuidString.utf8))
        }
        persist(adding: Data(lines), now: true)
    }

    /// Removes sent or refused events by id, in one pass and one write (the queue may have
    /// changed while they were on their way). Should the removal not reach the store, their
    /// claims keep them from being sent again.
    func removeFromQueue(_ ids: [UUID]) {
        ensureQueueLoaded()
        let leaving = Set(ids)
        eventQueue.events?.removeAll { leaving.contains($0.id) }
        var lines: [UInt8] = []
        for id in ids {
            eventQueue.ids.remove(id)
            eventQueue.ownClaims.remove(id)
            eventQueue.claimed.remove(id)
            lines += forget(id)
        }
        persist(adding: Data(lines))
    }

    // MARK: - Writing

    private static func line(_ kind: LineKind, _ body: [UInt8]) -> [UInt8] {
        var line = [kind.rawValue]
        line.reserveCapacity(body.count + 2)
        line += body
        line.append(0x0A)
        return line
    }

    /// The journal line for an event that left the queue; its JSON is forgotten.
    private func forget(_ id: UUID) -> [UInt8] {
        if let json = eventQueue.encoded.removeValue(forKey: id) { eventQueue.wholeBytes -= json.count + 2 }
        eventQueue.unsure.remove(id)
        eventQueue.unstored.remove(id)
        return Self.line(.remove, Array(id.uuidString.utf8))
    }

    /// The body of the event's `+` line (its id, a space, its JSON), encoded once and kept for
    /// whole writes; `nil` when it cannot be encoded.
    private func encodedJSON(of event: ConversionEvent) -> [UInt8]? {
        if let known = eventQueue.encoded[event.id] { return known }
        guard let json = try? JSONEncoder.linkRelay().encode(event) else { return nil }
        var bytes = Array(event.id.uuidString.utf8)
        bytes.append(0x20)
        bytes += json
        eventQueue.encoded[event.id] = bytes
        return bytes
    }

    /// Records a change: `line` added to the stored journal, or the whole queue when that is
    /// due. With `now`, a deferred store writes it before this returns. Returns whether it is
    /// in the store (`true` for a deferred write still under way).
    @discardableResult
    private func persist(adding line: Data, now: Bool = false) -> Bool {
        let writer = queueWriter()
        let whole =
            eventQueue.needsWholeWrite || writer?.needsWholeValue == true
            || eventQueue.storedBytes + line.count > max(64 << 10, 2 * eventQueue.wholeBytes)
        if whole { return writeWhole(now: now) }
        eventQueue.storedBytes += line.count
        if let writer {
            writer.submitAddition(line)
            return now ? writer.flush() : true
        }
        let written = writeHealth().write(line, forKey: Self.eventQueueKey, to: store(), append: true, consequence: Self.queueKeptInMemory)
        if !written { eventQueue.needsWholeWrite = true }
        return written
    }

    /// Writes the whole queue, one `+` line per event and a `~` line per claim, replacing the
    /// journal. In a shared folder it is written at once, under the lock, after reading what
    /// the other clients added (`syncFirst`), so nothing of theirs is lost.
    @discardableResult
    private func writeWhole(now: Bool = false, syncFirst: Bool = true) -> Bool {
        guard let shared = sharedJournal() else {
            let file = wholeJournal()
            if let writer = queueWriter() {
                writer.submit(file)
                // In the background: any event may land or not; read back before it matters.
                wholeWriteOutcome(nil)
                return now ? writer.flush() : true
            }
            let written = writeHealth().write(file, forKey: Self.eventQueueKey, to: store(), consequence: Self.queueKeptInMemory)
            eventQueue.needsWholeWrite = !written
            wholeWriteOutcome(written)
            return written
        }
        eventQueue.writer?.flush()
        let health = writeHealth()
        let written =
            (try? shared.withExclusiveLock {
                if syncFirst { syncJournal(shared) }
                let file = FileStore.generationLine() + wholeJournal()
                guard health.write(file, forKey: Self.eventQueueKey, to: store(), consequence: Self.queueKeptInMemory) else { return false }
                wroteWholeSharedJournal(shared)
                return true
            }) ?? false
        eventQueue.needsWholeWrite = !written
        wholeWriteOutcome(written)
        return written
    }

    /// After the journal of a shared folder was written whole (under its lock): where it now
    /// ends, and the background writer may add to it again.
    private func wroteWholeSharedJournal(_ shared: any SharedJournalStore) {
        let state = try? shared.journalState(forKey: Self.eventQueueKey)
        eventQueue.journalIdentity = state?.identity
        eventQueue.journalOffset = state?.size ?? 0
        eventQueue.writer?.storeWrittenWhole()
    }

    /// After a whole write: written, every event JSON can store is in the store; failed (or
    /// still under way, `nil`), any may be (a store may keep part of a failed write).
    private func wholeWriteOutcome(_ written: Bool?) {
        if written == true {
            eventQueue.unsure = []
            eventQueue.unstored = eventQueue.unstored.filter { eventQueue.encoded[$0] == nil }
        } else {
            eventQueue.unsure.formUnion(eventQueue.ids)
            eventQueue.unstored = []
        }
    }

    /// The whole queue as journal lines; resets the journal's sizes.
    private func wholeJournal() -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(eventQueue.wholeBytes + 16)
        var size = 0
        for event in eventQueue.events ?? [] {
            guard let json = encodedJSON(of: event) else { continue }
            bytes.append(LineKind.add.rawValue)
            bytes += json
            bytes.append(0x0A)
            size += json.count + 2
            if eventQueue.claimed.contains(event.id) { bytes += Self.line(.claim, Array(event.id.uuidString.utf8)) }
        }
        eventQueue.wholeBytes = size
        eventQueue.storedBytes = bytes.count
        eventQueue.needsWholeWrite = false
        return Data(bytes)
    }

    /// The store, when other processes may share its folder.
    private func sharedJournal() -> (any SharedJournalStore)? {
        store() as? any SharedJournalStore
    }

    /// Reports the store's write failures once per run of them.
    func writeHealth() -> StoreWriteHealth {
        if let health = eventQueue.health { return health }
        let health = StoreWriteHealth(logger: logger) { [weak self] error in
            self?.reportStorageFailure(error)
        }
        eventQueue.health = health
        return health
    }

    private nonisolated func reportStorageFailure(_ error: DeepLinkError) {
        var failure = error
        failure.backend = backend.id
        publish(.failure(failure.redacted(by: redactor)))
    }

    /// The writer for a store that prefers deferred writes; `nil` for one written at once. In a
    /// shared folder it only adds lines, under the folder's lock.
    private func queueWriter() -> DeferredWriter? {
        if let writer = eventQueue.writer { return writer }
        let store = store()
        guard store.prefersDeferredWrites else { return nil }
        let health = writeHealth()
        let shared = sharedJournal()
        let writer = DeferredWriter { batch in
            let key = Self.eventQueueKey
            if let whole = batch.whole, !health.write(whole, forKey: key, to: store, consequence: Self.queueKeptInMemory) {
                return false
            }
            guard !batch.additions.isEmpty else { return true }
            guard let shared else {
                return health.write(batch.additions, forKey: key, to: store, append: true, consequence: Self.queueKeptInMemory)
            }
            return (try? shared.withExclusiveLock {
                health.write(batch.additions, forKey: key, to: store, append: true, consequence: Self.queueKeptInMemory)
            }) ?? false
        }
        eventQueue.writer = writer
        return writer
    }

    // MARK: - Reading

    /// Reads the stored queue once: the journal replayed (in a shared folder, under its lock),
    /// or the JSON array written before the journal. A claim from a client no longer alive is
    /// settled: its event is not sent again.
    func ensureQueueLoaded() {
        guard eventQueue.events == nil else { return }
        eventQueue.events = []
        if let shared = sharedJournal() {
            let membership = eventQueue.membership ?? shared.join()
            eventQueue.membership = membership
            do {
                try shared.withExclusiveLock { syncJournal(shared) }
            } catch {
                logger.warning("Could not read the stored '\(Self.eventQueueKey)'; treating it as absent.")
            }
            // Claims held by a live client are its business; with none alive, they are dead.
            if membership.sole { settleDeadClaims() }
            return
        }
        readWholeJournal()
        settleDeadClaims()
    }

    /// Drops the events whose claims nobody alive holds: they were sent, or on their way, when
    /// their sender stopped.
    private func settleDeadClaims() {
        let dead = eventQueue.claimed.subtracting(eventQueue.ownClaims)
        guard !dead.isEmpty else { return }
        let count = eventQueue.events?.count ?? 0
        eventQueue.events?.removeAll { dead.contains($0.id) }
        for id in dead {
            eventQueue.ids.remove(id)
            if let json = eventQueue.encoded.removeValue(forKey: id) { eventQueue.wholeBytes -= json.count + 2 }
        }
        eventQueue.claimed.subtract(dead)
        eventQueue.needsWholeWrite = true
        let dropped = count - (eventQueue.events?.count ?? 0)
        if dropped > 0 {
            logger.warning(
                "\(dropped) queued events were sent (or on their way) when the app last stopped, before their removal was saved; they are not sent again.")
        }
    }

    /// Brings the queue up to date with the shared journal (called under the folder's lock):
    /// the lines added since this client last read, or the whole journal when another client
    /// replaced it.
    private func syncJournal(_ shared: any SharedJournalStore) {
        let state: JournalFileState?
        do {
            state = try shared.journalState(forKey: Self.eventQueueKey)
        } catch {
            logger.warning("Could not read the stored '\(Self.eventQueueKey)'.")
            return
        }
        guard let state else {
            // Nothing stored (yet, or cleared by another client).
            if eventQueue.journalIdentity != nil {
                for event in forgetQueueKeepingOwnClaims() where eventQueue.ids.insert(event.id).inserted {
                    eventQueue.events?.append(event)
                }
            }
            eventQueue.journalIdentity = nil
            eventQueue.journalOffset = 0
            return
        }
        let incremental = state.identity == eventQueue.journalIdentity && state.size >= eventQueue.journalOffset
        let from = incremental ? eventQueue.journalOffset : 0
        guard let bytes = try? shared.readJournal(forKey: Self.eventQueueKey, from: from) else {
            logger.warning("Could not read the stored '\(Self.eventQueueKey)'.")
            return
        }
        let kept = incremental ? [] : forgetQueueKeepingOwnClaims()
        let consumed = applyJournal([UInt8](bytes), replaying: !incremental)
        // This client's events that are not in the store are in no journal: they stay.
        for event in kept where eventQueue.ids.insert(event.id).inserted { eventQueue.events?.append(event) }
        eventQueue.journalIdentity = state.identity
        eventQueue.journalOffset = from + consumed
        if !incremental { eventQueue.storedBytes = bytes.count }
    }

    /// Empties the queue in memory before a whole replay, and returns the events that may not
    /// be in the journal (to keep after it); this client's own claims stay (the replay finds
    /// them in the journal again).
    private func forgetQueueKeepingOwnClaims() -> [ConversionEvent] {
        let maybeNotStored = eventQueue.unsure.union(eventQueue.unstored)
        let kept = maybeNotStored.isEmpty ? [] : (eventQueue.events ?? []).filter { maybeNotStored.contains($0.id) }
        eventQueue.events = []
        eventQueue.ids = []
        eventQueue.claimed = eventQueue.ownClaims
        return kept
    }

    /// Reads a store that is not shared: the whole value, once.
    private func readWholeJournal() {
        let stored: Data?
        do {
            stored = try store().data(forKey: Self.eventQueueKey)
        } catch {
            logger.warning("Could not read the stored '\(Self.eventQueueKey)'; treating it as absent.")
            return
        }
        guard let stored else { return }
        _ = applyJournal([UInt8](stored), replaying: true)
        eventQueue.storedBytes = stored.count
    }

    /// Applies journal lines to the queue in memory and returns how many bytes it consumed (up
    /// to the last complete line). With `replaying` (a whole journal), an unfinished last line
    /// is left out quietly (a kill mid-write) and a JSON array (the format before the journal)
    /// is read; damaged lines are left out with a warning. After either, the next write is a
    /// whole one, so nothing follows a broken line.
    private func applyJournal(_ bytes: [UInt8], replaying: Bool) -> Int {
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else { return bytes.count }
        let decoder = JSONDecoder.linkRelay()
        if replaying, bytes[first] == UInt8(ascii: "[") {
            eventQueue.needsWholeWrite = true
            do {
                for event in try decoder.decode([ConversionEvent].self, from: Data(bytes)) where eventQueue.ids.insert(event.id).inserted {
                    eventQueue.events?.append(event)
                }
            } catch {
                logger.warning("The stored '\(Self.eventQueueKey)' is corrupt; treating it as absent.")
            }
            recountWholeBytes()
            return bytes.count
        }
        var damaged = 0
        var start = 0
        while let end = bytes[start...].firstIndex(of: 0x0A) {
            defer { start = end + 1 }
            guard start < end, let kind = LineKind(rawValue: bytes[start]) else {
                if start < end { damaged += 1 }
                continue
            }
            let body = bytes[(start + 1)..<end]
            if kind == .generation { continue }
            if kind == .add {
                // `+<id> <json>`: a known id is skipped without decoding (a client reads its
                // own lines back).
                var json = body
                if body.count > 37, body[body.startIndex + 36] == 0x20,
                    let id = UUID(uuidString: String(decoding: body.prefix(36), as: UTF8.self))
                {
                    if eventQueue.ids.contains(id) {
                        eventQueue.unsure.remove(id)
                        continue
                    }
                    json = body.dropFirst(37)
                }
                guard let event = try? decoder.decode(ConversionEvent.self, from: Data(json)) else {
                    damaged += 1
                    continue
                }
                eventQueue.unsure.remove(event.id)
                eventQueue.unstored.remove(event.id)
                if eventQueue.ids.insert(event.id).inserted {
                    eventQueue.events?.append(event)
                    var stored = Array(event.id.uuidString.utf8)
                    stored.append(0x20)
                    stored += json
                    eventQueue.encoded[event.id] = stored
                }
                continue
            }
            guard let id = UUID(uuidString: String(decoding: body, as: UTF8.self)) else {
                damaged += 1
                continue
            }
            switch kind {
            case .remove:
                if eventQueue.ids.remove(id) != nil { eventQueue.events?.removeAll { $0.id == id } }
                eventQueue.encoded[id] = nil
                eventQueue.claimed.remove(id)
                eventQueue.unsure.remove(id)
                eventQueue.unstored.remove(id)
            case .claim:
                if eventQueue.ids.contains(id) { eventQueue.claimed.insert(id) }
            case .release:
                eventQueue.claimed.remove(id)
            case .add, .generation:
                break
            }
        }
        if replaying, start < bytes.count {
            // A write cut off by a kill leaves the start of a line; anything else is damage.
            if LineKind(rawValue: bytes[start]) == nil {
                damaged += 1
            } else {
                logger.info("The stored '\(Self.eventQueueKey)' ends in an unfinished line (a write was cut off); it is left out.")
            }
            eventQueue.needsWholeWrite = true
        }
        if damaged > 0 {
            logger.warning("The stored '\(Self.eventQueueKey)' is corrupt in \(damaged) lines; they are left out.")
            eventQueue.needsWholeWrite = true
        }
        recountWholeBytes()
        return start
    }

    private func recountWholeBytes() {
        eventQueue.wholeBytes = (eventQueue.events ?? []).reduce(0) { $0 + (eventQueue.encoded[$1.id]?.count ?? 0) + 2 }
    }
}
