import Foundation

extension DeepLinkClient {
    /// What kind of launch this is: a first install, a reinstall, an update (from which
    /// version), a relaunch, or an app that ran on this device before with a vendor's SDK.
    ///
    /// Decided on the first call (``start()`` makes it too) from what is stored on the device:
    /// the app's launch history, which every backend shares, and what the previous SDKs left
    /// (their importers run here, once per device; see ``Configuration/previousSDKs``), and on
    /// the first launch with no history the App Store's own record of the app
    /// (``Configuration/appStoreInstall``, waited for at most 1 s by default). It makes no
    /// request to the backend, so it may be called before ``start()`` and before the user's
    /// consent: to show "what's new" after an update, say. Links never wait for it.
    ///
    /// ```swift
    /// if case .update(let from) = await client.launch().kind { showWhatsNew(since: from) }
    /// ```
    ///
    /// While the device's protected data is unavailable (``Configuration/protectedData``: before
    /// the first unlock after a restart, in a prewarmed or background launch) nothing stored can
    /// be read, and this waits until it can: the launch is never taken for a first install
    /// because its history was locked. If the history still cannot be read once protected data
    /// is available (a failing store), the launch counts as a relaunch with `launchCount` 0 and
    /// nothing is stored.
    ///
    /// After ``shutdown()`` it returns the launch decided before, or decides one without
    /// storing anything (a relaunch with `launchCount` 0 if it was waiting for protected data).
    public func launch() async -> AppLaunch {
        if let decided = firstLaunch.launch { return decided }
        let generation = firstLaunch.generation
        let run: Task<AppLaunch, Never>
        if let running = firstLaunch.launchRun {
            run = running
        } else {
            run = Task { await self.runLaunchSteps(generation: generation) }
            firstLaunch.launchRun = run
        }
        let launch = await run.value
        // Cleared meanwhile: the launch of the client as it is now.
        guard firstLaunch.isCurrent(generation) || isShutDown else { return await self.launch() }
        return launch
    }

    /// Runs the launch's steps (``FirstLaunchSteps``) to their end: the launch decided, or,
    /// when they were cut short (a clear, a shutdown while the device was locked), a relaunch
    /// with nothing known of earlier launches.
    private func runLaunchSteps(generation: UInt64) async -> AppLaunch {
        let version = AppVersion(of: await deviceInfo())
        // Cleared while the device was read: the steps are the new generation's to take.
        guard firstLaunch.isCurrent(generation) else { return undecidedLaunch(version) }
        firstLaunch.version = version
        var steps = firstLaunch.steps ?? FirstLaunchSteps(setup: firstLaunchSetup)
        let actions = steps.decideLaunch()
        firstLaunch.steps = steps
        for action in actions { await perform(action, generation: generation) }
        // Decided without being kept (after shutdown), decided, or cut short.
        let decided = firstLaunch.isCurrent(generation) ? firstLaunch.steps?.decidedLaunch : nil
        return decided ?? firstLaunch.launch ?? undecidedLaunch(version)
    }

    /// Reads the launch history and the SDKs checked for: what was read, or that it could not
    /// be, with protected data unavailable or not.
    func readLaunchHistory() async -> FirstLaunchSteps.Event {
        let historyStore = launchHistoryStore()
        let stored = historyStore.read(LaunchHistory.self, forKey: LaunchHistory.key, logger: logger)
        let checked = historyStore.read(CheckedSDKs.self, forKey: CheckedSDKs.key, logger: logger)
        if stored.isUnreadable || checked.isUnreadable {
            return .historyUnreadable(locked: await protectedDataIsUnavailable())
        }
        return .historyRead(stored.value, checked.value ?? CheckedSDKs())
    }

    /// Reads the install marker (the Keychain), on LinkRelay's own queue: a Keychain query
    /// blocks its thread.
    func readInstallMarker() async -> FirstLaunchSteps.Event {
        guard let marker = configuration.installMarker else { return .markerRead(.absent, locked: false) }
        let state = await BlockingCall.run { marker.state() }
        guard state == .unreadable else { return .markerRead(state, locked: false) }
        return .markerRead(state, locked: await protectedDataIsUnavailable())
    }

    /// Decides the launch from what was read, and (in the app, not after shutdown) stores it:
    /// the history, the marker where it is known to be missing, the previous SDKs' imports.
    func decideLaunch(_ inputs: FirstLaunchSteps.LaunchInputs, generation: UInt64) async -> AppLaunch {
        let version: AppVersion
        if let known = firstLaunch.version { version = known } else { version = AppVersion(of: await deviceInfo()) }
        let marker = configuration.installMarker
        let canTakeEvents = eventTracker != nil
        let decision = LaunchDecision(
            stored: inputs.stored, checked: inputs.checked,
            processLaunch: configuration.processLaunch, version: version, backend: backend.id, now: clock.currentDate,
            appStore: inputs.appStore, markerPresent: { inputs.marker == .present },
            importers: backend.previousSDKImporters + configuration.previousSDKs,
            storage: configuration.previousSDKStorage,
            eventsTaken: { [backend, configuration] found in
                canTakeEvents && found.sdk.provider == backend.id ? configuration.eventQueueCapacity : 0
            })
        let launch = decision.history.launch(for: backend.id)
        // Nothing stored after a shutdown, nor for a client cleared since the steps began.
        guard !isShutDown, firstLaunch.isCurrent(generation) else { return launch }
        guard configuration.processKind != .appExtension else {
            // Only the app writes the history: an extension that ran first would make the
            // app's first launch a relaunch.
            firstLaunch.launch = launch
            logger.info("This launch (an app extension's; nothing stored): \(launch.kind), version \(launch.version).")
            return launch
        }
        let historyStore = launchHistoryStore()
        // The history first: should the process die before the imports are applied, they are
        // not applied twice (an imported event is sent at most once). Only what changed is
        // written: another client of the same launch writes nothing.
        if decision.checkedChanged { historyStore.save(decision.checked, forKey: CheckedSDKs.key, logger: logger) }
        if decision.historyChanged { historyStore.save(decision.history, forKey: LaunchHistory.key, logger: logger) }
        // Placed only where it is known to be missing: an unreadable one may be there.
        // Not in an App Clip: iOS carries the Clip's Keychain items over to the full app.
        if let marker, decision.historyChanged, inputs.marker == .absent, configuration.processKind == .app {
            await BlockingCall.run { marker.place() }
            // Cleared meanwhile: neither the imports nor the launch are the cleared client's.
            guard firstLaunch.isCurrent(generation) else { return launch }
        }
        for found in decision.imports { apply(found) }
        firstLaunch.launch = launch
        logger.info("This launch: \(launch.kind), version \(launch.version).")
        return launch
    }

    /// The launch reported when the history exists but cannot be read (a store failing while
    /// protected data is available, or a shutdown while the device was locked): a relaunch,
    /// never a first install, with nothing known of earlier launches (`launchCount` 0).
    func undecidedLaunch(_ version: AppVersion? = nil) -> AppLaunch {
        AppLaunch(
            kind: .relaunch, version: version ?? firstLaunch.version ?? AppVersion(version: nil, build: nil), firstSeen: clock.currentDate,
            launchCount: 0,
            backends: [backend.id], isExistingUser: false)
    }

    /// Device information, collected once, on first need.
    func deviceInfo() async -> DeviceInfo {
        if let known = session.device { return known }
        let collected = await configuration.deviceInfo.deviceInfo()
        // `identifierForVendor` is nil until the first unlock after a restart: a device
        // collected then is used once, not kept, so the install match sees the real one.
        if collected.vendorID == nil, await protectedDataIsUnavailable() { return session.device ?? collected }
        // Another caller may have collected it meanwhile: the first one kept wins.
        return session.keep(device: collected)
    }

    /// The store of the launch history: ``Configuration/launchHistoryStore``, else the
    /// configured store, else LinkRelay's own folder (in memory for this run when there is no
    /// folder).
    func launchHistoryStore() -> any PersistentStore { session.launchHistoryStore() }

    /// Applies what an importer found: to a backend of the same provider, its values (unless
    /// the backend has its own) and its unsent events; the identity is kept for the outcome.
    private func apply(_ found: SDKImport) {
        let sdk = found.sdk
        logger.info(
            "Found \(sdk.provider)'s SDK data: install id \(sdk.installID == nil ? "none" : "kept"), \(sdk.importedEvents) events imported, \(sdk.eventsNotImported) not."
        )
        guard sdk.provider == backend.id else { return }
        firstLaunch.previousSDK = sdk
        if sdk.deferredLink != nil {
            // The previous SDK delivered this install's deferred link: not again, whatever the
            // policy.
            var record = loadInstallRecord()
            if !record.deferredLinkDelivered {
                record.deferredLinkDelivered = true
                firstLaunch.remember(record)
                store().save(record, forKey: InstallRecord.key, logger: logger)
            }
        }
        let storage = BackendStorage(store: store(), logger: logger)
        for (key, value) in found.backendValues.sorted(by: { $0.key < $1.key })
        where storage.value(String.self, forKey: key) == nil {
            storage.set(value, forKey: key)
        }
        for event in found.queuedEvents where !journal().contains(event.id) {
            append(event)
        }
    }
}
