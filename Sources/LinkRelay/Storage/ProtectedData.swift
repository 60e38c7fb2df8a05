import Foundation

/// Whether the device's protected data can be read: the files and Keychain items the system
/// locks with the device.
///
/// On iOS a file with the default protection (complete until first user authentication) and a
/// Keychain item readable after the first unlock cannot be read between a restart and the
/// user's first unlock, and a file with complete protection cannot be read while the device is
/// locked. The app can still run then: iOS 15's prewarming, and background launches (location,
/// VoIP, background tasks). What LinkRelay stored exists but cannot be read, and that must not
/// look like a first install.
///
/// The client never decides a launch while protected data is unavailable: ``DeepLinkClient/launch()``
/// (and so ``DeepLinkClient/start()`` and the install match) waits until it is. Links are
/// resolved and delivered meanwhile as usual.
///
/// The default is `SystemProtectedData` on iOS, tvOS and visionOS (`UIApplication`'s
/// `isProtectedDataAvailable` and `protectedDataDidBecomeAvailableNotification`); elsewhere
/// there is none (`nil`: data is always available). Tests use `DeviceLock` (LinkRelayTesting).
public protocol ProtectedDataAvailability: Sendable {
    /// Whether protected data can be read now.
    func isAvailable() async -> Bool
    /// Returns once protected data is available (at once when it is), or when the calling task
    /// is cancelled.
    func waitUntilAvailable() async
}

/// What a store or the install marker gave when it was read: a value, nothing, or a value that
/// exists but cannot be read now (the device is locked, the disk failed). Unreadable is never
/// taken for absent: that would make a locked device's launch look like a first install.
enum StoredReading<Value> {
    case value(Value)
    case absent
    case unreadable
}

extension StoredReading: Sendable where Value: Sendable {}

extension StoredReading {
    /// The value, or `nil` when there is none or it cannot be read.
    var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }

    var isUnreadable: Bool {
        if case .unreadable = self { return true }
        return false
    }
}

/// A flag that tasks can wait on, opened when protected data becomes available: the part of
/// `SystemProtectedData` and `DeviceLock` that is the same everywhere, tested here.
package final class AvailabilitySignal: Sendable {
    private let opened = Locked(0)
    private let waiters = ConditionWaiters()

    package init() {}

    /// How many times the signal was raised so far.
    package var count: Int { opened.withLock { $0 } }

    /// Wakes every task waiting for a raise after the one it saw.
    package func raise() {
        let count = opened.withLock { value -> Int in
            value &+= 1
            return value
        }
        waiters.update(count)
    }

    /// Returns once the signal is raised after `seen` (``count`` read before checking), or the
    /// calling task is cancelled.
    package func wait(after seen: Int) async {
        let opened = self.opened
        await waiters.wait(until: seen &+ 1) { opened.withLock { $0 } }
    }
}

extension DeepLinkClient {
    /// Waits until protected data is available (``Configuration/protectedData``), or the client
    /// shuts down. Returns whether it is available: `false` only after ``shutdown()``.
    func protectedDataAvailable() async -> Bool {
        guard let gate = configuration.protectedData else { return true }
        if await gate.isAvailable() { return true }
        guard !isShutDown else { return false }
        logger.info("Protected data is not available (the device is locked): this launch is decided once it is.")
        let waiting = Task { await gate.waitUntilAvailable() }
        let id = firstLaunch.addProtectedDataWait(waiting)
        await waiting.value
        firstLaunch.removeProtectedDataWait(id)
        guard !isShutDown else { return false }
        logger.debug("Protected data is available.")
        return true
    }

    /// Whether protected data is unavailable now (`false` without ``Configuration/protectedData``).
    func protectedDataIsUnavailable() async -> Bool {
        guard let gate = configuration.protectedData else { return false }
        return await !gate.isAvailable()
    }
}

extension PersistentStore {
    /// The value under `key`: ``StoredReading/unreadable`` when the store throws (the value may
    /// exist: a locked device), ``StoredReading/absent`` when there is none or it is corrupt
    /// (logged).
    func read<Value: Decodable>(_ type: Value.Type, forKey key: String, logger: LinkRelayLogger) -> StoredReading<Value> {
        let data: Data?
        do {
            data = try self.data(forKey: key)
        } catch {
            logger.warning("Could not read the stored '\(key)' (the device may be locked); it is not taken for absent.")
            return .unreadable
        }
        guard let data else { return .absent }
        do {
            return .value(try JSONDecoder.linkRelay().decode(Value.self, from: data))
        } catch {
            logger.warning("The stored '\(key)' is corrupt; treating it as absent.")
            return .absent
        }
    }
}

/// The platform's ``ProtectedDataAvailability``.
enum ProtectedDataDefault {
    static let platformDefault: (any ProtectedDataAvailability)? = {
        #if canImport(UIKit) && !os(watchOS)
            return SystemProtectedData.shared
        #else
            return nil
        #endif
    }()
}
