import Foundation
import LinkRelay

/// Templates, apps, links and clicks.
extension SQLStore {
    // MARK: Templates and apps

    public func insertTemplate(_ template: TemplateRecord) async throws {
        try await engine.run(
            """
            INSERT INTO templates (id, project_id, slug, name, ios_app_store_url, android_app_store_url, web_fallback_url, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(template.id), .text(template.projectID), .text(template.slug), .text(template.name), .text(template.iosAppStoreURL),
                .text(template.androidAppStoreURL), .text(template.webFallbackURL), .time(template.createdAt),
            ])
    }

    public func template(project: String, id: String) async throws -> TemplateRecord? {
        try await engine.select(Self.templateColumns + " WHERE project_id = ? AND id = ?", [.text(project), .text(id)]).first.flatMap(Self.template)
    }

    public func template(project: String, slug: String) async throws -> TemplateRecord? {
        try await engine.select(Self.templateColumns + " WHERE project_id = ? AND slug = ?", [.text(project), .text(slug)]).first.flatMap(
            Self.template)
    }

    static let templateColumns =
        "SELECT id, project_id, slug, name, ios_app_store_url, android_app_store_url, web_fallback_url, created_at FROM templates"

    static func template(_ row: SQLRow) -> TemplateRecord? {
        guard let id = row.string("id"), let project = row.string("project_id"), let slug = row.string("slug"),
            let name = row.string("name"), let created = row.date("created_at")
        else { return nil }
        return TemplateRecord(
            id: id, projectID: project, slug: slug, name: name, iosAppStoreURL: row.string("ios_app_store_url"),
            androidAppStoreURL: row.string("android_app_store_url"), webFallbackURL: row.string("web_fallback_url"), createdAt: created)
    }

    public func insertApp(_ app: AppRecord) async throws {
        try await engine.run(
            "INSERT INTO apps (id, project_id, platform, identifier, paths, certificate_fingerprints, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                .text(app.id), .text(app.projectID), .text(app.platform.rawValue), .text(app.identifier), .text(JSONText.encode(app.paths)),
                .text(JSONText.encode(app.certificateFingerprints)), .time(app.createdAt),
            ])
    }

    public func apps() async throws -> [AppRecord] {
        try await engine.select(
            "SELECT id, project_id, platform, identifier, paths, certificate_fingerprints, created_at FROM apps ORDER BY created_at, id"
        ).compactMap { row in
            guard let id = row.string("id"), let project = row.string("project_id"),
                let platform = row.string("platform").flatMap(AppRecord.Platform.init(rawValue:)), let identifier = row.string("identifier"),
                let created = row.date("created_at")
            else { return nil }
            return AppRecord(
                id: id, projectID: project, platform: platform, identifier: identifier,
                paths: JSONText.decode([String].self, row.string("paths")) ?? [],
                certificateFingerprints: JSONText.decode([String].self, row.string("certificate_fingerprints")) ?? [], createdAt: created)
        }
    }

    // MARK: Links

    public func insertLink(_ link: LinkRecord) async throws {
        // Forgotten before and after: a lookup between the two cannot keep "no such code".
        linkCache.forget(link.shortCode)
        defer { linkCache.forget(link.shortCode) }
        try await engine.run(
            """
            INSERT INTO links (id, project_id, template_slug, short_code, original_url, deep_link_path, app_scheme,
                ios_app_store_url, android_app_store_url, web_fallback_url, utm_parameters, deep_link_parameters, targeting_rules,
                attribution_window_hours, is_active, expires_at, created_at, template_id, title, description, ios_universal_link,
                android_app_link, og_title, og_description, og_image_url, append_click_id, external_user_id, dedupe_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(link.id), .text(link.projectID), .text(link.templateSlug), .text(link.shortCode), .text(link.originalURL),
                .text(link.deepLinkPath), .text(link.appScheme), .text(link.iosAppStoreURL), .text(link.androidAppStoreURL),
                .text(link.webFallbackURL), .text(JSONText.encode(link.utmParameters)), .text(JSONText.encode(link.deepLinkParameters)),
                .text(JSONText.encode(link.targetingRules)), .integer(link.attributionWindowHours), .integer(link.isActive ? 1 : 0),
                .time(link.expiresAt), .time(link.createdAt), .text(link.templateID), .text(link.title), .text(link.description),
                .text(link.iosUniversalLink), .text(link.androidAppLink), .text(link.ogTitle), .text(link.ogDescription),
                .text(link.ogImageURL), .integer(link.appendClickID ? 1 : 0), .text(link.externalUserID), .text(link.dedupeKey),
            ])
    }

    public func link(project: String?, shortCode: String, templateSlug: String?) async throws -> LinkRecord? {
        try await linkCache.value(shortCode, "\(project ?? "*")|\(templateSlug ?? "*")") {
            try await readLink(project: project, shortCode: shortCode, templateSlug: templateSlug)
        }
    }

    private func readLink(project: String?, shortCode: String, templateSlug: String?) async throws -> LinkRecord? {
        var sql = Self.linkColumns + " WHERE short_code = ?"
        var binds: [SQLValue] = [.text(shortCode)]
        if let project {
            sql += " AND project_id = ?"
            binds.append(.text(project))
        }
        if let templateSlug {
            sql += " AND template_slug = ?"
            binds.append(.text(templateSlug))
        }
        return try await engine.select(sql + " ORDER BY template_slug, created_at LIMIT 1", binds).first.flatMap(Self.link)
    }

    public func link(project: String, dedupeKey: String) async throws -> LinkRecord? {
        try await engine.select(
            Self.linkColumns + " WHERE project_id = ? AND dedupe_key = ? ORDER BY created_at LIMIT 1", [.text(project), .text(dedupeKey)]
        ).first.flatMap(Self.link)
    }

    public func link(id: String) async throws -> LinkRecord? {
        try await engine.select(Self.linkColumns + " WHERE id = ?", [.text(id)]).first.flatMap(Self.link)
    }

    static let linkColumns = """
        SELECT id, project_id, template_slug, short_code, original_url, deep_link_path, app_scheme, ios_app_store_url,
            android_app_store_url, web_fallback_url, utm_parameters, deep_link_parameters, targeting_rules, attribution_window_hours,
            is_active, expires_at, created_at, template_id, title, description, ios_universal_link, android_app_link, og_title,
            og_description, og_image_url, append_click_id, external_user_id, dedupe_key FROM links
        """

    static func link(_ row: SQLRow) -> LinkRecord? {
        guard let id = row.string("id"), let project = row.string("project_id"), let slug = row.string("template_slug"),
            let code = row.string("short_code"), let original = row.string("original_url"), let created = row.date("created_at")
        else { return nil }
        return LinkRecord(
            id: id, projectID: project, templateSlug: slug, shortCode: code, originalURL: original,
            deepLinkPath: row.string("deep_link_path"), appScheme: row.string("app_scheme"), iosAppStoreURL: row.string("ios_app_store_url"),
            androidAppStoreURL: row.string("android_app_store_url"), webFallbackURL: row.string("web_fallback_url"),
            utmParameters: JSONText.decode([String: String].self, row.string("utm_parameters")) ?? [:],
            deepLinkParameters: JSONText.decode([String: JSONValue].self, row.string("deep_link_parameters")) ?? [:],
            attributionWindowHours: row.int("attribution_window_hours") ?? 168, isActive: row.int("is_active") != 0,
            expiresAt: row.date("expires_at"), createdAt: created, templateID: row.string("template_id"), title: row.string("title"),
            description: row.string("description"), iosUniversalLink: row.string("ios_universal_link"),
            androidAppLink: row.string("android_app_link"),
            targetingRules: JSONText.decode([String: JSONValue].self, row.string("targeting_rules")) ?? [:], ogTitle: row.string("og_title"),
            ogDescription: row.string("og_description"), ogImageURL: row.string("og_image_url"), appendClickID: row.int("append_click_id") == 1,
            externalUserID: row.string("external_user_id"), dedupeKey: row.string("dedupe_key"))
    }

    // MARK: Clicks

    public func recordClick(_ click: ClickRecord) async throws {
        _ = try await writes.submit(.click(click))
    }

    /// Stores many clicks in one transaction (an import, a benchmark's population): up to 1,000
    /// rows per statement.
    public func importClicks(_ clicks: [ClickRecord]) async throws {
        guard !clicks.isEmpty else { return }
        try await engine.transaction { connection in try await Self.insertClicks(clicks, on: connection) }
    }

    /// `clicks` as multi-row `INSERT`s of up to 1,000 rows (13,000 values: under SQLite's and
    /// PostgreSQL's limits), on `connection`, in its transaction.
    static func insertClicks(_ clicks: [ClickRecord], on connection: any SQLConnection) async throws {
        var start = 0
        while start < clicks.count {
            let chunk = clicks[start..<min(start + 1000, clicks.count)]
            let rows = Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
            var binds: [SQLValue] = []
            binds.reserveCapacity(chunk.count * 13)
            for click in chunk { binds += values(click) }
            try await connection.run(
                """
                INSERT INTO clicks (id, link_id, project_id, clicked_at, ip, network_prefix, user_agent, timezone, language,
                    screen_width, screen_height, platform, is_bot) VALUES \(rows)
                """, binds)
            start += chunk.count
        }
    }

    static func values(_ click: ClickRecord) -> [SQLValue] {
        [
            .text(click.id), .text(click.linkID), .text(click.projectID), .time(click.clickedAt), .text(click.ip), .text(click.networkPrefix),
            .text(click.userAgent), .text(click.timezone), .text(click.language), .integer(click.screenWidth), .integer(click.screenHeight),
            .text(click.platform), .integer(click.isBot ? 1 : 0),
        ]
    }

    public func clicks(link: String) async throws -> [ClickRecord] {
        try await engine.select(Self.clickColumns + " WHERE link_id = ? ORDER BY clicked_at, id", [.text(link)]).compactMap(Self.click)
    }

    public func deleteClicks(before date: Date, limit: Int) async throws -> Int {
        try await engine.run(
            "DELETE FROM clicks WHERE id IN (SELECT id FROM clicks WHERE clicked_at < ? ORDER BY clicked_at LIMIT ?) RETURNING id",
            [.time(date), .integer(max(limit, 0))]
        ).count
    }

    public func matchCandidates(project: String, networkPrefix: String, since: Date, limit: Int) async throws -> [MatchCandidate] {
        // The index (project_id, network_prefix, clicked_at) finds them; nothing else is read.
        try await candidates(where: "c.network_prefix = ?", .text(networkPrefix), project: project, since: since, limit: limit)
    }

    public func matchCandidates(project: String, address: String, since: Date, limit: Int) async throws -> [MatchCandidate] {
        // The index (project_id, ip, clicked_at) finds them: the rest of the network is not read.
        try await candidates(where: "c.ip = ?", .text(address), project: project, since: since, limit: limit)
    }

    private func candidates(where condition: String, _ value: SQLValue, project: String, since: Date, limit: Int) async throws -> [MatchCandidate] {
        try await engine.select(
            """
            SELECT c.id, c.link_id, c.project_id, c.clicked_at, c.ip, c.network_prefix, c.user_agent, c.timezone, c.language,
                c.screen_width, c.screen_height, c.platform, c.is_bot, l.attribution_window_hours
            FROM clicks c JOIN links l ON l.id = c.link_id
            WHERE c.project_id = ? AND \(condition) AND c.clicked_at >= ? AND c.is_bot = 0
            ORDER BY c.clicked_at DESC, c.id DESC LIMIT ?
            """,
            [.text(project), value, .time(since), .integer(max(limit, 0))]
        ).compactMap { row in
            Self.click(row).map { MatchCandidate(click: $0, windowHours: row.int("attribution_window_hours") ?? 168) }
        }
    }

    public func networkDevices(project: String, networkPrefix: String, at now: Date, since: Date, limit: Int) async throws -> Int {
        // Counted in the database, which stops at `limit` distinct devices: a carrier's network
        // holds hundreds of clicks a day, and none of them needs to reach the server's memory.
        // The signature is DeferredMatcher.deviceSignature's (a language's first two letters,
        // lower-cased); a click counts while within its link's window.
        // Among the network's newest DeferredMatcher.crowdRows such clicks: a network stuffed
        // with clicks of one signature costs that many rows, not all of them.
        try await engine.select(
            """
            SELECT COUNT(*) AS devices FROM (
                SELECT DISTINCT user_agent, timezone, language_code, screen_width, screen_height FROM (
                    SELECT c.user_agent, c.timezone, lower(substr(c.language, 1, 2)) AS language_code, c.screen_width, c.screen_height
                    FROM clicks c JOIN links l ON l.id = c.link_id
                    WHERE c.project_id = ? AND c.network_prefix = ? AND c.clicked_at >= ? AND c.is_bot = 0
                        AND c.clicked_at >= ? - l.attribution_window_hours * CAST(3600000 AS BIGINT)
                    ORDER BY c.clicked_at DESC LIMIT ?) AS newest
                LIMIT ?) AS seen
            """,
            [.text(project), .text(networkPrefix), .time(since), .time(now), .integer(DeferredMatcher.crowdRows), .integer(max(limit, 0))]
        ).first?.int("devices") ?? 0
    }

    static let clickColumns = """
        SELECT id, link_id, project_id, clicked_at, ip, network_prefix, user_agent, timezone, language, screen_width, screen_height,
            platform, is_bot FROM clicks
        """

    static func click(_ row: SQLRow) -> ClickRecord? {
        guard let id = row.string("id"), let link = row.string("link_id"), let project = row.string("project_id"),
            let clicked = row.date("clicked_at")
        else { return nil }
        return ClickRecord(
            id: id, linkID: link, projectID: project, clickedAt: clicked, ip: row.string("ip"), networkPrefix: row.string("network_prefix"),
            userAgent: row.string("user_agent"), timezone: row.string("timezone"), language: row.string("language"),
            screenWidth: row.int("screen_width"), screenHeight: row.int("screen_height"), platform: row.string("platform"),
            isBot: row.int("is_bot") == 1)
    }
}
