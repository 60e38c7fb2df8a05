import Foundation
import Synchronization

@testable import LinkRelayServerCore

/// ``KeyStore`` in memory, for the Core's tests: what the SQL stores do, without a database (a
/// prefix is unique; the keys of a project oldest first; revoking a revoked key keeps its time).
final class MemoryKeyStore: KeyStore {
    private let keys = Mutex<[APIKeyRecord]>([])

    func insertKey(_ key: APIKeyRecord) async throws {
        try keys.withLock { keys in
            guard !keys.contains(where: { $0.prefix == key.prefix || $0.id == key.id }) else {
                throw StoreError(.conflict, "A key with this prefix exists.")
            }
            keys.append(key)
        }
    }

    func key(prefix: String) async throws -> APIKeyRecord? {
        keys.withLock { $0.first { $0.prefix == prefix } }
    }

    func keys(project: String) async throws -> [APIKeyRecord] {
        keys.withLock { $0.filter { $0.projectID == project }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) } }
    }

    func revokeKey(id: String, at date: Date) async throws -> Bool {
        keys.withLock { keys in
            guard let index = keys.firstIndex(where: { $0.id == id }) else { return false }
            keys[index].revokedAt = keys[index].revokedAt ?? date.storedPrecision
            return true
        }
    }
}
