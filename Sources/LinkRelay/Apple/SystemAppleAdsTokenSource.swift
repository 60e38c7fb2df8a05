#if canImport(AdServices) && os(iOS)
    import AdServices

    /// AdServices' `AAAttribution.attributionToken()` as an ``AppleAdsTokenSource``. The call
    /// blocks its thread (the client runs it on a detached task and waits at most
    /// ``AppleAdsAttribution/timeout``). This only translates.
    public struct SystemAppleAdsTokenSource: AppleAdsTokenSource {
        /// The system's token.
        public init() {}

        public func attributionToken() async throws -> String {
            try AAAttribution.attributionToken()
        }
    }

    extension AppleAdsAttribution {
        /// The system's token, waited for at most 0.5 s: the default on iOS.
        public static let system = AppleAdsAttribution(source: SystemAppleAdsTokenSource())
    }
#endif
