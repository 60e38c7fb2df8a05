import Foundation

/// Where the server keeps API keys, each stored only as its secret's hash. One of the stores
/// ``ServerStore`` is made of (the SQL engines implement every one); a part of the server that
/// needs only this takes only this.
package protocol KeyStore: Sendable {
    /// Stores a key's record (its secret only as a hash).
    func insertKey(_ key: APIKeyRecord) async throws

    /// The key whose public prefix is `prefix`, revoked or not.
    func key(prefix: String) async throws -> APIKeyRecord?

    /// The keys of `project`, oldest first.
    func keys(project: String) async throws -> [APIKeyRecord]

    /// Marks the key `id` revoked at `date`; false when there is no such key.
    func revokeKey(id: String, at date: Date) async throws -> Bool
}

/// What a presented API key is (``KeyStore/check(secret:scopes:)``).
package enum KeyCheck: Sendable, Hashable {
    /// A known key, not revoked, of one of the scopes asked for.
    case valid(APIKeyRecord)
    /// A known key, not revoked, whose scope is not among those asked for.
    case outOfScope(APIKeyRecord)
    /// Not a key, an unknown one, a wrong secret for a known prefix, or a revoked key: all one
    /// answer, so a caller learns nothing about which keys exist.
    case refused
}

extension KeyStore {
    /// Checks the key `secret` (as a client presented it) against the stored keys: found by
    /// its public prefix, its hash compared in constant time (``APIKeys/matches(_:_:)``). The
    /// API's routes, the dashboard's sign-in and the first start all check a key here.
    package func check(secret: String, scopes: Set<KeyScope>) async throws -> KeyCheck {
        guard let prefix = APIKeys.prefix(of: secret), let key = try await key(prefix: prefix), key.revokedAt == nil,
            APIKeys.matches(secret, key)
        else { return .refused }
        return scopes.contains(key.scope) ? .valid(key) : .outOfScope(key)
    }
}
