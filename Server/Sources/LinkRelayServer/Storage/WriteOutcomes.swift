import Foundation
import Synchronization

/// Where a store reports its group commits: set once the server is configured, read per batch.
final class ReportedMetrics: Sendable {
    private let value = Mutex(ServerMetrics.off)

    var current: ServerMetrics {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// Whether the newest durable write failed, and how long ago (a conflict is the request's
/// fault, not the database's, and does not count). A failure counts for ``window`` (30 seconds)
/// or until a write succeeds: a server with no traffic left after a failure is then judged by
/// the health check's own write alone, so it comes back once space is freed.
final class WriteOutcomes: Sendable {
    private let state = Mutex<(problem: String, at: ContinuousClock.Instant)?>(nil)
    let window: Duration

    init(window: Duration = .seconds(30)) {
        self.window = window
    }

    var problem: String? {
        state.withLock { state in
            guard let state, ContinuousClock.now - state.at < window else { return nil }
            return state.problem
        }
    }

    /// Notes a batch's results; returns how many failed (a conflict is not a failure).
    @discardableResult
    func note<Written>(_ results: [Result<Written, any Error>]) -> Int {
        var failure: String?
        var succeeded = false
        var failures = 0
        for result in results {
            switch result {
            case .success: succeeded = true
            case .failure(let error as StoreError) where error.kind == .conflict: succeeded = true
            case .failure(let error):
                failure = "the newest write failed: \(error)"
                failures += 1
            }
        }
        state.withLock { state in
            if let failure {
                state = (failure, ContinuousClock.now)
            } else if succeeded {
                state = nil
            }
        }
        return failures
    }
}
