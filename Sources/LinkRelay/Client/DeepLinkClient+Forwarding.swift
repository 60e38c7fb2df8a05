import Foundation

/// Something the system hands an app that may carry a link: a URL (`onOpenURL`,
/// `application(_:open:options:)`, a `UIOpenURLContext`) or a user activity (a universal link
/// arrives as `NSUserActivityTypeBrowsingWeb` with a `webpageURL`).
///
/// The SwiftUI and UIKit helpers translate the system's types into these and call
/// ``DeepLinkClient/forward(_:)->Bool``, so every rule about what is a link lives here, in code that is
/// tested on every platform.
public enum IncomingLink: Sendable, Hashable {
    /// The activity type of a universal link: `NSUserActivityTypeBrowsingWeb`.
    public static let browsingWebActivityType = "NSUserActivityTypeBrowsingWeb"

    /// A URL opened in the app.
    case url(URL)
    /// A user activity continued in the app.
    case activity(type: String, webpageURL: URL?)

    /// The link it carries: the URL, or a web-browsing activity's `webpageURL`. Other activities
    /// (Handoff of your own types, Spotlight, Siri) carry none.
    public var link: URL? {
        switch self {
        case .url(let url): url
        case .activity(let type, let webpageURL): type == Self.browsingWebActivityType ? webpageURL : nil
        }
    }
}

extension DeepLinkClient {
    /// Hands over what the system gave the app; returns whether it carried a link this client
    /// claims. `false` means: give it to your next handler.
    @discardableResult
    public nonisolated func forward(_ incoming: IncomingLink) -> Bool {
        guard let url = incoming.link else { return false }
        return handle(url)
    }

    /// Hands over several, in order (a cold start's URL contexts, then its activities), and
    /// returns which were claimed, index for index, so the rest can go to other handlers.
    @discardableResult
    public nonisolated func forward(_ incoming: [IncomingLink]) -> [Bool] {
        incoming.map { forward($0) }
    }
}
