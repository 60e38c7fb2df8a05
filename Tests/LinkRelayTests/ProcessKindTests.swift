import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// Only the app decides an install: an App Clip hands its links over and nothing more, and an
/// extension sharing the app's store never writes the launch history (issue 62, point 3).
@Suite("The App Clip and extensions", .timeLimit(.minutes(1)))
struct ProcessKindTests {
    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"], acceptsAppleAdsToken: true)
    let clock = ManualClock()

    static let match = InstallMatch(
        attribution: InstallAttribution(installID: "inst-1", isAttributed: true, confidence: .init(score: 90), method: .fingerprint),
        link: DeepLink.fixture(path: "/products/42", host: "go.acme.app", origin: .deferred))

    @Test(
        "the process's kind from its main bundle",
        arguments: [
            ("/var/containers/Bundle/Application/X/Shop.app", false, ProcessKind.app),
            ("/var/containers/Bundle/Application/X/Shop.app/PlugIns/Widget.appex", false, .appExtension),
            ("/var/containers/Bundle/Application/X/Shop.app/PlugIns/Widget.appex/", false, .appExtension),
            ("/var/containers/Bundle/Application/X/ShopClip.app", true, .appClip),
            ("/work/.build/debug", false, .app),
        ])
    func kinds(path: String, isAppClip: Bool, expected: ProcessKind) {
        #expect(ProcessKind.kind(bundlePath: path, isAppClip: isAppClip) == expected)
    }

    @Test("in the App Clip: the link handed over, no marker, no match or report, no token, no conversion value")
    func appClip() async throws {
        backend.scriptInstall(.success(Self.match))
        let group = InMemoryStore()
        let marker = InMemoryInstallMarker()
        let writer = ConversionValueTests.Writer()
        let token = AppleAdsTokenTests.ScriptedSource(clock: clock)
        let clip = makeClient(backend, clock: clock) {
            $0.retryPolicy = .none
            $0.processLaunch = UUID()
            $0.processKind = .appClip
            $0.installMarker = marker
            $0.appClipHandoff = AppClipHandoff(store: group, isAppClip: true)
            $0.appleAds = AppleAdsAttribution(source: token)
            $0.conversionValues = ConversionValues(schema: ConversionValueTests.schema, writer: writer)
        }
        let links = clip.deepLinks()
        let launch = await clip.start()
        #expect(launch.kind == .firstInstall)
        clip.handle(url("https://go.acme.app/spring"))
        var iterator = links.makeAsyncIterator()
        #expect(await iterator.next()?.url.path == "/spring")
        try await clip.track("signup")
        await clip.conversionWritesSettled()
        #expect(backend.installMatchCount == 0)
        #expect(marker.placeCount == 0)
        #expect(token.asked.withLock { $0 } == 0)
        #expect(writer.written.withLock { $0 }.isEmpty)
        guard case .failed(let error) = await clip.installOutcome() else {
            Issue.record("expected the Clip's unsupported outcome")
            return
        }
        #expect(error.code == .unsupported)
        // The full app, on the same device: its real first launch is a first install (the
        // Clip placed no marker), and it delivers the Clip's link as the deferred one.
        let app = makeClient(backend, clock: clock) {
            $0.retryPolicy = .none
            $0.processLaunch = UUID()
            $0.processKind = .app
            $0.installMarker = marker
            $0.appClipHandoff = AppClipHandoff(store: group, isAppClip: false)
        }
        let appLinks = app.deepLinks()
        #expect(await app.start().kind == .firstInstall)
        var appIterator = appLinks.makeAsyncIterator()
        #expect(await appIterator.next()?.url.path == "/spring")
        #expect(marker.placeCount == 1)
    }

    @Test("an extension run before the app's first launch writes no history: the app's first launch is still a first install")
    func extensionFirst() async throws {
        backend.scriptInstall(.success(Self.match))
        let shared = InMemoryStore()
        let marker = InMemoryInstallMarker()
        func client(_ kind: ProcessKind) -> DeepLinkClient {
            makeClient(backend, clock: clock, store: shared) {
                $0.retryPolicy = .none
                $0.processLaunch = UUID()
                $0.processKind = kind
                $0.installMarker = marker
            }
        }
        let widget = client(.appExtension)
        #expect(await widget.start().kind == .firstInstall)
        #expect(!shared.keys.contains(LaunchHistory.key))
        #expect(backend.installMatchCount == 0)
        #expect(marker.placeCount == 0)
        #expect(await widget.installOutcome().error?.code == .unsupported)
        await widget.shutdown()

        let app = client(.app)
        #expect(await app.start().kind == .firstInstall)
        #expect(backend.installMatchCount == 1)
        await app.shutdown()

        // After the app's launches, an extension reads the app's history and outcome, and
        // changes neither.
        let stored = try shared.data(forKey: LaunchHistory.key)
        #expect(stored != nil)
        let later = client(.appExtension)
        #expect(await later.start().kind == .relaunch)
        #expect(await later.installOutcome().isAttributed)
        #expect(try shared.data(forKey: LaunchHistory.key) == stored)
        #expect(backend.installMatchCount == 1)
    }
}

extension InstallOutcome {
    /// The error of a failed outcome (tests).
    var error: DeepLinkError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}
