import Foundation
import LinkRelay
import LinkRelayServerCore

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
        guard
            let row = try await engine.select(
                "SELECT used_at, expires_at, install_id, link_id, click_id, clicked_at FROM click_tokens WHERE token_hash = \(hash) AND project_id = \(project)"
            ).first
        else { return .unknown }
        let usedAt: Date? = try row["used_at"]
        let usedBy: String? = try row["install_id"]
        guard usedAt != nil, let usedBy else { return .expired }
        let expiresAt: Date = try row["expires_at"]
        return .used(
            linkID: try row["link_id"], clickID: try row["click_id"], clickedAt: try row["clicked_at"], installID: usedBy,
            expired: expiresAt <= now)
    }

    package func releaseClickToken(hash: String, installID: String) async throws {
        guard
            let row = try await engine.run(
                """
                UPDATE click_tokens SET used_at = NULL, install_id = NULL WHERE token_hash = \(hash) AND install_id = \(installID)
                RETURNING click_id, clicked_at
                """
            ).first
        else { return }
        let clickID: String = try row["click_id"]
        let clickedAt: Date = try row["clicked_at"]
        try await engine.run("UPDATE clicks SET claimed = 0 WHERE id = \(clickID) AND clicked_at = \(clickedAt)")
    }

    package func deleteClickTokens(expiredBefore cutoff: Date) async throws -> Int {
        try await engine.run("DELETE FROM click_tokens WHERE expires_at < \(cutoff) RETURNING token_hash").count
    }
}
