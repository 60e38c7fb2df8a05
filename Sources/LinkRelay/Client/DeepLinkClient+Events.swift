import Foundation

extension DeepLinkClient {
    static let eventQueueKey = "events"

    /// Tracks a conversion event (`signup`, `level_complete`) for the backend to report.
    ///
    /// The event gets a UUID and a timestamp and goes into a persisted queue, so it survives a
    /// restart and an outage. With a ``FileStore`` the queue file is written off the caller's
    /// path (one write under way at a time, the newest queue winning), so `track` never waits
    /// for the disk; ``shutdown()`` writes what is still pending. Once ``start()`` has run, the
    /// queue is sent in order; an event is removed only after the backend accepted it.
    ///
    /// Each event is sent at most once, also across launches and processes: before an event that
    /// is in the store is sent, a claim for it is written to the store, and an event claimed
    /// and never removed (the app was killed, or the disk was full, before its removal was
    /// written) is not sent again. Clients in several processes (an app and its extension) may
    /// share a ``FileStore`` folder: each event is sent by one of them, once.
    ///
    /// On a full disk (any store that refuses writes), `track` still returns normally and no
    /// event is lost while the app runs: an event whose line could not be written is kept in
    /// memory (within ``Configuration-swift.struct/eventQueueCapacity``) and sent in this run
    /// like any other, without a claim, since no later launch can find it to send it again; it
    /// is lost only if the process ends before it is sent or written. Events already in the
    /// store wait until their claim can be written (this run, once there is room, or the next
    /// launch). The failure is logged and published once as a ``DeepLinkEvent/failure(_:)``
    /// with code `.storage`; the queue is written again with the next change.
    /// ``saveQueuedEvents()`` throws it.
    ///
    /// On a backend that does not report events (LimeLink, Dynalinks: ``capabilities`` has no
    /// ``BackendCapabilities/eventTracking``), it does nothing, with one warning per client, so
    /// that the same app code runs on every backend; in a
    /// ``RoutingBackend`` events go to the first member that reports them.
    ///
    /// With ``Configuration-swift.struct/conversionValues`` set, every tracked event (on every
    /// backend, those that report no events too) is also counted against the app's
    /// ``ConversionSchema``, and the conversion value written when it rises (see
    /// <doc:OwningConversionValues>).
    ///
    /// - Throws: ``DeepLinkError`` `.invalidArgument` for an empty name, `.shutdown` after
    ///   ``shutdown()``.
    public func track(_ name: String, properties: [String: JSONValue] = [:]) async throws {
        let date = clock.currentDate
        try enqueue(name: name, properties: properties, revenue: nil)
        await countConversion(name, revenue: nil, at: date)
    }

    /// Tracks a purchase: an event named `revenue` with an amount and currency, reported the
    /// way the backend's provider expects revenue.
    ///
    /// - Parameters:
    ///   - amount: zero or more.
    ///   - currency: an ISO 4217 code of three letters (`EUR`); upper-cased.
    ///   - properties: more values sent with the event (`sku`, `quantity`).
    /// - Throws: ``DeepLinkError`` `.invalidArgument` for a negative amount or a currency that is
    ///   not three letters, `.shutdown` after ``shutdown()``. On a backend that does not report
    ///   events it does nothing, as ``track(_:properties:)``.
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
        let date = clock.currentDate
        let revenue = ConversionEvent.Revenue(amount: amount, currency: code)
        try enqueue(name: "revenue", properties: properties, revenue: revenue)
        await countConversion("revenue", revenue: revenue, at: date)
    }

    /// Sends the queued events now (after ``start()``), and returns when this flush is done.
    /// Events that failed with a retryable error stay queued for the next flush. After
    /// ``shutdown()`` it returns at once.
    public func flushEvents() async {
        guard !isShutDown else { return }
        guard isStarted else {
            logger.debug("Events are sent once start() has run; \(journal().events.count) queued.")
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
        guard !journal().save() else { return }
        throw DeepLinkError(
            .storage, "The event queue could not be written; its \(journal().events.count) events are kept in memory only.",
            backend: backend.id)
    }

    /// How many events wait to be sent.
    /// With a folder shared by several processes, the events the others queued (and did not
    /// claim) count too.
    public var queuedEventCount: Int { journal().currentEvents().count }

    // MARK: - Queue

    var eventTracker: (any EventTrackingBackend)? {
        guard backend.capabilities.contains(.eventTracking) else { return nil }
        return backend as? any EventTrackingBackend
    }

    private func enqueue(name: String, properties: [String: JSONValue], revenue: ConversionEvent.Revenue?) throws {
        guard !isShutDown else { throw shutdownError() }
        guard !name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw DeepLinkError(.invalidArgument, "An event needs a name.", backend: backend.id)
        }
        guard eventTracker != nil else {
            // The same app code on every backend: no error, one warning per client.
            if !eventQueue.warnedNoTracker {
                eventQueue.warnedNoTracker = true
                logger.warning(
                    "The \(backend.id) backend does not report events: track and trackRevenue do nothing (client.capabilities has no .eventTracking)."
                )
            }
            return
        }
        append(ConversionEvent(name: name, properties: properties, timestamp: clock.currentDate, revenue: revenue))
    }

    /// An event a backend reports of its own (``BackendContext/enqueueEvent``).
    func enqueueBackendEvent(_ event: ConversionEvent) {
        guard eventTracker != nil, !isShutDown else { return }
        append(event)
    }

    // MARK: - Sending

    /// The running flush, or a new one when the queue has events. One flush at a time, so no
    /// event is ever sent twice at once.
    @discardableResult
    func startFlush() -> Task<Void, Never>? {
        if let flush = eventQueue.flush { return flush }
        // In a shared folder the others' events are found by the flush itself (its claim reads
        // the journal), so the flush starts whatever this client's memory holds.
        guard eventTracker != nil, !isShutDown, (journal().shared != nil) || !journal().events.isEmpty else { return nil }
        let generation = eventQueue.generation
        let task = Task { await self.flush(generation: generation) }
        eventQueue.flush = task
        return task
    }

    /// Sends the queue in order until it is empty or a retryable failure stops it: one event
    /// per request, or batches for an ``EventBatchingBackend``. The queue is read live, so
    /// events tracked meanwhile are sent in the same flush. A flush from before a
    /// ``clearData()`` stops at once and touches neither the new queue nor the new flush.
    private func flush(generation: UInt64) async {
        defer { if eventQueue.isCurrent(generation) { eventQueue.flush = nil } }
        guard let tracker = eventTracker else { return }
        let batcher = eventBatcher
        // At most once: the claims are in the store before the events leave. No claim, no send.
        while eventQueue.isCurrent(generation), !Task.isCancelled, !isShutDown {
            let events = journal().claim(upTo: withSending { $0.batchSize })
            guard !events.isEmpty else {
                // Nothing left to send: no timer needs to start another flush.
                withSending { $0.drained() }
                eventQueue.timer?.cancel()
                eventQueue.timer = nil
                return
            }
            let ids = events.map(\.id)
            let what = events.count == 1 ? "'\(events[0].name)'" : "a batch of \(events.count) events"
            do {
                if let batcher {
                    try await request("Sending \(what)", timeout: configuration.requestTimeout) { context in
                        try await batcher.send(events, context: context)
                    }
                } else {
                    try await send(events[0], through: tracker)
                }
                // Sent: recorded as sent even if a shutdown came meanwhile, so it is never sent
                // twice; after a clear the queue it came from is gone.
                guard eventQueue.isCurrent(generation) else { return }
                journal().remove(ids)
                withSending { $0.sent() }
            } catch {
                guard eventQueue.isCurrent(generation) else { return }
                let failure = DeepLinkError.wrapping(error, as: .network, "Sending the event failed.", backend: backend.id)
                    .redacted(by: redactor)
                // `.notStarted`: the backend cannot send yet (no install id); the events wait.
                let kept = failure.isRetryable || failure.code == .cancelled || failure.code == .notStarted
                // 413: the request was too large; smaller batches may pass. One event alone never will.
                let tooLarge = batcher != nil && failure.code.serverStatus == 413 && events.count > 1
                if kept || tooLarge {
                    logger.info("Sending \(what) failed (\(failure.code)); kept for a later flush.")
                    journal().release(ids)
                    let now = clock.uptime
                    let (before, action) = withSending { sending in
                        (sending, sending.failed(size: events.count, tooLarge: tooLarge, now: now))
                    }
                    carryOut(action)
                    logSendingChange(from: before)
                    return
                }
                logger.warning("The provider refused \(what) (\(failure.code)); dropped.")
                journal().remove(ids)
                publish(.failure(failure))
            }
        }
    }

    // MARK: - When to send

    /// The backend, when it sends events in batches (``BackendCapabilities/eventBatching``).
    var eventBatcher: (any EventBatchingBackend)? {
        guard backend.capabilities.contains(.eventBatching) else { return nil }
        return backend as? any EventBatchingBackend
    }

    /// When to send (``EventSending``), made on first use from the backend's batching: not at
    /// init, where the capability checks would add to every app launch.
    func withSending<T>(_ body: (inout EventSending) -> T) -> T {
        var sending = eventQueue.sending ?? EventSending(batching: eventBatcher?.eventBatching)
        defer { eventQueue.sending = sending }
        return body(&sending)
    }

    /// Starts a flush as ``EventSending`` decides: at once for a backend that does not batch;
    /// for one that does, once `flushAt` events wait and no pause is on, or else at the timer.
    func scheduleFlush() {
        guard eventQueue.flush == nil, !isShutDown, eventTracker != nil else { return }
        let waiting = withSending { $0.batching } == nil ? 0 : journal().events.count
        let (othersMayHaveSome, now) = (journal().shared != nil, clock.uptime)
        carryOut(withSending { $0.eventsWaiting(waiting, othersMayHaveSome: othersMayHaveSome, now: now) })
    }

    /// Does what ``EventSending`` asked.
    private func carryOut(_ action: EventSending.Action) {
        switch action {
        case .none: break
        case .flush: startFlush()
        case .armTimer(let deadline): armFlushTimer(at: deadline)
        }
    }

    /// Logs a 413's smaller batches and a pause, as a failed request changed them.
    private func logSendingChange(from before: EventSending) {
        let after = withSending { $0 }
        if let batching = after.batching, batching.maximumBatchSize < before.batchSize {
            logger.warning(
                "The provider found a batch of \(before.batchSize) events too large; batches are now at most \(batching.maximumBatchSize).")
        }
        if let until = after.pausedUntil {
            logger.debug("Automatic sending pauses \(until - clock.uptime) s after \(after.failuresInARow) failed batches in a row.")
        }
    }

    /// Starts the task that fires the timer at `deadline` (an uptime), replacing the one armed.
    private func armFlushTimer(at deadline: TimeInterval) {
        guard !isShutDown else { return }
        eventQueue.timer?.cancel()
        let generation = eventQueue.generation
        let clock = self.clock
        // Weak: a client the app let go of is not kept alive until its timer ends.
        eventQueue.timer = Task { [weak self] in
            do {
                try await clock.sleep(untilUptime: deadline)
            } catch {
                return
            }
            await self?.flushTimerFired(deadline: deadline, generation: generation)
        }
    }

    private func flushTimerFired(deadline: TimeInterval, generation: UInt64) {
        guard eventQueue.isCurrent(generation), withSending({ $0.timerDeadline }) == deadline else { return }
        eventQueue.timer = nil
        guard isStarted else {
            withSending { $0.drained() }
            return
        }
        let now = clock.uptime
        carryOut(withSending { $0.timerFired(deadline: deadline, now: now) })
    }

    private func send(_ event: ConversionEvent, through tracker: any EventTrackingBackend) async throws {
        try await request("Sending the event", timeout: configuration.requestTimeout) { context in
            try await tracker.send(event, context: context)
        }
    }
}
