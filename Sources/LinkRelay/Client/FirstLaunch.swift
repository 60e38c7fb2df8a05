import Foundation

/// The client's first-launch state: the install record, the run under way, this launch's
/// outcome and those waiting for it.
///
/// Every run carries the ``generation`` it started in; ``reset()`` (``DeepLinkClient/clearData()``)
/// moves to a new one, so a run from before it can check ``isCurrent(_:)`` and commit nothing.
struct FirstLaunch: Sendable {
    /// The stored record, once read.
    private(set) var record: InstallRecord?
    /// The run of this generation, shared by every ``DeepLinkClient/start()``.
    private(set) var run: Task<Void, Never>?
    /// This launch's outcome, once decided.
    private(set) var outcome: InstallOutcome?
    /// What kind of launch this is, once decided (``DeepLinkClient/launch()``).
    var launch: AppLaunch?
    /// The steps that decide the launch and the install outcome (made on first use).
    var steps: FirstLaunchSteps?
    /// The steps deciding the launch, shared by every ``DeepLinkClient/launch()``.
    var launchRun: Task<AppLaunch, Never>?
    /// The app's version, read for the launch.
    var version: AppVersion?
    /// The previous SDK of the backend's own provider found on this launch, whose install id
    /// an existing user's outcome keeps.
    var previousSDK: PreviousSDK?
    /// The Apple Ads token the system gave this run, for a second report (in memory only).
    var appleAdsToken: String?
    /// This run's system call for the token, once asked.
    var appleAdsRequest: AppleAdsTokenRequest?
    /// Whether the system answered this run's call (with a token or without).
    var appleAdsAnswered = false
    /// Whether an install report of this run went without the token: one that comes later is
    /// kept for the install.
    var appleAdsReportWentWithout = false
    /// Whether a late token is being added to the install (one request at a time).
    var addingLateAppleAdsToken = false
    /// Whether ``DeepLinkClient/installOutcome()``'s reminder to call `start()` is pending.
    private var startReminderScheduled = false
    /// In the order they started waiting. An array, not a dictionary: creating the client must
    /// not make the runtime look up `UInt64: Hashable` (a scan of every conformance in the
    /// process, about 250,000 instructions, see issue 41), and there are only ever a few.
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<InstallOutcome, Never>)] = []
    private var nextWaiter: UInt64 = 0
    private(set) var generation: UInt64 = 0
    /// The waits for protected data under way (``DeepLinkClient/launch()`` on a locked device),
    /// cancelled at shutdown.
    private var protectedDataWaits: [(id: UInt64, task: Task<Void, Never>)] = []

    /// Whether work started in `generation` may still commit.
    func isCurrent(_ generation: UInt64) -> Bool { generation == self.generation }

    /// Whether ``DeepLinkClient/start()`` has run in this generation.
    var isStarted: Bool { run != nil }

    /// The run of this generation: the one under way, or the one `makeRun` makes for this
    /// generation now (`started`: the caller then does what starting entails).
    mutating func startRun(_ makeRun: (_ generation: UInt64) -> Task<Void, Never>) -> (run: Task<Void, Never>, started: Bool) {
        if let run { return (run, false) }
        let run = makeRun(generation)
        self.run = run
        return (run, true)
    }

    /// The stored record, read or changed.
    mutating func remember(_ record: InstallRecord) {
        self.record = record
    }

    /// Whether to schedule the reminder that `start()` was not called: not when one is pending.
    mutating func needsStartReminder() -> Bool {
        guard !startReminderScheduled else { return false }
        startReminderScheduled = true
        return true
    }

    /// The reminder's time came: whether the warning is still due (not started, no outcome,
    /// somebody waiting).
    mutating func startReminderFired() -> Bool {
        startReminderScheduled = false
        return !isStarted && outcome == nil && hasWaiters
    }

    /// A new waiter's id.
    mutating func newWaiterID() -> UInt64 {
        defer { nextWaiter += 1 }
        return nextWaiter
    }

    /// Whether anyone awaits the outcome.
    var hasWaiters: Bool { !waiters.isEmpty }

    /// How many await the outcome.
    var waiterCount: Int { waiters.count }

    mutating func addWaiter(_ id: UInt64, _ continuation: CheckedContinuation<InstallOutcome, Never>) {
        waiters.append((id, continuation))
    }

    mutating func removeWaiter(_ id: UInt64) -> CheckedContinuation<InstallOutcome, Never>? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).continuation
    }

    /// Records the outcome and returns the waiters to resume with it.
    mutating func decide(_ outcome: InstallOutcome) -> [CheckedContinuation<InstallOutcome, Never>] {
        self.outcome = outcome
        return takeWaiters()
    }

    /// Forgets everything but the waiters (they wait for the next run's outcome) and starts a
    /// new generation. The caller removes the stored record.
    mutating func reset() {
        generation &+= 1
        record = InstallRecord()
        run = nil
        outcome = nil
        launch = nil
        steps = nil
        launchRun = nil
        previousSDK = nil
        appleAdsToken = nil
        appleAdsRequest = nil
        appleAdsAnswered = false
        appleAdsReportWentWithout = false
    }

    /// Keeps a wait for protected data, to cancel at shutdown; returns its id.
    mutating func addProtectedDataWait(_ task: Task<Void, Never>) -> UInt64 {
        let id = newWaiterID()
        protectedDataWaits.append((id, task))
        return id
    }

    mutating func removeProtectedDataWait(_ id: UInt64) {
        protectedDataWaits.removeAll { $0.id == id }
    }

    /// Takes every waiter, to resume at shutdown.
    mutating func takeWaiters() -> [CheckedContinuation<InstallOutcome, Never>] {
        let taken = waiters.map(\.continuation)
        waiters.removeAll()
        return taken
    }

    /// At shutdown: the waiters, each with the outcome it gets (the one decided, else
    /// `undecided`).
    mutating func close(
        undecided: @autoclosure () -> InstallOutcome
    ) -> (outcome: InstallOutcome, waiters: [CheckedContinuation<InstallOutcome, Never>]) {
        for wait in protectedDataWaits { wait.task.cancel() }
        protectedDataWaits.removeAll()
        return (outcome ?? undecided(), takeWaiters())
    }
}
