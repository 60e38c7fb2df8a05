import Foundation
import Testing

@testable import LinkRelayServerCore

/// The API key check every authenticated route, the dashboard's sign-in and the first start
/// make (``KeyStore/check(secret:scopes:)``), on an in-memory store.
@Suite("API key check")
struct KeyCheckTests {
    let store = MemoryKeyStore()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func issue(_ scope: KeyScope, project: String = "prj_a") async throws -> IssuedKey {
        let key = APIKeys.issue(project: project, scope: scope, name: "test", at: now)
        try await store.insertKey(key.record)
        return key
    }

    @Test("a live key of an allowed scope is valid; of another scope, out of scope")
    func scopes() async throws {
        let sdk = try await issue(.sdk)
        let admin = try await issue(.admin)
        #expect(try await store.check(secret: sdk.secret, scopes: [.sdk, .admin]) == .valid(sdk.record))
        #expect(try await store.check(secret: sdk.secret, scopes: [.admin]) == .outOfScope(sdk.record))
        #expect(try await store.check(secret: admin.secret, scopes: [.admin]) == .valid(admin.record))
    }

    @Test("an unknown key, a wrong secret for a known prefix, a revoked key and a malformed one are one answer")
    func refused() async throws {
        let admin = try await issue(.admin)
        let other = APIKeys.issue(project: "prj_a", scope: .admin, name: "never stored", at: now)
        // The known prefix with another key's random part: found by its prefix, refused by its hash.
        let prefix = try #require(APIKeys.prefix(of: admin.secret))
        let otherRandom = other.secret.split(separator: "_").last.map(String.init) ?? ""
        let forged = "\(prefix)_\(otherRandom)"
        #expect(APIKeys.prefix(of: forged) == prefix)
        for secret in [other.secret, forged, "", "lr_admin_", "Bearer \(admin.secret)", String(admin.secret.dropLast())] {
            #expect(try await store.check(secret: secret, scopes: [.admin]) == .refused, "\(secret.count) characters")
        }
        #expect(try await store.revokeKey(id: admin.record.id, at: now))
        #expect(try await store.check(secret: admin.secret, scopes: [.admin]) == .refused)
        // Revoked and of another scope: refused, not out of scope (nothing said about the key).
        let sdk = try await issue(.sdk)
        #expect(try await store.revokeKey(id: sdk.record.id, at: now))
        #expect(try await store.check(secret: sdk.secret, scopes: [.admin]) == .refused)
    }
}
