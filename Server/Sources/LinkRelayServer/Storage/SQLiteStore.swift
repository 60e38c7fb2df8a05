import Foundation
import Logging
import LinkRelay
import SQLiteNIO

/// The embedded engine: one SQLite file (WAL journal, `synchronous=FULL`, so a committed write
/// survives a crash or a power cut), one connection, statements run one sequence at a time.
public final class SQLiteStore: ServerStore {
    private let connection: SQLiteConnection
    private let lock = AsyncLock()

    private init(connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Opens (or creates) the database at `path`; `:memory:` for one that lives as long as the store.
    public static func open(path: String, logger: Logger = Logger(label: "linkrelay.sqlite")) async throws -> SQLiteStore {
        let storage: SQLiteConnection.Storage = path == ":memory:" ? .memory : .file(path: path)
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: storage, logger: logger)
        } catch {
            throw StoreError(.unusableLocation, "Cannot open the SQLite database at \(path).")
        }
        let store = SQLiteStore(connection: connection)
        if path != ":memory:" { _ = try await store.run("PRAGMA journal_mode=WAL") }
        _ = try await store.run("PRAGMA synchronous=FULL")
        _ = try await store.run("PRAGMA foreign_keys=ON")
        _ = try await store.run("PRAGMA busy_timeout=5000")
        return store
    }

    // MARK: Statements

    /// Runs one statement; failures say which kind of statement failed, never its values.
    @discardableResult
    private func run(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        do {
            return try await connection.query(sql, binds)
        } catch {
            let reason = Self.reason(error)
            throw StoreError(
                reason.contains("UNIQUE constraint") ? .conflict : .failed,
                "A database statement failed (\(Self.verb(of: sql))): \(reason).")
        }
    }

    private static func verb(of sql: String) -> String {
        sql.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").prefix(2).joined(separator: " ")
    }

    /// SQLite's own message (the constraint or the error), which names no bound value.
    private static func reason(_ error: any Error) -> String {
        if let error = error as? SQLiteError { return error.message }
        return "\(type(of: error))"
    }

    /// Runs one statement with nothing bound, on its own (for tests that write what another
    /// server version would have).
    func execute(_ sql: String) async throws {
        try await serial { try await run(sql) }
    }

    @discardableResult
    private func transaction<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await lock.withLock {
            try await run("BEGIN IMMEDIATE")
            do {
                let result = try await body()
                try await run("COMMIT")
                return result
            } catch {
                _ = try? await run("ROLLBACK")
                throw error
            }
        }
    }

    @discardableResult
    private func serial<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await lock.withLock(body)
    }

    // MARK: Migrations

    public func migrate() async throws -> [Int] {
        try await serial { try await run(Migration.bookkeeping(bigint: "INTEGER")) }
        let applied = Set(try await appliedMigrations())
        if let newest = applied.max(), newest > Migration.latestVersion {
            throw StoreError.newerSchema(found: newest, known: Migration.latestVersion)
        }
        var now: [Int] = []
        for migration in Migration.all where !applied.contains(migration.version) {
            try await transaction {
                for statement in migration.sqlite { try await run(statement) }
                try await run(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    [.integer(migration.version), .text(migration.name), .integer(Self.milliseconds(Date()))])
            }
            now.append(migration.version)
        }
        return now
    }

    public func appliedMigrations() async throws -> [Int] {
        try await serial {
            try await run(Migration.bookkeeping(bigint: "INTEGER"))
            return try await run("SELECT version FROM schema_migrations ORDER BY version").compactMap { $0.column("version")?.integer }
        }
    }

    // MARK: Projects and keys

    public func createProject(name: String, at date: Date) async throws -> Project {
        let project = Project(id: "prj_" + APIKeys.randomString(16, alphabet: APIKeys.base62), name: name, createdAt: date)
        try await serial {
            try await run(
                "INSERT INTO projects (id, name, created_at) VALUES (?, ?, ?)",
                [.text(project.id), .text(name), .integer(Self.milliseconds(date))])
        }
        return project
    }

    public func projects() async throws -> [Project] {
        try await serial {
            try await run("SELECT id, name, created_at FROM projects ORDER BY created_at, id").compactMap { row in
                guard let id = row.column("id")?.string, let name = row.column("name")?.string,
                    let created = row.column("created_at")?.integer
                else { return nil }
                return Project(id: id, name: name, createdAt: Self.date(created))
            }
        }
    }

    public func insertKey(_ key: APIKeyRecord) async throws {
        try await serial {
            try await run(
                """
                INSERT INTO api_keys (id, project_id, prefix, secret_hash, scope, name, created_at, revoked_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(key.id), .text(key.projectID), .text(key.prefix), .text(key.secretHash), .text(key.scope.rawValue),
                    .text(key.name), .integer(Self.milliseconds(key.createdAt)), key.revokedAt.map { .integer(Self.milliseconds($0)) } ?? .null,
                ])
        }
    }

    public func key(prefix: String) async throws -> APIKeyRecord? {
        try await serial { try await run(Self.keyColumns + " WHERE prefix = ?", [.text(prefix)]).first.flatMap(Self.key) }
    }

    public func keys(project: String) async throws -> [APIKeyRecord] {
        try await serial {
            try await run(Self.keyColumns + " WHERE project_id = ? ORDER BY created_at, id", [.text(project)]).compactMap(Self.key)
        }
    }

    public func revokeKey(id: String, at date: Date) async throws -> Bool {
        try await serial {
            let found = try await run("SELECT id FROM api_keys WHERE id = ?", [.text(id)])
            guard !found.isEmpty else { return false }
            try await run(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [.integer(Self.milliseconds(date)), .text(id)])
            return true
        }
    }

    private static let keyColumns = "SELECT id, project_id, prefix, secret_hash, scope, name, created_at, revoked_at FROM api_keys"

    private static func key(_ row: SQLiteRow) -> APIKeyRecord? {
        guard let id = row.column("id")?.string, let project = row.column("project_id")?.string,
            let prefix = row.column("prefix")?.string, let hash = row.column("secret_hash")?.string,
            let scope = row.column("scope")?.string.flatMap(KeyScope.init(rawValue:)), let name = row.column("name")?.string,
            let created = row.column("created_at")?.integer
        else { return nil }
        return APIKeyRecord(
            id: id, projectID: project, prefix: prefix, secretHash: hash, scope: scope, name: name, createdAt: date(created),
            revokedAt: row.column("revoked_at")?.integer.map(date))
    }

    // MARK: Links and clicks

    public func insertLink(_ link: LinkRecord) async throws {
        try await serial {
            try await run(
                """
                INSERT INTO links (id, project_id, template_slug, short_code, original_url, deep_link_path, app_scheme,
                    ios_app_store_url, android_app_store_url, web_fallback_url, utm_parameters, deep_link_parameters,
                    attribution_window_hours, is_active, expires_at, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(link.id), .text(link.projectID), .text(link.templateSlug), .text(link.shortCode), .text(link.originalURL),
                    Self.text(link.deepLinkPath), Self.text(link.appScheme), Self.text(link.iosAppStoreURL),
                    Self.text(link.androidAppStoreURL), Self.text(link.webFallbackURL), .text(try Self.json(link.utmParameters)),
                    .text(try Self.json(link.deepLinkParameters)), .integer(link.attributionWindowHours), .integer(link.isActive ? 1 : 0),
                    link.expiresAt.map { .integer(Self.milliseconds($0)) } ?? .null, .integer(Self.milliseconds(link.createdAt)),
                ])
        }
    }

    public func link(project: String, shortCode: String, templateSlug: String?) async throws -> LinkRecord? {
        try await serial {
            var sql = Self.linkColumns + " WHERE project_id = ? AND short_code = ?"
            var binds: [SQLiteData] = [.text(project), .text(shortCode)]
            if let templateSlug {
                sql += " AND template_slug = ?"
                binds.append(.text(templateSlug))
            }
            return try await run(sql + " ORDER BY template_slug LIMIT 1", binds).first.flatMap(Self.link)
        }
    }

    public func recordClick(_ click: ClickRecord) async throws {
        try await serial {
            try await run(
                """
                INSERT INTO clicks (id, link_id, project_id, clicked_at, ip, network_prefix, user_agent, timezone, language,
                    screen_width, screen_height, platform, is_bot)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(click.id), .text(click.linkID), .text(click.projectID), .integer(Self.milliseconds(click.clickedAt)),
                    Self.text(click.ip), Self.text(click.networkPrefix), Self.text(click.userAgent), Self.text(click.timezone),
                    Self.text(click.language), click.screenWidth.map { .integer($0) } ?? .null,
                    click.screenHeight.map { .integer($0) } ?? .null, Self.text(click.platform), .integer(click.isBot ? 1 : 0),
                ])
        }
    }

    public func clicks(link: String) async throws -> [ClickRecord] {
        try await serial {
            try await run(
                """
                SELECT id, link_id, project_id, clicked_at, ip, network_prefix, user_agent, timezone, language, screen_width,
                    screen_height, platform, is_bot FROM clicks WHERE link_id = ? ORDER BY clicked_at, id
                """, [.text(link)]
            ).compactMap { row in
                guard let id = row.column("id")?.string, let linkID = row.column("link_id")?.string,
                    let project = row.column("project_id")?.string, let clicked = row.column("clicked_at")?.integer
                else { return nil }
                return ClickRecord(
                    id: id, linkID: linkID, projectID: project, clickedAt: Self.date(clicked), ip: row.column("ip")?.string,
                    networkPrefix: row.column("network_prefix")?.string, userAgent: row.column("user_agent")?.string,
                    timezone: row.column("timezone")?.string, language: row.column("language")?.string,
                    screenWidth: row.column("screen_width")?.integer, screenHeight: row.column("screen_height")?.integer,
                    platform: row.column("platform")?.string, isBot: row.column("is_bot")?.integer == 1)
            }
        }
    }

    private static let linkColumns = """
        SELECT id, project_id, template_slug, short_code, original_url, deep_link_path, app_scheme, ios_app_store_url,
            android_app_store_url, web_fallback_url, utm_parameters, deep_link_parameters, attribution_window_hours, is_active,
            expires_at, created_at FROM links
        """

    private static func link(_ row: SQLiteRow) -> LinkRecord? {
        guard let id = row.column("id")?.string, let project = row.column("project_id")?.string,
            let slug = row.column("template_slug")?.string, let code = row.column("short_code")?.string,
            let original = row.column("original_url")?.string, let created = row.column("created_at")?.integer
        else { return nil }
        let decoder = JSONDecoder()
        return LinkRecord(
            id: id, projectID: project, templateSlug: slug, shortCode: code, originalURL: original,
            deepLinkPath: row.column("deep_link_path")?.string, appScheme: row.column("app_scheme")?.string,
            iosAppStoreURL: row.column("ios_app_store_url")?.string, androidAppStoreURL: row.column("android_app_store_url")?.string,
            webFallbackURL: row.column("web_fallback_url")?.string,
            utmParameters: (try? decoder.decode([String: String].self, from: Data((row.column("utm_parameters")?.string ?? "{}").utf8))) ?? [:],
            deepLinkParameters: (try? decoder.decode(
                [String: JSONValue].self, from: Data((row.column("deep_link_parameters")?.string ?? "{}").utf8))) ?? [:],
            attributionWindowHours: row.column("attribution_window_hours")?.integer ?? 168,
            isActive: row.column("is_active")?.integer != 0, expiresAt: row.column("expires_at")?.integer.map(date),
            createdAt: date(created))
    }

    private static func text(_ value: String?) -> SQLiteData {
        value.map(SQLiteData.text) ?? .null
    }

    private static func json<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    public func close() async throws {
        try await connection.close()
    }

    // MARK: Times

    /// Whole milliseconds since 1970, bounded (a `Date` far outside ±10,000 years is clamped).
    static func milliseconds(_ date: Date) -> Int {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return 0 }
        return Int(min(max(value, -315_537_897_600_000), 315_537_897_600_000))
    }

    static func date(_ milliseconds: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }
}
