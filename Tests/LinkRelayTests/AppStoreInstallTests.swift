import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// The launch kind from the App Store's own record (`AppTransaction`): read on the first launch
/// with no history, before the Keychain marker; waited for at most its timeout on the client's
/// clock; never by a link.
@Suite("The App Store's record of the install", .timeLimit(.minutes(1)))
struct AppStoreInstallTests {
    static let day: TimeInterval = 86_400

    /// A source that answers `result` after `delay` seconds of the test's clock, counting calls.
    final class ScriptedSource: AppStoreInstallSource, Sendable {
        let clock: ManualClock
        let delay: TimeInterval
        let result: AppStoreInstallResult
        let asked = Locked(0)

        init(clock: ManualClock, delay: TimeInterval = 0, _ result: AppStoreInstallResult) {
            self.clock = clock
            self.delay = delay
            self.result = result
        }

        func appStoreInstall() async -> AppStoreInstallResult {
            asked.withLock { $0 += 1 }
            if delay > 0 { try? await clock.sleep(for: delay) }
            return result
        }
    }

    /// A Keychain marker that survived, or not.
    final class Marker: InstallMarker, Sendable {
        let present: Locked<Bool>
        init(_ present: Bool) { self.present = Locked(present) }
        func isPresent() -> Bool { present.withLock { $0 } }
        func place() { present.withLock { $0 = true } }
    }

    /// A production record: the account got build `original` `purchasedDaysAgo` days ago; this
    /// copy was installed `installedDaysAgo` days ago (unknown when `nil`).
    static func record(
        _ clock: ManualClock, purchasedDaysAgo: Double, installedDaysAgo: Double?, original: String = "100",
        environment: AppStoreInstall.Environment = .production
    ) -> AppStoreInstallResult {
        let now = clock.currentDate
        return .verified(
            AppStoreInstall(
                environment: environment, originalPurchaseDate: now - purchasedDaysAgo * day, originalAppVersion: original,
                installedOnDevice: installedDaysAgo.map { now - $0 * day }))
    }

    func client(
        _ backend: InMemoryBackend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"]), clock: ManualClock,
        source: ScriptedSource?, marker: Bool = false, firstBuild: String? = nil, timeout: TimeInterval = 1,
        store: InMemoryStore = InMemoryStore(), logs: LogCollector? = nil
    ) -> DeepLinkClient {
        makeClient(backend, clock: clock, store: store) {
            $0.retryPolicy = .none
            $0.processLaunch = UUID()
            $0.installMarker = Marker(marker)
            $0.appStoreInstall = source.map { AppStoreInstallCheck(source: $0, timeout: timeout, firstBuildWithLinkRelay: firstBuild) }
            if let logs { $0.logSink = logs.sink }
        }
    }

    static let unknown = AppLaunch.Kind.update(from: AppVersion(version: nil, build: nil))

    @Test(
        "the record decides a launch with no history before the marker; the marker decides what the record leaves",
        arguments: [
            // (purchased days ago, installed days ago, original build, first LinkRelay build, environment, marker, expected)
            (0.0, 0.0, "100", nil, AppStoreInstall.Environment.production, false, AppLaunch.Kind.firstInstall),
            (0.5, 0.0, "100", nil, .production, false, .firstInstall),  // a slow download: within a day
            (30, 0, "100", nil, .production, false, .reinstall),  // the Keychain lost: a new or erased device
            (30, nil, "100", nil, .production, false, .firstInstall),  // install date unknown: the marker decides
            (30, nil, "100", nil, .production, true, .reinstall),
            (30, -2, "100", nil, .production, false, .firstInstall),  // installed "in the future": unknown
            (400, 200, "100", nil, .production, false, .firstInstall),  // the account's old purchase, a 200-day-old copy
            (400, 200, "100", nil, .production, true, .reinstall),  // …the marker still tells a reinstall
            (400, 200, "100", "500", .production, false, unknown),  // the update that adds LinkRelay: an existing user
            (400, 200, "100", "500", .production, true, unknown),
            (400, 200, "520", "500", .production, false, .firstInstall),
            (400, 0, "100", nil, .production, false, .reinstall),  // a second phone, or a reinstall today
            (400, 0.5, "100", "500", .production, false, .reinstall),
            (30, 30, "100", nil, .production, false, .firstInstall),  // installed long ago, first opened now
            (30, 30, "100", nil, .production, true, .reinstall),  // …the marker still tells a reinstall
            (30, 30, "100", "500", .production, false, unknown),  // updated into LinkRelay: an existing user
            (30, 30, "100", "500", .production, true, unknown),  // the record comes first
            (30, 30, "520", "500", .production, false, .firstInstall),  // first got a build with LinkRelay
            (30, 0.5, "100", "500", .production, false, .reinstall),  // a pre-LinkRelay user reinstalling now
            (30, nil, "100", "500", .production, false, .firstInstall),  // cannot tell an update: matched, link kept
            (30, 0, "100", nil, .sandbox, false, .firstInstall),  // TestFlight: the record decides nothing
            (30, 0, "100", nil, .xcode, true, .reinstall),
            (30, 0, "100", nil, .other("future"), false, .firstInstall),
            (30, 30, "1.x", "500", .production, false, .firstInstall),  // builds that do not compare
        ] as [(Double, Double?, String, String?, AppStoreInstall.Environment, Bool, AppLaunch.Kind)])
    func decides(
        purchased: Double, installed: Double?, original: String, firstBuild: String?, environment: AppStoreInstall.Environment,
        marker: Bool, expected: AppLaunch.Kind
    ) async {
        let clock = ManualClock()
        let source = ScriptedSource(
            clock: clock,
            Self.record(clock, purchasedDaysAgo: purchased, installedDaysAgo: installed, original: original, environment: environment))
        let launch = await client(clock: clock, source: source, marker: marker, firstBuild: firstBuild).launch()
        #expect(launch.kind == expected)
        #expect(launch.isExistingUser == (expected == Self.unknown))
        #expect(source.asked.withLock { $0 } == 1)
    }

    @Test(
        "on a Mac (Catalyst, an iPhone app on a Mac) the original version is the marketing version: never compared with the first LinkRelay build"
    )
    func onAMac() {
        let check = AppStoreInstallCheck(
            source: ScriptedSource(clock: ManualClock(), .unavailable(reason: "")), firstBuildWithLinkRelay: "500")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for (isBuild, expected) in [(true, Self.unknown), (false, nil)] as [(Bool, AppLaunch.Kind?)] {
            let record = AppStoreInstall(
                environment: .production, originalPurchaseDate: now - 400 * 86_400, originalAppVersion: "100",
                installedOnDevice: now - 200 * 86_400, originalAppVersionIsBuild: isBuild)
            #expect(check.kind(for: record, now: now) == expected, "\(isBuild)")
        }
    }

    @Test("an unverified, missing or late record leaves the decision to the Keychain marker, its fallback")
    func markerFallback() async {
        for result in [
            AppStoreInstallResult.unverified(reason: "invalidSignature"), .unavailable(reason: "AppTransaction needs iOS 16"),
        ] {
            for marker in [false, true] {
                let clock = ManualClock()
                let launch = await client(clock: clock, source: ScriptedSource(clock: clock, result), marker: marker).launch()
                #expect(launch.kind == (marker ? .reinstall : .firstInstall), "\(result) \(marker)")
            }
        }
        let clock = ManualClock()
        let noCheck = await client(clock: clock, source: nil, marker: true).launch()
        #expect(noCheck.kind == .reinstall)
    }

    @Test("asked only on a launch with no history: later launches never ask")
    func onlyWithoutHistory() async {
        let clock = ManualClock()
        let store = InMemoryStore()
        let source = ScriptedSource(clock: clock, Self.record(clock, purchasedDaysAgo: 30, installedDaysAgo: 0))
        #expect(await client(clock: clock, source: source, store: store).start().kind == .reinstall)
        let again = await client(clock: clock, source: source, store: store).start()
        #expect(again.kind == .relaunch)
        #expect(source.asked.withLock { $0 } == 1)
    }

    @Test("an existing user found by the record skips the install match, as the policy says; a reinstall is matched")
    func matchPolicy() async {
        let clock = ManualClock()
        let updated = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        let source = ScriptedSource(clock: clock, Self.record(clock, purchasedDaysAgo: 300, installedDaysAgo: 300, original: "90"))
        let existing = client(updated, clock: clock, source: source, firstBuild: "500")
        await existing.start()
        #expect(updated.installMatchCount == 0)
        #expect(await existing.installOutcome() == .existingUser(nil))

        let reinstalled = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        let again = ScriptedSource(clock: clock, Self.record(clock, purchasedDaysAgo: 300, installedDaysAgo: 0, original: "90"))
        #expect(await client(reinstalled, clock: clock, source: again, firstBuild: "500").start().kind == .reinstall)
        #expect(reinstalled.installMatchCount == 1)
    }

    @Test("the wait is bounded on the client's clock, and a link handed over meanwhile is delivered at once")
    func boundedWait() async throws {
        let clock = ManualClock()
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        let source = ScriptedSource(clock: clock, delay: 60, Self.record(clock, purchasedDaysAgo: 30, installedDaysAgo: 0))
        let logs = LogCollector()
        let client = client(backend, clock: clock, source: source, marker: true, logs: logs)
        let links = client.deepLinks()
        let launched = Task { await client.launch() }
        await clock.waitForSleepers(count: 2)  // StoreKit's answer and the 1 s deadline
        client.handle(url("myapp://cart"))
        var iterator = links.makeAsyncIterator()
        #expect(await iterator.next()?.path == "/cart")
        clock.advance(by: 1)
        #expect(await launched.value.kind == .reinstall)  // the marker's verdict, not the late record's
        #expect(logs.lines.contains { $0.contains("did not come within 1.0 s") })
    }

    @Test("the timeout accepts every value: NaN, negative and 0 ask for nothing; above 5 s (infinity too) counts as 5 s")
    func timeoutBounds() async {
        for (given, expected) in [(-1.0, 0.0), (.nan, 0), (0, 0), (0.25, 0.25), (60, 5), (.infinity, 5)] as [(Double, Double)] {
            let client = makeClient(InMemoryBackend()) {
                $0.appStoreInstall = AppStoreInstallCheck(
                    source: ScriptedSource(clock: ManualClock(), .unavailable(reason: "")), timeout: given)
            }
            #expect(client.configuration.appStoreInstall?.timeout == expected, "\(given)")
        }
        let clock = ManualClock()
        let source = ScriptedSource(clock: clock, Self.record(clock, purchasedDaysAgo: 30, installedDaysAgo: 0))
        #expect(await client(clock: clock, source: source, timeout: 0).launch().kind == .firstInstall)
        #expect(source.asked.withLock { $0 } == 0)
    }

    @Test("an install date at or before 1970, or later than now, is unknown")
    func installDates() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(AppStoreInstall.knownInstallDate(nil, now: now) == nil)
        #expect(AppStoreInstall.knownInstallDate(Date(timeIntervalSince1970: 0), now: now) == nil)
        #expect(AppStoreInstall.knownInstallDate(Date(timeIntervalSince1970: -86_400), now: now) == nil)
        #expect(AppStoreInstall.knownInstallDate(now + 1, now: now) == nil)
        #expect(AppStoreInstall.knownInstallDate(now, now: now) == now)
        #expect(AppStoreInstall.knownInstallDate(Date(timeIntervalSince1970: 1), now: now) == Date(timeIntervalSince1970: 1))
        // A record whose date is 1970 decides nothing: the marker does.
        let check = AppStoreInstallCheck(source: ScriptedSource(clock: ManualClock(), .unavailable(reason: "")))
        let epoch = AppStoreInstall(
            environment: .production, originalPurchaseDate: now - 400 * Self.day, originalAppVersion: "1",
            installedOnDevice: Date(timeIntervalSince1970: 0))
        #expect(check.kind(for: epoch, now: now) == nil)
    }

    @Test("StoreKit is not asked in a simulator, a debug build or a sandbox (TestFlight) build")
    func notAskedInDevelopment() {
        #expect(AppStoreInstallCheck.asksSystem(receiptName: "receipt", isSimulator: false, isDebugBuild: false))
        #expect(AppStoreInstallCheck.asksSystem(receiptName: nil, isSimulator: false, isDebugBuild: false))
        #expect(!AppStoreInstallCheck.asksSystem(receiptName: "sandboxReceipt", isSimulator: false, isDebugBuild: false))
        #expect(!AppStoreInstallCheck.asksSystem(receiptName: "receipt", isSimulator: true, isDebugBuild: false))
        #expect(!AppStoreInstallCheck.asksSystem(receiptName: "receipt", isSimulator: false, isDebugBuild: true))
    }

    @Test("builds compare as dot-separated numbers; anything else does not compare")
    func buildOrder() {
        for (a, b, expected) in [
            ("90", "500", true), ("500", "500", false), ("520", "500", false), ("2.3", "2.10", true), ("2.3", "2.3.0", false),
            ("2.3", "2.3.1", true), ("1.x", "2", nil), ("", "2", nil), ("2", "", nil), ("1..2", "2", nil),
            ("99999999999999999999", "1", nil), ("-1", "2", nil),
        ] as [(String, String, Bool?)] {
            #expect(AppStoreInstallCheck.build(a, isBefore: b) == expected, "\(a) < \(b)")
        }
    }

    @Test("off on Linux by default: no StoreKit here")
    func defaultHere() {
        #expect(DeepLinkClient.Configuration().appStoreInstall == nil)
    }
}
