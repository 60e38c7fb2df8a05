import Foundation

extension EventJournal {
    static func line(_ kind: LineKind, _ body: [UInt8]) -> [UInt8] {
        var line = [kind.rawValue]
        line.reserveCapacity(body.count + 2)
        line += body
        line.append(0x0A)
        return line
    }

    /// The journal line for an event that left the queue; its JSON is forgotten.
    func forget(_ id: UUID) -> [UInt8] {
        if let json = encoded.removeValue(forKey: id) { wholeBytes -= json.count + 2 }
        unsure.remove(id)
        unstored.remove(id)
        return Self.line(.remove, Array(id.uuidString.utf8))
    }

    /// The body of the event's `+` line (its id, a space, its JSON), encoded once and kept for
    /// whole writes; `nil` when it cannot be encoded.
    func encodedJSON(of event: ConversionEvent) -> [UInt8]? {
        if let known = encoded[event.id] { return known }
        guard let json = try? JSONEncoder.linkRelay().encode(event) else { return nil }
        var bytes = Array(event.id.uuidString.utf8)
        bytes.append(0x20)
        bytes += json
        encoded[event.id] = bytes
        return bytes
    }

    /// Records a change: `line` added to the stored journal, or the whole queue when that is
    /// due. With `now`, a deferred store writes it before this returns. Returns whether it is
    /// in the store (`true` for a deferred write still under way).
    @discardableResult
    func persist(adding line: Data, now: Bool = false) -> Bool {
        let whole =
            needsWholeWrite || writer?.needsWholeValue == true
            || storedBytes + line.count > max(64 << 10, 2 * wholeBytes)
        if whole { return writeWhole(now: now) }
        storedBytes += line.count
        if let writer {
            writer.submitAddition(line)
            return now ? writer.flush() : true
        }
        let written = health.write(line, forKey: key, to: store, append: true, consequence: Self.queueKeptInMemory)
        if !written { needsWholeWrite = true }
        return written
    }

    /// Writes the whole queue, one `+` line per event and a `~` line per claim, replacing the
    /// journal. In a shared folder it is written at once, under the lock, after reading what
    /// the other journals added (`syncFirst`), so nothing of theirs is lost.
    @discardableResult
    func writeWhole(now: Bool = false, syncFirst: Bool = true) -> Bool {
        guard let shared else {
            let file = wholeJournal()
            if let writer {
                writer.submit(file)
                // In the background: any event may land or not; read back before it matters.
                wholeWriteOutcome(nil)
                return now ? writer.flush() : true
            }
            let written = health.write(file, forKey: key, to: store, consequence: Self.queueKeptInMemory)
            needsWholeWrite = !written
            wholeWriteOutcome(written)
            return written
        }
        writer?.flush()
        let written =
            (try? shared.withExclusiveLock {
                if syncFirst { sync(shared) }
                let file = FileStore.generationLine() + wholeJournal()
                guard health.write(file, forKey: key, to: store, consequence: Self.queueKeptInMemory) else { return false }
                let state = try? shared.journalState(forKey: key)
                journalIdentity = state?.identity
                journalOffset = state?.size ?? 0
                // Written whole by other means: the background writer may add to it again.
                writer?.storeWrittenWhole()
                return true
            }) ?? false
        needsWholeWrite = !written
        wholeWriteOutcome(written)
        return written
    }

    /// After a whole write: written, every event JSON can store is in the store; failed (or
    /// still under way, `nil`), any may be (a store may keep part of a failed write).
    private func wholeWriteOutcome(_ written: Bool?) {
        if written == true {
            unsure = []
            unstored = unstored.filter { encoded[$0] == nil }
        } else {
            unsure.formUnion(ids)
            unstored = []
        }
    }

    /// The whole queue as journal lines; resets the journal's sizes.
    private func wholeJournal() -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(wholeBytes + 16)
        var size = 0
        for event in queue ?? [] {
            guard let json = encodedJSON(of: event) else { continue }
            bytes.append(LineKind.add.rawValue)
            bytes += json
            bytes.append(0x0A)
            size += json.count + 2
            if claimed.contains(event.id) { bytes += Self.line(.claim, Array(event.id.uuidString.utf8)) }
        }
        wholeBytes = size
        storedBytes = bytes.count
        needsWholeWrite = false
        return Data(bytes)
    }

    /// The writer for a store that prefers deferred writes: whole values and additions, the
    /// additions under the folder's lock when it is shared.
    static func writer(
        for store: any PersistentStore, key: String, health: StoreWriteHealth, shared: (any SharedJournalStore)?
    ) -> DeferredWriter {
        DeferredWriter { batch in
            if let whole = batch.whole, !health.write(whole, forKey: key, to: store, consequence: Self.queueKeptInMemory) {
                return false
            }
            guard !batch.additions.isEmpty else { return true }
            guard let shared else {
                return health.write(batch.additions, forKey: key, to: store, append: true, consequence: Self.queueKeptInMemory)
            }
            return
                (try? shared.withExclusiveLock {
                    health.write(batch.additions, forKey: key, to: store, append: true, consequence: Self.queueKeptInMemory)
                }) ?? false
        }
    }
}
