import Foundation

extension AppLaunch {
    /// This process's launch: every client made in it sees the same launch.
    package static let thisProcess = UUID()
}

/// The app's launch history, under the key `launches` in the launch-history store: it belongs
/// to the app, not to a backend, so that switching backends keeps it.
struct LaunchHistory: Sendable, Hashable, Codable {
    static let key = "launches"
    /// How many recent launches are kept.
    static let recentLimit = 20

    /// A launch: when, and which version.
    struct Launch: Sendable, Hashable, Codable {
        var date: Date
        var version: AppVersion
    }

    /// A backend the app ran with, and whether the app was on the device before it first did.
    struct Backend: Sendable, Hashable, Codable {
        var id: BackendID
        var joinedExistingUser: Bool
    }

    var firstSeen: Date
    var launchCount: Int
    /// The process launch that last ran, and the kind decided then: other clients of the same
    /// launch see the same kind.
    var lastProcessLaunch: UUID
    var lastKind: AppLaunch.Kind
    /// The most recent launches, oldest first (at most ``recentLimit``).
    var recent: [Launch]
    var backends: [Backend]

    /// The launch as a client of `backend` sees it.
    func launch(for backend: BackendID) -> AppLaunch {
        AppLaunch(
            kind: lastKind, version: recent.last?.version ?? AppVersion(version: nil, build: nil), firstSeen: firstSeen,
            launchCount: launchCount, backends: backends.map(\.id),
            isExistingUser: backends.first { $0.id == backend }?.joinedExistingUser ?? false)
    }
}

/// The providers whose SDK importer has run on this device, under the key `previous-sdks`
/// beside the history: each importer runs once per device. ``DeepLinkClient/clearData()``
/// keeps it, so that an identity the user asked to erase is not imported again.
struct CheckedSDKs: Sendable, Hashable, Codable {
    static let key = "previous-sdks"
    var providers: [BackendID] = []
}

/// Decides what kind of launch this is from the stored history, the importers' findings and the
/// marker, and says what must be written: no store is touched here, so every case is tested
/// without one (the importers read what the previous SDKs left).
struct LaunchDecision: Sendable {
    /// The history to store.
    var history: LaunchHistory
    /// What the importers found on this launch (each importer runs once per device).
    var imports: [SDKImport]
    /// The providers whose importer has now run, those run before included.
    var checked: CheckedSDKs
    /// Whether ``checked`` gained a provider on this launch (it must be written).
    var checkedChanged: Bool
    /// Whether ``history`` differs from the stored one (it must be written).
    var historyChanged: Bool

    /// - Parameters:
    ///   - stored: the history as stored, if any.
    ///   - checked: the providers whose importer ran on an earlier launch.
    ///   - processLaunch: this process's launch.
    ///   - version: the app's version now.
    ///   - backend: the client's backend.
    ///   - now: the time.
    ///   - appStore: the kind the App Store's record decides for a device with no history
    ///     (``AppStoreInstallCheck``), if it decides one: it comes before the marker.
    ///   - markerPresent: whether a mark of an earlier install survived (`false` where the
    ///     platform cannot tell); asked only for a device with no history.
    ///   - importers: the previous SDKs' importers; those not run yet are run here.
    ///   - storage: where they read.
    ///   - eventsTaken: how many of an import's queued events the client can take (the rest
    ///     are counted as not imported).
    init(
        stored: LaunchHistory?, checked: CheckedSDKs, processLaunch: UUID, version: AppVersion, backend: BackendID, now: Date,
        appStore: AppLaunch.Kind? = nil, markerPresent: () -> Bool, importers: [any PreviousSDKImporter], storage: PreviousSDKStorage,
        eventsTaken: (SDKImport) -> Int
    ) {
        var history: LaunchHistory
        var seen = Set(checked.providers)
        let pending = importers.filter { seen.insert($0.provider).inserted }
        imports = pending.compactMap { importer in
            guard var found = importer.read(storage) else { return nil }
            let queued = found.queuedEvents.count
            let taken = min(max(eventsTaken(found), 0), queued)
            found.queuedEvents = Array(found.queuedEvents.suffix(taken))
            found.sdk.importedEvents = taken
            found.sdk.eventsNotImported = queued - taken + found.unreadableEvents
            return found
        }
        self.checked = CheckedSDKs(providers: checked.providers + pending.map(\.provider))
        checkedChanged = !pending.isEmpty

        if let known = stored, known.lastProcessLaunch == processLaunch {
            // Another client of the same launch.
            history = known
        } else if var known = stored {
            let last = known.recent.last?.version
            known.lastKind = last == version ? .relaunch : .update(from: last ?? AppVersion(version: nil, build: nil))
            known.lastProcessLaunch = processLaunch
            known.launchCount = known.launchCount &+ 1
            known.recent = Array((known.recent + [.init(date: now, version: version)]).suffix(LaunchHistory.recentLimit))
            history = known
        } else {
            let kind: AppLaunch.Kind
            if let previous = imports.first {
                kind = .existingUser(previousSDK: previous.sdk)
            } else if let appStore {
                kind = appStore
            } else if markerPresent() {
                kind = .reinstall
            } else {
                kind = .firstInstall
            }
            history = LaunchHistory(
                firstSeen: imports.compactMap(\.sdk.installedAt).min() ?? now, launchCount: 1,
                lastProcessLaunch: processLaunch, lastKind: kind, recent: [.init(date: now, version: version)], backends: [])
        }
        if !history.backends.contains(where: { $0.id == backend }) {
            let existing: Bool
            switch history.lastKind {
            case .firstInstall, .reinstall: existing = false
            case .update, .relaunch, .existingUser: existing = true
            }
            history.backends.append(.init(id: backend, joinedExistingUser: existing))
        }
        self.history = history
        historyChanged = history != stored
    }
}
