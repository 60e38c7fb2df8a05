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

    private struct State: Sendable {
        var uptime: TimeInterval
        var date: Date
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state: Locked<State>
    private let sleeperWaiters = ConditionWaiters()

    /// A clock at `uptime` whose wall-clock date is `date`.
    public init(uptime: TimeInterval = 0, date: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Locked(State(uptime: uptime, date: date))
    }

    public var uptime: TimeInterval { state.withLock { $0.uptime } }

    public var currentDate: Date { state.withLock { $0.date } }

    /// How many tasks are sleeping on this clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// How many tasks are sleeping on this clock now until `uptime` or later: the long timers
    /// (a held link's expiry, say), apart from short deadlines that come and go with each
    /// request.
    public func sleeperCount(dueAtOrAfter uptime: TimeInterval) -> Int {
        state.withLock { state in state.sleepers.values.count { $0.deadline >= uptime } }
    }

    public func sleep(untilUptime deadline: TimeInterval) async throws {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, count): (Result<Void, any Error>?, Int) = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return (.failure(CancellationError()), state.sleepers.count) }
                    if deadline <= state.uptime { return (.success(()), state.sleepers.count) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (nil, state.sleepers.count)
                }
                if let outcome { continuation.resume(with: outcome) }
                sleeperWaiters.update(count)
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
    /// first. Time never goes backwards: a negative or NaN `seconds` moves it by zero (and still
    /// wakes the sleepers that are due).
    public func advance(by seconds: TimeInterval) {
        let seconds = seconds > 0 ? seconds : 0
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
        await sleeperWaiters.wait(until: count) { [state] in state.withLock { $0.sleepers.count } }
    }

    /// Returns once at least `count` tasks are sleeping on this clock until `uptime` or later,
    /// or when the calling task is cancelled. Use it when other, shorter timers may be running
    /// at the same time and must not be counted.
    public func waitForSleepers(count: Int, dueAtOrAfter uptime: TimeInterval) async {
        // The waiters are woken by the total count, which may run ahead of the count that
        // matters here: wait again until the filtered count itself is reached.
        while sleeperCount(dueAtOrAfter: uptime) < count, !Task.isCancelled {
            await sleeperWaiters.wait(until: count) { [self] in sleeperCount(dueAtOrAfter: uptime) }
        }
    }
}
