import Foundation
import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// A database of the previous schema brought up to date, its data kept.
@Suite("Migrations from a previous version")
struct MigrationTests {
    @Test(
        "a version-1 database with a project, a key, a link, a click, an install and an event: version 2 applied, everything kept",
        arguments: TestEngine.available)
    func fromVersionOne(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, reopen async throws in
            #expect(try await store.migrate(upTo: 1) == [1])
            // What a version-1 server wrote, in its own columns.
            for statement in [
                "INSERT INTO projects (id, name, created_at) VALUES ('prj_1', 'acme', 1000)",
                "INSERT INTO api_keys (id, project_id, prefix, secret_hash, scope, name, created_at) VALUES ('key_1', 'prj_1', 'lr_sdk_00000000', 'h', 'sdk', 'iOS', 1000)",
                """
                INSERT INTO links (id, project_id, short_code, original_url, deep_link_path, utm_parameters, deep_link_parameters,
                    attribution_window_hours, created_at) VALUES ('l1', 'prj_1', 'abc', 'https://acme.example', '/p/1', '{"source":"mail"}',
                    '{"id":1}', 24, 2000)
                """,
                "INSERT INTO clicks (id, link_id, project_id, clicked_at, network_prefix, is_bot) VALUES ('c1', 'l1', 'prj_1', 3000, '203.0.113', 0)",
                "INSERT INTO installs (id, project_id, link_id, click_id, confidence, method, installed_at) VALUES ('i1', 'prj_1', 'l1', 'c1', 70, 'fingerprint', 4000)",
                "INSERT INTO events (id, project_id, install_id, name, occurred_at, received_at) VALUES ('e1', 'prj_1', 'i1', 'tap', 5000, 5000)",
                "INSERT INTO events (id, project_id, install_id, name, occurred_at, received_at) VALUES ('e2', 'prj_1', 'i1', 'tap', 5000, 5000)",
            ] { try await store.execute(statement) }
            try await store.close()

            try await reopen { reopened async throws in
                #expect(try await reopened.migrate() == Array(2...Migration.latestVersion))
                #expect(try await reopened.appliedMigrations() == Array(1...Migration.latestVersion))
                if engine == .postgres {
                    // Migration 3: the click moved into a partition made for its day.
                    let partitions = try await reopened.engine.select(
                        "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'clicks'::regclass ORDER BY 1"
                    )
                    #expect(try partitions.map { try $0["name"] as String } == ["clicks_default", "clicks_p19700101"])
                }
                let link = try await reopened.link(id: "l1")
                #expect(link?.shortCode == "abc" && link?.deepLinkPath == "/p/1" && link?.utmParameters == ["source": "mail"])
                #expect(link?.deepLinkParameters == ["id": 1] && link?.attributionWindowHours == 24)
                #expect(
                    link?.targetingRules == [:] && link?.appendClickID == false && link?.templateID == nil,
                    "new columns have their defaults")
                #expect(try await reopened.clicks(link: "l1").map(\.id) == ["c1"])
                #expect(try await reopened.install(project: "prj_1", id: "i1")?.confidence == 70)
                // The two identical version-1 events stay two: each is its own.
                #expect(Set(try await reopened.events(install: "i1").map(\.dedupeKey)) == ["e1", "e2"])
                #expect(try await reopened.key(prefix: "lr_sdk_00000000")?.name == "iOS")
                // And the new tables work.
                try await reopened.insertTemplate(TemplateRecord(projectID: "prj_1", slug: "promo", name: "Promo", createdAt: Date()))
                #expect(try await reopened.template(project: "prj_1", slug: "promo") != nil)
            }
        }
    }

    @Test(
        "a version-6 database's installs: the platform each SDK sent becomes its name (iOS, ios and iPadOS are ios; an unknown one none), the fingerprint hash kept, the network unknown",
        arguments: TestEngine.available)
    func installPlatforms(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, reopen async throws in
            #expect(try await store.migrate(upTo: 6) == Array(1...6))
            try await store.execute("INSERT INTO projects (id, name, created_at) VALUES ('prj_1', 'acme', 1000)")
            let sent: [(String, String?)] = [
                ("i1", "iOS"), ("i2", "ios"), ("i3", "iPadOS"), ("i4", "Android"), ("i5", "Symbian"), ("i6", nil),
            ]
            for (id, platform) in sent {
                _ = try await store.engine.run(
                    """
                    INSERT INTO installs (id, project_id, confidence, method, installed_at, ip, platform, fingerprint_hash)
                    VALUES (\(id), 'prj_1', 0, 'none', 4000, '203.0.113.7', \(platform), \("hash-" + id))
                    """)
            }
            try await store.close()

            try await reopen { reopened async throws in
                #expect(try await reopened.migrate() == Array(7...Migration.latestVersion))
                var platforms: [String: String] = [:]
                for (id, _) in sent {
                    let install = try await reopened.install(project: "prj_1", id: id)
                    platforms[id] = install?.platform?.rawValue ?? "none"
                    #expect(install?.fingerprintHash == "hash-" + id && install?.device.ip == "203.0.113.7")
                    #expect(install?.device.networkPrefix == nil, "never kept before version 7")
                }
                #expect(platforms == ["i1": "ios", "i2": "ios", "i3": "ios", "i4": "android", "i5": "none", "i6": "none"])
            }
        }
    }
}
