import Foundation

/// The pasteboard, as the client asks it on an install's first launch
/// (``DeepLinkClient/Configuration/pasteboardCheck``): a small protocol so the logic is the same
/// on every platform and tested without a device. `SystemPasteboard` is UIKit's on iOS;
/// `InMemoryPasteboard` (LinkRelayTesting) is a scriptable one for tests.
public protocol LinkPasteboard: Sendable {
    /// Whether the pasteboard probably holds a web URL, asked without reading it: on iOS
    /// `detectPatterns(for: [.probableWebURL])`, which shows no alert. The client reads only
    /// when this says yes.
    func probablyHoldsWebURL() async -> Bool

    /// The link the pasteboard holds, read (on iOS 16 and later this shows the "Allow Paste"
    /// alert, unless the app has the user's permission), with the pasteboard's change count at
    /// the read; `nil` when it holds no URL or the user did not allow the paste.
    func readLink() async -> PastedLink?

    /// Empties the pasteboard if it has not changed since the read that saw `changeCount`, so
    /// that only the link the client took is removed, never what the user copied since.
    func clear(ifUnchangedSince changeCount: Int) async
}

/// What ``LinkPasteboard/readLink()`` found.
public struct PastedLink: Sendable, Hashable {
    /// The URL on the pasteboard.
    public var url: URL
    /// The pasteboard's change count when it was read (`UIPasteboard.changeCount`).
    public var changeCount: Int

    /// A URL read at `changeCount`.
    public init(url: URL, changeCount: Int) {
        self.url = url
        self.changeCount = changeCount
    }
}

/// Reading the tapped link from the pasteboard on the first launch of an install
/// (``DeepLinkClient/Configuration/pasteboardCheck``), as Branch's NativeLink and Adjust's
/// LinkMe do, for the landing pages that copy the link when the user taps their button.
///
/// On the first launch of an install only (never on a later launch, never after
/// ``DeepLinkClient/clearData()``), and only when no link opened the app and deferred deep
/// links are on, the client asks the
/// pasteboard silently whether it holds a web URL, reads it only then (iOS shows the "Allow
/// Paste" alert), accepts it only when it is one of the backend's links, and clears the
/// pasteboard only if it still holds that link. The install outcome waits for the read at most
/// ``timeout``; a link read later is still delivered once if no other deferred link was.
public struct PasteboardCheck: Sendable {
    /// The pasteboard asked.
    public var pasteboard: any LinkPasteboard
    /// How long, in seconds on the client's clock, the install outcome waits for the
    /// pasteboard, the user's answer to the "Allow Paste" alert included. `0` does not wait
    /// (a link read later is delivered as a late paste); `.infinity` waits as long as the user
    /// takes; NaN and negative values count as `0`. Default 5 s.
    public var timeout: TimeInterval

    /// A check of `pasteboard`, waiting at most `timeout` seconds.
    public init(pasteboard: any LinkPasteboard, timeout: TimeInterval = 5) {
        self.pasteboard = pasteboard
        self.timeout = timeout
    }

    /// The values the client runs with: ``timeout`` made one it can wait for.
    func clamped() -> PasteboardCheck {
        PasteboardCheck(pasteboard: pasteboard, timeout: timeout.clampedDuration)
    }
}
