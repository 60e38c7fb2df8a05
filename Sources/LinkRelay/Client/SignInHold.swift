import Foundation

/// The link held for sign-in, and the timer that expires it.
///
/// Each hold has its own generation, so the timer of a link already released or replaced
/// cannot expire the next one.
struct SignInHold: Sendable {
    private(set) var link: DeepLink?
    private var expiry: Task<Void, Never>?
    private(set) var generation: UInt64 = 0

    /// Holds `link` with the timer `expiry` makes for the new generation; returns the link it
    /// replaces.
    mutating func hold(_ link: DeepLink, expiry makeExpiry: (UInt64) -> Task<Void, Never>) -> DeepLink? {
        let replaced = take()
        generation &+= 1
        self.link = link
        expiry = makeExpiry(generation)
        return replaced
    }

    /// Releases the held link, if any, and stops its timer.
    mutating func take() -> DeepLink? {
        expiry?.cancel()
        expiry = nil
        defer { link = nil }
        return link
    }
}
