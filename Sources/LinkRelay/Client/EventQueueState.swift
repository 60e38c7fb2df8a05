import Foundation

/// The sending of the client's event queue (the queue itself is its ``EventJournal``): when to
/// send, the flush under way and the timer.
///
/// A flush carries the ``generation`` it started in; after ``reset()``
/// (``DeepLinkClient/clearData()``) it stops without touching the new queue or the new flush.
struct EventQueueState: Sendable {
    /// When to send (``EventSending``); made on first use (``DeepLinkClient/withSending(_:)``).
    var sending: EventSending?
    /// Whether the warning that the backend reports no events was written (once per client).
    var warnedNoTracker = false
    var flush: Task<Void, Never>?
    /// The timer that starts the next flush (at ``EventSending/timerDeadline``).
    var timer: Task<Void, Never>?
    private(set) var generation: UInt64 = 0

    func isCurrent(_ generation: UInt64) -> Bool { generation == self.generation }

    /// An empty queue in a new generation; the flush under way is cancelled. The caller removes
    /// the stored queue (after flushing the writer, so a write under way cannot land after it).
    mutating func reset() {
        generation &+= 1
        flush?.cancel()
        flush = nil
        timer?.cancel()
        timer = nil
        sending?.reset()
    }

    /// Stops the flush under way and the timer (at shutdown).
    mutating func shutdown() {
        flush?.cancel()
        flush = nil
        timer?.cancel()
        timer = nil
    }
}
