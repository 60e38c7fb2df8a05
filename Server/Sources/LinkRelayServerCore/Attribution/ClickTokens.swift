import Foundation
import LinkRelay

/// The pasteboard landing page's click tokens: the page copies the link with a token that names
/// its click (`?lr_click=…`), the app reads it on its first launch and sends it in the install
/// report, and the install endpoint attributes the install to that click with certainty, once.
package enum ClickTokens {
    /// The query parameter the copied link carries the token in (the SDK's
    /// ``LinkRelay/CertainLink/clickTokenParameter``).
    package static let parameter = CertainLink.clickTokenParameter

    /// A new token: 32 characters of `A–Z a–z 0–9` from the secure generator (190 bits).
    package static func make() -> String {
        APIKeys.randomString(32, alphabet: APIKeys.base62)
    }

    /// Whether `token` can be one this server made: 32 characters of `A–Z a–z 0–9`. Anything
    /// else is refused before the database is asked.
    package static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 32
            && token.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }
    }

    /// What is stored of a token: its SHA-256, never the token.
    package static func hash(_ token: String) -> String {
        sha256Hex(token)
    }
}

/// A token the landing page handed out, as stored.
package struct ClickTokenRecord: Sendable, Hashable {
    /// SHA-256 of the token (hex).
    package var tokenHash: String
    package var projectID: String
    package var linkID: String
    package var clickID: String
    package var clickedAt: Date
    /// The end of the link's attribution window after the click: the token is refused after it.
    package var expiresAt: Date

    /// A token's record; see each property.
    package init(tokenHash: String, projectID: String, linkID: String, clickID: String, clickedAt: Date, expiresAt: Date) {
        self.tokenHash = tokenHash
        self.projectID = projectID
        self.linkID = linkID
        self.clickID = clickID
        self.clickedAt = clickedAt.storedPrecision
        self.expiresAt = expiresAt.storedPrecision
    }
}

/// What using a token found.
package enum ClickTokenUse: Sendable, Hashable {
    /// Taken for the install: its click.
    case accepted(linkID: String, clickID: String, clickedAt: Date)
    /// Another install used it already: `installID`'s, of the click `clickID` of `linkID`;
    /// `expired` when the link's attribution window has passed since.
    case used(linkID: String, clickID: String, clickedAt: Date, installID: String, expired: Bool)
    /// Its link's attribution window has passed.
    case expired
    /// Not a token of this project (or not one at all).
    case unknown

    /// How the install answer names it (`clickToken`): `accepted`, `used`, `expired`, `unknown`.
    package var status: String {
        switch self {
        case .accepted: "accepted"
        case .used: "used"
        case .expired: "expired"
        case .unknown: "unknown"
        }
    }
}
