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

    /// The install record for the first-launch run: waits while it cannot be read because the
    /// device is locked; `nil` when it still cannot be read with protected data available (the
    /// outcome is then `.failed`, nothing is stored, and the next launch tries again) or the
    /// run may no longer commit.
    private func installRecordForRun(generation: UInt64) async -> InstallRecord? {
        while mayCommit(generation) {
            if let record = readInstallRecord() { return record }
            if await protectedDataIsUnavailable() {
                guard await protectedDataAvailable() else { return nil }
                continue
            }
            let failure = DeepLinkError(
                .storage, "The install record cannot be read; the install match waits for the next launch.", backend: backend.id)
            logger.error("\(failure.message)")
            decide(.failed(failure), publish: false)
            return nil
        }
        return nil
    }

    func saveInstallRecord(_ record: InstallRecord) {
        firstLaunch.remember(record)
        store().save(record, forKey: InstallRecord.key, logger: logger)
    }

    // MARK: - The first-launch run

    enum MatchResult: Sendable {
        case matched(InstallMatch)
        case failed(DeepLinkError)
    }

    /// Whether a first-launch run of `generation` may still commit: not after a clear or a
    /// shutdown.
    func mayCommit(_ generation: UInt64) -> Bool {
        firstLaunch.isCurrent(generation) && !isShutDown
    }

    private func runFirstLaunch(generation: UInt64) async {
        guard mayCommit(generation) else { return }
        let launch = await self.launch()
        guard mayCommit(generation) else { return }
        guard configuration.processKind.decidesInstall else {
            await settleOutsideTheApp(generation: generation)
            return
        }
        let skipsMatch = launch.isExistingUser && configuration.existingUsers == .skipInstallMatch
        let reportsInstall = !skipsMatch || (backend.needsInstallReport && firstLaunch.previousSDK?.installID == nil)
        // The Apple Ads token at once, in parallel with the rest of the first launch: the call
        // has been measured at 1.5 s.
        if reportsInstall, let stored = readInstallRecord(), stored.matched == nil { askForAppleAdsToken(generation: generation) }
        guard mayCommit(generation), var record = await installRecordForRun(generation: generation) else { return }
        if let matched = record.matched {
            logger.debug("Install already matched on an earlier launch; restoring the outcome.")
            decide(matched, publish: false)
            await addLateAppleAdsToken(generation: generation)
            // A certain link's report not answered yet: sent again, on as many launches as a match
            // is tried.
            if record.installReportPending == true, backend.needsInstallReport, let certain = record.certainLink,
                record.matchLaunches < configuration.maximumInstallMatchLaunches
            {
                record.matchLaunches += 1
                saveInstallRecord(record)
                _ = await reportCertainInstall(certain, generation: generation)
            }
            return
        }
        if skipsMatch, reportsInstall {
            logger.info("The app was on this device before this backend, which names the install only in its install match; asking for it, without delivering a deferred link.")
        } else if skipsMatch {
            logger.info("The app was on this device before this backend (\(launch.kind)); no install match is asked for.")
            let outcome = InstallOutcome.existingUser(
                firstLaunch.previousSDK?.installID.map { InstallAttribution.organic(installID: $0) })
            record.matched = outcome
            saveInstallRecord(record)
            decide(outcome, publish: true)
            return
        }
        // The link itself, when it reached the install (an App Clip, the pasteboard, a paste):
        // delivered as the deferred link, and no fingerprint match asked for.
        if let certain = await findCertainLink(for: launch, generation: generation) {
            guard mayCommit(generation) else { return }
            if await settle(certain, generation: generation) { return }
        }
        guard mayCommit(generation) else { return }
        record = loadInstallRecord()
        if let rejected = record.rejectedCredentials {
            guard rejected != credentialsFingerprint else {
                logger.warning("The provider rejected this API key for the install match on an earlier launch; the match waits for another key.")
                let failure = record.lastFailure ?? DeepLinkError(.unauthorized, "The provider rejected the API key.", backend: backend.id)
                decide(.failed(failure), publish: false)
                return
            }
            // Another key since the rejection: the match starts over.
            record.rejectedCredentials = nil
            record.matchLaunches = 0
            saveInstallRecord(record)
        }
        // No fingerprint without the user's permission to track: a backend that only matches
        // is not asked; one that names the install in its report gets a report without signals.
        if !configuration.fingerprinting.allowsFingerprint, !backend.needsInstallReport {
            logger.info("The user has not allowed tracking: no install match by fingerprint is asked for; the install counts as organic.")
            record.matched = .organic(nil)
            saveInstallRecord(record)
            decide(.organic(nil), publish: true)
            return
        }
        guard record.matchLaunches < configuration.maximumInstallMatchLaunches else {
            logger.info("The install match failed on \(record.matchLaunches) launches; not trying again.")
            let failure = record.lastFailure ?? DeepLinkError(.network, "The install match failed.", backend: backend.id)
            decide(.failed(failure), publish: false)
            return
        }
        var context = await makeContext()
        context.appleAdsToken = await appleAdsToken(generation: generation)
        // A clear or a shutdown while the context was made: this run counts for nothing.
        guard mayCommit(generation) else { return }
        record = loadInstallRecord()
        record.matchLaunches += 1
        saveInstallRecord(record)

        let work = startMatch(context: context)
        let timeout = configuration.installMatchTimeout
        if let result = await result(of: work) {
            await apply(result, late: false, generation: generation)
        } else {
            guard mayCommit(generation) else {
                work.cancel()
                return
            }
            logger.info("The install match timed out after \(timeout) s; a later answer will still be delivered.")
            decide(.timedOut, publish: true)
            Task { [weak self] in
                let late = await work.value
                await self?.apply(late, late: true, generation: generation)
            }
        }
    }

    /// In an App Clip or an extension: the outcome stored by the app, else `.failed` with code
    /// `.unsupported`; no match, report, token or conversion value, and nothing stored.
    private func settleOutsideTheApp(generation: UInt64) async {
        guard let record = await installRecordForRun(generation: generation) else { return }
        if let matched = record.matched {
            decide(matched, publish: false)
            return
        }
        let message =
            configuration.processKind == .appClip
            ? "An App Clip hands its link to the full app (AppClipHandoff); the install is decided there."
            : "An app extension does not decide the install; the app does."
        logger.info("\(message)")
        decide(.failed(DeepLinkError(.unsupported, message, backend: backend.id)), publish: false)
    }

    /// `work`'s result, or `nil` when ``Configuration/installMatchTimeout`` passed first (the
    /// work goes on: a late result can still be applied).
    func result(of work: Task<MatchResult, Never>) async -> MatchResult? {
        let timeout = configuration.installMatchTimeout
        let backendID = backend.id
        return try? await withDeadline(
            clock.uptime + timeout, on: clock,
            timeoutError: { DeepLinkError(.timedOut, "The install match did not answer within \(timeout) s.", backend: backendID) },
            operation: { await work.value })
    }

    /// Starts the backend's install match (with retries) as its own task, so that it can outlive
    /// the deadline and deliver a late result.
    func startMatch(context: BackendContext) -> Task<MatchResult, Never> {
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

    private func apply(_ result: MatchResult, late: Bool, generation: UInt64) async {
        guard mayCommit(generation) else { return }
        var record = loadInstallRecord()
        // A certain link arrived while the match was under way (a paste, a late pasteboard
        // read): it wins over what the match found, whose install id it keeps.
        if let certain = record.certainLink, record.matched == nil {
            var report: InstallMatch?
            if case .matched(let match) = result { report = match }
            if await settle(certain, generation: generation, report: report) { return }
            guard mayCommit(generation) else { return }
            record = loadInstallRecord()
        }
        switch result {
        case .failed(let error) where error.code == .unsupported:
            logger.info("The backend has no install matching; the install counts as organic.")
            record.matched = .organic(nil)
            saveInstallRecord(record)
            decide(.organic(nil), publish: true)
        case .failed(let error):
            let failure = error.redacted(by: redactor)
            logger.warning("The install match failed: \(failure.description)")
            reportIfCredentialsRejected(failure, during: "Asking for the install match")
            record.lastFailure = failure
            if failure.code == .unauthorized { record.rejectedCredentials = credentialsFingerprint }
            saveInstallRecord(record)
            decide(.failed(failure), publish: true)
        case .matched(let match):
            var attribution = match.attribution
            attribution.isLate = late
            // A match is a match: attributed without a link when the provider sent none the
            // app can open, never organic.
            var outcome = attribution.isAttributed ? InstallOutcome.attributedWithoutLink(attribution) : .organic(attribution)
            var deferred: DeepLink?
            if attribution.isAttributed, var link = match.link {
                if link.origin != .deferred {
                    link.origin = .deferred
                    link.id = DeepLink.stableID(url: link.url, origin: .deferred, provider: link.provider)
                }
                outcome = .attributed(link, attribution)
                deferred = link
            }
            record.matched = outcome
            record.lastFailure = nil
            let deliverable = deferred.flatMap { shouldDeliverDeferred($0, attribution: attribution, record: record) }
            if deliverable != nil { record.deferredLinkDelivered = true }
            // Saved before publishing: a crash after this point cannot deliver the link twice.
            saveInstallRecord(record)
            decide(outcome, publish: true)
            if let deliverable { deliver(deliverable, handedOver: deliverable.url) }
            await addLateAppleAdsToken(generation: generation)
        }
    }

    /// The deferred link to deliver, or `nil` with a log line saying why not.
    func shouldDeliverDeferred(
        _ link: DeepLink, attribution: InstallAttribution, record: InstallRecord
    ) -> DeepLink? {
        if record.deferredLinkDelivered {
            logger.info("The deferred link was already delivered for this install; not again.")
        } else if firstLaunch.launch?.isExistingUser == true, configuration.existingUsers != .treatAsNew {
            logger.info("The app was on this device before this backend; the match is reported in the outcome only.")
        } else if !configuration.deferredDeepLinksEnabled {
            logger.info("Deferred deep links are off; the match is reported in the outcome only.")
        } else if directLinkReceived.withLock({ $0 }) {
            logger.info("A direct link already opened the app; the deferred link is reported in the outcome only.")
        } else if let score = attribution.confidence?.score, score < configuration.minimumDeferredConfidence {
            logger.info("The match's confidence \(score) is below \(configuration.minimumDeferredConfidence); not delivered.")
        } else {
            return link
        }
        return nil
    }

    /// Records this launch's outcome, wakes those waiting for it, and (once per install)
    /// publishes it, replayed to later subscribers.
    func decide(_ outcome: InstallOutcome, publish: Bool) {
        for waiter in firstLaunch.decide(outcome) { waiter.resume(returning: outcome) }
        if publish { self.publish(.install(outcome), replayable: true) }
    }
}
