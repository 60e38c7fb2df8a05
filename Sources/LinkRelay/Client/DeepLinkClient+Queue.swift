import Foundation

/// The client's side of the event journal: opening it, and what the queue means to the app
/// (dropped events counted and logged, a flush scheduled once started).
extension DeepLinkClient {
    /// The event journal, opened on first use on the client's store.
    func journal() -> EventJournal {
        if let journal = eventJournal { return journal }
        let health = StoreWriteHealth(logger: logger) { [weak self] error in
            self?.reportStorageFailure(error)
        }
        let journal = EventJournal(store: store(), key: Self.eventQueueKey, logger: logger, health: health)
        eventJournal = journal
        journalWriter.withLock { $0 = journal.writer }
        return journal
    }

    /// Appends to the persisted queue (dropping the oldest when full) and sends once started.
    func append(_ event: ConversionEvent) {
        let capacity = configuration.eventQueueCapacity
        let dropped = journal().append(event, capacity: capacity)
        if !dropped.isEmpty {
            var total: Int?
            for _ in dropped { total = eventDrops.note() ?? total }
            if let total {
                logger.warning(
                    "The event queue is full (\(capacity)); dropped the oldest: \(dropped.map(\.name).joined(separator: ", ")) (\(total) so far)."
                )
            }
        }
        if isStarted { scheduleFlush() }
    }

    /// Drops every queued event unsent (in a shared folder, the other clients' too).
    public func clearQueuedEvents() {
        journal().removeAll()
    }

    private nonisolated func reportStorageFailure(_ error: DeepLinkError) {
        var failure = error
        failure.backend = backend.id
        publish(.failure(failure.redacted(by: redactor)))
    }
}
