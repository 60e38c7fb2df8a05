import Foundation

/// A link that reached a new install with certainty, not by a fingerprint guess: the link the
/// user tapped before installing, carried to the app's first launch by the pasteboard (with the
/// user's consent) or by the App Clip the app replaced.
///
/// The client delivers it once per install as the deferred link
/// (``DeepLink/origin`` `.deferred`), with ``InstallAttribution/method`` ``InstallAttribution/Method/pasteboard`` or
/// ``InstallAttribution/Method/appClip`` and a confidence of 100, and then asks no fingerprint
/// match. See <doc:CertainDeferredLinks>.
public struct CertainLink: Sendable, Hashable, Codable {
    /// How the link reached the app.
    public enum Source: String, Sendable, Hashable, Codable {
        /// The pasteboard: a landing page copied the link when the user tapped its button, and
        /// the app read it on its first launch or the user pasted it.
        case pasteboard
        /// The App Clip the app replaced left its invocation URL in the shared App Group.
        case appClip
    }

    /// The query parameter that carries a click token on a pasted link
    /// (`https://go.acme.app/spring?lr_click=…`): LinkRelay Server's landing page adds it so
    /// the install can name the very click. The client takes it off the link before resolving
    /// and delivering it, and hands it to the backend's install report
    /// (``BackendContext/certainLink``) as ``clickToken``.
    public static let clickTokenParameter = "lr_click"

    /// The link, without ``clickTokenParameter``.
    public var url: URL
    /// How it reached the app.
    public var source: Source
    /// The click token the pasted link carried, if any (``clickTokenParameter``).
    public var clickToken: String?

    /// A link from `source`. A ``clickTokenParameter`` in `url`'s query is taken off into
    /// ``clickToken``.
    public init(url: URL, source: Source) {
        let (link, token) = Self.splitClickToken(url)
        self.url = link
        self.source = source
        self.clickToken = token
    }

    /// `url` without the click token's query item, and the token (the last non-empty one).
    static func splitClickToken(_ url: URL) -> (URL, String?) {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let items = components.queryItems, items.contains(where: { $0.name == clickTokenParameter })
        else { return (url, nil) }
        let token = items.last { $0.name == clickTokenParameter && !($0.value ?? "").isEmpty }?.value
        let kept = items.filter { $0.name != clickTokenParameter }
        components.queryItems = kept.isEmpty ? nil : kept
        return (components.url ?? url, token)
    }

    /// The link a pasted text names: the text trimmed of spaces and new lines, when it is one
    /// `http` or `https` URL with a host; `nil` otherwise (a sentence around a link, several
    /// links, anything else).
    public static func pastedURL(_ text: String) -> URL? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 4096, !trimmed.contains(where: \.isWhitespace),
            let url = URL(string: trimmed), isWebLink(url)
        else { return nil }
        return url
    }

    /// Whether `url` is an `http` or `https` URL with a host.
    static func isWebLink(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http" else { return false }
        return !(url.host ?? "").isEmpty
    }
}

/// Which of an install's certain sources were looked at, under the store key `certain-links`
/// beside the launch history. ``DeepLinkClient/clearData()`` keeps it: the pasteboard is read,
/// and the App Group's link taken, once per install of the app, never again after the user
/// asked for their data to be erased. A new install starts without it (the app's container is
/// new).
struct CertainLinkChecks: Sendable, Hashable, Codable {
    static let key = "certain-links"
    /// The pasteboard was asked on this install (whatever it held).
    var pasteboardRead = false
    /// The App Group's hand-off was looked at on this install.
    var appClipChecked = false
}
