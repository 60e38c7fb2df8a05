import LinkRelayServerCore
import Synchronization

/// Writes that must be on disk before their request is answered, committed together: each
/// request's write waits while one transaction carries every write that arrived meanwhile, so
/// a hundred concurrent clicks cost one commit (one `fsync`), not a hundred, and none is
/// answered before it is durable (LinkForty Core writes its clicks after answering, so a crash
/// loses them).
///
/// Each quiet moment's first writer starts one task that drains the queue, batch after batch,
/// until it is empty. Two other shapes were tried (issue 64): a `Service` that drains a queue
/// would hang every write of a store nobody runs (a command, a test, a tool); committing on the
/// writers' own tasks, the lead handed from one writer to the next, had the redirect's p99 at
/// 72 ms in one of two runs (5 ms in the other, and in this shape's): a woken writer may wait
/// behind the requests queued on two cores before its batch starts. Not shown either way, so
/// the shape measured since issue 49 stays (RESULTS §2, round six).
final class GroupCommit<Write: Sendable, Written: Sendable>: Sendable {
    private struct Pending: Sendable {
        let write: Write
        let continuation: CheckedContinuation<Written, any Error>
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
        try await withCheckedThrowingContinuation { continuation in
            let lead = state.withLock { state in
                state.pending.append(Pending(write: write, continuation: continuation))
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            // The first writer of a quiet moment starts the drain; the writes that arrive while
            // a batch commits form the next batch.
            if lead { Task { await self.drain() } }
        }
    }

    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Pending] in
                let batch = Array(state.pending.prefix(limit))
                state.pending.removeFirst(batch.count)
                if batch.isEmpty { state.draining = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            let results = await commit(batch.map(\.write))
            for (index, pending) in batch.enumerated() {
                pending.continuation.resume(
                    with: index < results.count ? results[index] : .failure(StoreError(.failed, "A write got no result.")))
            }
        }
    }
}
