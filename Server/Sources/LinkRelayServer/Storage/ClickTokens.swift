import Foundation
import LinkRelay
import LinkRelayServerCore

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
        token.utf8.count == 32 && token.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }
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

/// A project's pasteboard landing page: whether its links show it to an iPhone without the app
/// (a link may say otherwise), and the app's name and icon the page shows.
package struct LandingPageSettings: Sendable, Hashable, Codable {
    /// Whether links of the project show the page unless they say otherwise. Default off.
    package var enabled: Bool
    /// The app's name on the page (`Get Acme Shop`); the link's title alone when `nil`.
    package var appName: String?
    /// An `https` URL of the app's icon; no icon when `nil`.
    package var appIconURL: String?

    /// Settings; see each property.
    package init(enabled: Bool = false, appName: String? = nil, appIconURL: String? = nil) {
        self.enabled = enabled
        self.appName = appName
        self.appIconURL = appIconURL
    }
}

extension SQLStore {
    package func landingPage(project: String) async throws -> LandingPageSettings {
        let kept = try await landingPages.value(project) {
            guard let row = try await engine.select("SELECT landing_page, app_name, app_icon_url FROM projects WHERE id = \(project)").first
            else { return nil }
            return LandingPageSettings(enabled: try row["landing_page"], appName: try row["app_name"], appIconURL: try row["app_icon_url"])
        }
        return kept ?? LandingPageSettings()
    }

    package func setLandingPage(project: String, _ settings: LandingPageSettings) async throws {
        landingPages.forget(project)
        defer { landingPages.forget(project) }
        try await engine.run(
            """
            UPDATE projects SET landing_page = \(settings.enabled), app_name = \(settings.appName), app_icon_url = \(settings.appIconURL)
            WHERE id = \(project)
            """)
        await engine.announce(CacheChange.landingPage(project: project))
    }

    package func insertClickToken(_ token: ClickTokenRecord) async throws {
        try await engine.run(
            """
            INSERT INTO click_tokens (token_hash, project_id, link_id, click_id, clicked_at, expires_at)
            VALUES (\(token.tokenHash), \(token.projectID), \(token.linkID), \(token.clickID), \(token.clickedAt), \(token.expiresAt))
            """)
    }

    package func useClickToken(hash: String, project: String, installID: String, at now: Date) async throws -> ClickTokenUse {
        // One statement takes it: of two installs at once with the same token, one gets it.
        if let row = try await engine.run(
            """
            UPDATE click_tokens SET used_at = \(now), install_id = \(installID)
            WHERE token_hash = \(hash) AND project_id = \(project) AND used_at IS NULL AND expires_at > \(now)
            RETURNING link_id, click_id, clicked_at
            """
        ).first {
            let clickID: String = try row["click_id"]
            let clickedAt: Date = try row["clicked_at"]
            // The click is this install's: no other install's fingerprint takes it from now on.
            try await engine.run("UPDATE clicks SET claimed = 1 WHERE id = \(clickID) AND clicked_at = \(clickedAt)")
            return .accepted(linkID: try row["link_id"], clickID: clickID, clickedAt: clickedAt)
        }
        guard let row = try await engine.select(
            "SELECT used_at, expires_at, install_id, link_id, click_id, clicked_at FROM click_tokens WHERE token_hash = \(hash) AND project_id = \(project)"
        ).first else { return .unknown }
        let usedAt: Date? = try row["used_at"]
        let usedBy: String? = try row["install_id"]
        guard usedAt != nil, let usedBy else { return .expired }
        let expiresAt: Date = try row["expires_at"]
        return .used(
            linkID: try row["link_id"], clickID: try row["click_id"], clickedAt: try row["clicked_at"], installID: usedBy,
            expired: expiresAt <= now)
    }

    package func releaseClickToken(hash: String, installID: String) async throws {
        guard let row = try await engine.run(
            """
            UPDATE click_tokens SET used_at = NULL, install_id = NULL WHERE token_hash = \(hash) AND install_id = \(installID)
            RETURNING click_id, clicked_at
            """
        ).first else { return }
        let clickID: String = try row["click_id"]
        let clickedAt: Date = try row["clicked_at"]
        try await engine.run("UPDATE clicks SET claimed = 0 WHERE id = \(clickID) AND clicked_at = \(clickedAt)")
    }

    package func deleteClickTokens(expiredBefore cutoff: Date) async throws -> Int {
        try await engine.run("DELETE FROM click_tokens WHERE expires_at < \(cutoff) RETURNING token_hash").count
    }
}
