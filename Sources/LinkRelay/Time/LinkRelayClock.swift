import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The time source every LinkRelay deadline runs on: resolution timeouts, the double-entry
/// window, the pending-link timeout and, later, retry backoff.
///
/// The client never relies on URLSession's own timeouts (on Linux they work only in whole
/// seconds and are ignored by stubs); it races each piece of work against this clock instead.
/// Inject `ManualClock` from LinkRelayTesting to drive deadlines by hand in tests, without
/// sleeping.
///
/// LinkRelay defines its own protocol rather than using Swift's `Clock` because `Clock` and
/// `Duration` need iOS 16, and LinkRelay supports iOS 15.
public protocol LinkRelayClock: Sendable {
    /// Monotonic seconds since an arbitrary fixed point; never goes backwards.
    var uptime: TimeInterval { get }
    /// The wall-clock time, for timestamps such as ``ConversionEvent/timestamp``.
    var currentDate: Date { get }
    /// Suspends until ``uptime`` reaches `deadline`. Throws `CancellationError` when the task
    /// is cancelled first.
    func sleep(untilUptime deadline: TimeInterval) async throws
}

extension LinkRelayClock {
    /// Suspends for `seconds` of this clock's time.
    public func sleep(for seconds: TimeInterval) async throws {
        try await sleep(untilUptime: uptime + seconds)
    }
}

/// The real clock: the system's monotonic uptime and wall-clock date.
public struct SystemClock: LinkRelayClock {
    /// The system clock.
    public init() {}

    /// Seconds of the system's monotonic clock, as `ProcessInfo.systemUptime` counts them, read
    /// straight from the clock: `ProcessInfo.processInfo` costs about 70,000 instructions the
    /// first time it is touched, which would land on the first link of a process.
    public var uptime: TimeInterval {
        #if canImport(Darwin)
            return TimeInterval(clock_gettime_nsec_np(CLOCK_UPTIME_RAW)) / 1_000_000_000
        #else
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return TimeInterval(now.tv_sec) + TimeInterval(now.tv_nsec) / 1_000_000_000
        #endif
    }

    public var currentDate: Date { Date() }

    /// Any deadline is accepted: one in the past or NaN returns at once, `.infinity` sleeps
    /// until the task is cancelled. Long sleeps are taken a day at a time, so no deadline,
    /// however far, overflows the nanoseconds `Task.sleep` counts in.
    public func sleep(untilUptime deadline: TimeInterval) async throws {
        while true {
            let remaining = deadline - uptime
            guard remaining > 0 else {
                try Task.checkCancellation()
                return
            }
            let step = min(remaining, Self.longestSleep)
            try await Task.sleep(nanoseconds: UInt64(clamping: (step * 1_000_000_000).rounded(.up).saturatingInt))
        }
    }

    /// The longest single `Task.sleep`, in seconds.
    static let longestSleep: TimeInterval = 86_400
}
