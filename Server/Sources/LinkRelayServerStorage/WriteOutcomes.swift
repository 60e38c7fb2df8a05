import Foundation
import LinkRelayServerCore
import Synchronization

/// What the storage reports to the server's metrics (``ServerStore/report(to:)``, ``Retention``):
/// the server's metrics implement it; without them nothing is reported.
package protocol StoreMetrics: Sendable {
    /// Whether anything is recorded (a batch's clicks and events are counted only then).
    var isEnabled: Bool { get }
    /// A batch of durable writes committed: its size and time, the clicks and events it stored,
    /// and its failures (not a taken value's conflict, which is the request's fault).
    func groupCommit(size: Int, duration: Duration, clicks: Int, events: Int, failures: Int)
    /// A retention pass: whether it completed, and the clicks it deleted.
    func retentionPass(completed: Bool, clicksDeleted: Int)
}

/// Metrics that record nothing.
package struct NoStoreMetrics: StoreMetrics {
    package init() {}
    package var isEnabled: Bool { false }
    package func groupCommit(size: Int, duration: Duration, clicks: Int, events: Int, failures: Int) {}
    package func retentionPass(completed: Bool, clicksDeleted: Int) {}
}

/// Where a store reports its group commits: set once the server is configured, read per batch.
final class ReportedMetrics: Sendable {
    private let value = Mutex<any StoreMetrics>(NoStoreMetrics())

    var current: any StoreMetrics {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// Whether the newest real write (a click, an install, an event) failed: the failure stands
/// until a real write succeeds (a conflict is the request's fault, not the database's, and does
/// not count), whatever the health check's own small write does. On a full disk that small write
/// still fits while every tap fails, and health answered 200 (24 of 40 checks).
///
/// Without traffic after a failure (a load balancer that took the server out sends none) the
/// failure would stand for ever, so the health check then writes a probe as large as
/// ``probeBytes``, more than any real write stores, and only its success clears it
/// (``SQLStore/writeProblem(at:)``).
final class WriteOutcomes: Sendable {
    /// The standing failure, and a count of failures noted (so a probe that began before a newer
    /// failure does not clear it).
    private let state = Mutex<(problem: String?, failures: UInt64)>((nil, 0))

    /// The bytes of the health check's probe while a failure stands: 256 KiB, 64 pages of 4 KiB,
    /// where a click's transaction (its row, its indexes, its daily counts) writes about a dozen.
    static let probeBytes = 256 * 1024

    init() {}

    /// The standing failure, if any.
    var problem: String? { state.withLock { $0.problem } }

    /// The standing failure and its count, for ``clear(unlessNewerThan:)``.
    var standing: (problem: String, failures: UInt64)? {
        state.withLock { state in state.problem.map { ($0, state.failures) } }
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
                state = (failure, state.failures &+ 1)
            } else if succeeded {
                state.problem = nil
            }
        }
        return failures
    }

    /// The probe succeeded: the failure counted `failures` is cleared, unless a newer one was
    /// noted since.
    func clear(unlessNewerThan failures: UInt64) {
        state.withLock { state in
            if state.failures == failures { state.problem = nil }
        }
    }
}
