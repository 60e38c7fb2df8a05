import Foundation

/// When the event queue is sent: at once for a backend that takes one event per request; for
/// one that batches (``EventBatchingBackend``), once `flushAt` events wait, or at a timer (the
/// oldest waiting event's `flushInterval`, or the end of the pause after failed batches), and
/// in smaller batches after a 413.
///
/// A pure state machine in ``LinkIntake``'s style: the client tells it what happened (events
/// wait, a batch was sent or failed, the timer fired) and carries out the ``Action`` it returns
/// (start a flush, arm the timer). It owns no task and reads no clock.
struct EventSending: Sendable, Equatable {
    /// What the client does next.
    enum Action: Sendable, Equatable {
        /// Nothing.
        case none
        /// Start a flush, unless one is running.
        case flush
        /// Start a flush when the uptime reaches this (replacing the armed timer).
        case armTimer(at: TimeInterval)
    }

    /// The batching in effect, clamped, its batch size and `flushAt` halved after each 413 and
    /// kept so for the client's life; `nil` for one event per request.
    private(set) var batching: EventBatching?
    /// Failed batches in a row (reset by a sent one).
    private(set) var failuresInARow = 0
    /// The uptime automatic sending may resume at, after failed batches.
    private(set) var pausedUntil: TimeInterval?
    /// The uptime the armed timer fires at; `nil` when none is armed.
    private(set) var timerDeadline: TimeInterval?

    /// Sending for a backend that batches as `batching` says, or one event per request (`nil`).
    init(batching: EventBatching?) {
        self.batching = batching?.clamped()
    }

    /// How many events one request carries.
    var batchSize: Int { batching?.maximumBatchSize ?? 1 }

    /// `waiting` events wait (and, in a folder shared with other processes, maybe theirs), no
    /// flush runs, and the uptime is `now`: send now, or when?
    mutating func eventsWaiting(_ waiting: Int, othersMayHaveSome: Bool, now: TimeInterval) -> Action {
        guard let batching else { return .flush }
        if let until = pausedUntil, until > now { return arm(at: until, replacing: false) }
        guard othersMayHaveSome || waiting > 0 else { return .none }
        if waiting >= batching.flushAt || batching.flushInterval == 0 { return .flush }
        return arm(at: now + batching.flushInterval, replacing: false)
    }

    /// A request carrying events was accepted (or refused for good): no pause.
    mutating func sent() {
        failuresInARow = 0
        pausedUntil = nil
    }

    /// A request of `size` events failed and they stay queued (`tooLarge`: the provider said
    /// 413). Batches halve after a 413; a batching backend pauses automatic sending,
    /// ``EventBatching/pause(afterFailures:)`` long, until the timer this returns.
    mutating func failed(size: Int, tooLarge: Bool, now: TimeInterval) -> Action {
        guard var batching else { return .none }
        if tooLarge {
            batching.maximumBatchSize = max(1, min(batching.maximumBatchSize, size) / 2)
            batching.flushAt = max(1, batching.flushAt / 2)
            self.batching = batching
        }
        failuresInARow += 1
        let until = now + batching.pause(afterFailures: failuresInARow)
        pausedUntil = until
        return arm(at: until, replacing: true)
    }

    /// The queue has nothing left to send: no timer is needed.
    mutating func drained() {
        timerDeadline = nil
    }

    /// The timer armed for `deadline` fired at `now`: send, or wait for the pause to end. A
    /// timer replaced since (another deadline) does nothing.
    mutating func timerFired(deadline: TimeInterval, now: TimeInterval) -> Action {
        guard timerDeadline == deadline else { return .none }
        timerDeadline = nil
        if let until = pausedUntil, until > now { return arm(at: until, replacing: false) }
        return .flush
    }

    /// After ``DeepLinkClient/clearData()``: no pause, no timer; the batching (halved or not)
    /// stays.
    mutating func reset() {
        failuresInARow = 0
        pausedUntil = nil
        timerDeadline = nil
    }

    /// Arms the timer for `deadline` unless one is armed and not `replacing`; an infinite
    /// deadline arms none.
    private mutating func arm(at deadline: TimeInterval, replacing: Bool) -> Action {
        guard deadline.isFinite else { return .none }
        if timerDeadline != nil, !replacing { return .none }
        timerDeadline = deadline
        return .armTimer(at: deadline)
    }
}
