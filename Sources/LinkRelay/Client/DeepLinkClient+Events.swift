import Foundation

extension DeepLinkClient {
    static let eventQueueKey = "events"
    /// The ids of events sent (or on their way) whose removal from the stored queue may not be
    /// written yet; see ``EventQueueState/unconfirmed``.
    static let sentEventsKey = "events-sent"

    /// Tracks a conversion event (`signup`, `level_complete`) for the backend to report.
    ///
    /// The event gets a UUID and a timestamp and goes into a persisted queue, so it survives a
    /// restart and an outage. With a ``FileStore`` the queue file is written off the caller's
    /// path (one write under way at a time, the newest queue winning), so `track` never waits
    /// for the disk; ``shutdown()`` writes what is still pending. Once ``start()`` has run, the
    /// queue is sent in order; an event is removed only after the backend accepted it.
    ///
    /// Each event is sent at most once, also across launches: before an event is sent its id
    /// is written to the store, and a launch that finds a sent event still queued (the app was
    /// killed, or the disk was full, before its removal was written) drops it. When that write
    /// fails, nothing is sent. A write that fails (a full disk) is logged and published once as
    /// a ``DeepLinkEvent/failure(_:)`` with code `.storage`; the queue is kept in memory and
    /// written again with the next change. ``saveQueuedEvents()`` throws it.
    ///
    /// - Throws: ``DeepLinkError`` `.unsupported` when the backend does not report events,
    ///   `.invalidArgument` for an empty name, `.shutdown` after ``shutdown()``.
    public func track(_ name: String, properties: [String: JSONValue] = [:]) async throws {
        try enqueue(name: name, properties: properties, revenue: nil)
    }

    /// Tracks a purchase: an event named `revenue` with an amount and currency, reported the
    /// way the backend's provider expects revenue.
    ///
    /// - Parameters:
    ///   - amount: zero or more.
    ///   - currency: an ISO 4217 code of three letters (`EUR`); upper-cased.
    ///   - properties: more values sent with the event (`sku`, `quantity`).
    /// - Throws: ``DeepLinkError`` `.invalidArgument` for a negative amount or a currency that is
    ///   not three letters, `.unsupported` when the backend does not report events, `.shutdown`
    ///   after ``shutdown()``.
    public func trackRevenue(amount: Decimal, currency: String, properties: [String: JSONValue] = [:]) async throws {
        guard !isShutDown else { throw shutdownError() }
        guard amount >= 0, amount.isFinite else {
            throw DeepLinkError(.invalidArgument, "A revenue amount must be zero or more.", backend: backend.id)
        }
        let code = currency.uppercased()
        guard code.count == 3, code.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) }) else {
            throw DeepLinkError(
                .invalidArgument, "A currency must be a three-letter ISO 4217 code such as EUR; got '\(currency)'.",
                backend: backend.id)
        }
        try enqueue(name: "revenue", properties: properties, revenue: .init(amount: amount, currency: code))
    }

    /// Sends the queued events now (after ``start()``), and returns when this flush is done.
    /// Events that failed with a retryable error stay queued for the next flush. After
    /// ``shutdown()`` it returns at once.
    public func flushEvents() async {
        guard !isShutDown else { return }
        guard isStarted else {
            logger.debug("Events are sent once start() has run; \(loadQueue().count) queued.")
            return
        }
        await startFlush()?.value
    }

    /// Writes the event queue to the store now, and returns once it is written.
    ///
    /// With a ``FileStore``, ``track(_:properties:)`` writes the queue in the background, so an
    /// event tracked a moment before the process is killed (the system ends suspended apps
    /// without warning) may not be on disk yet. Call this when the app moves to the background,
    /// or after an event that must survive a kill from the moment it is tracked. With a store
    /// written at once it has nothing to do unless its last write failed, which it tries again.
    ///
    /// - Throws: ``DeepLinkError`` `.storage` when the queue could not be written (a full disk):
    ///   the events are kept in memory, and written with the next change or call.
    public func saveQueuedEvents() throws {
        guard !persistQueueNow() else { return }
        throw DeepLinkError(
            .storage, "The event queue could not be written; its \(loadQueue().count) events are kept in memory only.",
            backend: backend.id)
    }

    /// How many events wait to be sent.
    public var queuedEventCount: Int { loadQueue().count }

    /// Drops every queued event unsent.
    public func clearQueuedEvents() {
        eventQueue.events = []
        eventQueue.encoded = [:]
        writeWhole()
    }

    // MARK: - Queue

    var eventTracker: (any EventTrackingBackend)? {
        if let routing = backend as? RoutingBackend { return routing.primary is any EventTrackingBackend ? routing : nil }
        return backend as? any EventTrackingBackend
    }

    private func enqueue(name: String, properties: [String: JSONValue], revenue: ConversionEvent.Revenue?) throws {
        guard !isShutDown else { throw shutdownError() }
        guard eventTracker != nil else {
            throw DeepLinkError(.unsupported, "This backend does not report events.", backend: backend.id)
        }
        guard !name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw DeepLinkError(.invalidArgument, "An event needs a name.", backend: backend.id)
        }
        append(ConversionEvent(name: name, properties: properties, timestamp: clock.currentDate, revenue: revenue))
    }

    /// An event a backend reports of its own (``BackendContext/enqueueEvent``).
    func enqueueBackendEvent(_ event: ConversionEvent) {
        guard eventTracker != nil, !isShutDown else { return }
        append(event)
    }

    /// Appends to the persisted queue (dropping the oldest when full) and sends once started.
    ///
    /// The stored queue is a journal: one line per change (`+` and the event's JSON, or `-` and
    /// the id of an event that left), so a `track` writes one line however long the queue is.
    /// Once the journal is more than twice the queue itself (and over 64 KiB), the next write
    /// is the whole queue again, one `+` line per event: amortised, a change costs a few times
    /// its own size, however long the queue.
    private func append(_ event: ConversionEvent) {
        _ = loadQueue()
        var lines: [UInt8] = []
        if let json = encodedJSON(of: event) {
            lines = Self.line(.add, json)
            eventQueue.wholeBytes += lines.count
        } else {
            logger.error("'\(event.name)' cannot be saved (it holds a value JSON cannot store); it is kept in memory only.")
        }
        eventQueue.events?.append(event)
        let capacity = configuration.eventQueueCapacity
        if let count = eventQueue.events?.count, count > capacity, let events = eventQueue.events {
            let dropped = events.prefix(count - capacity)
            eventQueue.events?.removeFirst(dropped.count)
            for old in dropped { lines += forget(old.id) }
            logger.warning("The event queue is full (\(capacity)); dropped the oldest: \(dropped.map(\.name).joined(separator: ", ")).")
        }
        if !lines.isEmpty { persist(adding: Data(lines)) }
        if isStarted { startFlush() }
    }

    func loadQueue() -> [ConversionEvent] {
        if let events = eventQueue.events { return events }
        var queue = readStoredQueue()
        let sent = Set(store().load([UUID].self, forKey: Self.sentEventsKey, logger: logger) ?? [])
        if !sent.isEmpty {
            let count = queue.count
            queue.removeAll { sent.contains($0.id) }
            eventQueue.unconfirmed = sent
            if queue.count < count {
                // Still in the stored journal: the next write is the whole queue, without them.
                eventQueue.needsWholeWrite = true
                logger.warning(
                    "\(count - queue.count) queued events were sent (or on their way) when the app last stopped, before their removal was saved; they are not sent again.")
            }
        }
        eventQueue.events = queue
        return queue
    }

    /// Writes the queue now and says whether the newest queue is in the store.
    func persistQueueNow() -> Bool {
        _ = loadQueue()
        if let writer = eventQueue.writer {
            if !eventQueue.needsWholeWrite, writer.flush() { return true }
        } else if !eventQueue.needsWholeWrite {
            return true
        }
        // The last write failed (or the stored form is due for a rewrite): write it whole.
        return writeWhole(now: true)
    }

    private enum LineKind: UInt8 {
        case add = 0x2B  // "+"
        case remove = 0x2D  // "-"
    }

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
        return Self.line(.remove, Array(id.uuidString.utf8))
    }

    /// The event's JSON, encoded once and kept for whole writes; `nil` when it cannot be encoded.
    private func encodedJSON(of event: ConversionEvent) -> [UInt8]? {
        if let known = eventQueue.encoded[event.id] { return known }
        guard let json = try? JSONEncoder.linkRelay().encode(event) else { return nil }
        let bytes = Array(json)
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

    /// Writes the whole queue, one `+` line per event, replacing the journal.
    @discardableResult
    private func writeWhole(now: Bool = false) -> Bool {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(eventQueue.wholeBytes + 16)
        var size = 0
        for event in eventQueue.events ?? [] {
            guard let json = encodedJSON(of: event) else { continue }
            bytes.append(LineKind.add.rawValue)
            bytes += json
            bytes.append(0x0A)
            size += json.count + 2
        }
        eventQueue.wholeBytes = size
        eventQueue.storedBytes = size
        eventQueue.needsWholeWrite = false
        let file = Data(bytes)
        if let writer = queueWriter() {
            writer.submit(file)
            return now ? writer.flush() : true
        }
        let written = writeHealth().write(file, forKey: Self.eventQueueKey, to: store(), consequence: Self.queueKeptInMemory)
        if !written { eventQueue.needsWholeWrite = true }
        return written
    }

    /// The stored queue: the journal replayed, or the JSON array written before the journal
    /// (rewritten as a journal with the next change). An unfinished last line (a kill
    /// mid-write) is ignored; damaged lines are skipped with a warning. Either way the next
    /// write is a whole one, so nothing is added after a broken line.
    private func readStoredQueue() -> [ConversionEvent] {
        let stored: Data?
        do {
            stored = try store().data(forKey: Self.eventQueueKey)
        } catch {
            logger.warning("Could not read the stored '\(Self.eventQueueKey)'; treating it as absent.")
            return []
        }
        guard let stored, let first = stored.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else { return [] }
        let decoder = JSONDecoder.linkRelay()
        if first == UInt8(ascii: "[") {
            eventQueue.needsWholeWrite = true
            do {
                return try decoder.decode([ConversionEvent].self, from: stored)
            } catch {
                logger.warning("The stored '\(Self.eventQueueKey)' is corrupt; treating it as absent.")
                return []
            }
        }
        var order: [UUID] = []
        var live: [UUID: ConversionEvent] = [:]
        var damaged = 0
        let bytes = [UInt8](stored)
        var start = 0
        while let end = bytes[start...].firstIndex(of: 0x0A) {
            let body = bytes[(start + 1)..<max(end, start + 1)]
            switch start < end ? LineKind(rawValue: bytes[start]) : nil {
            case .add:
                if let event = try? decoder.decode(ConversionEvent.self, from: Data(body)) {
                    if live.updateValue(event, forKey: event.id) == nil { order.append(event.id) }
                    eventQueue.encoded[event.id] = Array(body)
                } else {
                    damaged += 1
                }
            case .remove:
                if let id = UUID(uuidString: String(decoding: body, as: UTF8.self)) {
                    live[id] = nil
                    eventQueue.encoded[id] = nil
                } else {
                    damaged += 1
                }
            case nil:
                damaged += 1
            }
            start = end + 1
        }
        if start < bytes.count {
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
        let queue = order.compactMap { live[$0] }
        eventQueue.storedBytes = bytes.count
        eventQueue.wholeBytes = queue.reduce(0) { $0 + (eventQueue.encoded[$1.id]?.count ?? 0) + 2 }
        return queue
    }

    private static let queueKeptInMemory = "the queue is kept in memory and written again with the next change."

    /// Reports the store's write failures once per run of them.
    private func writeHealth() -> StoreWriteHealth {
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

    /// The writer for a store that prefers deferred writes; `nil` for one written at once.
    private func queueWriter() -> DeferredWriter? {
        if let writer = eventQueue.writer { return writer }
        let store = store()
        guard store.prefersDeferredWrites else { return nil }
        let health = writeHealth()
        let writer = DeferredWriter { batch in
            let key = Self.eventQueueKey
            if let whole = batch.whole, !health.write(whole, forKey: key, to: store, consequence: Self.queueKeptInMemory) {
                return false
            }
            return batch.additions.isEmpty
                || health.write(batch.additions, forKey: key, to: store, append: true, consequence: Self.queueKeptInMemory)
        }
        eventQueue.writer = writer
        return writer
    }

    /// Writes the ids of the events sent or on their way, with `id` added or removed, before
    /// this returns; `false` when the store refused it.
    private func writeSentMark(adding id: UUID? = nil, removing removed: UUID? = nil) -> Bool {
        if let id { eventQueue.unconfirmed.insert(id) }
        if let removed { eventQueue.unconfirmed.remove(removed) }
        let ids = eventQueue.unconfirmed.map(\.uuidString).sorted()
        let file = Data(("[" + ids.map { "\"\($0)\"" }.joined(separator: ",") + "]").utf8)
        return writeHealth().write(
            file, forKey: Self.sentEventsKey, to: store(),
            consequence: id == nil ? "an event whose send failed may be dropped after a restart." : "the event is not sent until it can be written.")
    }

    // MARK: - Sending

    /// The running flush, or a new one when the queue has events. One flush at a time, so no
    /// event is ever sent twice at once.
    @discardableResult
    func startFlush() -> Task<Void, Never>? {
        if let flush = eventQueue.flush { return flush }
        guard eventTracker != nil, !loadQueue().isEmpty, !isShutDown else { return nil }
        let generation = eventQueue.generation
        let task = Task { await self.flush(generation: generation) }
        eventQueue.flush = task
        return task
    }

    /// Sends the queue in order until it is empty or a retryable failure stops it. The queue is
    /// read live, so events tracked meanwhile are sent in the same flush. A flush from before a
    /// ``clearData()`` stops at once and touches neither the new queue nor the new flush.
    private func flush(generation: UInt64) async {
        defer { if eventQueue.isCurrent(generation) { eventQueue.flush = nil } }
        guard let tracker = eventTracker else { return }
        while eventQueue.isCurrent(generation), let event = loadQueue().first, !Task.isCancelled, !isShutDown {
            // At most once: the event's id is in the store before it leaves, so a launch that
            // still finds it queued does not send it again. No mark, no send.
            guard writeSentMark(adding: event.id) else {
                eventQueue.unconfirmed.remove(event.id)
                return
            }
            do {
                try await send(event, through: tracker)
                // Sent: recorded as sent even if a shutdown came meanwhile, so it is never sent
                // twice; after a clear the queue it came from is gone.
                guard eventQueue.isCurrent(generation) else { return }
                removeFromQueue(event.id)
            } catch {
                guard eventQueue.isCurrent(generation) else { return }
                let failure = DeepLinkError.wrapping(error, as: .network, "Sending the event failed.", backend: backend.id)
                    .redacted(by: redactor)
                // `.notStarted`: the backend cannot send yet (no install id); the event waits.
                if failure.isRetryable || failure.code == .cancelled || failure.code == .notStarted {
                    logger.info("Sending '\(event.name)' failed (\(failure.code)); it stays queued for the next flush.")
                    _ = writeSentMark(removing: event.id)
                    return
                }
                logger.warning("The provider refused '\(event.name)' (\(failure.code)); it is dropped.")
                removeFromQueue(event.id)
                publish(.failure(failure))
            }
        }
    }

    private func send(_ event: ConversionEvent, through tracker: any EventTrackingBackend) async throws {
        try await request("Sending the event", timeout: configuration.requestTimeout) { context in
            try await tracker.send(event, context: context)
        }
    }

    /// Removes by id (the queue may have changed while the event was on its way) and writes the
    /// removal before the next event is marked; once it is in the store, no sent event is left
    /// in the stored queue.
    private func removeFromQueue(_ id: UUID) {
        _ = loadQueue()
        eventQueue.events?.removeAll { $0.id == id }
        if persist(adding: Data(forget(id)), now: true) { eventQueue.unconfirmed.removeAll() }
    }
}
