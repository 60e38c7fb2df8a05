import Foundation
import Testing

@testable import LinkRelayServer

/// The storage protocol against SQLite (PostgreSQL joins the same suite with its engine).
@Suite("Storage and migrations")
struct StorageTests {
    /// A fresh database file in a temporary folder, removed afterwards.
    static func withStore<T>(_ body: (SQLStore, String) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("data.sqlite").path
        let store = try await SQLStore.sqlite(path: path)
        do {
            let result = try await body(store, path)
            try await store.close()
            return result
        } catch {
            try? await store.close()
            throw error
        }
    }

    @Test("an empty database gets every migration once, in order; a second run applies none")
    func migratesAnEmptyDatabase() async throws {
        try await Self.withStore { store, _ async throws in
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

    @Test("a database a newer server made is refused, untouched")
    func newerSchemaIsRefused() async throws {
        try await Self.withStore { store, path async throws in
            _ = try await store.migrate()
            try await store.close()
            // A newer server's step, written as it would be.
            let newer = try await SQLStore.sqlite(path: path)
            _ = try await newer.createProject(name: "kept", at: Date())
            try await newer.recordForeignMigration(version: Migration.latestVersion + 1)
            let error = await #expect(throws: StoreError.self) { try await newer.migrate() }
            #expect(error?.kind == .newerSchema(found: Migration.latestVersion + 1, known: Migration.latestVersion))
            #expect(try await newer.projects().map(\.name) == ["kept"])
            try await newer.close()
            _ = try await SQLStore.sqlite(path: path).close()
        }
    }

    @Test("the data survives closing and opening the file again")
    func survivesReopening() async throws {
        try await Self.withStore { store, path async throws in
            _ = try await store.migrate()
            let project = try await store.createProject(name: "acme", at: Date(timeIntervalSince1970: 1_767_225_600.123))
            let issued = APIKeys.issue(project: project.id, scope: .sdk, name: "iOS app", at: Date(timeIntervalSince1970: 1_767_225_601))
            try await store.insertKey(issued.record)
            try await store.close()
            let reopened = try await SQLStore.sqlite(path: path)
            #expect(try await reopened.migrate() == [])
            #expect(try await reopened.projects() == [project])
            #expect(try await reopened.key(prefix: issued.record.prefix) == issued.record)
            try await reopened.close()
        }
    }

    @Test("keys: stored by prefix and hash, listed per project, revoked once")
    func keys() async throws {
        try await Self.withStore { store, _ async throws in
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
