import Foundation

extension DeepLinkClient {
    /// How a ``DeepLinkClient`` behaves. Every field has a default; set only what you need.
    ///
    /// ```swift
    /// var configuration = DeepLinkClient.Configuration()
    /// configuration.authenticationRequiredPaths = ["wallet", "account/settings"]
    /// configuration.enableDebugLogging()
    /// let client = DeepLinkClient(backend: backend, configuration: configuration)
    /// ```
    ///
    /// Durations are seconds on ``clock``, and every value is accepted: negative values and
    /// NaN count as zero, and `.infinity` (or any very large value) means no limit. Counts
    /// below their minimum count as the minimum. ``DeepLinkClient/configuration`` shows the
    /// values in effect.
    public struct Configuration: Sendable {
        /// How long a link may wait for the provider, counted from the moment
        /// ``DeepLinkClient/handle(_:)`` received it. After it, the locally parsed link is
        /// delivered with ``DeepLink/LocalReason/timedOut``. `0` delivers every link parsed on
        /// the device without waiting; `.infinity` waits for the provider however long it takes.
        /// Default 3 s.
        public var resolutionTimeout: TimeInterval = 3

        /// How many links are resolved with the provider at once (at least 1, at most 64).
        /// Links are still delivered in the order they were handed over. Default 4.
        public var maximumConcurrentResolutions = 4

        /// The same URL handed over again within this window is one link. Default 2 s.
        public var duplicateWindow: TimeInterval = 2

        /// Paths that need a signed-in user: an entry matches a link whose first path segment,
        /// or whose whole path, equals it (`"wallet"` gates `/wallet/cards`; `"account/settings"`
        /// gates exactly that path), checked on the link's path and on the path of a destination
        /// with one of the backend's app schemes. Leading and trailing `/` are ignored. Links with
        /// `auth=required` are gated too. Default: none.
        public var authenticationRequiredPaths: Set<String> = []

        /// Decides, besides ``authenticationRequiredPaths`` and `auth=required`, whether a link
        /// needs a signed-in user. Set it to your router's rule to declare gated screens where
        /// you declare routes:
        ///
        /// ```swift
        /// configuration.authenticationRule = { router.requiresAuthentication($0) }
        /// ```
        ///
        /// It runs on the client's actor for every link: keep it fast and free of side effects.
        /// Default: none.
        public var authenticationRule: (@Sendable (DeepLink) -> Bool)?

        /// How long a gated link waits for ``DeepLinkClient/completePendingLink()`` before it
        /// expires. Default 300 s.
        public var pendingLinkTimeout: TimeInterval = 300

        /// Schemes a resolved ``DeepLink/destination`` may have, besides the backend's own
        /// ``DeepLinkBackend/appSchemes``. `javascript`, `vbscript`, `file` and `data` are never
        /// allowed. Default: `https`.
        public var allowedDestinationSchemes: Set<String> = ["https"]

        /// How many events are held while nobody listens (at least 0); past it the oldest is
        /// dropped with a log line. Default 32.
        public var undeliveredEventLimit: Int = 32

        /// How many links may wait to be processed, and how many events may wait in one
        /// subscriber's stream while it is busy; past it the oldest is dropped with a warning.
        /// It keeps memory bounded when links arrive faster than they are taken, which no user
        /// can do by tapping. At least 1. Default 1,000.
        public var linkBufferLimit: Int = 1000

        /// Where log lines go. Default: the platform's log at `.warning`
        /// (``LogSink/platform(minimumLevel:)``: unified logging on Apple platforms, standard
        /// error elsewhere), so a misconfiguration shows. ``LogSink/silent`` turns it off;
        /// ``enableDebugLogging()`` shows everything.
        public var logSink: LogSink = .platform()

        /// Shows every log line, debug included, in the platform's log: the one-line switch
        /// while you integrate. Equivalent to `logSink = .platform(minimumLevel: .debug)`.
        ///
        /// At debug level the log shows the conversation with the provider, one line per request
        /// (`GET go.acme.app/api/sdk/v1/resolve/spring?… → 200 in 84 ms, 278 bytes`, or
        /// `→ failed (network) after 10012 ms`; query values, headers and bodies are not
        /// printed), and each decision with its reason: a duplicate dropped, a link parsed on the
        /// device and why, a deadline passed, each link delivered or held for sign-in, the
        /// deferred link delivered or withheld. API keys never appear: every line is redacted.
        public mutating func enableDebugLogging() {
            logSink = .platform(minimumLevel: .debug)
        }

        /// The HTTP transport backends send through. `nil` (the default) means a
        /// ``URLSessionTransport``, created on first use.
        public var transport: (any HTTPTransport)?

        /// The clock every deadline runs on. Default: ``SystemClock``.
        public var clock: any LinkRelayClock = SystemClock()

        // MARK: First launch

        /// How long ``DeepLinkClient/start()`` waits for the install match. After it the outcome
        /// is ``InstallOutcome/timedOut``; a later answer is still delivered, marked
        /// ``InstallAttribution/isLate``. Default 10 s.
        public var installMatchTimeout: TimeInterval = 10

        /// Whether a matched install's link is delivered as a deferred ``DeepLinkEvent/link(_:)``.
        /// When `false` the match is still made and reported in the outcome. Default `true`.
        public var deferredDeepLinksEnabled = true

        /// A match whose confidence score is below this is reported in the outcome but not
        /// delivered as a link. A match without a score counts as sure. Default 0.
        public var minimumDeferredConfidence = 0

        /// Reading the link the user tapped before installing from the pasteboard, on the first
        /// launch of an install (``PasteboardCheck``; `.system` is UIKit's pasteboard). Off
        /// (`nil`) by default, as Branch's NativeLink and Adjust's LinkMe are: iOS shows the
        /// "Allow Paste" alert when the pasteboard holds a URL. Where no alert is wanted, leave
        /// it off and place `LinkPasteButton` or `LinkPasteControl` on the onboarding screen
        /// (``DeepLinkClient/handlePastedLink(_:)``). See <doc:CertainDeferredLinks>.
        public var pasteboardCheck: PasteboardCheck?

        /// The App Group through which an App Clip hands its invocation URL to the full app
        /// (``AppClipHandoff``): in the Clip the client saves the links it handles, in the app
        /// the first launch delivers the saved one as the deferred link. Default `nil`.
        public var appClipHandoff: AppClipHandoff?

        /// The Apple Ads attribution token in the install report, for a backend that takes it
        /// (``BackendCapabilities/appleAdsToken``): asked once per install as soon as the first
        /// launch is known, the report waiting for it 2 s by default, a late one added to the
        /// install afterwards where the backend can take it. Default: the system's token
        /// (`.system`) on iOS; `nil` (none) elsewhere and to turn it off. See
        /// ``AppleAdsAttribution``.
        public var appleAds: AppleAdsAttribution? = AppleAdsAttribution.platformDefault

        /// When the device's signals for a fingerprint match are sent: ``FingerprintPolicy/always``
        /// (the default), or ``FingerprintPolicy/whenTrackingAuthorized`` (only while the user
        /// allows tracking; until then no install match by fingerprint is asked for, requests
        /// carry no screen, languages, model or identifiers, and certain links, the Apple Ads
        /// token and conversion values still work). See <doc:AttributingInstalls>.
        public var fingerprinting: FingerprintPolicy = .always

        /// The query parameter with which iOS 18's AdAttributionKit says an ad re-engagement
        /// opened the app (`Postback.reengagementOpenURLParameter`): taken off every link
        /// handed over before it is parsed or resolved, and the link delivered with
        /// ``DeepLink/isAdReengagement``. Default: the system's name on iOS 18 and later,
        /// `nil` elsewhere (nothing is taken off). Tests set it to stand in for the system.
        public var adReengagementParameter: String? = AdReengagement.platformParameter

        /// The app's conversion values (``ConversionValues``): a schema applied on every
        /// tracked event, on every backend, written through AdAttributionKit or SKAdNetwork 4
        /// (`.system(schema:)` on iOS), timed from the first launch. Default `nil`: LinkRelay
        /// writes none.
        public var conversionValues: ConversionValues?

        /// On how many launches the install match is tried before the client gives up (a
        /// failed match is tried again on the next launch). At least 1. Default 3.
        public var maximumInstallMatchLaunches = 3

        /// What the install match does for a user who had the app before the backend first ran
        /// (``AppLaunch/isExistingUser``: an update that switched backends, or an app that
        /// replaced a vendor's SDK). Default ``ExistingUserPolicy/skipInstallMatch``: such a
        /// user did not just install the app, and a match could only find an old click.
        public var existingUsers = ExistingUserPolicy.skipInstallMatch

        /// The SDKs the app used before LinkRelay, besides the backend's own provider's (whose
        /// importer the backend brings): name the previous provider's importer when the app
        /// changes provider as it adopts LinkRelay (`[LinkFortySDKImporter()]`). Each runs once
        /// per device. Default: none.
        public var previousSDKs: [any PreviousSDKImporter] = []

        /// Where the previous SDKs kept their data: the app's own defaults and Application
        /// Support folder (``PreviousSDKStorage/standard``). Tests point it elsewhere.
        public var previousSDKStorage = PreviousSDKStorage.standard

        /// Where the app's launch history is kept (first seen, versions, backends), shared by
        /// every backend so that switching backends is not a new install. `nil` (the default):
        /// ``store`` when one is set, else LinkRelay's own folder (``FileStore/forApp()``).
        public var launchHistoryStore: (any PersistentStore)?

        /// The mark that tells a reinstall from a first install. Default: the Keychain on
        /// Apple platforms (``KeychainInstallMarker``), none elsewhere. The App Store's record
        /// (``appStoreInstall``) is read before it.
        public var installMarker: (any InstallMarker)? = KeychainInstallMarker.platformDefault

        /// The App Store's own record of the app (StoreKit 2's `AppTransaction`), read on the
        /// first launch with no history, before ``installMarker``, to tell a reinstall (and,
        /// with ``AppStoreInstallCheck/firstBuildWithLinkRelay``, an update into LinkRelay)
        /// from a first install; waited for at most 1 s, never by a link. Default `.system` on
        /// iOS (iOS 16 and later have the record); `nil` elsewhere and to turn it off.
        public var appStoreInstall: AppStoreInstallCheck? = AppStoreInstallCheck.platformDefault

        /// Whether the device's protected data can be read (``ProtectedDataAvailability``): the
        /// launch is decided, and the first-launch work runs, only once it can. Default:
        /// `SystemProtectedData` on iOS, tvOS and visionOS; `nil` (always available) elsewhere.
        public var protectedData: (any ProtectedDataAvailability)? = ProtectedDataDefault.platformDefault

        /// The kind of process the client runs in (``ProcessKind``): only the app decides the
        /// install; an App Clip hands its links over, an extension reads the history without
        /// writing it. Default: ``ProcessKind/current``, from the main bundle.
        public var processKind = ProcessKind.current

        /// Which launch of the process this client runs in: clients made in the same process
        /// see the same launch. Tests set a new one to simulate the next launch in one process.
        package var processLaunch = AppLaunch.thisProcess

        // MARK: Requests

        /// How every backend request is retried. Default: 3 attempts, exponential backoff with
        /// jitter, `Retry-After` honoured.
        public var retryPolicy = RetryPolicy()

        /// The deadline for sending one event and for creating a link, retries included.
        /// Default 15 s.
        public var requestTimeout: TimeInterval = 15

        // MARK: Events

        /// How many events wait to be sent (at least 1); when full, the oldest is dropped with a
        /// log line. Default 100.
        public var eventQueueCapacity = 100

        // MARK: Storage and device

        /// Where the client keeps what survives restarts. `nil` (the default) means a
        /// ``FileStore`` for the backend, created on first use.
        public var store: (any PersistentStore)?

        /// What install fingerprints are made of. Default: ``SystemDeviceInfo`` without an
        /// advertising identifier.
        public var deviceInfo: any DeviceInfoProvider = SystemDeviceInfo()

        /// The defaults, as listed on each field.
        public init() {}
    }
}

extension DeepLinkClient.Configuration {
    /// The most links resolved at once that ``maximumConcurrentResolutions`` may ask for.
    static let concurrentResolutionsCeiling = 64

    /// The configuration as the client runs it: every duration made one it can wait for (NaN
    /// and negative as zero), every count raised to its minimum.
    func clamped() -> Self {
        var copy = self
        copy.resolutionTimeout = resolutionTimeout.clampedDuration
        copy.duplicateWindow = duplicateWindow.clampedDuration
        copy.pendingLinkTimeout = pendingLinkTimeout.clampedDuration
        copy.installMatchTimeout = installMatchTimeout.clampedDuration
        copy.requestTimeout = requestTimeout.clampedDuration
        copy.retryPolicy = retryPolicy.clamped()
        copy.maximumConcurrentResolutions = min(max(maximumConcurrentResolutions, 1), Self.concurrentResolutionsCeiling)
        copy.undeliveredEventLimit = max(undeliveredEventLimit, 0)
        copy.linkBufferLimit = max(linkBufferLimit, 1)
        copy.maximumInstallMatchLaunches = max(maximumInstallMatchLaunches, 1)
        copy.eventQueueCapacity = max(eventQueueCapacity, 1)
        copy.pasteboardCheck = pasteboardCheck?.clamped()
        copy.appleAds = appleAds?.clamped()
        copy.appStoreInstall = appStoreInstall?.clamped()
        return copy
    }
}
