import Foundation

/// Writes one journaled value to a store off the caller's thread: whole values (which replace
/// everything before them) and additions to the end, in the order they were submitted. While one
/// write is under way, later submissions gather: a whole value drops what was pending before
/// it, additions are joined, and all go in the next write.
///
/// For stores whose writes are slow (``PersistentStore/prefersDeferredWrites``: a file synced
/// to disk costs hundreds of microseconds), so that `track` does not wait for the disk. A
/// submission reaches the store within one write's time; ``flush()`` writes what is pending on
/// the caller, after any write under way, runs at shutdown, and says whether everything
/// submitted is in the store.
///
/// After a failed write the value in the store may lack an addition, so additions are not
/// written again until a whole value is (``needsWholeValue``): the stored value is always the
/// start of what was submitted, never a value with a hole in it.
final class DeferredWriter: Sendable {
    /// One write: a whole value (or none) and then the additions after it.
    struct Batch: Sendable {
        var whole: Data?
        var additions = Data()
    }

    private struct State: Sendable {
        var pending: Batch?
        var draining = false
        /// Whether the last write reached the store.
        var lastWriteSucceeded = true
        /// A write failed and no whole value has been written since.
        var needsWholeValue = false
    }

    private let state = Locked(State())
    /// Held for each write, so batches reach the store in the order they were submitted.
    private let writing = NSLock()
    private let write: @Sendable (Batch) -> Bool

    /// - Parameter write: writes one batch (the whole value first, then the additions) and says
    ///   whether it all reached the store (reporting a failure is its job).
    init(write: @escaping @Sendable (Batch) -> Bool) {
        self.write = write
    }

    /// Queues a whole value, replacing everything pending, and starts a background write if none
    /// is under way.
    func submit(_ whole: Data) {
        enqueue { $0 = Batch(whole: whole) }
    }

    /// Queues `bytes` to be added at the end of the value.
    func submitAddition(_ bytes: Data) {
        enqueue { batch in
            if batch == nil { batch = Batch() }
            batch?.additions.append(bytes)
        }
    }

    /// Whether a write failed and no whole value has been submitted and written since: the
    /// caller should submit the whole value rather than an addition.
    var needsWholeValue: Bool { state.withLock { $0.needsWholeValue && $0.pending?.whole == nil } }

    /// Writes what is pending now, on the caller, after any write under way, and returns whether
    /// everything submitted so far is in the store.
    @discardableResult
    func flush() -> Bool {
        writing.withLock {
            // Under the lock with nothing pending, the newest submission was the last written.
            guard let batch = take() else { return state.withLock { $0.lastWriteSucceeded } }
            return perform(batch)
        }
    }

    /// The value was written whole by other means, with nothing pending here (after a
    /// ``flush()``): additions may follow it again.
    func storeWrittenWhole() {
        state.withLock { state in
            guard state.pending == nil else { return }
            state.needsWholeValue = false
            state.lastWriteSucceeded = true
        }
    }

    /// Whether a submission waits to be written.
    var hasPending: Bool { state.withLock { $0.pending != nil } }

    private func enqueue(_ change: (inout Batch?) -> Void) {
        let start = state.withLock { state -> Bool in
            change(&state.pending)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if start {
            Task.detached(priority: .utility) { [self] in drain() }
        }
    }

    private func drain() {
        while true {
            let wrote: Bool = writing.withLock {
                guard let batch = take() else { return false }
                perform(batch)
                return true
            }
            if wrote { continue }
            // Nothing pending: stop, unless a submission arrived after `take()` (its `enqueue`
            // saw this drain running and left the write to it).
            let stop = state.withLock { state -> Bool in
                guard state.pending == nil else { return false }
                state.draining = false
                return true
            }
            if stop { return }
        }
    }

    /// Writes `batch` (called under `writing`), unless it holds only additions after a failure.
    @discardableResult
    private func perform(_ batch: Batch) -> Bool {
        let broken = state.withLock { $0.needsWholeValue }
        let succeeded = broken && batch.whole == nil ? false : write(batch)
        state.withLock { state in
            state.lastWriteSucceeded = succeeded
            if succeeded {
                state.needsWholeValue = false
            } else {
                state.needsWholeValue = true
            }
        }
        return succeeded
    }

    private func take() -> Batch? {
        state.withLock { state in
            let batch = state.pending
            state.pending = nil
            return batch
        }
    }
}
