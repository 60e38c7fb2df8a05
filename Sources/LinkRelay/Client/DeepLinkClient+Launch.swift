import Foundation

extension DeepLinkClient {
    /// What kind of launch this is: a first install, a reinstall, an update (from which
    /// version), a relaunch, or an app that ran on this device before with a vendor's SDK.
    ///
    /// Decided on the first call (``start()`` makes it too) from what is stored on the device:
    /// the app's launch history, which every backend shares, and what the previous SDKs left
    /// (their importers run here, once per device; see ``Configuration/previousSDKs``). It
    /// makes no request and does not wait for the network, so it may be called before
    /// ``start()`` and before the user's consent: to show "what's new" after an update, say.
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
        let importers = Self.importers(backend.previousSDKImporters + configuration.previousSDKs)
        let marker = configuration.installMarker
        let canTakeEvents = eventTracker != nil
        let decision = LaunchDecision(
            stored: historyStore.load(LaunchHistory.self, forKey: LaunchHistory.key, logger: logger),
            checked: historyStore.load(CheckedSDKs.self, forKey: CheckedSDKs.key, logger: logger) ?? CheckedSDKs(),
            processLaunch: configuration.processLaunch, version: version, backend: backend.id, now: clock.currentDate,
            markerPresent: { marker?.isPresent() ?? false }, importers: importers, storage: configuration.previousSDKStorage,
            eventsTaken: { [backend, configuration] found in
                canTakeEvents && found.sdk.provider == backend.id ? configuration.eventQueueCapacity : 0
            })
        let launch = decision.history.launch(for: backend.id)
        guard !isShutDown else { return launch }
        // The history first: should the process die before the imports are applied, they are
        // not applied twice (an imported event is sent at most once).
        if !decision.checked.providers.isEmpty {
            historyStore.save(decision.checked, forKey: CheckedSDKs.key, logger: logger)
        }
        historyStore.save(decision.history, forKey: LaunchHistory.key, logger: logger)
        if let marker, !marker.isPresent() { marker.place() }
        for found in decision.imports { apply(found) }
        firstLaunch.launch = launch
        logger.info("This launch: \(launch.kind), version \(launch.version).")
        return launch
    }

    /// Device information, collected once, on first need.
    func deviceInfo() async -> DeviceInfo {
        if let known = session.device { return known }
        let device = await configuration.deviceInfo.deviceInfo()
        session.device = session.device ?? device
        return session.device ?? device
    }

    /// The store of the launch history: ``Configuration/launchHistoryStore``, else the
    /// configured store, else LinkRelay's own folder (in memory for this run when there is no
    /// folder).
    func launchHistoryStore() -> any PersistentStore {
        if let opened = session.launchHistoryStore { return opened }
        let store: any PersistentStore
        if let configured = configuration.launchHistoryStore ?? configuration.store {
            store = configured
        } else {
            do {
                store = try FileStore.forApp()
            } catch {
                logger.error("No folder for LinkRelay's files; the launch history will not survive a restart.")
                store = EphemeralStore()
            }
        }
        session.launchHistoryStore = store
        return store
    }

    /// One importer per provider, the first named winning.
    private static func importers(_ all: [any PreviousSDKImporter]) -> [any PreviousSDKImporter] {
        var seen = Set<BackendID>()
        return all.filter { seen.insert($0.provider).inserted }
    }

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
                firstLaunch.record = record
                store().save(record, forKey: InstallRecord.key, logger: logger)
            }
        }
        let storage = BackendStorage(store: store(), logger: logger)
        for (key, value) in found.backendValues.sorted(by: { $0.key < $1.key })
        where storage.value(String.self, forKey: key) == nil {
            storage.set(value, forKey: key)
        }
        ensureQueueLoaded()
        for event in found.queuedEvents where !eventQueue.ids.contains(event.id) {
            append(event)
        }
    }
}
