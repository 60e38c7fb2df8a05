import Foundation

/// Runs `operation`, but returns no later than `deadline` on `clock`.
///
/// Unlike a task group, this does not wait for a loser: when the deadline passes first, the
/// operation is cancelled and the caller gets ``DeepLinkError/Code-swift.struct/timedOut`` at
/// once, even if the operation ignores cancellation. When the caller's task is cancelled, both
/// are cancelled and `CancellationError` is thrown.
func withDeadline<Value: Sendable>(
    _ deadline: TimeInterval,
    on clock: any LinkRelayClock,
    timeoutError: @escaping @Sendable () -> DeepLinkError,
    operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let race = DeadlineRace<Value>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            race.begin(continuation)
            let work = Task {
                do {
                    race.finish(.success(try await operation()))
                } catch {
                    race.finish(.failure(error))
                }
            }
            let timer = Task {
                do {
                    try await clock.sleep(untilUptime: deadline)
                    race.finish(.failure(timeoutError()))
                } catch {
                    // Cancelled: the work finished first, or the caller gave up.
                }
            }
            race.attach(work: work, timer: timer)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The shared state of one ``withDeadline(_:on:timeoutError:operation:)`` call: whichever side
/// finishes first resumes the caller; the other side is cancelled.
private final class DeadlineRace<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var continuation: CheckedContinuation<Value, any Error>?
        var result: Result<Value, any Error>?
        var tasks: [Task<Void, Never>] = []
        var finished = false
    }

    private let state = Locked(State())

    func begin(_ continuation: CheckedContinuation<Value, any Error>) {
        let early: Result<Value, any Error>? = state.withLock { state in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        // Cancelled before the continuation existed.
        if let early { continuation.resume(with: early) }
    }

    func attach(work: Task<Void, Never>, timer: Task<Void, Never>) {
        let finished = state.withLock { state in
            state.tasks = [work, timer]
            return state.finished
        }
        if finished {
            work.cancel()
            timer.cancel()
        }
    }

    func finish(_ result: Result<Value, any Error>) {
        let (continuation, tasks): (CheckedContinuation<Value, any Error>?, [Task<Void, Never>]) =
            state.withLock { state in
                guard !state.finished else { return (nil, []) }
                state.finished = true
                state.result = result
                let continuation = state.continuation
                state.continuation = nil
                return (continuation, state.tasks)
            }
        for task in tasks { task.cancel() }
        continuation?.resume(with: result)
    }
}

/// Runs `operation`, a system call that may block its thread or never come back, on a detached
/// task, and waits for it at most `timeout` seconds on `clock`: after that it throws
/// ``DeepLinkError`` `.timedOut` saying that `what` did not come, and the call is left to end
/// on its own.
func askSystem<Value: Sendable>(
    for what: String, within timeout: TimeInterval, on clock: any LinkRelayClock,
    _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let asked = Task.detached(priority: .utility) { try await operation() }
    return try await withDeadline(
        clock.uptime + timeout, on: clock, timeoutError: { DeepLinkError(.timedOut, "\(what) did not come within \(timeout) s.") },
        operation: { try await asked.value })
}
