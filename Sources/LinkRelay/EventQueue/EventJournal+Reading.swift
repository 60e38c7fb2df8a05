import Foundation

extension EventJournal {
    // MARK: - Reading

    /// Reads the stored queue once: the journal replayed (in a shared folder, under its lock),
    /// or the JSON array written before the journal. A claim from a client no longer alive is
    /// settled: its event is not sent again.
    func load() {
        guard queue == nil else { return }
        queue = []
        if let shared {
            let membership = self.membership ?? shared.join()
            self.membership = membership
            do {
                try shared.withExclusiveLock { sync(shared) }
            } catch {
                logger.warning("Could not read the stored '\(key)'; treating it as absent.")
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
        let dead = claimed.subtracting(ownClaims)
        guard !dead.isEmpty else { return }
        let count = queue?.count ?? 0
        queue?.removeAll { dead.contains($0.id) }
        for id in dead {
            ids.remove(id)
            if let json = encoded.removeValue(forKey: id) { wholeBytes -= json.count + 2 }
        }
        claimed.subtract(dead)
        needsWholeWrite = true
        let dropped = count - (queue?.count ?? 0)
        if dropped > 0 {
            logger.warning(
                "\(dropped) queued events were sent (or on their way) when the app last stopped, before their removal was saved; they are not sent again."
            )
        }
    }

    /// Brings the queue up to date with the shared journal (called under the folder's lock):
    /// the lines added since this journal last read, or the whole journal when another journal
    /// replaced it.
    func sync(_ shared: any SharedJournalStore) {
        let state: JournalFileState?
        do {
            state = try shared.journalState(forKey: key)
        } catch {
            logger.warning("Could not read the stored '\(key)'.")
            return
        }
        guard let state else {
            // Nothing stored (yet, or cleared by another client).
            if journalIdentity != nil { _ = replay([]) }
            journalIdentity = nil
            journalOffset = 0
            return
        }
        let incremental = state.identity == journalIdentity && state.size >= journalOffset
        let from = incremental ? journalOffset : 0
        guard let bytes = try? shared.readJournal(forKey: key, from: from) else {
            logger.warning("Could not read the stored '\(key)'.")
            return
        }
        let consumed = incremental ? applyJournal([UInt8](bytes), replaying: false) : replay([UInt8](bytes))
        journalIdentity = state.identity
        journalOffset = from + consumed
        if !incremental { storedBytes = bytes.count }
    }

    /// Replaces the queue in memory with the whole journal `bytes` (empty: nothing stored) and
    /// returns the bytes consumed. This journal's own claims stay (the replay finds them again),
    /// and so do its events that may not be in the store: they are in no journal.
    private func replay(_ bytes: [UInt8]) -> Int {
        let maybeNotStored = unsure.union(unstored)
        let kept = maybeNotStored.isEmpty ? [] : (queue ?? []).filter { maybeNotStored.contains($0.id) }
        queue = []
        ids = []
        claimed = ownClaims
        let consumed = applyJournal(bytes, replaying: true)
        for event in kept where ids.insert(event.id).inserted { queue?.append(event) }
        return consumed
    }

    /// Reads a store that is not shared: the whole value, once.
    private func readWholeJournal() {
        let stored: Data?
        do {
            stored = try store.data(forKey: key)
        } catch {
            logger.warning("Could not read the stored '\(key)'; treating it as absent.")
            return
        }
        guard let stored else { return }
        _ = applyJournal([UInt8](stored), replaying: true)
        storedBytes = stored.count
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
            needsWholeWrite = true
            do {
                for event in try decoder.decode([ConversionEvent].self, from: Data(bytes)) where ids.insert(event.id).inserted {
                    queue?.append(event)
                }
            } catch {
                logger.warning("The stored '\(key)' is corrupt; treating it as absent.")
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
                // `+<id> <json>`: a known id is skipped without decoding (a journal reads its
                // own lines back).
                var json = body
                if body.count > 37, body[body.startIndex + 36] == 0x20,
                    let id = UUID(uuidString: String(decoding: body.prefix(36), as: UTF8.self))
                {
                    if ids.contains(id) {
                        unsure.remove(id)
                        continue
                    }
                    json = body.dropFirst(37)
                }
                guard let event = try? decoder.decode(ConversionEvent.self, from: Data(json)) else {
                    damaged += 1
                    continue
                }
                unsure.remove(event.id)
                unstored.remove(event.id)
                if ids.insert(event.id).inserted {
                    queue?.append(event)
                    var stored = Array(event.id.uuidString.utf8)
                    stored.append(0x20)
                    stored += json
                    encoded[event.id] = stored
                }
                continue
            }
            guard let id = UUID(uuidString: String(decoding: body, as: UTF8.self)) else {
                damaged += 1
                continue
            }
            switch kind {
            case .remove:
                if ids.remove(id) != nil { queue?.removeAll { $0.id == id } }
                encoded[id] = nil
                claimed.remove(id)
                unsure.remove(id)
                unstored.remove(id)
            case .claim:
                if ids.contains(id) { claimed.insert(id) }
            case .release:
                claimed.remove(id)
            case .add, .generation:
                break
            }
        }
        if replaying, start < bytes.count {
            // A write cut off by a kill leaves the start of a line; anything else is damage.
            if LineKind(rawValue: bytes[start]) == nil {
                damaged += 1
            } else {
                logger.info("The stored '\(key)' ends in an unfinished line (a write was cut off); it is left out.")
            }
            needsWholeWrite = true
        }
        if damaged > 0 {
            logger.warning("The stored '\(key)' is corrupt in \(damaged) lines; they are left out.")
            needsWholeWrite = true
        }
        recountWholeBytes()
        return start
    }

    private func recountWholeBytes() {
        wholeBytes = (queue ?? []).reduce(0) { $0 + (encoded[$1.id]?.count ?? 0) + 2 }
    }
}
