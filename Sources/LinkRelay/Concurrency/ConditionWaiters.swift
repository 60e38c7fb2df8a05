import Foundation

/// Tasks waiting for a count to reach a threshold (sleepers on a test clock, requests a
/// simulator received, links a backend heard about): resumed when it does, or when the waiting
/// task is cancelled, so that a test's time limit can always end a test.
package final class ConditionWaiters: Sendable {
    private struct Waiter: Sendable {
        let threshold: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State: Sendable {
        var waiters: [UInt64: Waiter] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    package init() {}

    /// Returns once `current()` (read under this type's lock, after each ``update(_:)``) reaches
    /// `threshold`, or the calling task is cancelled.
    package func wait(until threshold: Int, current: @escaping @Sendable () -> Int) async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.cancelled.remove(id) != nil || current() >= threshold { return true }
                    state.waiters[id] = Waiter(threshold: threshold, continuation: continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.continuation.resume()
        }
        state.withLock { _ = $0.cancelled.remove(id) }
    }

    /// Resumes the waiters whose threshold `count` reaches.
    package func update(_ count: Int) {
        let ready = state.withLock { state -> [Waiter] in
            let ready = state.waiters.filter { $0.value.threshold <= count }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return Array(ready.values)
        }
        for waiter in ready { waiter.continuation.resume() }
    }
}
