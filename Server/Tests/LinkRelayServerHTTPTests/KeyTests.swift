import Foundation
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

@Suite("API keys")
struct KeyTests {
    @Test("a key is lr_{scope}_{8 hex}_{32 base62}; only its hash is stored, and only it matches")
    func shape() throws {
        let issued = APIKeys.issue(project: "prj_1", scope: .sdk, name: "iOS", at: Date())
        let parts = issued.secret.split(separator: "_")
        #expect(parts.count == 4 && parts[0] == "lr" && parts[1] == "sdk" && parts[2].count == 8 && parts[3].count == 32)
        #expect(APIKeys.prefix(of: issued.secret) == issued.record.prefix)
        #expect(APIKeys.matches(issued.secret, issued.record))
        #expect(!APIKeys.matches(issued.secret + "x", issued.record))
        #expect(!APIKeys.matches(String(issued.secret.dropLast()) + "0", issued.record) || issued.secret.hasSuffix("0"))
        let stored = String(decoding: try JSONEncoder().encode(issued.record), as: UTF8.self)
        #expect(!stored.contains(String(parts[3])), "the secret part is nowhere in what is stored")
        #expect(issued.record.secretHash.count == 64)
    }

    @Test("two keys never share a prefix or a secret", arguments: [KeyScope.sdk, .admin])
    func distinct(_ scope: KeyScope) {
        let keys = (0..<200).map { _ in APIKeys.issue(project: "p", scope: scope, name: "", at: Date()) }
        #expect(Set(keys.map(\.secret)).count == 200)
        #expect(Set(keys.map(\.record.prefix)).count == 200)
    }

    @Test(
        "anything not shaped like a key has no prefix",
        arguments: [
            "", "lr_sdk_", "lr_sdk_abcdef12", "lr_root_abcdef12_0123456789abcdefghijABCDEFGHIJ01",
            "xx_sdk_abcdef12_0123456789abcdefghijABCDEFGHIJ01",
            "lr_sdk_abcdef1_0123456789abcdefghijABCDEFGHIJ012", "lr_sdk_abcdef12_0123456789abcdefghijABCDEFGHIJ0",
        ])
    func notKeys(_ text: String) {
        #expect(APIKeys.prefix(of: text) == nil)
    }

    @Test("the first start makes a project and an admin key once, or takes the operator's", arguments: TestEngine.available)
    func bootstrap(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, _ async throws in
            _ = try await store.migrate()
            guard case .created(let project, let key, let secret?) = try await Bootstrap.run(store: store, providedKey: nil, at: Date())
            else {
                Issue.record("expected a new project and key")
                return
            }
            #expect(key.scope == .admin && key.projectID == project.id)
            #expect(APIKeys.matches(secret, key))
            guard case .alreadySetUp = try await Bootstrap.run(store: store, providedKey: nil, at: Date()) else {
                Issue.record("a second start made something")
                return
            }
        }
        try await ScratchDatabase.with(engine) { store, _ async throws in
            _ = try await store.migrate()
            let mine = APIKeys.issue(project: "", scope: .admin, name: "", at: Date()).secret
            guard case .created(_, let key, nil) = try await Bootstrap.run(store: store, providedKey: mine, at: Date()) else {
                Issue.record("expected the provided key to be stored")
                return
            }
            #expect(APIKeys.matches(mine, key))
            #expect(try await store.key(prefix: key.prefix) == key)
        }
        try await ScratchDatabase.with(engine) { store, _ async throws in
            _ = try await store.migrate()
            let sdkKey = APIKeys.issue(project: "", scope: .sdk, name: "", at: Date()).secret
            for bad in ["letmein", sdkKey] {
                let error = await #expect(throws: BootstrapError.self) {
                    try await Bootstrap.run(store: store, providedKey: bad, at: Date())
                }
                #expect(error.map { !$0.description.contains(bad) } ?? false, "the refused key is not echoed")
            }
            #expect(try await store.projects().isEmpty, "a refused key makes nothing")
        }
    }
}

@Suite("Database locations")
struct DatabaseLocationTests {
    @Test(
        "sqlite:PATH and postgres:// URLs are read; anything else refused; a password never printed",
        arguments: [
            ("sqlite:data.sqlite", "sqlite:data.sqlite"), ("sqlite::memory:", "sqlite::memory:"),
            ("postgres://lr:s3cret@db.internal:6543/links", "postgres://lr@db.internal:6543/links"),
            ("postgresql://lr:s3cret@db.internal/links?sslmode=require", "postgres://lr@db.internal:5432/links"),
            ("sqlite:", nil), ("mysql://x", nil), ("postgres:///nohost", nil), ("data.sqlite", nil),
        ] as [(String, String?)])
    func locations(_ text: String, _ shown: String?) {
        let location = DatabaseLocation(text)
        #expect(location?.description == shown)
        #expect(location?.description.contains("s3cret") != true)
    }
}
