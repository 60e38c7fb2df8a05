import LinkRelayServerCore
import Synchronization

/// Writes that must be on disk before their request is answered, committed together: each
/// request's write waits while one transaction carries every write that arrived meanwhile, so
/// a hundred concurrent clicks cost one commit (one `fsync`), not a hundred, and none is
/// answered before it is durable (LinkForty Core writes its clicks after answering, so a crash
/// loses them).
///
/// The commits run on the writers' own tasks, not on a task of their own: the first writer of a
/// quiet moment leads, committing a batch that holds its write; when writes arrived meanwhile it
/// hands the lead to the first of them, whose task commits the next batch, and returns. Nothing
/// is left running when no one writes, and nothing must be started for writes to go through (a
/// `Service` that drained a queue would hang every write of a store nobody ran: a command, a
/// test, a tool).
final class GroupCommit<Write: Sendable, Written: Sendable>: Sendable {
    /// What a waiting writer is told: its write's result, or that it leads the next batch.
    private enum Turn: Sendable {
        case done(Result<Written, any Error>)
        case lead
    }

    private struct Pending: Sendable {
        let write: Write
        /// `nil` for the leader's own write, whose task is committing it.
        let continuation: CheckedContinuation<Turn, Never>?
    }

    private struct State: Sendable {
        var pending: [Pending] = []
        var draining = false
    }

    private let state = Mutex(State())
    private let limit: Int
    private let commit: @Sendable ([Write]) async -> [Result<Written, any Error>]

    /// Batches of at most `limit` writes, each batch given to `commit`, which answers one
    /// result per write, in order.
    init(limit: Int = 512, commit: @escaping @Sendable ([Write]) async -> [Result<Written, any Error>]) {
        self.limit = max(limit, 1)
        self.commit = commit
    }

    /// Returns once `write` is committed (or failed).
    func submit(_ write: Write) async throws -> Written {
        let leads = state.withLock { state in
            guard !state.draining else { return false }
            state.draining = true
            state.pending.append(Pending(write: write, continuation: nil))
            return true
        }
        if leads { return try await lead().get() }
        let turn = await withCheckedContinuation { continuation in
            let leadsNow = state.withLock { state in
                // The leader may have finished between the two locks.
                if state.draining {
                    state.pending.append(Pending(write: write, continuation: continuation))
                    return false
                }
                state.draining = true
                state.pending.append(Pending(write: write, continuation: nil))
                return true
            }
            if leadsNow { continuation.resume(returning: .lead) }
        }
        switch turn {
        case .done(let result): return try result.get()
        case .lead: return try await lead().get()
        }
    }

    /// Commits the next batch, which holds this task's write (the first pending, whose
    /// continuation is `nil`), answers the others in it, and hands the lead on; this task's
    /// write's result.
    private func lead() async -> Result<Written, any Error> {
        let batch = state.withLock { state -> [Pending] in
            let batch = Array(state.pending.prefix(limit))
            state.pending.removeFirst(batch.count)
            return batch
        }
        let results = await commit(batch.map(\.write))
        var own: Result<Written, any Error> = .failure(StoreError(.failed, "A write got no result."))
        for (index, pending) in batch.enumerated() {
            let result = index < results.count ? results[index] : .failure(StoreError(.failed, "A write got no result."))
            if let continuation = pending.continuation {
                continuation.resume(returning: .done(result))
            } else {
                own = result
            }
        }
        // The next batch's first writer leads it; none waiting: the next writer will.
        let next = state.withLock { state -> CheckedContinuation<Turn, Never>? in
            guard let first = state.pending.first else {
                state.draining = false
                return nil
            }
            state.pending[0] = Pending(write: first.write, continuation: nil)
            return first.continuation
        }
        next?.resume(returning: .lead)
        return own
    }
}
