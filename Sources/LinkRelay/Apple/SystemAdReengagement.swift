#if canImport(AdAttributionKit) && os(iOS) && !targetEnvironment(macCatalyst)
    import AdAttributionKit

    /// The name AdAttributionKit gives the query parameter of a re-engagement's universal link.
    enum SystemAdReengagement {
        /// `Postback.reengagementOpenURLParameter` on iOS 18 and later; `nil` before.
        static let parameter: String? = {
            if #available(iOS 18.0, *) { return Postback.reengagementOpenURLParameter }
            return nil
        }()
    }
#endif
