import Foundation

/// The values a backend keeps across launches (an install id, a last-seen token), in the
/// client's store under keys of the backend's own, removed by ``DeepLinkClient/clearData()``.
///
/// ```swift
/// context.storage.set("3f2c…", forKey: "installId")
/// let installID = context.storage.value(String.self, forKey: "installId")
/// ```
@_spi(Backend) public struct BackendStorage: Sendable {
    let store: any PersistentStore
    let logger: LinkRelayLogger

    /// Storage in `store`, logging unreadable values to `logger`.
    public init(store: any PersistentStore, logger: LinkRelayLogger = .silent) {
        self.store = store
        self.logger = logger
    }

    /// The value saved under `key`, or `nil` when there is none (or it is unreadable).
    public func value<Value: Decodable>(_ type: Value.Type, forKey key: String) -> Value? {
        store.load(Value.self, forKey: Self.prefix + key, logger: logger)
    }

    /// Saves `value` under `key`; `nil` removes it.
    public func set<Value: Encodable>(_ value: Value?, forKey key: String) {
        if let value {
            store.save(value, forKey: Self.prefix + key, logger: logger)
        } else {
            store.remove(Self.prefix + key, logger: logger)
        }
    }

    static let prefix = "backend."
}
