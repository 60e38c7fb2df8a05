import Foundation

/// How the client retries a backend call: transport failures, timeouts, 5xx and 429 (honouring
/// `Retry-After`, capped), with exponential backoff and jitter, on the client's clock.
/// A 4xx other than 429 is never retried.
///
/// Every attempt counts against the caller's deadline: a link's resolution stops retrying when
/// ``DeepLinkClient/Configuration/resolutionTimeout`` passes.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included. Default 3.
    public var maximumAttempts: Int = 3
    /// The wait before the second attempt. Default 0.5 s.
    public var initialBackoff: TimeInterval = 0.5
    /// Each further wait is this many times the previous one. Default 2.
    public var multiplier: Double = 2
    /// No backoff is longer than this. Default 30 s.
    public var maximumBackoff: TimeInterval = 30
    /// A server's `Retry-After` is honoured up to this; a longer one ends the retries. Default
    /// 60 s.
    public var maximumRetryAfter: TimeInterval = 60
    /// Each backoff is shortened by a random fraction of itself, up to this (0…1), so many
    /// devices do not retry in step. Default 0.2.
    public var jitter: Double = 0.2

    /// A policy; every parameter has the default listed on its field. Every value is accepted:
    /// durations that are negative or NaN count as zero and `.infinity` means no cap; a
    /// `multiplier` that is negative or NaN counts as 1; `jitter` is clamped to 0…1 (NaN is 0);
    /// fewer than one attempt means one.
    public init(
        maximumAttempts: Int = 3, initialBackoff: TimeInterval = 0.5, multiplier: Double = 2,
        maximumBackoff: TimeInterval = 30, maximumRetryAfter: TimeInterval = 60, jitter: Double = 0.2
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialBackoff = initialBackoff
        self.multiplier = multiplier
        self.maximumBackoff = maximumBackoff
        self.maximumRetryAfter = maximumRetryAfter
        self.jitter = jitter
    }

    /// One attempt and no retries.
    public static let none = RetryPolicy(maximumAttempts: 1)

    /// The policy as the client runs it (see ``init(maximumAttempts:initialBackoff:multiplier:maximumBackoff:maximumRetryAfter:jitter:)``).
    func clamped() -> RetryPolicy {
        RetryPolicy(
            maximumAttempts: max(maximumAttempts, 1), initialBackoff: initialBackoff.clampedDuration,
            multiplier: multiplier >= 0 ? multiplier : 1, maximumBackoff: maximumBackoff.clampedDuration,
            maximumRetryAfter: maximumRetryAfter.clampedDuration, jitter: jitter > 0 ? min(jitter, 1) : 0)
    }

    /// The wait after failed attempt `attempt` (1-based) with `error`, or `nil` to stop: never
    /// negative or NaN, `.infinity` only when nothing caps it. `random` is in 0..<1 and scales
    /// the jitter.
    func delay(after attempt: Int, error: DeepLinkError, random: Double) -> TimeInterval? {
        let policy = clamped()
        guard attempt < policy.maximumAttempts, error.isRetryable else { return nil }
        if let retryAfter = error.retryAfter {
            let wait = retryAfter.clampedDuration
            return wait <= policy.maximumRetryAfter ? wait : nil
        }
        // 0 × ∞ is NaN: no initial backoff means no backoff, whatever the multiplier.
        let exponential = policy.initialBackoff == 0 ? 0 : policy.initialBackoff * pow(policy.multiplier, Double(attempt - 1))
        let capped = min(exponential.clampedDuration, policy.maximumBackoff)
        guard capped.isFinite else { return capped }
        let random = random.isNaN ? 0 : min(max(random, 0), 1)
        return capped * (1 - policy.jitter * random)
    }

    /// Runs `operation` until it succeeds, fails for good, or the attempts run out, waiting on
    /// `clock` between attempts. Non-`DeepLinkError`s are wrapped as `.network`.
    func run<Value: Sendable>(
        clock: any LinkRelayClock,
        logger: LinkRelayLogger,
        what: String,
        _ operation: () async throws -> Value
    ) async throws -> Value {
        var attempt = 1
        while true {
            do {
                return try await operation()
            } catch {
                if error is CancellationError || Task.isCancelled { throw CancellationError() }
                let failure = DeepLinkError.wrapping(error, as: .network, "\(what) failed.")
                guard let wait = delay(after: attempt, error: failure, random: Double.random(in: 0..<1)) else {
                    throw failure
                }
                logger.info("\(what) failed (\(failure.code)); attempt \(attempt + 1) of \(maximumAttempts) in \(wait) s.")
                try await clock.sleep(for: wait)
                attempt += 1
            }
        }
    }
}
