import Foundation
import LinkRelay

/// A ``/LinkRelay/PersistentStore`` in memory, for tests. Give two `DeepLinkClient`s the same store to
/// simulate a restart:
///
/// ```swift
/// let store = InMemoryStore()
/// let first = DeepLinkClient(backend: backend, configuration: .init(store: store))
/// await first.start()
/// await first.shutdown()
/// let second = DeepLinkClient(backend: backend, configuration: .init(store: store))   // the next launch
/// ```
public final class InMemoryStore: PersistentStore {
    private let values = Locked([String: Data]())

    /// An empty store.
    public init() {}

    /// The keys that hold a value, sorted.
    public var keys: [String] { values.withLock { $0.keys.sorted() } }

    /// Replaces the value under `key` with bytes that are not JSON, as a crash or a full disk
    /// might leave it.
    public func corrupt(_ key: String) {
        values.withLock { $0[key] = Data([0xFF, 0x00, 0x7B]) }
    }

    public func data(forKey key: String) throws -> Data? { values.withLock { $0[key] } }

    public func setData(_ data: Data, forKey key: String) throws { values.withLock { $0[key] = data } }

    public func removeData(forKey key: String) throws { values.withLock { _ = $0.removeValue(forKey: key) } }

    public func removeAll() throws { values.withLock { $0.removeAll() } }

    public func appendData(_ data: Data, forKey key: String) throws {
        values.withLock { $0[key, default: Data()].append(data) }
    }
}

extension DeepLinkClient.Configuration {
    /// A configuration for tests: this store, and optionally a clock and transport.
    public init(store: any PersistentStore, clock: (any LinkRelayClock)? = nil, transport: (any HTTPTransport)? = nil) {
        self.init()
        self.store = store
        if let clock { self.clock = clock }
        self.transport = transport
    }
}
