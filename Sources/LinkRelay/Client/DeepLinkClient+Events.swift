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
        saveQueue([])
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
    private func append(_ event: ConversionEvent) {
        var queue = loadQueue()
        queue.append(event)
        let capacity = configuration.eventQueueCapacity
        if queue.count > capacity {
            let dropped = queue.prefix(queue.count - capacity)
            queue.removeFirst(dropped.count)
            logger.warning("The event queue is full (\(capacity)); dropped the oldest: \(dropped.map(\.name).joined(separator: ", ")).")
        }
        saveQueue(queue)
        if isStarted { startFlush() }
    }

    func loadQueue() -> [ConversionEvent] {
        if let events = eventQueue.events { return events }
        var queue = store().load([ConversionEvent].self, forKey: Self.eventQueueKey, logger: logger) ?? []
        let sent = Set(store().load([UUID].self, forKey: Self.sentEventsKey, logger: logger) ?? [])
        if !sent.isEmpty {
            let count = queue.count
            queue.removeAll { sent.contains($0.id) }
            eventQueue.unconfirmed = sent
            if queue.count < count {
                logger.warning(
                    "\(count - queue.count) queued events were sent (or on their way) when the app last stopped, before their removal was saved; they are not sent again.")
            }
        }
        eventQueue.events = queue
        return queue
    }

    /// Writes the queue now and says whether the newest queue is in the store.
    func persistQueueNow() -> Bool {
        if let writer = eventQueue.writer, writer.flush() { return true }
        if eventQueue.writer == nil, !eventQueue.lastDirectWriteFailed { return true }
        // The newest queue's write failed: try once more.
        return saveQueue(loadQueue(), now: true)
    }

    /// Saves the queue: the same bytes as encoding the array, built from each event's JSON,
    /// encoded once, so a `track` costs one event's encoding and one write, not the whole
    /// queue's encoding. With `now`, a deferred store writes it before this returns. Returns
    /// whether it is in the store (`true` for a deferred write still under way).
    @discardableResult
    private func saveQueue(_ queue: [ConversionEvent], now: Bool = false) -> Bool {
        eventQueue.events = queue
        // Work on local copies: the actor's properties are checked for exclusive access on
        // every use, which in this loop would cost more than the copying.
        var cache = eventQueue.encoded
        eventQueue.encoded = [:]
        var encoder: JSONEncoder?
        var bytes: [UInt8] = []
        bytes.reserveCapacity(cache.values.first.map { ($0.count + 1) * (queue.count + 1) } ?? 64)
        bytes.append(UInt8(ascii: "["))
        for (index, event) in queue.enumerated() {
            let json: [UInt8]
            if let known = cache[event.id] {
                json = known
            } else {
                do {
                    if encoder == nil { encoder = JSONEncoder.linkRelay() }
                    json = Array(try encoder?.encode(event) ?? Data())
                } catch {
                    eventQueue.encoded = cache
                    logger.error("Could not encode '\(event.name)': the queue is kept in memory only until the next successful save.")
                    return false
                }
                cache[event.id] = json
            }
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: json)
        }
        bytes.append(UInt8(ascii: "]"))
        // Forget the JSON of events that left the queue, now and then rather than on every save.
        if cache.count > 2 * queue.count + 16 {
            let live = Set(queue.map(\.id))
            cache = cache.filter { live.contains($0.key) }
        }
        eventQueue.encoded = cache
        let file = Data(bytes)
        if let writer = queueWriter() {
            writer.submit(file)
            return now ? writer.flush() : true
        }
        let written = writeHealth().write(file, forKey: Self.eventQueueKey, to: store(), consequence: Self.queueKeptInMemory)
        eventQueue.lastDirectWriteFailed = !written
        return written
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
        let writer = DeferredWriter { file in
            health.write(file, forKey: Self.eventQueueKey, to: store, consequence: Self.queueKeptInMemory)
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
    /// queue before the next event is marked; once it is in the store, no sent event is left in
    /// it.
    private func removeFromQueue(_ id: UUID) {
        var queue = loadQueue()
        queue.removeAll { $0.id == id }
        if saveQueue(queue, now: true) { eventQueue.unconfirmed.removeAll() }
    }
}
