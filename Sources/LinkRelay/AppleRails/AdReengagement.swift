import Foundation

/// iOS 18's AdAttributionKit re-engagement: an ad opened the installed app through one of its
/// universal links, and the system added ``DeepLinkClient/Configuration/adReengagementParameter``
/// (`Postback.reengagementOpenURLParameter`) to the link's query.
enum AdReengagement {
    /// The system's parameter name where AdAttributionKit has re-engagement (iOS 18 and later,
    /// not Mac Catalyst); `nil` elsewhere.
    static let platformParameter: String? = {
        #if canImport(AdAttributionKit) && os(iOS) && !targetEnvironment(macCatalyst)
            return SystemAdReengagement.parameter
        #else
            return nil
        #endif
    }()

    /// `url` without every `parameter` item in its query (the query dropped when nothing is
    /// left), and whether it had one. Any other item, and its encoding, is kept as it was.
    static func strip(_ parameter: String?, from url: URL) -> (url: URL, found: Bool) {
        guard let parameter, !parameter.isEmpty,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let items = components.percentEncodedQueryItems
        else { return (url, false) }
        let kept = items.filter { $0.name.removingPercentEncoding != parameter }
        guard kept.count < items.count else { return (url, false) }
        components.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        return (components.url ?? url, true)
    }
}
