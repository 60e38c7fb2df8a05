import Foundation

/// The sending of the client's event queue (the queue itself is its ``EventJournal``): the flush
/// under way, the batching in effect, the pause after failures and the timer.
///
/// A flush carries the ``generation`` it started in; after ``reset()``
/// (``DeepLinkClient/clearData()``) it stops without touching the new queue or the new flush.
struct EventQueueState: Sendable {
    /// Whether the warning that the backend reports no events was written (once per client).
    var warnedNoTracker = false
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
        flush?.cancel()
        flush = nil
        cancelTimer()
    }
}
