import Foundation
import LinkRelayTesting
import Testing

@_spi(Backend) @testable import LinkRelay

/// An importer that finds what it is given, and counts how often it was asked.
private struct FoundImporter: PreviousSDKImporter {
    let provider: BackendID
    let found: SDKImport?
    let reads = Locked(0)

    func read(_ storage: PreviousSDKStorage) -> SDKImport? {
        reads.withLock { $0 += 1 }
        return found
    }
}

/// A marker that survives "deleting the app" (a new store): the Keychain's role.
private final class MarkerDouble: InstallMarker {
    let present = Locked(false)
    func isPresent() -> Bool { present.withLock { $0 } }
    func place() { present.withLock { $0 = true } }
}

@Suite("Launch history: install, reinstall, update, existing users", .timeLimit(.minutes(1)))
struct LaunchHistoryTests {
    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
    let clock = ManualClock()

    static let clicked = DeepLink.fixture(path: "/products/42", host: "go.acme.app", origin: .deferred)
    static let attributed = InstallMatch(
        attribution: InstallAttribution(installID: "inst-1", isAttributed: true, method: .fingerprint), link: clicked)

    /// One launch of the app: a new process, with `build`, on `store`.
    func launch(
        build: String = "230", store: InMemoryStore, historyStore: InMemoryStore? = nil, backend: (any DeepLinkBackend)? = nil,
        _ configure: (inout DeepLinkClient.Configuration) -> Void = { _ in }
    ) -> DeepLinkClient {
        var device = StaticDeviceInfo.iPhone
        device.appBuild = build
        return makeClient(backend ?? self.backend, clock: clock, store: store) {
            $0.retryPolicy = .none
            $0.deviceInfo = StaticDeviceInfo(device)
            $0.processLaunch = UUID()
            $0.launchHistoryStore = historyStore
            configure(&$0)
        }
    }

    /// The paths of the links `client` delivered up to a marker link handled now.
    func linkPaths(_ client: DeepLinkClient, _ events: AsyncStream<DeepLinkEvent>) async -> [String] {
        client.handle(url("myapp://marker"))
        var paths: [String] = []
        for await event in events {
            guard let link = event.link else { continue }
            paths.append(link.path)
            if link.path == "/marker" { break }
        }
        return paths
    }

    // MARK: The kind of launch

    @Test("first install, then the same build is a relaunch, then a new build is an update from the last")
    func updates() async {
        let store = InMemoryStore()
        let first = await launch(build: "1", store: store).start()
        #expect(first.kind == .firstInstall)
        #expect(first.launchCount == 1)
        #expect(!first.isExistingUser)

        let again = await launch(build: "1", store: store).start()
        #expect(again.kind == .relaunch)
        #expect(again.launchCount == 2)

        let updated = await launch(build: "2", store: store).start()
        #expect(updated.kind == .update(from: AppVersion(version: "2.3.0", build: "1")))
        #expect(updated.version.build == "2")
        #expect(updated.firstSeen == first.firstSeen)
        #expect(updated.launchCount == 3)
        // The update is neither an install nor an existing user of another SDK.
        #expect(!updated.isExistingUser)
        #expect(backend.installMatchCount == 1)
    }

    @Test("clients made in one launch see one launch; launch() before start() makes no request")
    func oneLaunchPerProcess() async {
        let store = InMemoryStore()
        let process = UUID()
        let a = launch(store: store) { $0.processLaunch = process }
        let b = launch(store: store) { $0.processLaunch = process }
        let kindA = await a.launch().kind
        let kindB = await b.launch().kind
        #expect(kindA == .firstInstall)
        #expect(kindB == .firstInstall)
        #expect(backend.installMatchCount == 0)
        #expect(await b.launch().launchCount == 1)
    }

    @Test("a reinstall is told by the marker that outlives the app's files")
    func reinstall() async {
        let marker = MarkerDouble()
        let first = await launch(store: InMemoryStore()) { $0.installMarker = marker }.start()
        #expect(first.kind == .firstInstall)
        #expect(marker.isPresent())
        // The app deleted and installed again: its files are gone, the marker is not.
        backend.scriptInstall(.success(Self.attributed))
        let client = launch(store: InMemoryStore()) { $0.installMarker = marker }
        let again = await client.start()
        #expect(again.kind == .reinstall)
        // A reinstall is matched as an install (the provider decides whether an old click counts).
        #expect(!again.isExistingUser)
        #expect(await client.installOutcome().isAttributed)
        #expect(backend.installMatchCount == 2)
    }

    @Test("the recent launches are bounded; the count goes on")
    func boundedHistory() async {
        let store = InMemoryStore()
        for build in 1...30 { await launch(build: "\(build)", store: store).start() }
        let history = store.load(
            LaunchHistory.self, forKey: LaunchHistory.key, logger: LinkRelayLogger(sink: LogSink(minimumLevel: .error) { _ in }))
        #expect(history?.recent.count == LaunchHistory.recentLimit)
        #expect(history?.recent.last?.version.build == "30")
        #expect(history?.launchCount == 30)
    }

    // MARK: Switching backends

    @Test("a backend the app switches to in an update sees an existing user: no install match, no deferred link")
    func backendSwitch() async {
        let history = InMemoryStore()
        let old = InMemoryBackend(id: "old", schemes: ["myapp"], hosts: ["go.acme.app"])
        old.scriptInstall(.success(InstallMatch(attribution: .organic(installID: "old-1"), link: nil)))
        let first = await launch(build: "1", store: InMemoryStore(), historyStore: history, backend: old).start()
        #expect(first.kind == .firstInstall)

        // Build 2 runs with another backend, in a folder of its own.
        backend.scriptInstall(.success(Self.attributed))
        let client = launch(build: "2", store: InMemoryStore(), historyStore: history)
        let events = client.linkEvents()
        let launched = await client.start()
        #expect(launched.kind == .update(from: AppVersion(version: "2.3.0", build: "1")))
        #expect(launched.isExistingUser)
        #expect(launched.backends == ["old", "in-memory"])
        #expect(await client.installOutcome() == .existingUser(nil))
        #expect(backend.installMatchCount == 0)
        #expect(await linkPaths(client, events) == ["/marker"])
        // Later launches restore the outcome and still ask nothing.
        let later = launch(build: "2", store: InMemoryStore(), historyStore: history)
        #expect(await later.start().kind == .relaunch)
        #expect(backend.installMatchCount == 0)
    }

    @Test(
        "the policy for existing users: skip, match without delivering, or treat as new",
        arguments: [ExistingUserPolicy.skipInstallMatch, .matchButDoNotDeliver, .treatAsNew])
    func policies(_ policy: ExistingUserPolicy) async {
        let history = InMemoryStore()
        let old = InMemoryBackend(id: "old")
        old.scriptInstall(.success(InstallMatch(attribution: .organic(), link: nil)))
        await launch(build: "1", store: InMemoryStore(), historyStore: history, backend: old).start()

        backend.scriptInstall(.success(Self.attributed))
        let client = launch(build: "2", store: InMemoryStore(), historyStore: history) { $0.existingUsers = policy }
        let events = client.linkEvents()
        await client.start()
        let outcome = await client.installOutcome()
        let links = await linkPaths(client, events)
        switch policy {
        case .skipInstallMatch:
            #expect(outcome == .existingUser(nil))
            #expect(backend.installMatchCount == 0)
            #expect(links == ["/marker"])
        case .matchButDoNotDeliver:
            #expect(outcome == .attributed(Self.clicked, Self.attributed.attribution))
            #expect(backend.installMatchCount == 1)
            #expect(links == ["/marker"])
        case .treatAsNew:
            #expect(outcome == .attributed(Self.clicked, Self.attributed.attribution))
            #expect(backend.installMatchCount == 1)
            #expect(links == ["/products/42", "/marker"])
        }
    }

    // MARK: Previous SDKs

    @Test("a previous SDK found: existing user, its install id kept, its unsent events sent once, read once per device")
    func importedSDK() async throws {
        let store = InMemoryStore()
        let queued = (0..<3).map {
            ConversionEvent(name: "queued-\($0)", timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double($0)))
        }
        let importer = FoundImporter(
            provider: "in-memory",
            found: SDKImport(
                sdk: PreviousSDK(provider: "in-memory", installID: "vendor-7", installedAt: Date(timeIntervalSince1970: 1_600_000_000)),
                backendValues: ["distinctId": "vendor-7"], queuedEvents: queued, unreadableEvents: 1))
        let client = launch(store: store) { $0.previousSDKs = [importer] }
        let launched = await client.start()
        let previous = try #require(launched.previousSDK)
        #expect(previous.installID == "vendor-7")
        #expect(previous.importedEvents == 3)
        #expect(previous.eventsNotImported == 1)
        #expect(launched.firstSeen == Date(timeIntervalSince1970: 1_600_000_000))
        #expect(await client.installOutcome() == .existingUser(.organic(installID: "vendor-7")))
        #expect(backend.installMatchCount == 0)
        await client.flushEvents()
        #expect(backend.sentEvents.map(\.name) == ["queued-0", "queued-1", "queued-2"])
        #expect(backend.sentEvents.map(\.id) == queued.map(\.id))
        #expect(
            BackendStorage(store: store, logger: LinkRelayLogger(sink: LogSink(minimumLevel: .error) { _ in })).value(
                String.self, forKey: "distinctId") == "vendor-7")

        // The next launch does not read the vendor's data again, and sends nothing twice.
        let next = launch(store: store) { $0.previousSDKs = [importer] }
        #expect(await next.start().kind == .relaunch)
        await next.flushEvents()
        #expect(backend.sentEvents.count == 3)
        #expect(importer.reads.withLock { $0 } == 1)
        #expect(await next.installOutcome() == .existingUser(.organic(installID: "vendor-7")))
    }

    @Test("another provider's SDK: an existing user, but its events are not sent through this backend")
    func otherProvidersSDK() async {
        let importer = FoundImporter(
            provider: "vendor",
            found: SDKImport(
                sdk: PreviousSDK(provider: "vendor", installID: "v-1"),
                queuedEvents: [ConversionEvent(name: "theirs", timestamp: Date(timeIntervalSince1970: 0))]))
        let client = launch(store: InMemoryStore()) { $0.previousSDKs = [importer] }
        let launched = await client.start()
        #expect(launched.kind == .existingUser(previousSDK: PreviousSDK(provider: "vendor", installID: "v-1", eventsNotImported: 1)))
        // The other provider's install id means nothing to this one.
        #expect(await client.installOutcome() == .existingUser(nil))
        await client.flushEvents()
        #expect(backend.sentEvents.isEmpty)
    }

    @Test("a deferred link the previous SDK delivered is not delivered again, even when treated as new")
    func previousDeferredLink() async {
        let importer = FoundImporter(
            provider: "in-memory", found: SDKImport(sdk: PreviousSDK(provider: "in-memory", deferredLink: Self.clicked)))
        backend.scriptInstall(.success(Self.attributed))
        let client = launch(store: InMemoryStore()) {
            $0.previousSDKs = [importer]
            $0.existingUsers = .treatAsNew
        }
        let events = client.linkEvents()
        await client.start()
        #expect(await client.installOutcome().isAttributed)
        let links = await linkPaths(client, events)
        #expect(links == ["/marker"])
    }

    @Test("clearData: the next launch is a first install, and the previous SDK is not imported again")
    func clearData() async {
        let store = InMemoryStore()
        let importer = FoundImporter(provider: "in-memory", found: SDKImport(sdk: PreviousSDK(provider: "in-memory", installID: "v")))
        let client = launch(store: store) { $0.previousSDKs = [importer] }
        #expect(await client.start().previousSDK != nil)
        await client.clearData()
        backend.scriptInstall(.success(InstallMatch(attribution: .organic(installID: "new"), link: nil)))
        #expect(await client.start().kind == .firstInstall)
        #expect(await client.installOutcome() == .organic(.organic(installID: "new")))
        let next = launch(store: store) { $0.previousSDKs = [importer] }
        #expect(await next.start().kind == .relaunch)
        #expect(importer.reads.withLock { $0 } == 1)
    }

    @Test("a backend that names the install only in its match asks for it for an existing user without one, and delivers nothing")
    func installReport() async {
        let history = InMemoryStore()
        await launch(build: "1", store: InMemoryStore(), historyStore: history, backend: InMemoryBackend(id: "old")).start()
        let reporting = ReportingBackend()
        reporting.inner.scriptInstall(.success(Self.attributed))
        let client = launch(build: "2", store: InMemoryStore(), historyStore: history, backend: reporting)
        let events = client.linkEvents()
        #expect(await client.start().isExistingUser)
        #expect(reporting.inner.installMatchCount == 1)
        #expect(await client.installOutcome().attribution?.installID == "inst-1")
        let links = await linkPaths(client, events)
        #expect(links == ["/marker"])
    }

    // MARK: The decision alone

    @Test("the decision: a stored history from another launch counts it, the same launch does not")
    func decision() {
        let version = AppVersion(version: "1.0", build: "1")
        let process = UUID()
        let first = LaunchDecision(
            stored: nil, checked: CheckedSDKs(), processLaunch: process, version: version, backend: "a",
            now: Date(timeIntervalSince1970: 0),
            markerPresent: { false }, importers: [], storage: .standard, eventsTaken: { _ in 0 })
        #expect(first.history.lastKind == .firstInstall)
        let same = LaunchDecision(
            stored: first.history, checked: first.checked, processLaunch: process, version: version, backend: "b",
            now: Date(timeIntervalSince1970: 1), markerPresent: { true }, importers: [], storage: .standard, eventsTaken: { _ in 0 })
        #expect(same.history.launchCount == 1)
        // A backend first seen on the app's first launch is not an existing user's.
        #expect(same.history.launch(for: "b").isExistingUser == false)
        let next = LaunchDecision(
            stored: same.history, checked: same.checked, processLaunch: UUID(), version: version, backend: "c",
            now: Date(timeIntervalSince1970: 2), markerPresent: { true }, importers: [], storage: .standard, eventsTaken: { _ in 0 })
        #expect(next.history.lastKind == .relaunch)
        #expect(next.history.launch(for: "c").isExistingUser)
        #expect(next.history.launch(for: "a").isExistingUser == false)
    }
}

/// An in-memory backend that, like LinkForty, names the install only in its install match.
private struct ReportingBackend: DeepLinkBackend {
    let inner = InMemoryBackend(id: "reporting")
    var id: BackendID { inner.id }
    var needsInstallReport: Bool { true }
    func canHandle(_ url: URL) -> Bool { inner.canHandle(url) }
    func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink { try await inner.resolve(link, context: context) }
    func matchInstall(context: BackendContext) async throws -> InstallMatch { try await inner.matchInstall(context: context) }
}
