#if canImport(AppTrackingTransparency)
    import AppTrackingTransparency

    /// App Tracking Transparency's answer: authorized only when the user allowed this app to
    /// track them. LinkRelay never asks the user; the app shows the prompt
    /// (`ATTrackingManager.requestTrackingAuthorization`) before `start()`.
    public struct SystemTrackingAuthorization: TrackingAuthorizationSource {
        /// The system's answer.
        public init() {}

        public func isTrackingAuthorized() -> Bool {
            ATTrackingManager.trackingAuthorizationStatus == .authorized
        }
    }
#endif
