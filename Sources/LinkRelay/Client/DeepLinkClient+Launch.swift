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
    /// After ``shutdown()`` it returns the launch decided before, or decides one without
    /// storing anything.
    public func launch() async -> AppLaunch {
        if let decided = firstLaunch.launch { return decided }
        let version = AppVersion(of: await deviceInfo())
        // Another caller may have decided while the device information was collected.
        if let decided = firstLaunch.launch { return decided }
        let historyStore = launchHistoryStore()
        // With no history, the App Store's record may tell a reinstall (bounded wait).
        var stored = historyStore.load(LaunchHistory.self, forKey: LaunchHistory.key, logger: logger)
        var appStoreKind: AppLaunch.Kind?
        if stored == nil, let record = await appStoreInstall() {
            // Another caller, or another client of this launch, may have decided meanwhile.
            if let decided = firstLaunch.launch { return decided }
            appStoreKind = configuration.appStoreInstall?.kind(for: record, now: clock.currentDate)
            stored = historyStore.load(LaunchHistory.self, forKey: LaunchHistory.key, logger: logger)
        }
        let marker = configuration.installMarker
        // The marker's store (the Keychain) is asked at most once per launch.
        var markerPresent: Bool?
        func isMarkerPresent() -> Bool {
            if let markerPresent { return markerPresent }
            let present = marker?.isPresent() ?? false
            markerPresent = present
            return present
        }
        let canTakeEvents = eventTracker != nil
        let decision = LaunchDecision(
            stored: stored,
            checked: historyStore.load(CheckedSDKs.self, forKey: CheckedSDKs.key, logger: logger) ?? CheckedSDKs(),
            processLaunch: configuration.processLaunch, version: version, backend: backend.id, now: clock.currentDate,
            appStore: appStoreKind, markerPresent: isMarkerPresent, importers: backend.previousSDKImporters + configuration.previousSDKs,
            storage: configuration.previousSDKStorage,
            eventsTaken: { [backend, configuration] found in
                canTakeEvents && found.sdk.provider == backend.id ? configuration.eventQueueCapacity : 0
            })
        let launch = decision.history.launch(for: backend.id)
        guard !isShutDown else { return launch }
        // The history first: should the process die before the imports are applied, they are
        // not applied twice (an imported event is sent at most once). Only what changed is
        // written: another client of the same launch writes nothing.
        if decision.checkedChanged { historyStore.save(decision.checked, forKey: CheckedSDKs.key, logger: logger) }
        if decision.historyChanged { historyStore.save(decision.history, forKey: LaunchHistory.key, logger: logger) }
        if let marker, decision.historyChanged, !isMarkerPresent() { marker.place() }
        for found in decision.imports { apply(found) }
        firstLaunch.launch = launch
        logger.info("This launch: \(launch.kind), version \(launch.version).")
        return launch
    }

    /// Device information, collected once, on first need.
    func deviceInfo() async -> DeviceInfo {
        if let known = session.device { return known }
        let collected = await configuration.deviceInfo.deviceInfo()
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
            "Found \(sdk.provider)'s SDK data: install id \(sdk.installID == nil ? "none" : "kept"), \(sdk.importedEvents) events imported, \(sdk.eventsNotImported) not.")
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
