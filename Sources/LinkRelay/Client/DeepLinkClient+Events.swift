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
    /// Each event is sent at most once, also across launches and processes: before an event is
    /// sent, a claim for it is written to the store, and an event claimed and never removed
    /// (the app was killed, or the disk was full, before its removal was written) is not sent
    /// again. When the claim cannot be written, nothing is sent. Clients in several processes
    /// (an app and its extension) may share a ``FileStore`` folder: each event is sent by one
    /// of them, once. A write that fails (a full disk) is logged and published once as
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
    /// With a folder shared by several processes, the events the others queued (and did not
    /// claim) count too.
    public var queuedEventCount: Int { currentQueue().count }

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

    // MARK: - Sending

    /// The running flush, or a new one when the queue has events. One flush at a time, so no
    /// event is ever sent twice at once.
    @discardableResult
    func startFlush() -> Task<Void, Never>? {
        if let flush = eventQueue.flush { return flush }
        // In a shared folder the others' events are found by the flush itself (its claim reads
        // the journal), so the flush starts whatever this client's memory holds.
        guard eventTracker != nil, !isShutDown, hasSharedJournal || !loadQueue().isEmpty else { return nil }
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
        // At most once: the claim is in the store before the event leaves. No claim, no send.
        while eventQueue.isCurrent(generation), !Task.isCancelled, !isShutDown, let event = claimNextEvent() {
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
                    releaseClaim(on: event.id)
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
}
