import Foundation
import Testing

@testable import LinkRelayServer

/// The storage protocol against SQLite (PostgreSQL joins the same suite with its engine).
@Suite("Storage and migrations")
struct StorageTests {
    /// A fresh, empty database on `engine` (a file in a temporary folder, or a database of its
    /// own on the PostgreSQL that `LINKRELAY_TEST_POSTGRES` names), and a way to open it again;
    /// removed afterwards.
    static func withStore<T>(
        _ engine: TestEngine = .sqlite, _ body: (SQLStore, _ reopen: @Sendable () async throws -> SQLStore) async throws -> T
    ) async throws -> T {
        switch engine {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-server-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("data.sqlite").path
            return try await run(try await SQLStore.sqlite(path: path), reopen: { try await SQLStore.sqlite(path: path) }, body)
        case .postgres:
            let base = try #require(TestEngine.postgresURL, "LINKRELAY_TEST_POSTGRES names no PostgreSQL")
            let name = "lr_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let admin = try await SQLStore.postgres(base)
            try await admin.execute("CREATE DATABASE \(name)")
            var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
            components.path = "/" + name
            let url = try #require(components.url)
            do {
                let result = try await run(try await SQLStore.postgres(url), reopen: { try await SQLStore.postgres(url) }, body)
                try await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
                try await admin.close()
                return result
            } catch {
                try? await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
                try? await admin.close()
                throw error
            }
        }
    }

    private static func run<T>(
        _ store: SQLStore, reopen: @escaping @Sendable () async throws -> SQLStore,
        _ body: (SQLStore, _ reopen: @Sendable () async throws -> SQLStore) async throws -> T
    ) async throws -> T {
        do {
            let result = try await body(store, reopen)
            try await store.close()
            return result
        } catch {
            try? await store.close()
            throw error
        }
    }

    @Test("an empty database gets every migration once, in order; a second run applies none", arguments: TestEngine.available)
    func migratesAnEmptyDatabase(_ engine: TestEngine) async throws {
        try await Self.withStore(engine) { store, _ async throws in
            #expect(try await store.appliedMigrations() == [])
            #expect(try await store.migrate() == Migration.all.map(\.version))
            #expect(try await store.migrate() == [])
            #expect(try await store.appliedMigrations() == Migration.all.map(\.version))
        }
    }

    @Test("migrations are numbered from 1 without gaps")
    func numbering() {
        #expect(Migration.all.map(\.version) == Array(1...Migration.latestVersion))
    }

    @Test("a database a newer server made is refused, untouched", arguments: TestEngine.available)
    func newerSchemaIsRefused(_ engine: TestEngine) async throws {
        try await Self.withStore(engine) { store, reopen async throws in
            _ = try await store.migrate()
            try await store.close()
            // A newer server's step, written as it would be.
            let newer = try await reopen()
            _ = try await newer.createProject(name: "kept", at: Date())
            try await newer.recordForeignMigration(version: Migration.latestVersion + 1)
            let error = await #expect(throws: StoreError.self) { try await newer.migrate() }
            #expect(error?.kind == .newerSchema(found: Migration.latestVersion + 1, known: Migration.latestVersion))
            #expect(try await newer.projects().map(\.name) == ["kept"])
            try await newer.close()
            try await reopen().close()
        }
    }

    @Test("the data survives closing and opening the file again", arguments: TestEngine.available)
    func survivesReopening(_ engine: TestEngine) async throws {
        try await Self.withStore(engine) { store, reopen async throws in
            _ = try await store.migrate()
            let project = try await store.createProject(name: "acme", at: Date(timeIntervalSince1970: 1_767_225_600.123))
            let issued = APIKeys.issue(project: project.id, scope: .sdk, name: "iOS app", at: Date(timeIntervalSince1970: 1_767_225_601))
            try await store.insertKey(issued.record)
            try await store.close()
            let reopened = try await reopen()
            #expect(try await reopened.migrate() == [])
            #expect(try await reopened.projects() == [project])
            #expect(try await reopened.key(prefix: issued.record.prefix) == issued.record)
            try await reopened.close()
        }
    }

    @Test("keys: stored by prefix and hash, listed per project, revoked once", arguments: TestEngine.available)
    func keys(_ engine: TestEngine) async throws {
        try await Self.withStore(engine) { store, _ async throws in
            _ = try await store.migrate()
            let acme = try await store.createProject(name: "acme", at: Date())
            let other = try await store.createProject(name: "other", at: Date())
            let sdk = APIKeys.issue(project: acme.id, scope: .sdk, name: "iOS", at: Date(timeIntervalSince1970: 1))
            let admin = APIKeys.issue(project: acme.id, scope: .admin, name: "CI", at: Date(timeIntervalSince1970: 2))
            let foreign = APIKeys.issue(project: other.id, scope: .sdk, name: "iOS", at: Date(timeIntervalSince1970: 3))
            for key in [sdk, admin, foreign] { try await store.insertKey(key.record) }
            #expect(try await store.keys(project: acme.id).map(\.id) == [sdk.record.id, admin.record.id])
            #expect(try await store.revokeKey(id: sdk.record.id, at: Date(timeIntervalSince1970: 10)))
            #expect(try await store.key(prefix: sdk.record.prefix)?.revokedAt == Date(timeIntervalSince1970: 10))
            #expect(try await !store.revokeKey(id: "key_missing", at: Date()))
            // A second key with the same prefix is refused by the database.
            var clash = admin.record
            clash.id = "key_clash"
            await #expect(throws: StoreError.self) { try await store.insertKey(clash) }
        }
    }
}

extension SQLStore {
    /// Records a migration this server does not know, as a newer server would have.
    func recordForeignMigration(version: Int) async throws {
        _ = try await appliedMigrations()
        try await execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (\(version), 'from a newer server', 0)")
    }
}
