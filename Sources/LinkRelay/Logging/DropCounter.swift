import Foundation

/// Counts what a bounded buffer dropped, and says when a drop deserves a log line: the first,
/// then every 1,000th. A buffer far behind (a flood of links, a long offline stretch of
/// events) must not turn into a storm of warnings in the app's log.
final class DropCounter: Sendable {
    private let count = Locked(0)

    /// How many were dropped.
    var total: Int { count.withLock { $0 } }

    /// Counts one drop; returns the total when this one should be logged, else `nil`.
    func note() -> Int? {
        let total = count.withLock { count in
            count += 1
            return count
        }
        return total == 1 || total % 1_000 == 0 ? total : nil
    }

    /// Counts a link dropped because more were waiting than `linkBufferLimit` allows, with a
    /// warning for the first drop and every 1,000th.
    func note(_ url: URL, logger: LinkRelayLogger) {
        guard let dropped = note() else { return }
        logger.warning("More links are waiting than linkBufferLimit allows; dropped the oldest: \(url.absoluteString) (\(dropped) so far)")
    }
}
