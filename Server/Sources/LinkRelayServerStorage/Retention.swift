import Foundation
import LinkRelay
import LinkRelayServerCore
import Logging
import ServiceLifecycle

/// Keeps the click store bounded: clicks older than the retention (default 90 days, the longest
/// attribution window, so none of them can match an install any more) are deleted once an hour
/// and once at start, after the server is set up (`ready`; `interval` sets the hour otherwise). On PostgreSQL whole days go at once (their
/// partitions dropped; the next days' partitions are made by the same pass, also when clicks are
/// kept forever); what remains (SQLite, a partly expired day) is deleted in batches of 10,000,
/// each its own short transaction, so requests never wait long behind it. Installs and events are
/// kept: they are the app's history.
package struct ClickRetention: Service {
    let store: any ClickStore & SessionStore
    /// `nil`: clicks are kept forever (PostgreSQL's partitions are still made).
    let retention: TimeInterval?
    let interval: Duration
    let clock: any LinkRelayClock
    let logger: Logger
    let batch: Int
    /// Finished when the server is set up (its migrations applied): the first pass waits for it.
    let ready: AsyncStream<Void>?
    /// Where each pass is counted.
    let metrics: any StoreMetrics

    /// Deletes clicks older than `retention` (at least the longest window, 90 days; `nil` or
    /// infinity: never, NaN: 90 days) every `interval`, `batch` at a time.
    package init(
        store: any ClickStore & SessionStore, retention: TimeInterval? = DeferredMatcher.lookback, interval: Duration = .seconds(3600),
        batch: Int = 10_000, clock: any LinkRelayClock = SystemClock(), after ready: AsyncStream<Void>? = nil, logger: Logger,
        metrics: any StoreMetrics = NoStoreMetrics()
    ) {
        self.metrics = metrics
        self.ready = ready
        self.batch = max(batch, 1)
        self.store = store
        self.retention = retention.flatMap { value in
            value == .infinity ? nil : value.isFinite ? max(value, DeferredMatcher.lookback) : DeferredMatcher.lookback
        }
        self.interval = max(interval, .seconds(1))
        self.clock = clock
        self.logger = logger
    }

    /// One pass: every expired click, in batches; how many were deleted.
    @discardableResult
    package func sweep() async throws -> Int {
        let now = clock.currentDate
        let cutoff = retention.map { now.addingTimeInterval(-$0) }
        var total = try await store.maintainClickPartitions(now: now, droppingBefore: cutoff)
        // Best effort: without it the planner waits for autovacuum; the pass goes on.
        do {
            let analyzed = try await store.analyzeNewClickPartitions()
            if !analyzed.isEmpty { logger.info("Analyzed \(analyzed.count) click partitions that had no planner statistics.") }
        } catch {
            logger.warning("Could not analyze the new click partitions (autovacuum will): \(String(describing: error))")
        }
        // The dashboard's sessions that ended, whatever the clicks' retention.
        let sessions = try await store.deleteSessions(expiredBefore: now)
        if sessions > 0 { logger.info("Deleted \(sessions) dashboard sessions that ended.") }
        guard let cutoff, let retention else { return total }
        while true {
            let deleted = try await store.deleteClicks(before: cutoff, limit: batch)
            total += deleted
            if deleted < batch { break }
        }
        if total > 0 { logger.info("Deleted \(total) clicks older than \(Int(retention / 86_400)) days.") }
        // The landing page's click tokens that expired as long ago (each expires with its
        // link's window, at most 90 days after its click).
        let tokens = try await store.deleteClickTokens(expiredBefore: cutoff)
        if tokens > 0 { logger.info("Deleted \(tokens) click tokens that expired over \(Int(retention / 86_400)) days ago.") }
        return total
    }

    /// One pass (``sweep()``) as the server runs it: counted in the metrics, a failure logged.
    package func pass() async {
        do {
            metrics.retentionPass(completed: true, clicksDeleted: try await sweep())
        } catch {
            metrics.retentionPass(completed: false, clicksDeleted: 0)
            logger.error("The click retention pass failed: \(String(describing: error))")
        }
    }

    /// A pass once `ready` has finished (at once without it), then one every `interval`, until
    /// the server shuts down.
    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                if let ready {
                    for await _ in ready {}
                    try Task.checkCancellation()
                }
                while true {
                    await pass()
                    try await Task.sleep(for: interval)
                }
            }
        } catch is CancellationError {
            return
        }
    }
}
