import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// iOS locks the app's files and Keychain items between a restart and the first unlock (and
/// files with complete protection whenever the device is locked), while prewarming and
/// background launches still run the app. What is stored then exists but cannot be read; it
/// must never look like a first install (issue 62, point 1).
@Suite("A launch while protected data is unavailable", .timeLimit(.minutes(1)))
struct ProtectedDataTests {
    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
    let store = InMemoryStore()
    let marker = InMemoryInstallMarker()
    let clock = ManualClock()

    static let clicked = DeepLink.fixture(path: "/products/42", host: "go.acme.app", origin: .deferred)
    static let attribution = InstallAttribution(installID: "inst-1", isAttributed: true, confidence: .init(score: 90), method: .fingerprint)

    /// One process of the app on this device, its store and marker guarded by `lock`.
    func process(lock: DeviceLock, device: any DeviceInfoProvider = StaticDeviceInfo()) -> DeepLinkClient {
        makeClient(backend, clock: clock, store: lock.guarding(store)) {
            $0.retryPolicy = .none
            $0.processLaunch = UUID()
            $0.protectedData = lock
            $0.installMarker = lock.guarding(marker)
            $0.deviceInfo = device
        }
    }

    @Test("a prewarmed process after a restart waits for the unlock: a relaunch, the outcome restored, no second match or link")
    func lockedRelaunch() async throws {
        backend.scriptInstall(.success(InstallMatch(attribution: Self.attribution, link: Self.clicked)))
        // The install's first launch, unlocked: matched, the link delivered once.
        let unlocked = DeviceLock(locked: false)
        let first = process(lock: unlocked)
        let firstLinks = first.deepLinks()
        #expect(await first.start().kind == .firstInstall)
        var iterator = firstLinks.makeAsyncIterator()
        #expect(await iterator.next()?.path == "/products/42")
        await first.shutdown()
        #expect(marker.placeCount == 1)

        // The phone restarts; iOS prewarms the app before the user unlocks it.
        let lock = DeviceLock(locked: true)
        let prewarmed = process(lock: lock)
        let events = prewarmed.linkEvents()
        let started = Task { await prewarmed.start() }
        await lock.waitForWaits(count: 1)
        #expect(await prewarmed.currentInstallOutcome == nil)
        #expect(backend.installMatchCount == 1)
        #expect(marker.placeCount == 1)

        // The user unlocks and opens the app: the same process goes on.
        lock.unlock()
        #expect(await started.value.kind == .relaunch)
        #expect(await prewarmed.installOutcome() == .attributed(Self.clicked, Self.attribution))
        #expect(backend.installMatchCount == 1)
        #expect(marker.placeCount == 1)
        // Nothing new was delivered: the outcome replayed as on any relaunch, no link.
        let received = await eventsUntilMarker(prewarmed, events)
        #expect(received.compactMap(\.link).isEmpty)
        #expect(await prewarmed.launch().launchCount == 2)
    }

    @Test("a first install whose first process is prewarmed while locked: one outcome, one match, one delivery")
    func lockedFirstInstall() async throws {
        backend.scriptInstall(.success(InstallMatch(attribution: Self.attribution, link: Self.clicked)))
        let lock = DeviceLock(locked: true)
        let client = process(lock: lock)
        let events = client.linkEvents()
        let outcome = Task { await client.installOutcome() }
        let started = Task { await client.start() }
        await lock.waitForWaits(count: 1)
        #expect(backend.installMatchCount == 0)
        #expect(store.keys.isEmpty)
        lock.unlock()
        #expect(await started.value.kind == .firstInstall)
        #expect(await outcome.value == .attributed(Self.clicked, Self.attribution))
        let received = await eventsUntilMarker(client, events)
        #expect(received.compactMap(\.link).map(\.path) == ["/products/42"])
        #expect(backend.installMatchCount == 1)
        #expect(marker.placeCount == 1)
        await client.shutdown()

        // The next launch, locked again at first and then unlocked: nothing more.
        let relock = DeviceLock(locked: true)
        let next = process(lock: relock)
        let nextStarted = Task { await next.start() }
        await relock.waitForWaits(count: 1)
        relock.unlock()
        #expect(await nextStarted.value.kind == .relaunch)
        #expect(backend.installMatchCount == 1)
    }

    @Test("a reinstall's marker read while locked is not taken for absent: the launch waits, then reads it")
    func markerWaits() async {
        let present = InMemoryInstallMarker(present: true)
        let lock = DeviceLock(locked: true)
        let client = makeClient(backend, clock: clock, store: lock.guarding(store)) {
            $0.processLaunch = UUID()
            $0.protectedData = lock
            $0.installMarker = lock.guarding(present)
        }
        let launched = Task { await client.launch() }
        await lock.waitForWaits(count: 1)
        lock.unlock()
        #expect(await launched.value.kind == .reinstall)
        #expect(present.placeCount == 0)
    }

    @Test("a store that cannot be read with protected data available: a relaunch, nothing stored, the outcome failed, no match")
    func failingStore() async {
        let failing = FailingReadStore()
        let client = makeClient(backend, clock: clock, store: failing) {
            $0.retryPolicy = .none
            $0.processLaunch = UUID()
            $0.protectedData = DeviceLock(locked: false)
            $0.installMarker = marker
        }
        let launch = await client.start()
        #expect(launch.kind == .relaunch)
        #expect(launch.launchCount == 0)
        #expect(failing.writes.withLock { $0 } == 0)
        #expect(marker.placeCount == 0)
        #expect(backend.installMatchCount == 0)
        guard case .failed(let error) = await client.installOutcome() else {
            Issue.record("expected a failed outcome")
            return
        }
        #expect(error.code == .storage)
    }

    @Test("shutdown ends the wait: the launch is a relaunch with nothing known, and nothing is stored")
    func shutdownWhileLocked() async {
        let lock = DeviceLock(locked: true)
        let client = process(lock: lock)
        let launched = Task { await client.launch() }
        let outcome = Task { await client.installOutcome() }
        await lock.waitForWaits(count: 1)
        await client.shutdown()
        let launch = await launched.value
        #expect(launch.kind == .relaunch)
        #expect(launch.launchCount == 0)
        guard case .failed(let error) = await outcome.value else {
            Issue.record("expected the shutdown's failed outcome")
            return
        }
        #expect(error.code == .shutdown)
        lock.unlock()
        #expect(store.keys.isEmpty)
    }

    @Test("links are delivered while the device is locked; the launch still waits")
    func linksFlowWhileLocked() async {
        let lock = DeviceLock(locked: true)
        let client = process(lock: lock)
        let links = client.deepLinks()
        let started = Task { await client.start() }
        await lock.waitForWaits(count: 1)
        client.handle(url("myapp://cart"))
        var iterator = links.makeAsyncIterator()
        #expect(await iterator.next()?.path == "/cart")
        lock.unlock()
        #expect(await started.value.kind == .firstInstall)
    }

    @Test("identifierForVendor, nil before the first unlock, is not kept: the install match sends the real one")
    func vendorIDNotCachedWhileNil() async {
        let lock = DeviceLock(locked: true)
        let vendor = UUID()
        let device = UnlockingDevice(lock: lock, vendorID: vendor)
        backend.scriptInstall(.success(InstallMatch(attribution: Self.attribution, link: nil)))
        let client = process(lock: lock, device: device)
        let started = Task { await client.start() }
        await lock.waitForWaits(count: 1)
        lock.unlock()
        _ = await started.value
        #expect(backend.contexts.last?.device.vendorID == vendor)
        #expect(device.asked.withLock { $0 } == 2)
    }

    @Test("the Keychain's statuses: only errSecItemNotFound is absent; -25308 and any other failure are unreadable")
    func keychainStatuses() {
        #expect(KeychainInstallMarker.state(forStatus: 0) == .present)
        #expect(KeychainInstallMarker.state(forStatus: -25300) == .absent)
        #expect(KeychainInstallMarker.state(forStatus: -25308) == .unreadable)
        #expect(KeychainInstallMarker.state(forStatus: -34018) == .unreadable)  // errSecMissingEntitlement
        #expect(KeychainInstallMarker.state(forStatus: -25291) == .unreadable)  // errSecNotAvailable
    }

    @Test("a file that exists but cannot be read is unreadable, not absent; a missing one is absent")
    func fileStoreReadings() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lr-protected-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = FileStore(directory: folder)
        let logger = LinkRelayLogger(sink: LogSink(minimumLevel: .error) { _ in })
        if case .absent = files.read(LaunchHistory.self, forKey: LaunchHistory.key, logger: logger) {
        } else {
            Issue.record("a missing file is absent")
        }
        // A folder where the file should be: it exists, and reading it fails (as a protected
        // file does while the device is locked; root reads any mode here, so a folder stands in).
        try FileManager.default.createDirectory(at: files.fileURL(for: LaunchHistory.key), withIntermediateDirectories: true)
        #expect(files.read(LaunchHistory.self, forKey: LaunchHistory.key, logger: logger).isUnreadable)
    }

    @Test("the platform default: none here (Linux has no protected data)")
    func defaultHere() {
        #expect(DeepLinkClient.Configuration().protectedData == nil)
    }
}

/// A store whose every read fails, as a broken disk's would, counting writes.
final class FailingReadStore: PersistentStore, Sendable {
    let writes = Locked(0)
    func data(forKey key: String) throws -> Data? { throw CocoaError(.fileReadUnknown) }
    func setData(_ data: Data, forKey key: String) throws { writes.withLock { $0 += 1 } }
    func removeData(forKey key: String) throws { writes.withLock { $0 += 1 } }
    func removeAll() throws { writes.withLock { $0 += 1 } }
}

/// A device whose identifier for vendor is nil while `lock` is locked, as UIKit's is before the
/// first unlock after a restart.
final class UnlockingDevice: DeviceInfoProvider, Sendable {
    let lock: DeviceLock
    let vendorID: UUID
    let asked = Locked(0)
    init(lock: DeviceLock, vendorID: UUID) {
        self.lock = lock
        self.vendorID = vendorID
    }
    func deviceInfo() async -> DeviceInfo {
        asked.withLock { $0 += 1 }
        var info = StaticDeviceInfo.iPhone
        info.vendorID = lock.isLocked ? nil : vendorID
        return info
    }
}
