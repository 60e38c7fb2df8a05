import Foundation

/// The client's event queue in memory: the events (read from the store once), each one's JSON
/// encoded once, the background writer, and the flush under way.
///
/// A flush carries the ``generation`` it started in; after ``reset()``
/// (``DeepLinkClient/clearData()``) it stops without touching the new queue or the new flush.
struct EventQueueState: Sendable {
    var events: [ConversionEvent]?
    /// Each queued event's JSON, encoded once: saving the queue joins them instead of encoding
    /// every event again on every change.
    var encoded: [UUID: [UInt8]] = [:]
    /// Writes the queue off the caller's path, for stores that prefer it (files).
    var writer: DeferredWriter?
    /// Whether the store's last write failed, for reporting failures once per run of them.
    var health: StoreWriteHealth?
    /// Events sent (or on their way) whose removal from the stored queue is not known to be
    /// written. Their ids are stored under ``DeepLinkClient/sentEventsKey`` before each send, so
    /// that a launch which finds them still queued (after a kill or a failed write) drops them
    /// instead of sending them twice.
    var unconfirmed: Set<UUID> = []
    /// The size of the queue written whole (one line per event).
    var wholeBytes = 0
    /// The size of the stored journal: the last whole write and the lines added since. Past
    /// twice ``wholeBytes`` (and 64 KiB) the next write is a whole one.
    var storedBytes = 0
    /// The stored queue must be written whole next: a write failed, it is in the format from
    /// before the journal, it ends in an unfinished line, or it holds events this run dropped.
    var needsWholeWrite = false
    var flush: Task<Void, Never>?
    private(set) var generation: UInt64 = 0

    func isCurrent(_ generation: UInt64) -> Bool { generation == self.generation }

    /// An empty queue in a new generation; the flush under way is cancelled. The caller removes
    /// the stored queue (after flushing the writer, so a write under way cannot land after it).
    mutating func reset() {
        generation &+= 1
        events = []
        encoded = [:]
        unconfirmed = []
        wholeBytes = 0
        storedBytes = 0
        needsWholeWrite = false
        flush?.cancel()
        flush = nil
    }

    /// Stops the flush under way and writes what is pending (at shutdown).
    mutating func shutdown() {
        writer?.flush()
        flush?.cancel()
        flush = nil
    }
}

/// Tells the app once when the store's writes of a key start failing, and logs each failure:
/// the first failure after a success publishes a `.failure` with code `.storage`.
final class StoreWriteHealth: Sendable {
    /// The keys whose last write failed.
    private let failing = Locked(Set<String>())
    private let logger: LinkRelayLogger
    private let report: @Sendable (DeepLinkError) -> Void

    init(logger: LinkRelayLogger, report: @escaping @Sendable (DeepLinkError) -> Void) {
        self.logger = logger
        self.report = report
    }

    /// Writes `data` under `key`; on failure logs `consequence` and reports the first failure.
    func write(_ data: Data, forKey key: String, to store: any PersistentStore, append: Bool = false, consequence: String) -> Bool {
        do {
            if append {
                try store.appendData(data, forKey: key)
            } else {
                try store.setData(data, forKey: key)
            }
            failing.withLock { _ = $0.remove(key) }
            return true
        } catch {
            let message = "Could not save '\(key)' (\(data.count) bytes): \(consequence)"
            logger.error(message)
            let first = failing.withLock { $0.insert(key).inserted }
            if first { report(DeepLinkError(.storage, message, underlying: error)) }
            return false
        }
    }
}
