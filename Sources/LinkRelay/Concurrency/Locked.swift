import Foundation

/// A value guarded by a lock: the one place in LinkRelay where mutable state is shared across
/// threads without an actor.
///
/// The nonisolated entry points of ``DeepLinkClient`` (`handle(_:)`, `linkEvents()`) must register
/// work synchronously, from any thread, without awaiting an actor; this type is what lets them.
/// `Synchronization.Mutex` would do the same but needs iOS 18.
///
/// Audit notes: `state` is only ever touched inside `withLock`, under `lock`; the closure must not
/// call back into code that takes the same lock (it never does: callers only mutate plain values
/// and collect work to run after the lock is released).
package final class Locked<State: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    package init(_ state: State) {
        self.state = state
    }

    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
