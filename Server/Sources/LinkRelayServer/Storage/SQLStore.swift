import Foundation
import LinkRelay
import Logging

/// The store, on either engine: the statements are written once, in the SQL both SQLite and
/// PostgreSQL speak (`?` placeholders, which the PostgreSQL engine numbers), and the same
/// storage tests run against both.
public final class SQLStore: ServerStore {
    private let engine: any SQLEngine
    private let writes: GroupCommit<DurableWrite, DurableWritten>

    /// Which engine.
    public var dialect: SQLDialect { engine.dialect }

    init(engine: any SQLEngine) {
        self.engine = engine
        writes = GroupCommit { batch in await Self.commit(batch, engine: engine) }
    }

    /// The embedded engine: the SQLite file at `path` (made when missing); `:memory:` for one
    /// that lives as long as the store.
    public static func sqlite(path: String, logger: Logger = Logger(label: "linkrelay.sqlite")) async throws -> SQLStore {
        SQLStore(engine: try await SQLiteEngine.open(path: path, logger: logger))
    }

    /// The PostgreSQL database `url` names (`postgres://user:password@host:port/database`).
    public static func postgres(_ url: URL, logger: Logger = Logger(label: "linkrelay.postgres")) async throws -> SQLStore {
        SQLStore(engine: try await PostgresEngine.connect(url, logger: logger))
    }

    /// Runs one statement with nothing bound, on its own: administration (`CREATE DATABASE` for
    /// a test or a benchmark), and tests that write what another server version would have.
    public func execute(_ sql: String) async throws {
        try await engine.run(sql)
    }

    public func close() async throws {
        try await engine.close()
    }

    // MARK: Migrations

    public func migrate() async throws -> [Int] {
        try await migrate(upTo: Migration.latestVersion)
    }

    /// Applies the steps up to `version` (tests make a previous version's database with it).
    /// Several servers starting at once on one PostgreSQL database apply each step once: every
    /// step's transaction holds an advisory lock and checks again that the step is missing
    /// (on SQLite, `BEGIN IMMEDIATE` does the same).
    func migrate(upTo version: Int) async throws -> [Int] {
        let applied = Set(try await appliedMigrations())
        if let newest = applied.max(), newest > Migration.latestVersion {
            throw StoreError.newerSchema(found: newest, known: Migration.latestVersion)
        }
        var now: [Int] = []
        for migration in Migration.all where !applied.contains(migration.version) && migration.version <= version {
            let ran = try await engine.transaction { connection in
                if engine.dialect == .postgres { try await connection.run("SELECT pg_advisory_xact_lock(\(Self.migrationLock))") }
                guard try await connection.run("SELECT version FROM schema_migrations WHERE version = ?", [.integer(migration.version)]).isEmpty
                else { return false }
                for statement in engine.dialect == .sqlite ? migration.sqlite : migration.postgres { try await connection.run(statement) }
                try await connection.run(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    [.integer(migration.version), .text(migration.name), .time(Date())])
                return true
            }
            if ran { now.append(migration.version) }
        }
        return now
    }

    /// The advisory lock migrations hold on PostgreSQL (any fixed number; "LRMG").
    private static let migrationLock = 0x4C52_4D47

    public func appliedMigrations() async throws -> [Int] {
        try await engine.transaction { connection in
            if engine.dialect == .postgres { try await connection.run("SELECT pg_advisory_xact_lock(\(Self.migrationLock))") }
            try await connection.run(Migration.bookkeeping(bigint: engine.dialect == .sqlite ? "INTEGER" : "BIGINT"))
            return try await connection.run("SELECT version FROM schema_migrations ORDER BY version").compactMap { $0.int("version") }
        }
    }

    // MARK: Projects and keys

    public func createProject(name: String, at date: Date) async throws -> Project {
        let project = Project(id: "prj_" + APIKeys.randomString(16, alphabet: APIKeys.base62), name: name, createdAt: date)
        try await engine.run("INSERT INTO projects (id, name, created_at) VALUES (?, ?, ?)", [.text(project.id), .text(name), .time(date)])
        return project
    }

    public func projects() async throws -> [Project] {
        try await engine.run("SELECT id, name, created_at FROM projects ORDER BY created_at, id").compactMap { row in
            guard let id = row.string("id"), let name = row.string("name"), let created = row.date("created_at") else { return nil }
            return Project(id: id, name: name, createdAt: created)
        }
    }

    public func insertKey(_ key: APIKeyRecord) async throws {
        try await engine.run(
            """
            INSERT INTO api_keys (id, project_id, prefix, secret_hash, scope, name, created_at, revoked_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(key.id), .text(key.projectID), .text(key.prefix), .text(key.secretHash), .text(key.scope.rawValue), .text(key.name),
                .time(key.createdAt), .time(key.revokedAt),
            ])
    }

    public func key(prefix: String) async throws -> APIKeyRecord? {
        try await engine.run(Self.keyColumns + " WHERE prefix = ?", [.text(prefix)]).first.flatMap(Self.key)
    }

    public func keys(project: String) async throws -> [APIKeyRecord] {
        try await engine.run(Self.keyColumns + " WHERE project_id = ? ORDER BY created_at, id", [.text(project)]).compactMap(Self.key)
    }

    public func revokeKey(id: String, at date: Date) async throws -> Bool {
        try await engine.transaction { connection in
            guard try await !connection.run("SELECT id FROM api_keys WHERE id = ?", [.text(id)]).isEmpty else { return false }
            try await connection.run("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [.time(date), .text(id)])
            return true
        }
    }

    private static let keyColumns = "SELECT id, project_id, prefix, secret_hash, scope, name, created_at, revoked_at FROM api_keys"

    private static func key(_ row: SQLRow) -> APIKeyRecord? {
        guard let id = row.string("id"), let project = row.string("project_id"), let prefix = row.string("prefix"),
            let hash = row.string("secret_hash"), let scope = row.string("scope").flatMap(KeyScope.init(rawValue:)),
            let name = row.string("name"), let created = row.date("created_at")
        else { return nil }
        return APIKeyRecord(
            id: id, projectID: project, prefix: prefix, secretHash: hash, scope: scope, name: name, createdAt: created,
            revokedAt: row.date("revoked_at"))
    }

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
        try await engine.run(Self.templateColumns + " WHERE project_id = ? AND id = ?", [.text(project), .text(id)]).first.flatMap(Self.template)
    }

    public func template(project: String, slug: String) async throws -> TemplateRecord? {
        try await engine.run(Self.templateColumns + " WHERE project_id = ? AND slug = ?", [.text(project), .text(slug)]).first.flatMap(
            Self.template)
    }

    private static let templateColumns =
        "SELECT id, project_id, slug, name, ios_app_store_url, android_app_store_url, web_fallback_url, created_at FROM templates"

    private static func template(_ row: SQLRow) -> TemplateRecord? {
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
        try await engine.run(
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
        return try await engine.run(sql + " ORDER BY template_slug, created_at LIMIT 1", binds).first.flatMap(Self.link)
    }

    public func link(project: String, dedupeKey: String) async throws -> LinkRecord? {
        try await engine.run(
            Self.linkColumns + " WHERE project_id = ? AND dedupe_key = ? ORDER BY created_at LIMIT 1", [.text(project), .text(dedupeKey)]
        ).first.flatMap(Self.link)
    }

    public func link(id: String) async throws -> LinkRecord? {
        try await engine.run(Self.linkColumns + " WHERE id = ?", [.text(id)]).first.flatMap(Self.link)
    }

    private static let linkColumns = """
        SELECT id, project_id, template_slug, short_code, original_url, deep_link_path, app_scheme, ios_app_store_url,
            android_app_store_url, web_fallback_url, utm_parameters, deep_link_parameters, targeting_rules, attribution_window_hours,
            is_active, expires_at, created_at, template_id, title, description, ios_universal_link, android_app_link, og_title,
            og_description, og_image_url, append_click_id, external_user_id, dedupe_key FROM links
        """

    private static func link(_ row: SQLRow) -> LinkRecord? {
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
        let columns = "(id, link_id, project_id, clicked_at, ip, network_prefix, user_agent, timezone, language, screen_width, screen_height, platform, is_bot)"
        try await engine.transaction { connection in
            var start = 0
            while start < clicks.count {
                let chunk = clicks[start..<min(start + 1000, clicks.count)]
                let rows = Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
                var binds: [SQLValue] = []
                binds.reserveCapacity(chunk.count * 13)
                for click in chunk { binds += Self.values(click) }
                try await connection.run("INSERT INTO clicks \(columns) VALUES \(rows)", binds)
                start += chunk.count
            }
        }
    }

    private static func values(_ click: ClickRecord) -> [SQLValue] {
        [
            .text(click.id), .text(click.linkID), .text(click.projectID), .time(click.clickedAt), .text(click.ip), .text(click.networkPrefix),
            .text(click.userAgent), .text(click.timezone), .text(click.language), .integer(click.screenWidth), .integer(click.screenHeight),
            .text(click.platform), .integer(click.isBot ? 1 : 0),
        ]
    }

    public func clicks(link: String) async throws -> [ClickRecord] {
        try await engine.run(Self.clickColumns + " WHERE link_id = ? ORDER BY clicked_at, id", [.text(link)]).compactMap(Self.click)
    }

    public func matchCandidates(project: String, networkPrefix: String, since: Date, limit: Int) async throws -> [MatchCandidate] {
        // The index (project_id, network_prefix, clicked_at) finds them; nothing else is read.
        try await engine.run(
            """
            SELECT c.id, c.link_id, c.project_id, c.clicked_at, c.ip, c.network_prefix, c.user_agent, c.timezone, c.language,
                c.screen_width, c.screen_height, c.platform, c.is_bot, l.attribution_window_hours
            FROM clicks c JOIN links l ON l.id = c.link_id
            WHERE c.project_id = ? AND c.network_prefix = ? AND c.clicked_at >= ? AND c.is_bot = 0
            ORDER BY c.clicked_at DESC, c.id DESC LIMIT ?
            """,
            [.text(project), .text(networkPrefix), .time(since), .integer(max(limit, 0))]
        ).compactMap { row in
            Self.click(row).map { MatchCandidate(click: $0, windowHours: row.int("attribution_window_hours") ?? 168) }
        }
    }

    private static let clickColumns = """
        SELECT id, link_id, project_id, clicked_at, ip, network_prefix, user_agent, timezone, language, screen_width, screen_height,
            platform, is_bot FROM clicks
        """

    private static func click(_ row: SQLRow) -> ClickRecord? {
        guard let id = row.string("id"), let link = row.string("link_id"), let project = row.string("project_id"),
            let clicked = row.date("clicked_at")
        else { return nil }
        return ClickRecord(
            id: id, linkID: link, projectID: project, clickedAt: clicked, ip: row.string("ip"), networkPrefix: row.string("network_prefix"),
            userAgent: row.string("user_agent"), timezone: row.string("timezone"), language: row.string("language"),
            screenWidth: row.int("screen_width"), screenHeight: row.int("screen_height"), platform: row.string("platform"),
            isBot: row.int("is_bot") == 1)
    }

    // MARK: Installs and events

    public func recordInstall(_ install: InstallRecord) async throws {
        _ = try await writes.submit(.install(install))
    }

    public func install(project: String, id: String) async throws -> InstallRecord? {
        try await engine.run(Self.installColumns + " WHERE project_id = ? AND id = ?", [.text(project), .text(id)]).first.flatMap(Self.install)
    }

    public func latestInstall(project: String, fingerprintHash: String) async throws -> InstallRecord? {
        try await engine.run(
            Self.installColumns + " WHERE project_id = ? AND fingerprint_hash = ? ORDER BY installed_at DESC, id DESC LIMIT 1",
            [.text(project), .text(fingerprintHash)]
        ).first.flatMap(Self.install)
    }

    private static let installColumns = """
        SELECT id, project_id, link_id, click_id, confidence, matched_factors, method, installed_at, ip, user_agent, timezone, language,
            screen_width, screen_height, platform, platform_version, device_id, deep_link_data, fingerprint_hash,
            attribution_window_hours FROM installs
        """

    private static func install(_ row: SQLRow) -> InstallRecord? {
        guard let id = row.string("id"), let project = row.string("project_id"), let installed = row.date("installed_at") else { return nil }
        return InstallRecord(
            id: id, projectID: project, linkID: row.string("link_id"), clickID: row.string("click_id"), confidence: row.int("confidence") ?? 0,
            matchedFactors: JSONText.decode([String].self, row.string("matched_factors")) ?? [], method: row.string("method") ?? "none",
            installedAt: installed, ip: row.string("ip"), userAgent: row.string("user_agent"), timezone: row.string("timezone"),
            language: row.string("language"), screenWidth: row.int("screen_width"), screenHeight: row.int("screen_height"),
            platform: row.string("platform"), platformVersion: row.string("platform_version"), deviceID: row.string("device_id"),
            fingerprintHash: row.string("fingerprint_hash") ?? "", attributionWindowHours: row.int("attribution_window_hours"),
            deepLinkData: JSONText.decode([String: JSONValue].self, row.string("deep_link_data")) ?? [:])
    }

    public func recordEvent(_ event: EventRecord) async throws -> EventOutcome {
        guard case .event(let outcome) = try await writes.submit(.event(event)) else {
            throw StoreError(.failed, "An event's write answered something else.")
        }
        return outcome
    }

    public func events(install: String) async throws -> [EventRecord] {
        try await engine.run(Self.eventColumns + " WHERE install_id = ? ORDER BY received_at, id", [.text(install)]).compactMap(Self.event)
    }

    private static let eventColumns = """
        SELECT id, project_id, install_id, name, properties, occurred_at, received_at, dedupe_key, attributed_link_id,
            attributed_click_id, link_opened_at, session_id, sdk FROM events
        """

    private static func event(_ row: SQLRow) -> EventRecord? {
        guard let id = row.string("id"), let project = row.string("project_id"), let install = row.string("install_id"),
            let name = row.string("name"), let occurred = row.date("occurred_at"), let received = row.date("received_at")
        else { return nil }
        return EventRecord(
            id: id, projectID: project, installID: install, name: name,
            properties: JSONText.decode([String: JSONValue].self, row.string("properties")) ?? [:], occurredAt: occurred,
            receivedAt: received, dedupeKey: row.string("dedupe_key") ?? id, attributedLinkID: row.string("attributed_link_id"),
            attributedClickID: row.string("attributed_click_id"), linkOpenedAt: row.date("link_opened_at"),
            sessionID: row.string("session_id"), sdk: row.string("sdk"))
    }

    // MARK: Durable writes, committed together

    enum DurableWrite: Sendable {
        case click(ClickRecord)
        case install(InstallRecord)
        case event(EventRecord)
    }

    enum DurableWritten: Sendable {
        case done
        case event(EventOutcome)
    }

    /// One transaction for the whole batch; when it fails (one write breaks a constraint), each
    /// write again in a transaction of its own, so one bad write fails alone.
    private static func commit(_ batch: [DurableWrite], engine: any SQLEngine) async -> [Result<DurableWritten, any Error>] {
        do {
            return try await engine.transaction { connection in
                var results: [Result<DurableWritten, any Error>] = []
                for write in batch { results.append(.success(try await perform(write, on: connection))) }
                return results
            }
        } catch {
            guard batch.count > 1 else { return [.failure(error)] }
            var results: [Result<DurableWritten, any Error>] = []
            for write in batch {
                do {
                    results.append(.success(try await engine.transaction { try await perform(write, on: $0) }))
                } catch {
                    results.append(.failure(error))
                }
            }
            return results
        }
    }

    private static func perform(_ write: DurableWrite, on connection: any SQLConnection) async throws -> DurableWritten {
        switch write {
        case .click(let click):
            try await connection.run(
                """
                INSERT INTO clicks (id, link_id, project_id, clicked_at, ip, network_prefix, user_agent, timezone, language,
                    screen_width, screen_height, platform, is_bot)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, values(click))
            return .done
        case .install(let install):
            try await connection.run(
                """
                INSERT INTO installs (id, project_id, link_id, click_id, confidence, matched_factors, method, installed_at, ip,
                    user_agent, timezone, language, screen_width, screen_height, platform, platform_version, device_id,
                    deep_link_data, fingerprint_hash, attribution_window_hours)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(install.id), .text(install.projectID), .text(install.linkID), .text(install.clickID), .integer(install.confidence),
                    .text(JSONText.encode(install.matchedFactors)), .text(install.method), .time(install.installedAt), .text(install.ip),
                    .text(install.userAgent), .text(install.timezone), .text(install.language), .integer(install.screenWidth),
                    .integer(install.screenHeight), .text(install.platform), .text(install.platformVersion), .text(install.deviceID),
                    .text(JSONText.encode(install.deepLinkData)), .text(install.fingerprintHash), .integer(install.attributionWindowHours),
                ])
            return .done
        case .event(let event):
            let inserted = try await connection.run(
                """
                INSERT INTO events (id, project_id, install_id, name, properties, occurred_at, received_at, dedupe_key,
                    attributed_link_id, attributed_click_id, link_opened_at, session_id, sdk)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (project_id, dedupe_key) DO NOTHING RETURNING id
                """,
                [
                    .text(event.id), .text(event.projectID), .text(event.installID), .text(event.name),
                    .text(JSONText.encode(event.properties)), .time(event.occurredAt), .time(event.receivedAt), .text(event.dedupeKey),
                    .text(event.attributedLinkID), .text(event.attributedClickID), .time(event.linkOpenedAt), .text(event.sessionID),
                    .text(event.sdk),
                ])
            if !inserted.isEmpty { return .event(.stored(event)) }
            guard
                let earlier = try await connection.run(
                    eventColumns + " WHERE project_id = ? AND dedupe_key = ?", [.text(event.projectID), .text(event.dedupeKey)]
                ).first.flatMap(Self.event)
            else { throw StoreError(.failed, "An event was neither stored nor found.") }
            return .event(.duplicate(of: earlier))
        }
    }
}

/// JSON as the database keeps it: text, keys sorted (so equal values are equal text).
enum JSONText {
    static func encode<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ text: String?) -> Value? {
        guard let text else { return nil }
        return try? JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
