import Foundation

/// A ``PersistentStore`` in `UserDefaults`, for apps that prefer it to ``FileStore``'s files.
///
/// ```swift
/// configuration.store = UserDefaultsStore(suiteName: "group.com.acme.shop")   // an app group
/// configuration.store = UserDefaultsStore()                                    // .standard
/// ```
///
/// Each value is stored under `"{namespace}.{key}"`, so ``removeAll()`` (and the client's
/// `clearData()`) removes LinkRelay's values and nothing of the app's. Give each client its own
/// namespace. Writes are not atomic across keys, as `UserDefaults` is not; each value is one
/// `Data` written at once.
///
/// Listed in LinkRelay's privacy manifest as `UserDefaults` access for the app's own data
/// (reason CA92.1).
public final class UserDefaultsStore: PersistentStore, @unchecked Sendable {
    // `UserDefaults` is thread-safe on Apple platforms but not `Sendable` everywhere; every use
    // here goes through `lock`, which makes this type safe to share on any platform.
    private let defaults: UserDefaults
    private let lock = NSLock()
    /// The prefix of every key, without the trailing dot.
    public let namespace: String

    /// A store in `defaults` under `namespace` (default `LinkRelay`).
    public init(defaults: UserDefaults, namespace: String = "LinkRelay") {
        self.defaults = defaults
        self.namespace = namespace
    }

    /// A store in the standard defaults under `namespace` (default `LinkRelay`).
    public convenience init(namespace: String = "LinkRelay") {
        self.init(defaults: UserDefaults.standard, namespace: namespace)
    }

    /// A store in the suite `suiteName` (an app group, for instance); `nil` when the suite name
    /// is not allowed (your app's own bundle identifier, or `NSGlobalDomain`).
    public convenience init?(suiteName: String, namespace: String = "LinkRelay") {
        guard let defaults = UserDefaults(suiteName: suiteName) else { return nil }
        self.init(defaults: defaults, namespace: namespace)
    }

    private func fullKey(_ key: String) -> String { "\(namespace).\(key)" }

    public func data(forKey key: String) throws -> Data? {
        lock.withLock { defaults.data(forKey: fullKey(key)) }
    }

    public func setData(_ data: Data, forKey key: String) throws {
        lock.withLock { defaults.set(data, forKey: fullKey(key)) }
    }

    public func removeData(forKey key: String) throws {
        lock.withLock { defaults.removeObject(forKey: fullKey(key)) }
    }

    public func removeAll() throws {
        lock.withLock {
            let prefix = namespace + "."
            for key in defaults.dictionaryRepresentation().keys where key.hasPrefix(prefix) {
                defaults.removeObject(forKey: key)
            }
        }
    }
}
