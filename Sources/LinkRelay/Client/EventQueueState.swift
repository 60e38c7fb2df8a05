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
    var flush: Task<Void, Never>?
    private(set) var generation: UInt64 = 0

    func isCurrent(_ generation: UInt64) -> Bool { generation == self.generation }

    /// An empty queue in a new generation; the flush under way is cancelled. The caller removes
    /// the stored queue (after flushing the writer, so a write under way cannot land after it).
    mutating func reset() {
        generation &+= 1
        events = []
        encoded = [:]
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
