import Foundation
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The storage protocol against SQLite (PostgreSQL joins the same suite with its engine).
@Suite("Storage and migrations")
struct StorageTests {
    @Test("an empty database gets every migration once, in order; a second run applies none", arguments: TestEngine.available)
    func migratesAnEmptyDatabase(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, _ async throws in
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
        try await ScratchDatabase.with(engine) { store, reopen async throws in
            _ = try await store.migrate()
            try await store.close()
            // A newer server's step, written as it would be.
            try await reopen { newer async throws in
                _ = try await newer.createProject(name: "kept", at: Date())
                try await newer.recordForeignMigration(version: Migration.latestVersion + 1)
                let error = await #expect(throws: StoreError.self) { try await newer.migrate() }
                #expect(error?.kind == .newerSchema(found: Migration.latestVersion + 1, known: Migration.latestVersion))
                #expect(try await newer.projects().map(\.name) == ["kept"])
            }
            try await reopen { _ in }
        }
    }

    @Test("the data survives closing and opening the file again", arguments: TestEngine.available)
    func survivesReopening(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, reopen async throws in
            _ = try await store.migrate()
            let project = try await store.createProject(name: "acme", at: Date(timeIntervalSince1970: 1_767_225_600.123))
            let issued = APIKeys.issue(project: project.id, scope: .sdk, name: "iOS app", at: Date(timeIntervalSince1970: 1_767_225_601))
            try await store.insertKey(issued.record)
            try await store.close()
            try await reopen { reopened async throws in
                #expect(try await reopened.migrate() == [])
                #expect(try await reopened.projects() == [project])
                #expect(try await reopened.key(prefix: issued.record.prefix) == issued.record)
            }
        }
    }

    @Test("keys: stored by prefix and hash, listed per project, revoked once", arguments: TestEngine.available)
    func keys(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, _ async throws in
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
