import Foundation
import LinkRelay

/// A device that can be locked, for tests: while it is locked, protected data is unavailable,
/// as iOS makes it between a restart and the first unlock (and, for files with complete
/// protection, whenever the device is locked).
///
/// Give the client the lock as its `protectedData`, and the stores and marker it guards:
///
/// ```swift
/// let lock = DeviceLock(locked: true)                  // a prewarmed launch before first unlock
/// configuration.protectedData = lock
/// configuration.store = lock.guarding(store)           // throws on every read and write while locked
/// configuration.installMarker = lock.guarding(marker)  // answers .unreadable while locked
/// let launch = Task { await client.start() }           // waits: nothing can be read yet
/// lock.unlock()                                        // the user unlocks; the launch is decided
/// ```
public final class DeviceLock: ProtectedDataAvailability {
    private let locked: Locked<Bool>
    private let signal = AvailabilitySignal()
    private let waits = Locked(0)
    private let waitWatchers = ConditionWaiters()

    /// A device, locked or not.
    public init(locked: Bool) {
        self.locked = Locked(locked)
    }

    /// Whether the device is locked now.
    public var isLocked: Bool { locked.withLock { $0 } }

    /// Locks the device: guarded stores and markers cannot be read until ``unlock()``.
    public func lock() {
        locked.withLock { $0 = true }
    }

    /// Unlocks the device, and wakes those waiting for protected data.
    public func unlock() {
        locked.withLock { $0 = false }
        signal.raise()
    }

    /// How many times something started waiting for protected data while the device was
    /// locked.
    public var waitCount: Int { waits.withLock { $0 } }

    /// Returns once ``waitCount`` reaches `count` (or the calling task is cancelled): the client
    /// is waiting for the unlock.
    public func waitForWaits(count: Int) async {
        let waits = self.waits
        await waitWatchers.wait(until: count) { waits.withLock { $0 } }
    }

    public func isAvailable() async -> Bool { !isLocked }

    public func waitUntilAvailable() async {
        var counted = false
        while !Task.isCancelled {
            let seen = signal.count
            if !isLocked { return }
            if !counted {
                counted = true
                waitWatchers.update(
                    waits.withLock { value -> Int in
                        value += 1
                        return value
                    })
            }
            await signal.wait(after: seen)
        }
    }

    /// `store` as this device guards it: every call throws `CocoaError(.fileReadNoPermission)`
    /// (reads) or `CocoaError(.fileWriteNoPermission)` (writes) while the device is locked, as
    /// a protected file does on iOS.
    public func guarding(_ store: any PersistentStore) -> any PersistentStore {
        GuardedStore(lock: self, store: store)
    }

    /// `marker` as this device guards it: ``/LinkRelay/InstallMarkerState/unreadable`` while the device is
    /// locked (the Keychain's `errSecInteractionNotAllowed`), and placing it does nothing then.
    public func guarding(_ marker: any InstallMarker) -> any InstallMarker {
        GuardedMarker(lock: self, marker: marker)
    }
}

private struct GuardedStore: PersistentStore {
    let lock: DeviceLock
    let store: any PersistentStore

    private func readable() throws {
        if lock.isLocked { throw CocoaError(.fileReadNoPermission) }
    }

    private func writable() throws {
        if lock.isLocked { throw CocoaError(.fileWriteNoPermission) }
    }

    func data(forKey key: String) throws -> Data? {
        try readable()
        return try store.data(forKey: key)
    }

    func setData(_ data: Data, forKey key: String) throws {
        try writable()
        try store.setData(data, forKey: key)
    }

    func removeData(forKey key: String) throws {
        try writable()
        try store.removeData(forKey: key)
    }

    func removeAll() throws {
        try writable()
        try store.removeAll()
    }

    func appendData(_ data: Data, forKey key: String) throws {
        try writable()
        try store.appendData(data, forKey: key)
    }

    var prefersDeferredWrites: Bool { store.prefersDeferredWrites }
}

private struct GuardedMarker: InstallMarker {
    let lock: DeviceLock
    let marker: any InstallMarker

    func isPresent() -> Bool { state() == .present }

    func state() -> InstallMarkerState {
        lock.isLocked ? .unreadable : marker.state()
    }

    func place() {
        guard !lock.isLocked else { return }
        marker.place()
    }
}

/// An ``/LinkRelay/InstallMarker`` in memory, for tests: present or not, placed by the client.
public final class InMemoryInstallMarker: InstallMarker {
    private let present: Locked<Bool>
    private let placed = Locked(0)

    /// A marker, there (an earlier install left it) or not.
    public init(present: Bool = false) {
        self.present = Locked(present)
    }

    /// How many times the client placed it.
    public var placeCount: Int { placed.withLock { $0 } }

    public func isPresent() -> Bool { present.withLock { $0 } }

    public func place() {
        present.withLock { $0 = true }
        placed.withLock { $0 += 1 }
    }
}
