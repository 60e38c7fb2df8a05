import Foundation

extension DeepLinkClient {
    /// How a ``DeepLinkClient`` behaves. Every field has a default; set only what you need.
    ///
    /// ```swift
    /// var configuration = DeepLinkClient.Configuration()
    /// configuration.authenticationRequiredPaths = ["wallet", "account/settings"]
    /// configuration.logSink = .standardError(minimumLevel: .debug)
    /// let client = DeepLinkClient(backend: backend, configuration: configuration)
    /// ```
    ///
    /// Durations are seconds on ``clock``. Negative values count as zero.
    public struct Configuration: Sendable {
        /// How long a link may wait for the provider. After it, the locally parsed link is
        /// delivered with ``DeepLink/LocalReason/timedOut``. Default 3 s.
        public var resolutionTimeout: TimeInterval = 3

        /// The same URL handed over again within this window is one link. Default 2 s.
        public var duplicateWindow: TimeInterval = 2

        /// Paths that need a signed-in user: an entry matches a link whose first path segment,
        /// or whose whole path, equals it (`"wallet"` gates `/wallet/cards`; `"account/settings"`
        /// gates exactly that path). Leading and trailing `/` are ignored. Links with
        /// `auth=required` are gated too. Default: none.
        public var authenticationRequiredPaths: Set<String> = []

        /// How long a gated link waits for ``DeepLinkClient/completePendingLink()`` before it
        /// expires. Default 300 s.
        public var pendingLinkTimeout: TimeInterval = 300

        /// Schemes a resolved ``DeepLink/destination`` may have, besides the backend's own
        /// ``DeepLinkBackend/appSchemes``. `javascript`, `vbscript`, `file` and `data` are never
        /// allowed. Default: `https`.
        public var allowedDestinationSchemes: Set<String> = ["https"]

        /// How many events are held while nobody listens; past it the oldest is dropped with a
        /// log line. Default 32.
        public var undeliveredEventLimit: Int = 32

        /// Where log lines go. Default: nowhere.
        public var logSink: LogSink = .silent

        /// The HTTP transport backends send through. `nil` (the default) means a
        /// ``URLSessionTransport``, created on first use.
        public var transport: (any HTTPTransport)?

        /// The clock every deadline runs on. Default: ``SystemClock``.
        public var clock: any LinkRelayClock = SystemClock()

        public init() {}
    }
}
