import Foundation

/// Recognises the same URL handed over twice within a window (the AppDelegate and the
/// SceneDelegate both forwarding the launch URL), measured on the client's clock.
///
/// The window runs from the first occurrence: a third hand-over inside it is also a duplicate,
/// and the first one after it is a new link.
struct DuplicateFilter: Sendable {
    let window: TimeInterval
    private var firstSeen: [String: TimeInterval] = [:]

    init(window: TimeInterval) {
        self.window = max(window, 0)
    }

    /// True when `url` at `time` is new; false for a duplicate.
    mutating func admit(_ url: URL, at time: TimeInterval) -> Bool {
        let key = url.absoluteString
        if let seen = firstSeen[key], abs(time - seen) < window { return false }
        if firstSeen.count > 64 { firstSeen = firstSeen.filter { abs(time - $0.value) < window } }
        firstSeen[key] = time
        return true
    }
}
