#if canImport(AdServices) && os(iOS)
    import AdServices

    /// AdServices' `AAAttribution.attributionToken()` as an ``AppleAdsTokenSource``. The call
    /// blocks its thread, so it runs on a queue of LinkRelay's own, never on Swift's
    /// cooperative pool; the client waits for it at most ``AppleAdsAttribution/timeout``.
    /// This only translates.
    public struct SystemAppleAdsTokenSource: AppleAdsTokenSource {
        /// The system's token.
        public init() {}

        public func attributionToken() async throws -> String {
            try await BlockingCall.run { try AAAttribution.attributionToken() }
        }
    }

    extension AppleAdsAttribution {
        /// The system's token, waited for at most 0.5 s: the default on iOS.
        public static let system = AppleAdsAttribution(source: SystemAppleAdsTokenSource())
    }
#endif
