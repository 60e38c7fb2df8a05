import Foundation

extension DeepLinkClient {
    /// Runs the first-launch work once per client: on an install not matched yet, asks the
    /// backend for the install match (deferred deep linking); on a later launch, restores the
    /// stored outcome. Also sends queued events (for an ``EventBatchingBackend``, when its
    /// ``EventBatching`` says: `flushAt` events waiting, or the timer).
    ///
    /// Call it once the app may talk to the provider: after your consent step, if you have one.
    /// Before `start()` the client sends nothing to the provider except link resolutions.
    /// Concurrent and repeated calls share one run. It returns once this launch's outcome is
    /// known (at most ``Configuration/installMatchTimeout`` later) and never holds up link
    /// delivery: links handled meanwhile flow as usual.
    ///
    /// - Returns: what kind of launch this is (``launch()``): a first install, a reinstall, an
    ///   update, a relaunch, or an existing user of a previous SDK.
    @discardableResult
    public func start() async -> AppLaunch {
        guard !isShutDown else { return await launch() }
        let (run, started) = firstLaunch.startRun { generation in Task { await self.runFirstLaunch(generation: generation) } }
        if started { scheduleFlush() }
        await run.value
        return await launch()
    }

    /// Whether the client has been started (and not cleared since).
    var isStarted: Bool { firstLaunch.isStarted }

    /// This launch's install outcome: `.attributed`, `.organic`, `.failed` or `.timedOut`.
    ///
    /// It waits until ``start()`` has decided it; callers share one request. On a later launch
    /// it is the outcome stored on the first. When a late answer follows `.timedOut`, this
    /// returns the late result from then on. If the calling task is cancelled while waiting,
    /// the result is `.failed` with code `.cancelled`; after ``shutdown()`` it returns at once,
    /// `.failed` with code `.shutdown` when no outcome was decided before.
    ///
    /// Only ``start()`` decides the outcome, so awaiting this before `start()` (before a consent
    /// screen, say) waits until `start()` runs: after ``outcomeWaitWarningDelay`` seconds on the
    /// client's clock without `start()`, a warning says so. To read the outcome without waiting,
    /// use ``currentInstallOutcome``.
    public func installOutcome() async -> InstallOutcome {
        if let outcome = firstLaunch.outcome { return outcome }
        guard !isShutDown else { return .failed(shutdownError("The client is shut down; the install outcome was not decided.")) }
        if !isStarted { remindToStart() }
        let id = firstLaunch.newWaiterID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if let outcome = firstLaunch.outcome {
                    continuation.resume(returning: outcome)
                } else if isShutDown {
                    continuation.resume(returning: .failed(shutdownError("The client is shut down; the install outcome was not decided.")))
                } else if Task.isCancelled {
                    continuation.resume(returning: .failed(cancelledWaiting))
                } else {
                    firstLaunch.addWaiter(id, continuation)
                }
            }
        } onCancel: {
            Task { await self.cancelOutcomeWaiter(id) }
        }
    }

    /// The install outcome if it is decided, without waiting: `nil` before ``start()`` has
    /// decided it (and after ``clearData()`` until the next `start()`).
    public var currentInstallOutcome: InstallOutcome? { firstLaunch.outcome }

    /// How long ``installOutcome()`` waits for a ``start()`` that was not called before it warns
    /// (seconds on the client's clock).
    public static let outcomeWaitWarningDelay: TimeInterval = 5

    /// Warns once, after ``outcomeWaitWarningDelay``, if the outcome is still awaited and
    /// ``start()`` still not called.
    private func remindToStart() {
        guard firstLaunch.needsStartReminder() else { return }
        let clock = self.clock
        let deadline = clock.uptime + Self.outcomeWaitWarningDelay
        Task { [weak self] in
            try? await clock.sleep(untilUptime: deadline)
            await self?.warnIfNotStarted()
        }
    }

    private func warnIfNotStarted() {
        guard firstLaunch.startReminderFired(), !isShutDown else { return }
        logger.warning(
            "installOutcome() has waited \(Self.outcomeWaitWarningDelay) s: start() has not been called, and only start() decides the outcome. "
                + "Call start() (after your consent step), or read currentInstallOutcome without waiting.")
    }

    private var cancelledWaiting: DeepLinkError {
        DeepLinkError(.cancelled, "Stopped waiting for the install outcome.", backend: backend.id)
    }

    private func cancelOutcomeWaiter(_ id: UInt64) {
        firstLaunch.removeWaiter(id)?.resume(returning: .failed(cancelledWaiting))
    }

    /// A fingerprint of the backend's secrets (FNV-1a; the key itself is never stored), to tell
    /// a key the provider rejected from the next one.
    var credentialsFingerprint: UInt64 {
        var text = backend.secrets.joined(separator: "\u{0}")
        return text.withUTF8 { DuplicateFilter.fnv1a($0) }
    }

    /// The stored install record, read once (an empty one while it cannot be read, not kept).
    func loadInstallRecord() -> InstallRecord {
        readInstallRecord() ?? InstallRecord()
    }

    /// The stored install record, read once; `nil` while it cannot be read (the device is
    /// locked): never taken for an install not matched yet.
    func readInstallRecord() -> InstallRecord? {
        if let record = firstLaunch.record { return record }
        let record: InstallRecord
        switch store().read(InstallRecord.self, forKey: InstallRecord.key, logger: logger) {
        case .unreadable: return nil
        case .absent: record = InstallRecord()
        case .value(let stored): record = stored
        }
        firstLaunch.remember(record)
        return record
    }

    func saveInstallRecord(_ record: InstallRecord) {
        firstLaunch.remember(record)
        store().save(record, forKey: InstallRecord.key, logger: logger)
    }

    // MARK: - Carrying out the first launch's steps

    /// What the first-launch steps are fixed on for the client's life.
    var firstLaunchSetup: FirstLaunchSteps.Setup {
        FirstLaunchSteps.Setup(
            backend: backend.id, processKind: configuration.processKind,
            asksAppStore: configuration.appStoreInstall.map { $0.timeout > 0 } ?? false,
            hasMarker: configuration.installMarker != nil, processLaunch: configuration.processLaunch,
            existingUsers: configuration.existingUsers, needsInstallReport: backend.needsInstallReport,
            maximumMatchLaunches: configuration.maximumInstallMatchLaunches, credentials: credentialsFingerprint,
            deferredDeepLinks: configuration.deferredDeepLinksEnabled, minimumConfidence: configuration.minimumDeferredConfidence,
            hasAppClipHandoff: configuration.appClipHandoff.map { !$0.isAppClip } ?? false,
            hasPasteboardCheck: configuration.pasteboardCheck != nil, installMatchTimeout: configuration.installMatchTimeout)
    }

    /// Whether a first-launch run of `generation` may still commit: not after a clear or a
    /// shutdown.
    func mayCommit(_ generation: UInt64) -> Bool {
        firstLaunch.isCurrent(generation) && !isShutDown
    }

    /// Tells the first-launch steps of `generation` what happened and carries out what they
    /// say, in order (an action that waits sends its own event when it ends). Nothing of an
    /// earlier generation (before a clear) is taken, and, but for the launch's own steps, nothing
    /// after shutdown. Returns the answer to an offered link, if the event led to one.
    @discardableResult
    func feed(_ event: FirstLaunchSteps.Event, generation: UInt64) async -> Bool? {
        guard firstLaunch.isCurrent(generation) else { return nil }
        switch event {
        case .historyRead, .historyUnreadable, .appStoreAnswered, .markerRead, .launchDecided, .protectedData: break
        default: guard !isShutDown else { return nil }
        }
        let isLaunchEvent: Bool
        switch event {
        case .historyRead, .historyUnreadable, .appStoreAnswered, .markerRead, .launchDecided: isLaunchEvent = true
        default: isLaunchEvent = false
        }
        // The launch's steps need no install record (nor reading it while the device is locked).
        let record = isLaunchEvent ? InstallRecord() : loadInstallRecord()
        let directLinkOpened = directLinkReceived.withLock { $0 }
        var steps = firstLaunch.steps ?? FirstLaunchSteps(setup: firstLaunchSetup)
        // The tracking answer (a system call with `.whenTrackingAuthorized`) only where the
        // install's steps may decide on it.
        let allowsFingerprint = isLaunchEvent || configuration.fingerprinting.allowsFingerprint
        let actions = steps.handle(event, record: record, directLinkOpened: directLinkOpened, allowsFingerprint: allowsFingerprint)
        firstLaunch.steps = steps
        var answer: Bool?
        for action in actions {
            if let given = await perform(action, generation: generation) { answer = given }
        }
        return answer
    }

    /// Carries out one action of the first-launch steps.
    @discardableResult
    func perform(_ action: FirstLaunchSteps.Action, generation: UInt64) async -> Bool? {
        switch action {
        case .readHistory: return await feed(readLaunchHistory(), generation: generation)
        case .waitForProtectedData:
            let available = await protectedDataAvailable()
            return await feed(.protectedData(available: available), generation: generation)
        case .askAppStore:
            let kind = await appStoreInstall().flatMap { configuration.appStoreInstall?.kind(for: $0, now: clock.currentDate) }
            return await feed(.appStoreAnswered(kind), generation: generation)
        case .readMarker: return await feed(await readInstallMarker(), generation: generation)
        case .decideLaunch(let inputs):
            let launch = await decideLaunch(inputs, generation: generation)
            return await feed(.launchDecided(launch), generation: generation)
        case .launchWithoutHistory:
            let launch = undecidedLaunch()
            if mayCommit(generation) { firstLaunch.launch = launch }
            return await feed(.launchDecided(launch), generation: generation)
        case .readRecord:
            if readInstallRecord() != nil { return await feed(.recordRead, generation: generation) }
            let locked = await protectedDataIsUnavailable()
            return await feed(.recordUnreadable(locked: locked), generation: generation)
        case .askForAppleAdsToken:
            askForAppleAdsToken(generation: generation)
        case .lookAtAppClip:
            return await feed(.appClipLooked(lookAtAppClip()), generation: generation)
        case .removeAppClipLink:
            removeAppClipLink()
        case .readPasteboard:
            return await feed(.pasteboardRead(await readPasteboardOnce(generation: generation)), generation: generation)
        case .skipPasteboard(let reason):
            skipPasteboard(reason)
        case .resolveCertainLink(let certain):
            return await feed(.certainLinkResolved(await certainDeepLink(certain)), generation: generation)
        case .waitForToken:
            return await feed(.tokenSettled(await appleAdsToken(generation: generation)), generation: generation)
        case .send(let certain, let token):
            await send(certainLink: certain, token: token, generation: generation)
        case .save(let record):
            saveInstallRecord(record)
        case .decide(let outcome, let publish):
            decide(outcome, publish: publish)
        case .deliver(let link, let url):
            deliver(link, handedOver: url)
        case .addLateAppleAdsToken:
            await addLateAppleAdsToken(generation: generation)
        case .reportRejectedCredentials(let failure, let what):
            reportIfCredentialsRejected(failure, during: what)
        case .log(let level, let message):
            logger.log(level, message)
        case .resolveOffered(let certain):
            let link = await certainDeepLink(certain)
            return await feed(.offeredResolved(certain, link), generation: generation)
        case .answerOffer(let taken):
            return taken
        }
        return nil
    }

    private func runFirstLaunch(generation: UInt64) async {
        guard mayCommit(generation) else { return }
        let launch = await self.launch()
        await feed(.start(launch, previousInstallID: firstLaunch.previousSDK?.installID), generation: generation)
    }

    /// Sends the install match, or a certain link's install report, with the client's retries,
    /// and tells the steps its answer, or that ``Configuration/installMatchTimeout`` passed
    /// first (the request goes on: a late answer is still told).
    private func send(certainLink: CertainLink?, token: String?, generation: UInt64) async {
        var context = await makeContext()
        context.certainLink = certainLink
        context.appleAdsToken = token
        // A clear or a shutdown while the context was made: nothing is sent.
        guard mayCommit(generation) else { return }
        let work = startMatch(context: context)
        if let result = await result(of: work) {
            await feed(.answered(redacted(result)), generation: generation)
            return
        }
        guard mayCommit(generation) else {
            work.cancel()
            return
        }
        await feed(.deadlinePassed, generation: generation)
        Task { [weak self] in
            let late = await work.value
            guard let self else { return }
            await self.feed(.answered(self.redacted(late)), generation: generation)
        }
    }

    private nonisolated func redacted(_ result: FirstLaunchSteps.MatchResult) -> FirstLaunchSteps.MatchResult {
        guard case .failed(let error) = result else { return result }
        return .failed(error.redacted(by: redactor))
    }

    /// `work`'s result, or `nil` when ``Configuration/installMatchTimeout`` passed first (the
    /// work goes on: a late result can still be applied).
    func result(of work: Task<FirstLaunchSteps.MatchResult, Never>) async -> FirstLaunchSteps.MatchResult? {
        let timeout = configuration.installMatchTimeout
        let backendID = backend.id
        return try? await withDeadline(
            clock.uptime + timeout, on: clock,
            timeoutError: { DeepLinkError(.timedOut, "The install match did not answer within \(timeout) s.", backend: backendID) },
            operation: { await work.value })
    }

    /// Starts the backend's install match (with retries) as its own task, so that it can outlive
    /// the deadline and deliver a late result.
    func startMatch(context: BackendContext) -> Task<FirstLaunchSteps.MatchResult, Never> {
        let backend = self.backend
        let retryPolicy = configuration.retryPolicy
        let clock = self.clock
        let logger = self.logger
        return Task {
            do {
                return .matched(
                    try await retryPolicy.run(clock: clock, logger: logger, what: "The install match") {
                        try await backend.matchInstall(context: context)
                    })
            } catch {
                return .failed(
                    DeepLinkError.wrapping(error, as: .network, "The install match failed.", backend: backend.id))
            }
        }
    }

    /// Records this launch's outcome, wakes those waiting for it, and (once per install)
    /// publishes it, replayed to later subscribers.
    func decide(_ outcome: InstallOutcome, publish: Bool) {
        for waiter in firstLaunch.decide(outcome) { waiter.resume(returning: outcome) }
        if publish { self.publish(.install(outcome), replayable: true) }
    }
}
