import Foundation
import Logging
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
            throw StoreError(.failed, "A database statement failed (\(Self.verb(of: sql))): \(Self.reason(error)).")
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
