import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelaySimulator
import LinkRelayTesting
import ShopApp
import Testing

/// A device on which a vendor's SDK ran: a `UserDefaults` suite and an Application Support folder
/// of its own, seeded as that SDK writes them.
final class VendorDevice: Sendable {
    let suiteName = "linkrelay-migration-\(UUID().uuidString)"
    let applicationSupport = FileManager.default.temporaryDirectory.appendingPathComponent(
        "linkrelay-migration-\(UUID().uuidString)", isDirectory: true)
    static let bundleIdentifier = "com.acme.shop"

    var storage: PreviousSDKStorage {
        PreviousSDKStorage(defaultsSuiteName: suiteName, applicationSupport: applicationSupport, bundleIdentifier: Self.bundleIdentifier)
    }

    var appFolder: URL { applicationSupport.appendingPathComponent(Self.bundleIdentifier, isDirectory: true) }

    /// Sets a value as the vendor's SDK does (`UserDefaults.set`).
    func set(_ value: Any, forKey key: String) {
        let defaults = UserDefaults(suiteName: suiteName)
        defaults?.set(value, forKey: key)
    }

    /// Writes a file in the app's Application Support folder.
    func write(_ text: String, to path: String) throws {
        let file = appFolder.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
    }

    /// Everything the vendor left, as bytes: the importers must not change it.
    func snapshot() -> [String: Data] {
        var result: [String: Data] = [:]
        let defaults = UserDefaults(suiteName: suiteName)
        for (key, value) in defaults?.persistentDomain(forName: suiteName) ?? [:] {
            result["defaults:" + key] = Data(String(describing: value).utf8)
        }
        if let files = FileManager.default.enumerator(atPath: appFolder.path) {
            for case let path as String in files {
                result["file:" + path] = (try? Data(contentsOf: appFolder.appendingPathComponent(path))) ?? Data()
            }
        }
        return result
    }

    deinit {
        UserDefaults(suiteName: suiteName)?.removePersistentDomain(forName: suiteName)
        try? FileManager.default.removeItem(at: applicationSupport)
    }
}

/// The paths of the install-match requests of the four providers.
private let installMatchPaths = ["/api/sdk/v1/install", "/fingerprints/match", "/api/v1/deferred-deep-link", "/v1/deferred-deeplink"]

private func installMatchRequests(_ simulator: ProviderSimulator) -> [String] {
    simulator.requests.map(\.url.path).filter { path in installMatchPaths.contains { path.hasSuffix($0) } }
}

/// One launch of the shop app: a new process with `backend` on `store`.
private func launch(
    _ backend: any DeepLinkBackend, simulator: ProviderSimulator, store: InMemoryStore, device: VendorDevice,
    history: InMemoryStore? = nil, _ configure: (inout DeepLinkClient.Configuration) -> Void = { _ in }
) -> DeepLinkClient {
    var configuration = DeepLinkClient.Configuration(store: store, clock: simulator.clock, transport: simulator)
    configuration.deviceInfo = StaticDeviceInfo(phone)
    configuration.retryPolicy = .none
    configuration.previousSDKStorage = device.storage
    configuration.launchHistoryStore = history
    configuration.processLaunch = UUID()
    configuration.installMarker = nil
    configure(&configuration)
    return DeepLinkClient(backend: backend, configuration: configuration)
}

@Suite("Migration: users who already have the app", .timeLimit(.minutes(1)))
struct MigrationTests {
    @Test("a LinkForty SDK user: existing user, its installId kept for events, no install request")
    func linkFortySDK() async throws {
        let device = VendorDevice()
        device.set("inst-from-sdk", forKey: "com.linkforty.sdk.installId")
        device.set(true, forKey: "com.linkforty.sdk.firstLaunch")
        device.set(
            Data(
                #"{"shortCode":"p42","deepLinkPath":"/product/42","appScheme":"shopapp","customParameters":{"ref":"mail"},"clickedAt":"2026-01-02T03:04:05Z"}"#
                    .utf8),
            forKey: "com.linkforty.sdk.installData")
        let before = device.snapshot()
        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        let world = try await ShopWorld(.linkForty, sandbox: sandbox, phone: phone)
        let client = launch(world.backend, simulator: sandbox.simulator, store: InMemoryStore(), device: device)
        let launched = await client.start()
        let previous = try #require(launched.previousSDK)
        #expect(previous.provider == .linkForty)
        #expect(previous.installID == "inst-from-sdk")
        #expect(previous.deferredLink?.shortCode == "p42")
        #expect(previous.deferredLink?.parameters["ref"] == "mail")
        #expect(await client.installOutcome() == .existingUser(.organic(installID: "inst-from-sdk")))
        #expect(installMatchRequests(sandbox.simulator).isEmpty)
        // Events go on under the SDK's install id.
        try await client.track("purchase")
        await client.flushEvents()
        let eventBodies = sandbox.simulator.requests.filter { $0.url.path.hasSuffix("/api/sdk/v1/event") }.compactMap(\.body)
        #expect(eventBodies.count == 1)
        #expect(eventBodies.first.map { String(decoding: $0, as: UTF8.self) }?.contains(#""installId":"inst-from-sdk""#) == true)
        #expect(device.snapshot() == before, "the vendor's data is left as it was")
        await client.shutdown()
    }

    @Test("a Dynalinks SDK user: existing user, the cached deferred result kept and not delivered again")
    func dynalinksSDK() async throws {
        let device = VendorDevice()
        device.set(true, forKey: "com.dynalinks.deferredDeepLinkChecked")
        device.set(
            Data(
                #"{"matched":true,"confidence":"high","match_score":95,"link":{"id":"l-1","path":"/p42","url":"https://shop.example/product/42","deep_link_value":"/product/42"}}"#
                    .utf8),
            forKey: "com.dynalinks.deferredDeepLinkResult")
        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        let world = try await ShopWorld(.dynalinks, sandbox: sandbox, phone: phone)
        let client = launch(world.backend, simulator: sandbox.simulator, store: InMemoryStore(), device: device)
        let launched = await client.start()
        let previous = try #require(launched.previousSDK)
        #expect(previous.provider == .dynalinks)
        #expect(previous.deferredLink?.path == "/product/42")
        #expect(await client.installOutcome() == .existingUser(nil))
        #expect(installMatchRequests(sandbox.simulator).isEmpty)
        await client.shutdown()
    }

    @Test("a LimeLink SDK user: existing user, no deferred request")
    func limeLinkSDK() async throws {
        let device = VendorDevice()
        device.set(false, forKey: "is_first_launch")
        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        let world = try await ShopWorld(.limeLink, sandbox: sandbox, phone: phone)
        try await world.recordWebClick()  // an old click the deferred match would find
        let client = launch(world.backend, simulator: sandbox.simulator, store: InMemoryStore(), device: device)
        #expect(await client.start().kind == .existingUser(previousSDK: PreviousSDK(provider: .limeLink)))
        #expect(await client.installOutcome() == .existingUser(nil))
        #expect(installMatchRequests(sandbox.simulator).isEmpty)
        await client.shutdown()
    }

    @Test("a Paylisher SDK user: distinct_id kept, its unsent events sent once with their uuid, install date kept")
    func paylisherSDK() async throws {
        let device = VendorDevice()
        device.set(true, forKey: "paylisher_first_launch_has_launched")
        device.set(1_767_225_600.0, forKey: "paylisher_first_launch_install_timestamp")
        device.set(true, forKey: "paylisher_deferred_check_completed")
        device.set("2.2.0", forKey: "PHGVersionKey")
        device.set("220", forKey: "PHGBuildKeyV2")
        try device.write(#"{"paylisher.distinctId":"0192F1A2-0000-7000-8000-00000000D15C"}"#, to: "paylisher.distinctId")
        let uuids = ["0192F1A2-1111-7000-8000-000000000001", "0192F1A2-2222-7000-8000-000000000002"]
        try device.write(
            #"{"event":"Cart Viewed","distinct_id":"0192F1A2-0000-7000-8000-00000000D15C","properties":{"items":3,"$screen_name":"Cart"},"timestamp":"2026-01-02T10:00:00.000Z","uuid":"\#(uuids[0])"}"#,
            to: "paylisher.queueFolder/1767348000.0")
        try device.write(
            #"{"event":"Checkout","distinct_id":"0192F1A2-0000-7000-8000-00000000D15C","properties":{},"timestamp":"2026-01-02T10:01:00.000Z","uuid":"\#(uuids[1])"}"#,
            to: "paylisher.queueFolder/1767348060.0")
        try device.write("not json", to: "paylisher.queueFolder/1767348120.0")
        let before = device.snapshot()

        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        let world = try await ShopWorld(.paylisher, sandbox: sandbox, phone: phone)
        let store = InMemoryStore()
        let client = launch(world.backend, simulator: sandbox.simulator, store: store, device: device)
        let launched = await client.start()
        let previous = try #require(launched.previousSDK)
        #expect(previous.installID == "0192F1A2-0000-7000-8000-00000000D15C")
        #expect(previous.importedEvents == 2)
        #expect(previous.eventsNotImported == 1)
        #expect(previous.lastVersion == AppVersion(version: "2.2.0", build: "220"))
        #expect(launched.firstSeen == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(await client.installOutcome() == .existingUser(.organic(installID: "0192F1A2-0000-7000-8000-00000000D15C")))
        #expect(installMatchRequests(sandbox.simulator).isEmpty)

        try await client.track("Purchase")
        await client.flushEvents()
        let paylisher = sandbox.paylisher
        let received = paylisher.events
        #expect(received.map(\.event) == ["Cart Viewed", "Checkout", "Purchase"])
        #expect(Set(received.map(\.distinctID)) == ["0192F1A2-0000-7000-8000-00000000D15C"])
        #expect(Array(received.map { $0.uuid.uppercased() }.prefix(2)) == uuids)
        #expect(received.first?.properties["items"] == .int(3))
        await client.shutdown()

        // The next launch imports nothing again.
        let next = launch(world.backend, simulator: sandbox.simulator, store: store, device: device)
        #expect(await next.start().kind == .relaunch)
        await next.flushEvents()
        #expect(paylisher.events.count == 3)
        #expect(device.snapshot() == before, "the vendor's data is left as it was")
        await next.shutdown()
    }

    @Test("before start(), launch() imports a Paylisher SDK user's queue and sends nothing; start() sends it")
    func nothingBeforeStart() async throws {
        let device = VendorDevice()
        device.set(true, forKey: "paylisher_first_launch_has_launched")
        try device.write(
            #"{"event":"Queued","properties":{},"timestamp":"2026-01-02T10:00:00.000Z","uuid":"0192F1A2-1111-7000-8000-000000000001"}"#,
            to: "paylisher.queueFolder/1767348000.0")
        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        let world = try await ShopWorld(.paylisher, sandbox: sandbox, phone: phone)
        let client = launch(world.backend, simulator: sandbox.simulator, store: InMemoryStore(), device: device)
        #expect(await client.launch().previousSDK?.importedEvents == 1)
        #expect(await client.queuedEventCount == 1)
        #expect(sandbox.simulator.requests.isEmpty)
        await client.start()
        await client.flushEvents()
        #expect(sandbox.paylisher.events.map(\.event) == ["Queued"])
        await client.shutdown()
    }

    @Test("an app that moves from LinkForty's SDK to LinkRelay with Paylisher: an existing user, no deferred link, the demo's story")
    func vendorToOtherProvider() async throws {
        let device = VendorDevice()
        device.set("inst-from-sdk", forKey: "com.linkforty.sdk.installId")
        device.set(true, forKey: "com.linkforty.sdk.firstLaunch")
        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        let world = try await ShopWorld(.paylisher, sandbox: sandbox, phone: phone)
        try await world.recordWebClick()  // a click the deferred match would take for this user's
        let client = launch(world.backend, simulator: sandbox.simulator, store: InMemoryStore(), device: device) {
            $0.previousSDKs = [LinkFortySDKImporter()]
        }
        let events = client.linkEvents()
        let launched = await client.start()
        #expect(launched.kind == .existingUser(previousSDK: PreviousSDK(provider: .linkForty, installID: "inst-from-sdk")))
        #expect(await client.installOutcome() == .existingUser(nil))
        #expect(installMatchRequests(sandbox.simulator).isEmpty)
        client.handle(URL(string: "shopapp://marker")!)
        var links: [String] = []
        for await event in events {
            if let link = event.link { links.append(link.path) }
            if event.link?.path == "/marker" { break }
        }
        #expect(links.count == 1, "only the marker: \(links)")
        await client.shutdown()
    }

    @Test("a LinkRelay app that switches backends in an update (LinkForty to Paylisher): the new backend sees an existing user")
    func backendSwitch() async throws {
        let device = VendorDevice()
        let history = InMemoryStore()
        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        let linkForty = try await ShopWorld(.linkForty, sandbox: sandbox, phone: phone)
        let first = launch(linkForty.backend, simulator: sandbox.simulator, store: InMemoryStore(), device: device, history: history)
        #expect(await first.start().kind == .firstInstall)
        #expect(installMatchRequests(sandbox.simulator) == ["/api/sdk/v1/install"])
        await first.shutdown()

        let paylisher = try await ShopWorld(.paylisher, sandbox: sandbox, phone: phone)
        try await paylisher.recordWebClick()
        var updated = phone
        updated.appBuild = "231"
        let second = launch(paylisher.backend, simulator: sandbox.simulator, store: InMemoryStore(), device: device, history: history) {
            $0.deviceInfo = StaticDeviceInfo(updated)
        }
        let launched = await second.start()
        #expect(launched.kind == .update(from: AppVersion(version: "2.3.0", build: "230")))
        #expect(launched.isExistingUser)
        #expect(launched.backends == [.linkForty, .paylisher])
        #expect(await second.installOutcome() == .existingUser(nil))
        #expect(installMatchRequests(sandbox.simulator) == ["/api/sdk/v1/install"], "no Paylisher deferred request")
        await second.shutdown()
    }
}

@Suite("Migration: damaged or unusual vendor data", .timeLimit(.minutes(1)))
struct ImporterEdgeTests {
    @Test("nothing of a vendor's SDK: no import, a first install")
    func nothing() {
        let device = VendorDevice()
        #expect(LinkFortySDKImporter().read(device.storage) == nil)
        #expect(DynalinksSDKImporter().read(device.storage) == nil)
        #expect(LimeLinkSDKImporter().read(device.storage) == nil)
        #expect(PaylisherSDKImporter().read(device.storage) == nil)
    }

    @Test("values of the wrong type or damaged are left out; what they say about a previous launch still counts")
    func damaged() throws {
        let device = VendorDevice()
        device.set(42, forKey: "com.linkforty.sdk.installId")
        device.set(Data("{not json".utf8), forKey: "com.linkforty.sdk.installData")
        device.set(Data(repeating: 0xFF, count: 100), forKey: "com.dynalinks.deferredDeepLinkResult")
        device.set(Double.nan, forKey: "paylisher_first_launch_install_timestamp")
        try device.write("[1,2,3]", to: "paylisher.distinctId")
        let linkForty = try #require(LinkFortySDKImporter(baseURL: URL(string: "https://go.acme.app")!).read(device.storage))
        #expect(linkForty.sdk == PreviousSDK(provider: .linkForty))
        let dynalinks = try #require(DynalinksSDKImporter().read(device.storage))
        #expect(dynalinks.sdk.deferredLink == nil)
        let paylisher = try #require(PaylisherSDKImporter().read(device.storage))
        #expect(paylisher.sdk.installID == nil)
        #expect(paylisher.sdk.installedAt == nil)
        #expect(paylisher.backendValues.isEmpty)
    }

    @Test("Paylisher's queue: files in time order (numbers or UUIDv7 names), an oversized or foreign file counted, not read")
    func paylisherQueue() throws {
        let device = VendorDevice()
        func event(_ name: String, _ second: Int) -> String {
            #"{"event":"\#(name)","distinct_id":"d","properties":{"n":\#(second)},"timestamp":"2026-01-02T10:00:\#(String(format: "%02d", second)).000Z","uuid":"0192F1A2-0000-7000-8000-0000000000\#(String(format: "%02d", second))"}"#
        }
        // Numeric names sort as numbers, not as text ("9.5" before "10.0").
        try device.write(event("b", 2), to: "paylisher.queueFolder/10.0")
        try device.write(event("a", 1), to: "paylisher.queueFolder/9.5")
        try device.write(String(repeating: " ", count: (1 << 20) + 1), to: "paylisher.queueFolder/11.0")
        let numeric = try #require(PaylisherSDKImporter().read(device.storage))
        #expect(numeric.queuedEvents.map(\.name) == ["a", "b"])
        #expect(numeric.unreadableEvents == 1)

        let named = VendorDevice()
        try named.write(event("second", 2), to: "paylisher.queueFolder/0192F1A2-0002-7000-8000-000000000000")
        try named.write(event("first", 1), to: "paylisher.queueFolder/0192F1A2-0001-7000-8000-000000000000")
        try named.write(#"{"event":"","timestamp":"x"}"#, to: "paylisher.queueFolder/0192F1A2-0003-7000-8000-000000000000")
        let byName = try #require(PaylisherSDKImporter().read(named.storage))
        #expect(byName.queuedEvents.map(\.name) == ["first", "second"])
        #expect(byName.unreadableEvents == 1)
        #expect(byName.queuedEvents.first?.timestamp == ISO8601DateFormatter().date(from: "2026-01-02T10:00:01Z"))
    }

    @Test("more queued events than the queue holds: the newest are imported, the rest counted")
    func overCapacity() async throws {
        let device = VendorDevice()
        for index in 0..<15 {
            try device.write(
                #"{"event":"e\#(index)","properties":{},"timestamp":"2026-01-02T10:00:00.000Z","uuid":"\#(UUID().uuidString)"}"#,
                to: "paylisher.queueFolder/\(1000 + index).0")
        }
        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        let world = try await ShopWorld(.paylisher, sandbox: sandbox, phone: phone)
        let client = launch(world.backend, simulator: sandbox.simulator, store: InMemoryStore(), device: device) {
            $0.eventQueueCapacity = 10
        }
        let previous = try #require(await client.start().previousSDK)
        #expect(previous.importedEvents == 10)
        #expect(previous.eventsNotImported == 5)
        await client.flushEvents()
        #expect(sandbox.paylisher.events.map(\.event) == (5..<15).map { "e\($0)" })
        await client.shutdown()
    }
}
