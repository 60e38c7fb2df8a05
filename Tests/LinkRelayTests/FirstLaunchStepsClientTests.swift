import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// What carrying out ``FirstLaunchSteps`` changes for a client: one run of the launch's steps,
/// shared, and nothing kept across a clear.
@Suite("The launch's steps in a client", .timeLimit(.minutes(1)))
struct FirstLaunchStepsClientTests {
    /// An App Store record source that answers after the test says so (counting calls), and
    /// may lock the device as it answers.
    final class HeldSource: AppStoreInstallSource, Sendable {
        let asked = Locked(0)
        /// Raised on each call.
        let calls = AvailabilitySignal()
        let answer = AvailabilitySignal()
        let lockOnAnswer: DeviceLock?
        let result: AppStoreInstallResult

        init(_ result: AppStoreInstallResult, lockOnAnswer: DeviceLock? = nil) {
            self.result = result
            self.lockOnAnswer = lockOnAnswer
        }

        func appStoreInstall() async -> AppStoreInstallResult {
            asked.withLock { $0 += 1 }
            calls.raise()
            await answer.wait(after: 0)
            // The device locks as StoreKit answers: the history's second read fails.
            if let lockOnAnswer, asked.withLock({ $0 }) == 1 { lockOnAnswer.lock() }
            return result
        }

        var count: Int { asked.withLock { $0 } }
    }

    /// A device whose information comes when the test says so.
    final class HeldDevice: DeviceInfoProvider, Sendable {
        let calls = AvailabilitySignal()
        let answer = AvailabilitySignal()

        func deviceInfo() async -> DeviceInfo {
            calls.raise()
            await answer.wait(after: 0)
            return StaticDeviceInfo.iPhone
        }
    }

    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
    let clock = ManualClock()

    func reinstallRecord() -> AppStoreInstallResult {
        let now = clock.currentDate
        return .verified(
            AppStoreInstall(
                environment: .production, originalPurchaseDate: now - 30 * 86_400, originalAppVersion: "100",
                installedOnDevice: now))
    }

    func client(
        _ source: HeldSource, store: any PersistentStore = InMemoryStore(), lock: DeviceLock? = nil, device: HeldDevice? = nil
    ) -> DeepLinkClient {
        makeClient(backend, clock: clock, store: lock?.guarding(store) ?? store) {
            $0.retryPolicy = .none
            if let device { $0.deviceInfo = device }
            $0.processLaunch = UUID()
            $0.installMarker = InMemoryInstallMarker()
            $0.protectedData = lock
            $0.appStoreInstall = AppStoreInstallCheck(source: source, timeout: .infinity)
        }
    }

    @Test("eight launch() calls at once share one run of the steps: the App Store's record is asked once, one launch for all")
    func concurrentLaunches() async {
        let source = HeldSource(reinstallRecord())
        let client = client(source)
        let launches = (0..<8).map { _ in Task { await client.launch() } }
        await source.calls.wait(after: 0)
        // Room for the other callers to reach launch() before the answer (each of them asked
        // the record again before): what follows holds however far they got.
        for _ in 0..<100 { await Task.yield() }
        source.answer.raise()
        var kinds: [AppLaunch.Kind] = []
        for launch in launches { kinds.append(await launch.value.kind) }
        #expect(kinds == Array(repeating: .reinstall, count: 8))
        #expect(source.count == 1)
        await client.shutdown()
    }

    @Test(
        "the App Store's record is asked once per launch, also when the device locks as it answers: the launch waits, then keeps its answer"
    )
    func appStoreOnceAcrossALock() async {
        let lock = DeviceLock(locked: false)
        let source = HeldSource(reinstallRecord(), lockOnAnswer: lock)
        let client = client(source, lock: lock)
        let launch = Task { await client.launch() }
        await source.calls.wait(after: 0)
        source.answer.raise()
        await lock.waitForWaits(count: 1)
        lock.unlock()
        #expect(await launch.value.kind == .reinstall)
        #expect(source.count == 1)
        await client.shutdown()
    }

    @Test("a launch() under way when clearData() is called stores nothing from before it, and returns the launch decided anew")
    func clearDuringLaunch() async {
        let store = InMemoryStore()
        let source = HeldSource(reinstallRecord())
        let client = client(source, store: store)
        let first = Task { await client.launch() }
        await source.calls.wait(after: 0)
        await client.clearData()
        source.answer.raise()
        // The run from before the clear stores nothing; the call gets the launch decided anew
        // for the cleared client, from what is stored now (nothing), with the record asked again.
        #expect(await first.value.kind == .reinstall)
        #expect(source.count == 2)
        #expect(await client.launch() == first.value)
        #expect(source.count == 2)
        await client.shutdown()
    }

    @Test("a clearData() while the device's information is read: the launch is decided for the cleared client, and stored")
    func clearWhileTheDeviceIsRead() async {
        let store = InMemoryStore()
        let source = HeldSource(reinstallRecord())
        source.answer.raise()
        let device = HeldDevice()
        let client = client(source, store: store, device: device)
        let first = Task { await client.launch() }
        await device.calls.wait(after: 0)
        await client.clearData()
        device.answer.raise()
        #expect(await first.value.kind == .reinstall)
        #expect(store.keys.contains(LaunchHistory.key))
        #expect(await client.launch() == first.value)
        await client.shutdown()
    }
}
