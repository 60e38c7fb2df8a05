import Foundation
import LinkRelay
import LinkRelayServerCore

/// Templates, apps, links and clicks.
extension SQLStore {
    // MARK: Templates and apps

    package func insertTemplate(_ template: TemplateRecord) async throws {
        try await engine.run(
            """
            INSERT INTO templates (id, project_id, slug, name, ios_app_store_url, android_app_store_url, web_fallback_url, created_at)
            VALUES (\(template.id), \(template.projectID), \(template.slug), \(template.name), \(template.iosAppStoreURL),
                \(template.androidAppStoreURL), \(template.webFallbackURL), \(template.createdAt))
            """)
    }

    package func template(project: String, id: String) async throws -> TemplateRecord? {
        try await engine.select("\(sql: Self.templateColumns) WHERE project_id = \(project) AND id = \(id)").first.map(Self.template)
    }

    package func template(project: String, slug: String) async throws -> TemplateRecord? {
        try await engine.select("\(sql: Self.templateColumns) WHERE project_id = \(project) AND slug = \(slug)").first.map(Self.template)
    }

    static let templateColumns: SQLStatement =
        "SELECT id, project_id, slug, name, ios_app_store_url, android_app_store_url, web_fallback_url, created_at FROM templates"

    static func template(_ row: SQLRow) throws -> TemplateRecord {
        TemplateRecord(
            id: try row["id"], projectID: try row["project_id"], slug: try row["slug"], name: try row["name"],
            iosAppStoreURL: try row["ios_app_store_url"], androidAppStoreURL: try row["android_app_store_url"],
            webFallbackURL: try row["web_fallback_url"], createdAt: try row["created_at"])
    }

    package func insertApp(_ app: AppRecord) async throws {
        try await engine.run(
            """
            INSERT INTO apps (id, project_id, platform, identifier, paths, certificate_fingerprints, created_at)
            VALUES (\(app.id), \(app.projectID), \(app.platform), \(app.identifier), \(SQLJSON(app.paths)),
                \(SQLJSON(app.certificateFingerprints)), \(app.createdAt))
            """)
    }

    package func apps() async throws -> [AppRecord] {
        try await engine.select(
            "SELECT id, project_id, platform, identifier, paths, certificate_fingerprints, created_at FROM apps ORDER BY created_at, id"
        ).map { row in
            AppRecord(
                id: try row["id"], projectID: try row["project_id"], platform: try row["platform"], identifier: try row["identifier"],
                paths: try row.json("paths", as: [String].self, empty: []),
                certificateFingerprints: try row.json("certificate_fingerprints", as: [String].self, empty: []),
                createdAt: try row["created_at"])
        }
    }

    // MARK: Links

    package func insertLink(_ link: LinkRecord) async throws {
        // Forgotten before and after: a lookup between the two cannot keep "no such code".
        linkCache.forget(link.shortCode)
        defer { linkCache.forget(link.shortCode) }
        try await engine.run(
            """
            INSERT INTO links (id, project_id, template_slug, short_code, original_url, deep_link_path, app_scheme,
                ios_app_store_url, android_app_store_url, web_fallback_url, utm_parameters, deep_link_parameters, targeting_rules,
                attribution_window_hours, is_active, expires_at, created_at, template_id, title, description, ios_universal_link,
                android_app_link, og_title, og_description, og_image_url, append_click_id, external_user_id, dedupe_key, landing_page)
            VALUES (\(link.id), \(link.projectID), \(link.templateSlug), \(link.shortCode), \(link.originalURL), \(link.deepLinkPath),
                \(link.appScheme), \(link.iosAppStoreURL), \(link.androidAppStoreURL), \(link.webFallbackURL), \(SQLJSON(link.utmParameters)),
                \(SQLJSON(link.deepLinkParameters)), \(SQLJSON(link.targetingRules)), \(link.attributionWindowHours), \(link.isActive),
                \(link.expiresAt), \(link.createdAt), \(link.templateID), \(link.title), \(link.description), \(link.iosUniversalLink),
                \(link.androidAppLink), \(link.ogTitle), \(link.ogDescription), \(link.ogImageURL), \(link.appendClickID),
                \(link.externalUserID), \(link.dedupeKey), \(link.landingPage))
            """)
        // The other servers on the database forget a "no such code" they kept for it.
        await engine.announce(CacheChange.link(link.shortCode))
    }

    package func updateLink(_ link: LinkRecord) async throws -> Bool {
        // As for a new link: forgotten before and after, and a read under way is not kept.
        linkCache.forget(link.shortCode)
        linksByID.forget(link.id)
        defer {
            linkCache.forget(link.shortCode)
            linksByID.forget(link.id)
        }
        let updated = try await engine.run(
            """
            UPDATE links SET original_url = \(link.originalURL), deep_link_path = \(link.deepLinkPath), app_scheme = \(link.appScheme),
                ios_app_store_url = \(link.iosAppStoreURL), android_app_store_url = \(link.androidAppStoreURL),
                web_fallback_url = \(link.webFallbackURL), utm_parameters = \(SQLJSON(link.utmParameters)),
                deep_link_parameters = \(SQLJSON(link.deepLinkParameters)), targeting_rules = \(SQLJSON(link.targetingRules)),
                attribution_window_hours = \(link.attributionWindowHours), is_active = \(link.isActive), expires_at = \(link.expiresAt),
                title = \(link.title), description = \(link.description), ios_universal_link = \(link.iosUniversalLink),
                android_app_link = \(link.androidAppLink), og_title = \(link.ogTitle), og_description = \(link.ogDescription),
                og_image_url = \(link.ogImageURL), append_click_id = \(link.appendClickID), landing_page = \(link.landingPage)
            WHERE id = \(link.id) AND project_id = \(link.projectID) RETURNING id
            """)
        guard !updated.isEmpty else { return false }
        await engine.announce(CacheChange.link(link.shortCode))
        await engine.announce(CacheChange.link(id: link.id))
        return true
    }

    package func link(project: String?, shortCode: String, templateSlug: String?) async throws -> LinkRecord? {
        try await linkCache.value(shortCode, "\(project ?? "*")|\(templateSlug ?? "*")") {
            try await readLink(project: project, shortCode: shortCode, templateSlug: templateSlug)
        }
    }

    private func readLink(project: String?, shortCode: String, templateSlug: String?) async throws -> LinkRecord? {
        try await engine.select(Self.linkByCode(project: project, shortCode: shortCode, templateSlug: templateSlug)).first.map(Self.link)
    }

    /// The link with `shortCode` (of `project`, under `templateSlug`, where given): one text
    /// whatever is given (a condition left out compares NULL), so it stays prepared.
    static func linkByCode(project: String?, shortCode: String, templateSlug: String?) -> SQLStatement {
        let statement: SQLStatement = """
            \(sql: linkColumns) WHERE short_code = \(shortCode) AND (\(project) IS NULL OR project_id = \(project))
                AND (\(templateSlug) IS NULL OR template_slug = \(templateSlug))
            ORDER BY template_slug, created_at LIMIT 1
            """
        return statement.prepared(HotStatement.LinkByCode.self)
    }

    package func link(project: String, dedupeKey: String) async throws -> LinkRecord? {
        try await engine.select(
            "\(sql: Self.linkColumns) WHERE project_id = \(project) AND dedupe_key = \(dedupeKey) ORDER BY created_at LIMIT 1"
        )
        .first.map(Self.link)
    }

    package func link(id: String) async throws -> LinkRecord? {
        try await engine.select(Self.linkByID(id)).first.map(Self.link)
    }

    static let linkColumns: SQLStatement = """
        SELECT id, project_id, template_slug, short_code, original_url, deep_link_path, app_scheme, ios_app_store_url,
            android_app_store_url, web_fallback_url, utm_parameters, deep_link_parameters, targeting_rules, attribution_window_hours,
            is_active, expires_at, created_at, template_id, title, description, ios_universal_link, android_app_link, og_title,
            og_description, og_image_url, append_click_id, external_user_id, dedupe_key, landing_page FROM links
        """

    static func link(_ row: SQLRow) throws -> LinkRecord {
        LinkRecord(
            id: try row["id"], projectID: try row["project_id"], templateSlug: try row["template_slug"], shortCode: try row["short_code"],
            originalURL: try row["original_url"], deepLinkPath: try row["deep_link_path"], appScheme: try row["app_scheme"],
            iosAppStoreURL: try row["ios_app_store_url"], androidAppStoreURL: try row["android_app_store_url"],
            webFallbackURL: try row["web_fallback_url"],
            utmParameters: try row.json("utm_parameters", as: [String: String].self, empty: [:]),
            deepLinkParameters: try row.json("deep_link_parameters", as: [String: JSONValue].self, empty: [:]),
            attributionWindowHours: try row["attribution_window_hours"], isActive: try row["is_active"], expiresAt: try row["expires_at"],
            createdAt: try row["created_at"], templateID: try row["template_id"], title: try row["title"],
            description: try row["description"],
            iosUniversalLink: try row["ios_universal_link"], androidAppLink: try row["android_app_link"],
            targetingRules: try row.json("targeting_rules", as: [String: JSONValue].self, empty: [:]), ogTitle: try row["og_title"],
            ogDescription: try row["og_description"], ogImageURL: try row["og_image_url"], appendClickID: try row["append_click_id"],
            externalUserID: try row["external_user_id"], dedupeKey: try row["dedupe_key"], landingPage: try row["landing_page"])
    }

}

/// PostgreSQL's array input (`{"a",NULL,"b\"c"}`), for a column of values bound as one text
/// and cast (`$1::text[]`): a value is quoted and its `\` and `"` escaped, so any text is
/// itself; NULL is unquoted.
enum PostgresArrayLiteral {
    static func texts(_ values: [String?]) -> String {
        // Byte by byte: `\` and `"` are single bytes in UTF-8 and never part of another character.
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(values.count * 24)
        for (index, value) in values.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard let value else {
                literal.append(contentsOf: "NULL".utf8)
                continue
            }
            literal.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { literal.append(UInt8(ascii: "\\")) }
                literal.append(byte)
            }
            literal.append(UInt8(ascii: "\""))
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }

    static func integers(_ values: [Int?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }
}

extension DeviceSignals {
    /// The signals in a row read with ``SQLStore/deviceColumns``.
    init(_ row: SQLRow) throws {
        self.init(
            ip: try row["ip"], networkPrefix: try row["network_prefix"], userAgent: try row["user_agent"], timezone: try row["timezone"],
            language: try row["language"], screenWidth: try row["screen_width"], screenHeight: try row["screen_height"])
    }
}
