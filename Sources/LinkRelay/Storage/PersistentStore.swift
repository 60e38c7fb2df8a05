import Foundation

/// Where a client keeps what must survive a restart: whether this install was matched, its
/// outcome, the delivered-deferred marker, the backend's values (such as its install id) and the
/// event queue.
///
/// Each client uses its own store; the default ``FileStore`` keeps one folder per backend.
/// `InMemoryStore` (LinkRelayTesting) simulates restarts in tests: give a new `DeepLinkClient`
/// the same store.
///
/// Values are small JSON documents. Calls are synchronous and short; a store must be safe to
/// call from any thread.
public protocol PersistentStore: Sendable {
    /// The data saved under `key`, or `nil` when there is none.
    func data(forKey key: String) throws -> Data?
    /// Saves `data` under `key`, replacing what was there. Must not leave a half-written value.
    func setData(_ data: Data, forKey key: String) throws
    /// Removes the value under `key`; removing a missing key is not an error.
    func removeData(forKey key: String) throws
    /// Removes every value of this store.
    func removeAll() throws
    /// Adds `data` at the end of the value under `key` (creating it), for the event queue's
    /// journal: the cost should not grow with the value. A failure may leave part of `data`
    /// added; the client then writes the whole value again. Default: reads the value and saves
    /// it with `data` added (correct, and as slow as the value is large).
    func appendData(_ data: Data, forKey key: String) throws

    /// Whether writes are slow enough (a file synced to disk) that the client should make
    /// frequent ones, the event queue's, off the caller's path. Default `false`: written at once.
    var prefersDeferredWrites: Bool { get }
}

extension PersistentStore {
    public var prefersDeferredWrites: Bool { false }

    public func appendData(_ data: Data, forKey key: String) throws {
        var value = try self.data(forKey: key) ?? Data()
        value.append(data)
        try setData(value, forKey: key)
    }
}

extension PersistentStore {
    /// The value under `key`, or `nil` when it is missing, unreadable or corrupt (logged; never
    /// a crash).
    func load<Value: Decodable>(_ type: Value.Type, forKey key: String, logger: LinkRelayLogger) -> Value? {
        let data: Data?
        do {
            data = try self.data(forKey: key)
        } catch {
            logger.warning("Could not read the stored '\(key)'; treating it as absent.")
            return nil
        }
        guard let data else { return nil }
        do {
            return try JSONDecoder.linkRelay().decode(Value.self, from: data)
        } catch {
            logger.warning("The stored '\(key)' is corrupt; treating it as absent.")
            return nil
        }
    }

    /// Saves `value` under `key`; a failure is logged, and the value stays in memory only.
    func save<Value: Encodable>(_ value: Value, forKey key: String, logger: LinkRelayLogger) {
        do {
            try setData(JSONEncoder.linkRelay().encode(value), forKey: key)
        } catch {
            logger.error("Could not save '\(key)': it is kept in memory only until the next successful save.")
        }
    }

    /// Removes `key`; a failure is logged.
    func remove(_ key: String, logger: LinkRelayLogger) {
        do {
            try removeData(forKey: key)
        } catch {
            logger.error("Could not remove the stored '\(key)'.")
        }
    }
}

extension JSONEncoder {
    /// Dates as seconds since 1970 (no precision lost), keys sorted: stable files.
    static func linkRelay() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.timeIntervalSince1970)
        }
        return encoder
    }
}

extension JSONDecoder {
    static func linkRelay() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            Date(timeIntervalSince1970: try decoder.singleValueContainer().decode(Double.self))
        }
        return decoder
    }
}
