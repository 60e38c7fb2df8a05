import Foundation

/// A store that keeps values in memory only: for a ``BackendContext`` made outside a client,
/// and as the client's fallback when no folder can be written.
final class EphemeralStore: PersistentStore {
    private let values = Locked([String: Data]())

    func data(forKey key: String) throws -> Data? { values.withLock { $0[key] } }
    func setData(_ data: Data, forKey key: String) throws { values.withLock { $0[key] = data } }
    func removeData(forKey key: String) throws { values.withLock { _ = $0.removeValue(forKey: key) } }
    func removeAll() throws { values.withLock { $0.removeAll() } }
    func appendData(_ data: Data, forKey key: String) throws { values.withLock { $0[key, default: Data()].append(data) } }
}
