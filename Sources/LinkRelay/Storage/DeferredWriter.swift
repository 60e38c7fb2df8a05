import Foundation

/// Writes snapshots of one value to a store off the caller's thread, the newest snapshot
/// winning: while one write is under way, later snapshots replace each other, and only the
/// last is written next.
///
/// For stores whose writes are slow (``PersistentStore/prefersDeferredWrites``: a file written
/// atomically and synced costs hundreds of microseconds), so that `track` does not wait for the
/// disk. A snapshot reaches the store within one write's time; ``flush()`` writes what is
/// pending on the caller, after any write under way, runs at shutdown, and says whether the
/// newest snapshot is in the store.
final class DeferredWriter: Sendable {
    private struct State: Sendable {
        var pending: Data?
        var draining = false
        /// Whether the last snapshot written reached the store.
        var lastWriteSucceeded = true
    }

    private let state = Locked(State())
    /// Held for each write, so snapshots reach the store in the order they were taken.
    private let writing = NSLock()
    private let write: @Sendable (Data) -> Bool

    /// - Parameter write: writes one snapshot and says whether it reached the store (reporting
    ///   a failure is its job).
    init(write: @escaping @Sendable (Data) -> Bool) {
        self.write = write
    }

    /// Queues `snapshot`, replacing any snapshot not yet written, and starts a background
    /// write if none is under way.
    func submit(_ snapshot: Data) {
        let start = state.withLock { state -> Bool in
            state.pending = snapshot
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if start {
            Task.detached(priority: .utility) { [self] in drain() }
        }
    }

    /// Writes the pending snapshot now, on the caller, after any write under way, and returns
    /// whether the newest snapshot submitted so far is in the store.
    @discardableResult
    func flush() -> Bool {
        writing.withLock {
            // Under the lock with nothing pending, the newest snapshot was the last one written.
            guard let snapshot = take() else { return state.withLock { $0.lastWriteSucceeded } }
            return record(write(snapshot))
        }
    }

    /// Whether a snapshot waits to be written.
    var hasPending: Bool { state.withLock { $0.pending != nil } }

    private func drain() {
        while true {
            let wrote: Bool = writing.withLock {
                guard let snapshot = take() else { return false }
                record(write(snapshot))
                return true
            }
            if wrote { continue }
            // Nothing pending: stop, unless a snapshot arrived after `take()` (its `submit` saw
            // this drain running and left the write to it).
            let stop = state.withLock { state -> Bool in
                guard state.pending == nil else { return false }
                state.draining = false
                return true
            }
            if stop { return }
        }
    }

    @discardableResult
    private func record(_ succeeded: Bool) -> Bool {
        state.withLock { $0.lastWriteSucceeded = succeeded }
        return succeeded
    }

    private func take() -> Data? {
        state.withLock { state in
            let snapshot = state.pending
            state.pending = nil
            return snapshot
        }
    }
}
