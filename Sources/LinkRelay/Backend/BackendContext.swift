import Foundation

/// What the client hands a backend with every call: the things an adapter must use and must not
/// build itself.
public struct BackendContext: Sendable {
    /// The HTTP transport to send every request through.
    public var transport: any HTTPTransport
    /// The client's clock, for timestamps and anything timed.
    public var clock: any LinkRelayClock
    /// The client's logger, already redacting this backend's secrets.
    public var logger: LinkRelayLogger
    /// The device's information, for fingerprints. With ``fingerprintWithheld`` only what any
    /// request names (the platform, the OS and app versions, the time zone for timestamps): no
    /// screen, languages, model, region or identifiers.
    public var device: DeviceInfo
    /// `true` when the app withholds the device's fingerprint
    /// (``DeepLinkClient/Configuration/fingerprinting``: the user has not allowed tracking): an
    /// adapter then sends no signal a fingerprint match uses (LinkForty: no `fp_*` query, no
    /// `timezone` or `language` in the install body, and `"fingerprint": false`), and the
    /// client asks for no install match by fingerprint.
    public var fingerprintWithheld = false
    /// The backend's values that survive restarts.
    @_spi(Backend) public var storage: BackendStorage
    /// The provider's id for this install, once an install match returned one.
    public var installID: String?
    /// The app's id for the signed-in user, if it set one.
    public var externalUserID: String?
    /// The campaign of the link that opened the current session, for providers that stamp
    /// events with it.
    public var sessionAttribution: Campaign?
    /// Puts an event of the backend's own (a provider's lifecycle analytics) into the client's
    /// persisted event queue: it is sent through ``EventTrackingBackend/send(_:context:)`` like
    /// any tracked event, once `start()` has run, and survives outages and restarts.
    public var enqueueEvent: @Sendable (ConversionEvent) async -> Void
    /// On the install report of an install whose deferred link is certain (the pasteboard, the
    /// App Clip; see ``CertainLink``): that link, for a backend whose protocol has a place for
    /// it (LinkForty's install body takes its ``CertainLink/clickToken``). `nil` on every other
    /// call. The client asks ``DeepLinkBackend/matchInstall(context:)`` with it only for a
    /// backend that ``DeepLinkBackend/needsInstallReport``; the link delivered is the certain
    /// one whatever the answer.
    public var certainLink: CertainLink?
    /// On the install report of a backend with ``BackendCapabilities/appleAdsToken``: the Apple
    /// Ads attribution token, when the system gave one in time
    /// (``DeepLinkClient/Configuration/appleAds``). `nil` on every other call. Never log it.
    public var appleAdsToken: String?

    /// A context; the client makes one for every backend call, tests make their own.
    public init(
        transport: any HTTPTransport,
        clock: any LinkRelayClock = SystemClock(),
        logger: LinkRelayLogger = .silent,
        device: DeviceInfo = .unknown,
        installID: String? = nil,
        externalUserID: String? = nil,
        sessionAttribution: Campaign? = nil,
        enqueueEvent: @escaping @Sendable (ConversionEvent) async -> Void = { _ in }
    ) {
        self.init(
            transport: transport, clock: clock, logger: logger, device: device,
            storage: BackendStorage(store: EphemeralStore(), logger: logger),
            installID: installID, externalUserID: externalUserID, sessionAttribution: sessionAttribution, enqueueEvent: enqueueEvent)
    }

    /// A context whose backend values are kept in `storage` (the public initializer keeps them in
    /// memory).
    @_spi(Backend) public init(
        transport: any HTTPTransport,
        clock: any LinkRelayClock = SystemClock(),
        logger: LinkRelayLogger = .silent,
        device: DeviceInfo = .unknown,
        storage: BackendStorage,
        installID: String? = nil,
        externalUserID: String? = nil,
        sessionAttribution: Campaign? = nil,
        enqueueEvent: @escaping @Sendable (ConversionEvent) async -> Void = { _ in }
    ) {
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.device = device
        self.storage = storage
        self.installID = installID
        self.externalUserID = externalUserID
        self.sessionAttribution = sessionAttribution
        self.enqueueEvent = enqueueEvent
    }
}

extension DeviceInfo {
    /// A device nothing is known about.
    public static let unknown = DeviceInfo(
        osName: SystemDeviceInfo.osName, osVersion: "0.0.0", timeZoneIdentifier: "UTC", preferredLanguages: [])
}
