import Foundation

/// The client's event queue in memory: the events (read from the store once), each one's JSON
/// encoded once, the background writer, and the flush under way.
///
/// A flush carries the ``generation`` it started in; after ``reset()``
/// (``DeepLinkClient/clearData()``) it stops without touching the new queue or the new flush.
struct EventQueueState: Sendable {
    var events: [ConversionEvent]?
    /// Whether the warning that the backend reports no events was written (once per client).
    var warnedNoTracker = false
    /// Each queued event's JSON, encoded once: saving the queue joins them instead of encoding
    /// every event again on every change.
    var encoded: [UUID: [UInt8]] = [:]
    /// Writes the queue off the caller's path, for stores that prefer it (files).
    var writer: DeferredWriter?
    /// Whether the store's last write failed, for reporting failures once per run of them.
    var health: StoreWriteHealth?
    /// The ids of ``events``, for replaying the journal without scanning the queue.
    var ids: Set<UUID> = []
    /// Queued events claimed for sending, by this client or another one sharing the folder:
    /// claimed and not removed, an event is never sent again.
    var claimed: Set<UUID> = []
    /// The claims this client holds (the event it is sending).
    var ownClaims: Set<UUID> = []
    /// Queued events whose `+` line may or may not be in the store: its write failed (perhaps
    /// after part of it landed), or went to the background writer and was not confirmed yet.
    /// Read back before it matters (``unstored``).
    var unsure: Set<UUID> = []
    /// Queued events whose `+` line is not in the store (read back after a failed write, or
    /// never written): no later launch can find them, so they need no claim to be sent at most
    /// once, and are sent from memory when claims cannot be written (a full disk). A whole
    /// write of the queue puts them in the store.
    var unstored: Set<UUID> = []
    /// For a folder shared with other processes: the journal file this client has read, and
    /// how far.
    var journalIdentity: String?
    var journalOffset = 0
    /// This client's registration as a user of a shared folder, held for its lifetime.
    var membership: FolderMembership?
    /// The size of the queue written whole (one line per event).
    var wholeBytes = 0
    /// The size of the stored journal: the last whole write and the lines added since. Past
    /// twice ``wholeBytes`` (and 64 KiB) the next write is a whole one.
    var storedBytes = 0
    /// The stored queue must be written whole next: a write failed, it is in the format from
    /// before the journal, it ends in an unfinished line, or it holds events this run dropped.
    var needsWholeWrite = false
    var flush: Task<Void, Never>?
    /// For an ``EventBatchingBackend``: the batching in effect (its batch size and `flushAt`
    /// halved after each 413, kept for the client's life), the failed batches in a row, the
    /// uptime automatic sending may resume at, and the timer that starts the next flush.
    var batching: EventBatching?
    var failuresInARow = 0
    var pausedUntil: TimeInterval?
    var timer: Task<Void, Never>?
    var timerDeadline: TimeInterval?
    private(set) var generation: UInt64 = 0

    func isCurrent(_ generation: UInt64) -> Bool { generation == self.generation }

    /// An empty queue in a new generation; the flush under way is cancelled. The caller removes
    /// the stored queue (after flushing the writer, so a write under way cannot land after it).
    mutating func reset() {
        generation &+= 1
        events = []
        encoded = [:]
        ids = []
        claimed = []
        ownClaims = []
        unsure = []
        unstored = []
        journalIdentity = nil
        journalOffset = 0
        wholeBytes = 0
        storedBytes = 0
        needsWholeWrite = false
        flush?.cancel()
        flush = nil
        cancelTimer()
        failuresInARow = 0
        pausedUntil = nil
    }

    /// Cancels the timer that would start the next flush.
    mutating func cancelTimer() {
        timer?.cancel()
        timer = nil
        timerDeadline = nil
    }

    /// Stops the flush under way and writes what is pending (at shutdown).
    mutating func shutdown() {
        writer?.flush()
        // No longer a user of a shared folder: the others may settle claims left behind.
        membership = nil
        flush?.cancel()
        flush = nil
        cancelTimer()
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
