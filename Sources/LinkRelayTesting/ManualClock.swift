import Foundation
import LinkRelay

/// A clock that moves only when you advance it, so tests of deadlines never sleep.
///
/// ```swift
/// let clock = ManualClock()
/// var configuration = DeepLinkClient.Configuration()
/// configuration.clock = clock
/// // … hand the client a link whose backend is slow …
/// await clock.waitForSleepers(count: 2)   // the deadline timer and the slow backend
/// clock.advance(by: 3)                    // the resolution deadline passes
/// ```
///
/// ``waitForSleepers(count:)`` is how a test knows the code under test has reached its sleep
/// before the test moves time, without polling or sleeping.
public final class ManualClock: LinkRelayClock, Sendable {
    private struct Sleeper: Sendable {
        let deadline: TimeInterval
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher: Sendable {
        let id: UInt64
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State: Sendable {
        var uptime: TimeInterval
        var date: Date
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        var watchers: [Watcher] = []

        /// Removes and returns the watchers satisfied by the current number of sleepers.
        mutating func satisfiedWatchers() -> [Watcher] {
            let ready = watchers.filter { $0.count <= sleepers.count }
            watchers.removeAll { $0.count <= sleepers.count }
            return ready
        }
    }

    private let state: Locked<State>

    /// A clock at `uptime` whose wall-clock date is `date`.
    public init(uptime: TimeInterval = 0, date: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Locked(State(uptime: uptime, date: date))
    }

    public var uptime: TimeInterval { state.withLock { $0.uptime } }

    public var currentDate: Date { state.withLock { $0.date } }

    /// How many tasks are sleeping on this clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(untilUptime deadline: TimeInterval) async throws {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, watchers): (Result<Void, any Error>?, [Watcher]) = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= state.uptime { return (.success(()), []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (nil, state.satisfiedWatchers())
                }
                if let outcome { continuation.resume(with: outcome) }
                for watcher in watchers { watcher.continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        // Clean up a cancellation marker left for a sleep that finished before it was read.
        state.withLock { _ = $0.cancelled.remove(id) }
    }

    /// Moves time forward by `seconds` and wakes every sleeper whose deadline has come, earliest
    /// first.
    public func advance(by seconds: TimeInterval) {
        let due: [Sleeper] = state.withLock { state in
            state.uptime += seconds
            state.date += seconds
            let due = state.sleepers.filter { $0.value.deadline <= state.uptime }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once at least `count` tasks are sleeping on this clock, or when the calling task
    /// is cancelled (so a test's time limit can end a test whose code never goes to sleep).
    public func waitForSleepers(count: Int) async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.sleepers.count >= count || state.cancelled.remove(id) != nil { return true }
                    state.watchers.append(Watcher(id: id, count: count, continuation: continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let watcher = state.withLock { state -> Watcher? in
                guard let index = state.watchers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.watchers.remove(at: index)
            }
            watcher?.continuation.resume()
        }
        state.withLock { _ = $0.cancelled.remove(id) }
    }
}
