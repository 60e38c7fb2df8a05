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

    enum LaunchPhase: Sendable {
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
    enum Purpose: Sendable {
        case match
        /// A certain link's install report: the outcome is decided after it when `decides`.
        case report(CertainLink, link: DeepLink, attribution: InstallAttribution, decides: Bool)
    }

    enum InstallPhase: Sendable {
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

    struct Pending: Sendable {
        var result: MatchResult
        var late: Bool
    }

    let setup: Setup
    var launchPhase = LaunchPhase.notAsked
    var installPhase = InstallPhase.notStarted
    /// The launch the run started with.
    var launch: AppLaunch?
    var previousInstallID: String?
    var allowsFingerprint = true
    var directLinkOpened = false
    /// Whether the App Store's record was asked on this launch (once), and the kind of launch
    /// it told, kept across a wait for protected data.
    var askedAppStore = false
    var appStoreKind: AppLaunch.Kind?
    /// Whether this run decided an outcome (``InstallOutcome/timedOut`` included).
    var decidedAny = false

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
    mutating func handle(_ event: Event, record: InstallRecord, directLinkOpened: Bool = false, allowsFingerprint: Bool = true) -> [Action]
    {
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
                .log(
                    .error,
                    "The launch history cannot be read although protected data is available; this launch counts as a relaunch and nothing is stored."
                ),
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
                .log(
                    .warning,
                    "The install marker cannot be read although protected data is available; it is taken as absent, and not placed again."),
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
}
