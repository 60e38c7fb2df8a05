import Foundation

/// What the client hands backends: the store, the launch-history store, the transport and the
/// device (each opened or collected on first need and kept), the signed-in user and the
/// session's campaign, and the one place a ``BackendContext`` is made from them.
struct BackendSession: Sendable {
    private let configuration: DeepLinkClient.Configuration
    private let backendID: BackendID
    private let logger: LinkRelayLogger

    private var openedStore: (any PersistentStore)?
    private var openedLaunchHistoryStore: (any PersistentStore)?
    private var createdTransport: URLSessionTransport?
    /// The device, once collected.
    private(set) var device: DeviceInfo?
    /// The app's id for the signed-in user (``DeepLinkClient/setExternalUserID(_:)``).
    var externalUserID: String?
    /// The campaign of the link that opened the session.
    var sessionAttribution: Campaign?
    /// Whether a rejected API key was reported (once per client; a clear keeps it).
    var credentialsRejectionReported = false

    /// A session for a client of `backendID` configured so, logging to `logger`.
    init(configuration: DeepLinkClient.Configuration, backendID: BackendID, logger: LinkRelayLogger) {
        self.configuration = configuration
        self.backendID = backendID
        self.logger = logger
    }

    /// The store: the configured one, else the backend's folder; when there is no folder,
    /// values are kept in memory for this run, with an error log line. Opened once.
    mutating func store() -> any PersistentStore {
        if let openedStore { return openedStore }
        let backendID = self.backendID
        let store = open(configuration.store, else: { try FileStore.forBackend(backendID) }, lost: "nothing will survive a restart")
        openedStore = store
        return store
    }

    /// The store of the launch history: ``DeepLinkClient/Configuration/launchHistoryStore``,
    /// else the configured store, else LinkRelay's own folder (in memory for this run when there
    /// is no folder). Opened once.
    mutating func launchHistoryStore() -> any PersistentStore {
        if let openedLaunchHistoryStore { return openedLaunchHistoryStore }
        let store = open(
            configuration.launchHistoryStore ?? configuration.store, else: FileStore.forApp,
            lost: "the launch history will not survive a restart")
        openedLaunchHistoryStore = store
        return store
    }

    /// The configured transport (else one `URLSessionTransport`, made once), behind a
    /// ``LoggingTransport`` when the log takes debug lines.
    mutating func transport() -> any HTTPTransport {
        let base: any HTTPTransport
        if let transport = configuration.transport {
            base = transport
        } else if let createdTransport {
            base = createdTransport
        } else {
            let created = URLSessionTransport()
            createdTransport = created
            base = created
        }
        guard logger.sink.accepts(.debug) else { return base }
        return LoggingTransport(base: base, logger: logger, clock: configuration.clock)
    }

    /// Keeps `collected` as the device, unless one was kept meanwhile (the first one wins), and
    /// returns the one kept.
    mutating func keep(device collected: DeviceInfo) -> DeviceInfo {
        let device = self.device ?? collected
        self.device = device
        return device
    }

    /// The context for one backend call.
    mutating func context(
        device: DeviceInfo, installID: String?, enqueueEvent: @escaping @Sendable (ConversionEvent) async -> Void
    ) -> BackendContext {
        BackendContext(
            transport: transport(), clock: configuration.clock, logger: logger, device: device,
            storage: BackendStorage(store: store(), logger: logger), installID: installID,
            externalUserID: externalUserID, sessionAttribution: sessionAttribution, enqueueEvent: enqueueEvent)
    }

    /// Forgets the user and the session's campaign (``DeepLinkClient/clearData()``); the stores,
    /// transport and device stay.
    mutating func reset() {
        externalUserID = nil
        sessionAttribution = nil
    }

    /// `configured`, else the folder `folder` makes; when there is no folder, values are kept
    /// in memory for this run, with an error log line saying what is `lost`.
    private func open(
        _ configured: (any PersistentStore)?, else folder: () throws -> FileStore, lost: String
    ) -> any PersistentStore {
        if let configured { return configured }
        do {
            return try folder()
        } catch {
            logger.error("No folder for LinkRelay's files; \(lost).")
            return EphemeralStore()
        }
    }
}
