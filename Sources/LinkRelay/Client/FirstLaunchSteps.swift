import Foundation

/// The first launch, decided: what kind of launch this is (from the launch history, the App
/// Store's record and the install marker), then this launch's install outcome (the stored one,
/// a certain link, the install match or the install report), with a deferred link delivered at
/// most once per install.
///
/// A pure state machine in ``LinkIntake``'s and ``EventSending``'s style: the client tells it
/// what happened (an ``Event``, with the install record as stored now) and carries out the
/// ``Action``s it returns, in order. It owns no task, reads no clock and no store, and is tested
/// alone, ordering by ordering (`FirstLaunchStepsTests`).
///
/// What holds, whatever the order of events:
/// - nothing is decided from a read that failed while protected data was unavailable: the steps
///   wait for ``Event/protectedData(available:)`` and read again;
/// - at most one final outcome per run (``InstallOutcome/timedOut`` may come first, and a late
///   answer then replaces it);
/// - at most one deferred link per install: every ``Action/deliver(_:handedOver:)`` comes with a
///   ``Action/save(_:)`` before it whose record has `deferredLinkDelivered` set, and none comes
///   when the record given had it set already.
struct FirstLaunchSteps: Sendable {
    /// What the configuration and the backend say, fixed for the client's life.
    struct Setup: Sendable, Hashable {
        var backend: BackendID
        var processKind: ProcessKind = .app
        /// Whether the App Store's record is asked on a launch with no history.
        var asksAppStore = false
        /// Whether an install marker is configured.
        var hasMarker = false
        /// This process's launch: the marker is read once per process launch.
        var processLaunch = UUID()
        var existingUsers = ExistingUserPolicy.skipInstallMatch
        var needsInstallReport = false
        var maximumMatchLaunches = 3
        /// The fingerprint of the backend's secrets (``DeepLinkClient/credentialsFingerprint``).
        var credentials: UInt64 = 0
        var deferredDeepLinks = true
        var minimumConfidence = 0
        var hasAppClipHandoff = false
        var hasPasteboardCheck = false
        var installMatchTimeout: TimeInterval = 10
    }

    /// What happened.
    enum Event: Sendable {
        // The launch.
        /// The launch history (`nil`: there is none) and the SDKs checked for, read.
        case historyRead(LaunchHistory?, CheckedSDKs)
        /// The history could not be read, while protected data was unavailable (`locked`) or not.
        case historyUnreadable(locked: Bool)
        /// The App Store's record answered: the kind of launch it tells, if any.
        case appStoreAnswered(AppLaunch.Kind?)
        /// The install marker, read (`locked`: protected data was unavailable when it was not
        /// readable).
        case markerRead(InstallMarkerState, locked: Bool)
        /// The client applied ``Action/decideLaunch(_:)``: this launch.
        case launchDecided(AppLaunch)
        /// The wait for protected data ended: available, or given up (the client shut down).
        case protectedData(available: Bool)

        // The install.
        /// ``DeepLinkClient/start()``: the run of this generation begins, with the launch and the
        /// install id a previous SDK of the backend's provider left.
        case start(AppLaunch, previousInstallID: String?)
        /// The install record could be read (it is passed with every event from now on).
        case recordRead
        /// The install record could not be read, while protected data was unavailable or not.
        case recordUnreadable(locked: Bool)
        /// The App Clip's saved link was looked at (once per install): the link, if usable.
        case appClipLooked(CertainLink?)
        /// The pasteboard was read (or not), within its timeout: the link, if one of the backend's.
        case pasteboardRead(CertainLink?)
        /// The run's certain link, resolved as a deferred link; `nil` when it cannot be delivered.
        case certainLinkResolved(DeepLink?)
        /// The Apple Ads token's wait ended: the token, or `nil` (late, missing, malformed).
        case tokenSettled(String?)
        /// The install match or report answered (after the client's retries, redacted).
        case answered(MatchResult)
        /// ``Configuration/installMatchTimeout`` passed since the match or report was sent.
        case deadlinePassed
        /// A certain link from outside the run: a paste, a pasteboard read that ended after its
        /// wait.
        case offered(CertainLink)
        /// An offered link, resolved (``Action/resolveOffered(_:)``); `nil` when it cannot be
        /// delivered.
        case offeredResolved(CertainLink, DeepLink?)
    }

    /// What the client does next, in this order.
    enum Action: Sendable {
        /// Read the launch history (and the SDKs checked for).
        case readHistory
        /// Wait until protected data is available, then send ``Event/protectedData(available:)``.
        case waitForProtectedData
        /// Ask the App Store's record (bounded), then send ``Event/appStoreAnswered(_:)``.
        case askAppStore
        /// Read the install marker (once per process launch), then send ``Event/markerRead(_:locked:)``.
        case readMarker
        /// Decide the launch from what was read (``LaunchDecision``), store it, place the marker
        /// where it is known to be missing, apply the imports, then send ``Event/launchDecided(_:)``.
        case decideLaunch(LaunchInputs)
        /// The history exists but cannot be read with protected data available (or the wait was
        /// given up): the launch is a relaunch with nothing known of earlier ones, nothing is
        /// stored. Send ``Event/launchDecided(_:)`` with it.
        case launchWithoutHistory

        /// Read the install record, then send ``Event/recordRead`` or ``Event/recordUnreadable(locked:)``.
        case readRecord
        /// Ask the system for the Apple Ads token now, in parallel.
        case askForAppleAdsToken
        /// Look at the App Clip's saved link (once per install), then send ``Event/appClipLooked(_:)``.
        case lookAtAppClip
        /// Remove the App Clip's link from the App Group (it is kept in the record now).
        case removeAppClipLink
        /// Read the pasteboard (once per install), then send ``Event/pasteboardRead(_:)``.
        case readPasteboard
        /// Mark the pasteboard as read for this install without reading it, for the reason given.
        case skipPasteboard(String)
        /// Resolve the run's certain link, then send ``Event/certainLinkResolved(_:)``.
        case resolveCertainLink(CertainLink)
        /// Wait for the Apple Ads token (bounded), then send ``Event/tokenSettled(_:)``.
        case waitForToken
        /// Send the install match, or the install report of `certainLink`, with `token`; then send
        /// ``Event/answered(_:)``, and ``Event/deadlinePassed`` if the timeout passes first.
        case send(certainLink: CertainLink?, token: String?)
        /// Store the install record.
        case save(InstallRecord)
        /// This launch's outcome: record it, wake those waiting, and publish it when `publish`.
        case decide(InstallOutcome, publish: Bool)
        /// Deliver the deferred link.
        case deliver(DeepLink, handedOver: URL)
        /// Add a late Apple Ads token in the record to the install, if there is one.
        case addLateAppleAdsToken
        /// Tell the app its credentials were refused, if `failure` says so.
        case reportRejectedCredentials(DeepLinkError, during: String)
        /// Log.
        case log(LogSink.Level, String)
        /// Resolve an offered link, then send ``Event/offeredResolved(_:_:)``.
        case resolveOffered(CertainLink)
        /// The answer to ``DeepLinkClient/handlePastedLink(_:)``: whether the link was taken.
        case answerOffer(Bool)
    }

    /// What ``Action/decideLaunch(_:)`` decides from.
    struct LaunchInputs: Sendable, Hashable {
        var stored: LaunchHistory?
        var checked: CheckedSDKs
        var appStore: AppLaunch.Kind?
        var marker: InstallMarkerState
    }

    /// The install match's answer, or why there is none.
    enum MatchResult: Sendable, Hashable {
        case matched(InstallMatch)
        case failed(DeepLinkError)
    }

    private enum LaunchPhase: Sendable {
        case notAsked
        case readingHistory
        /// Waiting for protected data before reading the history again.
        case locked
        case askingAppStore
        case readingMarker(LaunchInputs)
        case deciding
        case decided(AppLaunch)
    }

    /// What a request in flight is for.
    private enum Purpose: Sendable {
        case match
        /// A certain link's install report: the outcome is decided after it when `decides`.
        case report(CertainLink, link: DeepLink, attribution: InstallAttribution, decides: Bool)
    }

    private enum InstallPhase: Sendable {
        case notStarted
        case readingRecord
        /// Waiting for protected data before reading the record again.
        case locked
        case lookingAtAppClip
        case readingPasteboard
        /// Resolving the certain link; `pending` is a match answered meanwhile, applied if the
        /// link cannot be delivered.
        case resolving(CertainLink, pending: Pending?)
        case waitingForToken(Purpose)
        case sending(Purpose, deadlinePassed: Bool)
        case done
    }

    private struct Pending: Sendable {
        var result: MatchResult
        var late: Bool
    }

    let setup: Setup
    private var launchPhase = LaunchPhase.notAsked
    private var installPhase = InstallPhase.notStarted
    /// The launch the run started with.
    private var launch: AppLaunch?
    private var previousInstallID: String?
    private var allowsFingerprint = true
    private var directLinkOpened = false
    /// Whether the App Store's record was asked on this launch (once), and the kind of launch
    /// it told, kept across a wait for protected data.
    private var askedAppStore = false
    private var appStoreKind: AppLaunch.Kind?
    /// Whether this run decided an outcome (``InstallOutcome/timedOut`` included).
    private var decidedAny = false

    init(setup: Setup) {
        self.setup = setup
    }

    /// This launch, once decided.
    var decidedLaunch: AppLaunch? {
        if case .decided(let launch) = launchPhase { return launch }
        return nil
    }

    // MARK: - The launch

    /// The launch is asked for (``DeepLinkClient/launch()``): what to do first. Nothing when it
    /// is being decided or decided.
    mutating func decideLaunch() -> [Action] {
        guard case .notAsked = launchPhase else { return [] }
        launchPhase = .readingHistory
        return [.readHistory]
    }

    // MARK: - Events

    /// What happened, with what holds now: the install record as stored, whether a link opened
    /// the app directly (a universal link, a URL scheme: no deferred link after it), and whether
    /// the fingerprint may be sent (``Configuration/fingerprinting``: the user may answer the
    /// tracking prompt while the first launch runs); what to do.
    ///
    /// Every action that waits (an answer, a timer, the system) comes after the ones that store,
    /// so that the record each ``Action/save(_:)`` holds is the one stored when the event came.
    mutating func handle(_ event: Event, record: InstallRecord, directLinkOpened: Bool = false, allowsFingerprint: Bool = true) -> [Action] {
        self.directLinkOpened = directLinkOpened
        self.allowsFingerprint = allowsFingerprint
        switch event {
        case .historyRead(let stored, let checked): return historyRead(stored, checked)
        case .historyUnreadable(let locked): return historyUnreadable(locked: locked)
        case .appStoreAnswered(let kind): return appStoreAnswered(kind)
        case .markerRead(let state, let locked): return markerRead(state, locked: locked)
        case .launchDecided(let launch):
            launchPhase = .decided(launch)
            return []
        case .protectedData(let available): return protectedData(available: available)
        case .start(let launch, let previousInstallID):
            guard case .notStarted = installPhase else { return [] }
            self.launch = launch
            self.previousInstallID = previousInstallID
            installPhase = .readingRecord
            return [.readRecord]
        case .recordRead: return recordRead(record)
        case .recordUnreadable(let locked): return recordUnreadable(locked: locked)
        case .appClipLooked(let found): return appClipLooked(found, record: record)
        case .pasteboardRead(let found): return pasteboardRead(found, record: record)
        case .certainLinkResolved(let link): return certainLinkResolved(link, record: record)
        case .tokenSettled(let token): return tokenSettled(token, record: record)
        case .answered(let result): return answered(result, record: record)
        case .deadlinePassed: return deadlinePassed()
        case .offered(let certain): return offered(certain, record: record)
        case .offeredResolved(let certain, let link): return offeredResolved(certain, link, record: record)
        }
    }

    // MARK: The launch's events

    private mutating func historyRead(_ stored: LaunchHistory?, _ checked: CheckedSDKs) -> [Action] {
        guard case .readingHistory = launchPhase else { return [] }
        // With no history, the App Store's record may tell a reinstall: asked once, then the
        // history is read again (another client of this launch may have written it meanwhile).
        if stored == nil, setup.asksAppStore, !askedAppStore {
            askedAppStore = true
            launchPhase = .askingAppStore
            return [.askAppStore]
        }
        let inputs = LaunchInputs(stored: stored, checked: checked, appStore: appStoreKind, marker: .absent)
        if setup.hasMarker, stored?.lastProcessLaunch != setup.processLaunch {
            launchPhase = .readingMarker(inputs)
            return [.readMarker]
        }
        launchPhase = .deciding
        return [.decideLaunch(inputs)]
    }


    private mutating func historyUnreadable(locked: Bool) -> [Action] {
        guard case .readingHistory = launchPhase else { return [] }
        guard locked else {
            // Readable data would have been read by now: the store is failing. The history is
            // there (a store that throws has something to read), so this is no first launch.
            launchPhase = .deciding
            return [
                .log(.error, "The launch history cannot be read although protected data is available; this launch counts as a relaunch and nothing is stored."),
                .launchWithoutHistory,
            ]
        }
        launchPhase = .locked
        return [.waitForProtectedData]
    }

    private mutating func appStoreAnswered(_ kind: AppLaunch.Kind?) -> [Action] {
        guard case .askingAppStore = launchPhase else { return [] }
        appStoreKind = kind
        launchPhase = .readingHistory
        return [.readHistory]
    }

    private mutating func markerRead(_ state: InstallMarkerState, locked: Bool) -> [Action] {
        guard case .readingMarker(var inputs) = launchPhase else { return [] }
        inputs.marker = state
        // The marker decides only a launch with no history the App Store did not tell: there, an
        // unreadable one must not look like a first install.
        if state == .unreadable, inputs.stored == nil, inputs.appStore == nil {
            if locked {
                launchPhase = .locked
                return [.waitForProtectedData]
            }
            launchPhase = .deciding
            return [
                .log(.warning, "The install marker cannot be read although protected data is available; it is taken as absent, and not placed again."),
                .decideLaunch(inputs),
            ]
        }
        launchPhase = .deciding
        return [.decideLaunch(inputs)]
    }

    private mutating func protectedData(available: Bool) -> [Action] {
        if case .locked = launchPhase {
            guard available else {
                launchPhase = .deciding
                return [.launchWithoutHistory]
            }
            launchPhase = .readingHistory
            return [.readHistory]
        }
        if case .locked = installPhase {
            guard available else {
                installPhase = .done
                return []
            }
            installPhase = .readingRecord
            return [.readRecord]
        }
        return []
    }

    // MARK: The install's events

    /// Whether a launch of this kind is a new install for the certain links and the deferred
    /// link.
    private var skipsMatch: Bool {
        launch?.isExistingUser == true && setup.existingUsers == .skipInstallMatch
    }

    private mutating func recordUnreadable(locked: Bool) -> [Action] {
        guard case .readingRecord = installPhase else { return [] }
        if locked {
            installPhase = .locked
            return [.waitForProtectedData]
        }
        let failure = DeepLinkError(
            .storage, "The install record cannot be read; the install match waits for the next launch.", backend: setup.backend)
        return [.log(.error, failure.message)] + finish(deciding: .failed(failure), publish: false)
    }

    private mutating func recordRead(_ record: InstallRecord) -> [Action] {
        guard case .readingRecord = installPhase else { return [] }
        guard setup.processKind.decidesInstall else { return settleOutsideTheApp(record) }
        var actions: [Action] = []
        let reportsInstall = !skipsMatch || (setup.needsInstallReport && previousInstallID == nil)
        // The Apple Ads token at once, in parallel with the rest of the first launch: the call
        // has been measured at 1.5 s.
        if reportsInstall, record.matched == nil { actions.append(.askForAppleAdsToken) }
        if let matched = record.matched {
            actions.append(.log(.debug, "Install already matched on an earlier launch; restoring the outcome."))
            actions += decide(matched, publish: false)
            // A certain link's report not answered yet: sent again, on as many launches as a
            // match is tried (a late Apple Ads token follows its answer).
            if record.installReportPending == true, setup.needsInstallReport, let certain = record.certainLink,
                record.matchLaunches < setup.maximumMatchLaunches, case .attributed(let link, let attribution) = matched
            {
                var counted = record
                counted.matchLaunches += 1
                installPhase = .waitingForToken(.report(certain, link: link, attribution: attribution, decides: false))
                return actions + [.save(counted), .waitForToken]
            }
            installPhase = .done
            return actions + [.addLateAppleAdsToken]
        }
        if skipsMatch, reportsInstall {
            actions.append(
                .log(.info, "The app was on this device before this backend, which names the install only in its install match; asking for it, without delivering a deferred link."))
        } else if skipsMatch {
            actions.append(.log(.info, "The app was on this device before this backend (\(launch.map { String(describing: $0.kind) } ?? "unknown")); no install match is asked for."))
            let outcome = InstallOutcome.existingUser(previousInstallID.map { InstallAttribution.organic(installID: $0) })
            var settled = record
            settled.matched = outcome
            return actions + [.save(settled)] + finish(deciding: outcome, publish: true)
        }
        // The link itself, when it reached the install (an App Clip, the pasteboard, a paste):
        // delivered as the deferred link, and no fingerprint match asked for.
        if let kept = record.certainLink {
            installPhase = .resolving(kept, pending: nil)
            return actions + [.resolveCertainLink(kept)]
        }
        return actions + lookForCertainLink(record: record, appClipLooked: false)
    }

    private mutating func settleOutsideTheApp(_ record: InstallRecord) -> [Action] {
        if let matched = record.matched { return finish(deciding: matched, publish: false) }
        let message =
            setup.processKind == .appClip
            ? "An App Clip hands its link to the full app (AppClipHandoff); the install is decided there."
            : "An app extension does not decide the install; the app does."
        return [.log(.info, message)]
            + finish(deciding: .failed(DeepLinkError(.unsupported, message, backend: setup.backend)), publish: false)
    }

    /// Whether this launch looks for a certain link: a new install's (a first install, a
    /// reinstall, an existing user treated as new).
    private var looksForCertainLinks: Bool {
        guard let launch else { return false }
        switch launch.kind {
        case .firstInstall, .reinstall: return true
        case .existingUser: return setup.existingUsers == .treatAsNew
        case .update, .relaunch: return false
        }
    }

    private mutating func lookForCertainLink(record: InstallRecord, appClipLooked: Bool) -> [Action] {
        guard looksForCertainLinks else { return askForMatch(record: record) }
        if !appClipLooked, setup.hasAppClipHandoff {
            installPhase = .lookingAtAppClip
            return [.lookAtAppClip]
        }
        guard setup.hasPasteboardCheck else { return askForMatch(record: record) }
        if directLinkOpened {
            return [.skipPasteboard("A link opened the app; the pasteboard is not read.")] + askForMatch(record: record)
        }
        if !setup.deferredDeepLinks {
            // Its link could not be delivered: no alert for nothing.
            return [.skipPasteboard("Deferred deep links are off; the pasteboard is not read.")] + askForMatch(record: record)
        }
        installPhase = .readingPasteboard
        return [.readPasteboard]
    }

    private mutating func appClipLooked(_ found: CertainLink?, record: InstallRecord) -> [Action] {
        guard case .lookingAtAppClip = installPhase else { return [] }
        if let kept = record.certainLink {
            // A paste while the App Clip's link was looked at: kept already, it wins.
            installPhase = .resolving(kept, pending: nil)
            return (found == nil ? [] : [.removeAppClipLink]) + [.resolveCertainLink(kept)]
        }
        guard let found else { return lookForCertainLink(record: record, appClipLooked: true) }
        // Kept in the record before it is removed from the App Group: whatever happens next, it
        // is neither lost nor taken twice.
        var kept = record
        kept.certainLink = found
        installPhase = .resolving(found, pending: nil)
        return [.save(kept), .removeAppClipLink, .resolveCertainLink(found)]
    }

    private mutating func pasteboardRead(_ found: CertainLink?, record: InstallRecord) -> [Action] {
        guard case .readingPasteboard = installPhase else { return [] }
        // A paste while the pasteboard was read is kept already; it wins over nothing else.
        if let kept = record.certainLink {
            installPhase = .resolving(kept, pending: nil)
            return [.resolveCertainLink(kept)]
        }
        guard let found else { return askForMatch(record: record) }
        var kept = record
        kept.certainLink = found
        installPhase = .resolving(found, pending: nil)
        return [.save(kept), .resolveCertainLink(found)]
    }

    private mutating func certainLinkResolved(_ link: DeepLink?, record: InstallRecord) -> [Action] {
        guard case .resolving(let certain, let pending) = installPhase else { return [] }
        guard let link else {
            // It cannot be delivered at all: the install goes on as if there were none.
            var forgotten = record
            forgotten.certainLink = nil
            let actions: [Action] = [.save(forgotten)]
            if let pending { return actions + apply(pending.result, late: pending.late, record: forgotten) }
            return actions + askForMatch(record: forgotten)
        }
        var report: InstallMatch?
        if case .matched(let match)? = pending?.result { report = match }
        return settle(certain, link: link, report: report, record: record)
    }

    /// Settles the install with its certain link: delivers it (once per install, by the same
    /// rules as a matched deferred link) without waiting for anything, then decides the outcome
    /// `.attributed` with the source's method and confidence 100, after the install report
    /// where the backend names the install only there and `report` is not its answer already.
    private mutating func settle(_ certain: CertainLink, link: DeepLink, report: InstallMatch?, record: InstallRecord) -> [Action] {
        let attribution = InstallAttribution(
            installID: report?.attribution.installID, isAttributed: true, confidence: .init(score: 100),
            method: certain.source == .appClip ? .appClip : .pasteboard)
        let needsReport = setup.needsInstallReport && report == nil
        var settled = record
        settled.matched = .attributed(link, attribution)
        settled.lastFailure = nil
        settled.installReportPending = needsReport ? true : nil
        // The report counts as a launch's match: sent again on later launches, up to
        // ``Configuration/maximumInstallMatchLaunches`` in all.
        if needsReport { settled.matchLaunches += 1 }
        var actions: [Action] = []
        let deliverable = shouldDeliver(link, attribution: attribution, record: settled, log: &actions)
        if deliverable { settled.deferredLinkDelivered = true }
        // Saved before it is delivered: a crash after this point cannot deliver the link twice.
        actions.append(.save(settled))
        if deliverable { actions.append(.deliver(link, handedOver: certain.url)) }
        guard needsReport else {
            return actions + finish(deciding: .attributed(link, attribution), publish: true)
        }
        installPhase = .waitingForToken(.report(certain, link: link, attribution: attribution, decides: true))
        return actions + [.waitForToken]
    }

    private mutating func askForMatch(record: InstallRecord) -> [Action] {
        var actions: [Action] = []
        var record = record
        if let rejected = record.rejectedCredentials {
            guard rejected != setup.credentials else {
                let failure = record.lastFailure ?? DeepLinkError(.unauthorized, "The provider rejected the API key.", backend: setup.backend)
                return [.log(.warning, "The provider rejected this API key for the install match on an earlier launch; the match waits for another key.")]
                    + finish(deciding: .failed(failure), publish: false)
            }
            // Another key since the rejection: the match starts over.
            record.rejectedCredentials = nil
            record.matchLaunches = 0
            actions.append(.save(record))
        }
        // No fingerprint without the user's permission to track: a backend that only matches
        // is not asked; one that names the install in its report gets a report without signals.
        if !allowsFingerprint, !setup.needsInstallReport {
            record.matched = .organic(nil)
            return actions + [
                .log(.info, "The user has not allowed tracking: no install match by fingerprint is asked for; the install counts as organic."),
                .save(record),
            ] + finish(deciding: .organic(nil), publish: true)
        }
        guard record.matchLaunches < setup.maximumMatchLaunches else {
            let failure = record.lastFailure ?? DeepLinkError(.network, "The install match failed.", backend: setup.backend)
            return actions + [.log(.info, "The install match failed on \(record.matchLaunches) launches; not trying again.")]
                + finish(deciding: .failed(failure), publish: false)
        }
        installPhase = .waitingForToken(.match)
        return actions + [.waitForToken]
    }

    private mutating func tokenSettled(_ token: String?, record: InstallRecord) -> [Action] {
        guard case .waitingForToken(let purpose) = installPhase else { return [] }
        installPhase = .sending(purpose, deadlinePassed: false)
        switch purpose {
        case .match:
            // Counted before it is sent: a crash mid-request also counts.
            var counted = record
            counted.matchLaunches += 1
            return [.save(counted), .send(certainLink: nil, token: token)]
        case .report(let certain, _, _, _):
            return [.send(certainLink: certain, token: token)]
        }
    }

    private mutating func deadlinePassed() -> [Action] {
        guard case .sending(let purpose, deadlinePassed: false) = installPhase else { return [] }
        installPhase = .sending(purpose, deadlinePassed: true)
        switch purpose {
        case .match:
            return [.log(.info, "The install match timed out after \(setup.installMatchTimeout) s; a later answer will still be delivered.")]
                + decide(.timedOut, publish: true)
        case .report(_, let link, let attribution, let decides):
            let actions: [Action] = [
                .log(.info, "The install report timed out after \(setup.installMatchTimeout) s; a later answer still names the install.")
            ]
            return actions + (decides ? decide(.attributed(link, attribution), publish: true) : [])
        }
    }

    private mutating func answered(_ result: MatchResult, record: InstallRecord) -> [Action] {
        guard case .sending(let purpose, let late) = installPhase else { return [] }
        switch purpose {
        case .match:
            // A certain link arrived while the match was under way (a paste, a late pasteboard
            // read): it wins over what the match found, whose install id it keeps.
            if let certain = record.certainLink, record.matched == nil {
                installPhase = .resolving(certain, pending: Pending(result: result, late: late))
                return [.resolveCertainLink(certain)]
            }
            return apply(result, late: late, record: record)
        case .report(_, let link, var attribution, let decides):
            var actions = keepReported(result, record: record)
            if case .matched(let match) = result, let installID = match.attribution.installID { attribution.installID = installID }
            installPhase = .done
            if decides, !late { actions += decide(.attributed(link, attribution), publish: true) }
            return actions + [.addLateAppleAdsToken]
        }
    }

    /// The install id of a certain link's report, kept in the stored outcome.
    private func keepReported(_ result: MatchResult, record: InstallRecord) -> [Action] {
        switch result {
        case .failed(let failure):
            return [
                .log(.warning, "The install report failed (sent again on the next launch): \(failure.description)"),
                .reportRejectedCredentials(failure, during: "Reporting the install"),
            ]
        case .matched(let match):
            var kept = record
            kept.installReportPending = nil
            if case .attributed(let link, var attribution) = kept.matched, let installID = match.attribution.installID {
                attribution.installID = installID
                kept.matched = .attributed(link, attribution)
            }
            return [.save(kept)]
        }
    }

    private mutating func apply(_ result: MatchResult, late: Bool, record: InstallRecord) -> [Action] {
        var record = record
        installPhase = .done
        switch result {
        case .failed(let error) where error.code == .unsupported:
            record.matched = .organic(nil)
            return [.log(.info, "The backend has no install matching; the install counts as organic."), .save(record)]
                + decide(.organic(nil), publish: true)
        case .failed(let failure):
            record.lastFailure = failure
            if failure.code == .unauthorized { record.rejectedCredentials = setup.credentials }
            return [
                .log(.warning, "The install match failed: \(failure.description)"),
                .reportRejectedCredentials(failure, during: "Asking for the install match"),
                .save(record),
            ] + decide(.failed(failure), publish: true)
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
            var actions: [Action] = []
            let deliverable = deferred.map { shouldDeliver($0, attribution: attribution, record: record, log: &actions) } ?? false
            if deliverable { record.deferredLinkDelivered = true }
            // Saved before it is delivered: a crash after this point cannot deliver the link twice.
            actions.append(.save(record))
            actions += decide(outcome, publish: true)
            if deliverable, let deferred { actions.append(.deliver(deferred, handedOver: deferred.url)) }
            return actions + [.addLateAppleAdsToken]
        }
    }

    // MARK: Offered links

    private mutating func offered(_ certain: CertainLink, record: InstallRecord) -> [Action] {
        var record = record
        var actions: [Action] = []
        if record.matched == nil {
            guard record.certainLink == nil else {
                return [.log(.info, "This install already has its certain link; the pasted one is not taken."), .answerOffer(false)]
            }
            // Kept first: the run under way (or the next start(), or the next launch's) settles
            // the install with it instead of a fingerprint.
            record.certainLink = certain
            actions.append(.save(record))
            guard decidedAny else {
                return actions + [
                    .log(.info, "A certain link (\(certain.source.rawValue)) arrived before the install outcome; it is the deferred link."),
                    .answerOffer(true),
                ]
            }
        }
        guard !record.deferredLinkDelivered else {
            return actions + [.log(.info, "The deferred link was already delivered for this install; the pasted link is not delivered."), .answerOffer(false)]
        }
        return actions + [.resolveOffered(certain)]
    }

    private mutating func offeredResolved(_ certain: CertainLink, _ link: DeepLink?, record: InstallRecord) -> [Action] {
        guard let link, !record.deferredLinkDelivered else { return [.answerOffer(false)] }
        var delivered = record
        delivered.deferredLinkDelivered = true
        return [
            .save(delivered),
            .log(.info, "A certain link (\(certain.source.rawValue)) arrived after the install outcome; delivered as the deferred link."),
            .deliver(link, handedOver: certain.url),
            .answerOffer(true),
        ]
    }

    // MARK: Helpers

    /// Whether to deliver the deferred link, with a log line saying why not.
    private func shouldDeliver(_ link: DeepLink, attribution: InstallAttribution, record: InstallRecord, log: inout [Action]) -> Bool {
        let reason: String
        if record.deferredLinkDelivered {
            reason = "The deferred link was already delivered for this install; not again."
        } else if launch?.isExistingUser == true, setup.existingUsers != .treatAsNew {
            reason = "The app was on this device before this backend; the match is reported in the outcome only."
        } else if !setup.deferredDeepLinks {
            reason = "Deferred deep links are off; the match is reported in the outcome only."
        } else if directLinkOpened {
            reason = "A direct link already opened the app; the deferred link is reported in the outcome only."
        } else if let score = attribution.confidence?.score, score < setup.minimumConfidence {
            reason = "The match's confidence \(score) is below \(setup.minimumConfidence); not delivered."
        } else {
            return true
        }
        log.append(.log(.info, reason))
        return false
    }

    private mutating func decide(_ outcome: InstallOutcome, publish: Bool) -> [Action] {
        decidedAny = true
        return [.decide(outcome, publish: publish)]
    }

    private mutating func finish(deciding outcome: InstallOutcome, publish: Bool) -> [Action] {
        installPhase = .done
        return decide(outcome, publish: publish)
    }


}
