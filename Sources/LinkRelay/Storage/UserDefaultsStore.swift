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
public final class UserDefaultsStore: PersistentStore {
    /// The suite, or `nil` for the standard defaults. The store keeps the name rather than a
    /// `UserDefaults` instance (which is not `Sendable` everywhere) and asks for the suite on
    /// each use; `UserDefaults` shares one storage per suite and is thread-safe.
    public let suiteName: String?
    /// The prefix of every key, without the trailing dot.
    public let namespace: String

    /// A store in the standard defaults under `namespace` (default `LinkRelay`).
    public init(namespace: String = "LinkRelay") {
        self.suiteName = nil
        self.namespace = namespace
    }

    /// A store in the suite `suiteName` (an app group, for instance); `nil` when the suite name
    /// is not allowed (your app's own bundle identifier, or `NSGlobalDomain`).
    public init?(suiteName: String, namespace: String = "LinkRelay") {
        guard UserDefaults(suiteName: suiteName) != nil else { return nil }
        self.suiteName = suiteName
        self.namespace = namespace
    }

    private var defaults: UserDefaults {
        suiteName.flatMap { UserDefaults(suiteName: $0) } ?? .standard
    }

    private func fullKey(_ key: String) -> String { "\(namespace).\(key)" }

    public func data(forKey key: String) throws -> Data? {
        defaults.data(forKey: fullKey(key))
    }

    public func setData(_ data: Data, forKey key: String) throws {
        defaults.set(data, forKey: fullKey(key))
    }

    public func removeData(forKey key: String) throws {
        defaults.removeObject(forKey: fullKey(key))
    }

    public func removeAll() throws {
        let defaults = self.defaults
        let prefix = namespace + "."
        for key in defaults.dictionaryRepresentation().keys where key.hasPrefix(prefix) {
            defaults.removeObject(forKey: key)
        }
    }
}
