import Foundation

/// Tells the app once when the store's writes of a key start failing, and logs each failure:
/// the first failure after a success publishes a `.failure` with code `.storage`.
final class StoreWriteHealth: Sendable {
    /// The keys whose last write failed.
    private let failing = Locked(Set<String>())
    private let logger: LinkRelayLogger
    private let report: @Sendable (DeepLinkError) -> Void

    init(logger: LinkRelayLogger, report: @escaping @Sendable (DeepLinkError) -> Void) {
        self.logger = logger
        self.report = report
    }

    /// Writes `data` under `key`; on failure logs `consequence` and reports the first failure.
    func write(_ data: Data, forKey key: String, to store: any PersistentStore, append: Bool = false, consequence: String) -> Bool {
        do {
            if append {
                try store.appendData(data, forKey: key)
            } else {
                try store.setData(data, forKey: key)
            }
            failing.withLock { _ = $0.remove(key) }
            return true
        } catch {
            let message = "Could not save '\(key)' (\(data.count) bytes): \(consequence)"
            logger.error(message)
            let first = failing.withLock { $0.insert(key).inserted }
            if first { report(DeepLinkError(.storage, message, underlying: error)) }
            return false
        }
    }
}
