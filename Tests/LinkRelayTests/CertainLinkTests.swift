import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// Certain deferred links: the tapped link read from the pasteboard with the user's consent, a
/// paste from the onboarding screen's paste control, and an App Clip's invocation URL handed
/// over through the App Group. Each is delivered once per install as the deferred link, before
/// and instead of a fingerprint match.
@Suite("Certain deferred links (pasteboard, paste control, App Clip)", .timeLimit(.minutes(1)))
struct CertainLinkTests {
    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
    let store = InMemoryStore()
    let clock = ManualClock()
    let pasteboard = InMemoryPasteboard()

    static let tapped = "https://go.acme.app/spring?lr_click=tok_5d1f0c8e9a7b4e2f8c6a1d3b5e7f9a0c&utm_source=mail"
    static let fingerprinted = DeepLink.fixture(path: "/other", host: "go.acme.app", origin: .deferred)
    static let fingerprintAttribution = InstallAttribution(
        installID: "inst-fp", isAttributed: true, confidence: .init(score: 80), matchedFactors: ["ip"], method: .fingerprint)

    /// One launch of the app: a new process on the shared store.
    func launch(
        backend: (any DeepLinkBackend)? = nil, pasteboard: Bool = true, _ configure: (inout DeepLinkClient.Configuration) -> Void = { _ in }
    ) -> DeepLinkClient {
        makeClient(backend ?? self.backend, clock: clock, store: store) {
            $0.retryPolicy = .none
            $0.processLaunch = UUID()
            if pasteboard { $0.pasteboardCheck = PasteboardCheck(pasteboard: self.pasteboard) }
            configure(&$0)
        }
    }

    func scriptFingerprintMatch() {
        backend.scriptInstall(.success(InstallMatch(attribution: Self.fingerprintAttribution, link: Self.fingerprinted)))
    }

    // MARK: The pasteboard

    @Test("off by default: the pasteboard is never asked, and the fingerprint match decides")
    func offByDefault() async {
        scriptFingerprintMatch()
        pasteboard.copy(Self.tapped)
        let client = launch(pasteboard: false)
        await client.start()
        #expect(pasteboard.calls.isEmpty)
        #expect(await client.installOutcome() == .attributed(Self.fingerprinted, Self.fingerprintAttribution))
        // On, but with deferred links off: its link could not be delivered, so no alert.
        let off = makeClient(backend, clock: clock, store: InMemoryStore()) {
            $0.pasteboardCheck = PasteboardCheck(pasteboard: pasteboard)
            $0.deferredDeepLinksEnabled = false
        }
        await off.start()
        #expect(pasteboard.calls.isEmpty)
    }

    @Test(
        "on the first launch: asked silently, read, the link delivered once as the deferred link without its token, the pasteboard cleared, no fingerprint match"
    )
    func readOnFirstLaunch() async throws {
        scriptFingerprintMatch()
        pasteboard.copy(Self.tapped)
        let countAtRead = pasteboard.changeCount
        let client = launch()
        let events = client.linkEvents()
        await client.start()
        let outcome = await client.installOutcome()
        guard case .attributed(let link, let attribution) = outcome else {
            Issue.record("expected attributed, got \(outcome)")
            return
        }
        #expect(link.url == url("https://go.acme.app/spring?utm_source=mail"))
        #expect(link.origin == .deferred && link.path == "/spring")
        #expect(attribution.method == .pasteboard && attribution.confidence?.score == 100 && attribution.isAttributed)
        #expect(backend.installMatchCount == 0)
        #expect(pasteboard.calls == [.detect, .read, .clear(countAtRead)])
        #expect(pasteboard.text == nil)
        let received = await eventsUntilMarker(client, events)
        #expect(received.compactMap(\.link) == [link])
        #expect(received.contains(.install(outcome)))
        await client.shutdown()

        // The next launch: nothing read, nothing delivered again, the outcome restored.
        pasteboard.copy("https://go.acme.app/summer")
        let next = launch()
        let nextEvents = next.linkEvents()
        await next.start()
        #expect(await next.installOutcome() == outcome)
        #expect(await eventsUntilMarker(next, nextEvents).isEmpty)
        #expect(pasteboard.readCount == 1)
        #expect(backend.installMatchCount == 0)
    }

    @Test("a pasteboard without a web URL is not read (no alert); a link of another host is read but neither taken nor cleared")
    func hostFilter() async {
        scriptFingerprintMatch()
        pasteboard.copy("see you at 8")
        let first = launch()
        await first.start()
        #expect(pasteboard.calls == [.detect])
        #expect(await first.installOutcome() == .attributed(Self.fingerprinted, Self.fingerprintAttribution))

        let other = InMemoryPasteboard()
        other.copy("https://evil.example/spring")
        let secondStore = InMemoryStore()
        let client = makeClient(backend, clock: clock, store: secondStore) {
            $0.retryPolicy = .none
            $0.pasteboardCheck = PasteboardCheck(pasteboard: other)
        }
        await client.start()
        #expect(other.calls == [.detect, .read])
        #expect(other.text == "https://evil.example/spring")
        #expect(await client.installOutcome() == .attributed(Self.fingerprinted, Self.fingerprintAttribution))
    }

    @Test("the pasteboard is cleared only if it still holds the link read")
    func clearsOnlyItsOwnLink() async {
        let changing = ChangingPasteboard(link: url(Self.tapped))
        let client = makeClient(backend, clock: clock, store: store) {
            $0.retryPolicy = .none
            $0.pasteboardCheck = PasteboardCheck(pasteboard: changing)
        }
        await client.start()
        #expect(await client.installOutcome().attribution?.method == .pasteboard)
        // The user copied something between the read and the clear: it stays.
        #expect(changing.cleared == false)
    }

    @Test("the outcome waits for the read at most the timeout (manual clock); a link read later is delivered once, the outcome kept")
    func boundedWait() async throws {
        backend.scriptInstall(.success(.organic(.organic(installID: "inst-o"))))
        pasteboard.copy(Self.tapped)
        pasteboard.holdsReads = true
        let client = launch { $0.pasteboardCheck?.timeout = 4 }
        let events = client.linkEvents()
        let started = Task { await client.start() }
        while pasteboard.heldReadCount == 0 { await Task.yield() }
        await clock.waitForSleepers(count: 1)
        #expect(await client.currentInstallOutcome == nil)
        clock.advance(by: 3.9)
        #expect(await client.currentInstallOutcome == nil)
        clock.advance(by: 0.1)
        _ = await started.value
        #expect(await client.installOutcome() == .organic(.organic(installID: "inst-o")))
        #expect(backend.installMatchCount == 1)
        // The user answers the alert now.
        pasteboard.answerReads()
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .install(.organic(.organic(installID: "inst-o"))))
        let late = await iterator.next()
        #expect(late?.link?.path == "/spring" && late?.link?.origin == .deferred)
        #expect(await client.installOutcome() == .organic(.organic(installID: "inst-o")))
    }

    @Test("a link that opened the app: the pasteboard is not read, on this launch or a later one")
    func universalLinkFirst() async {
        pasteboard.copy(Self.tapped)
        let client = launch()
        let events = client.linkEvents()
        client.handle(url("https://go.acme.app/opened"))
        await client.waitUntilIdle()
        await client.start()
        #expect(pasteboard.calls.isEmpty)
        #expect(await eventsUntilMarker(client, events).compactMap(\.link).map(\.path) == ["/opened"])
        await client.shutdown()
        let next = launch()
        await next.start()
        #expect(pasteboard.calls.isEmpty)
    }

    @Test("never after clearData(), though the next start is a first launch again")
    func notAfterClearData() async {
        backend.scriptInstall(.success(.organic()))
        let client = launch()
        await client.start()
        #expect(pasteboard.calls == [.detect])
        await client.clearData()
        pasteboard.copy(Self.tapped)
        await client.start()
        #expect(await client.launch().kind == .firstInstall)
        #expect(pasteboard.calls == [.detect])
        #expect(await client.installOutcome() == .organic(.organic()))
    }

    @Test("the pasteboard's timeout accepts every value: NaN and negative as 0, infinity kept")
    func timeoutBounds() {
        for (given, expected) in [(-1.0, 0.0), (.nan, 0), (0, 0), (.infinity, .infinity), (2.5, 2.5)] as [(Double, Double)] {
            let client = makeClient(backend) { $0.pasteboardCheck = PasteboardCheck(pasteboard: pasteboard, timeout: given) }
            #expect(client.configuration.pasteboardCheck?.timeout == expected)
        }
    }

    // MARK: The paste control

    @Test("a paste before the outcome is the deferred link: no pasteboard read, no fingerprint match")
    func pasteBeforeOutcome() async throws {
        scriptFingerprintMatch()
        let client = launch(pasteboard: false)
        #expect(await client.handlePastedLink(url(Self.tapped)))
        #expect(await !client.handlePastedLink(url("https://go.acme.app/second")))
        await client.start()
        let outcome = await client.installOutcome()
        #expect(outcome.attribution?.method == .pasteboard)
        guard case .attributed(let link, _) = outcome else { return }
        #expect(link.path == "/spring")
        #expect(backend.installMatchCount == 0)
    }

    @Test("a paste after an organic outcome is delivered once as a deferred link; a paste after a delivered deferred link is not")
    func pasteAfterOutcome() async throws {
        backend.scriptInstall(.success(.organic()))
        let client = launch(pasteboard: false)
        let events = client.linkEvents()
        await client.start()
        #expect(await !client.handlePastedLink(url("https://elsewhere.example/spring")))
        #expect(await client.handlePastedLink(url(Self.tapped)))
        #expect(await !client.handlePastedLink(url(Self.tapped)))
        let received = await eventsUntilMarker(client, events)
        #expect(received.compactMap(\.link).map(\.path) == ["/spring"])
        #expect(received.compactMap(\.link).first?.origin == .deferred)
        #expect(await client.installOutcome() == .organic(.organic()))

        let matchedStore = InMemoryStore()
        scriptFingerprintMatch()
        let matched = makeClient(backend, clock: clock, store: matchedStore) { $0.retryPolicy = .none }
        await matched.start()
        #expect(await !matched.handlePastedLink(url(Self.tapped)))
    }

    @Test("a paste while the fingerprint match is under way wins over it, keeping the match's install id")
    func pasteDuringMatch() async throws {
        backend.scriptInstall(.success(InstallMatch(attribution: Self.fingerprintAttribution, link: Self.fingerprinted)), delay: 2)
        let client = launch(pasteboard: false)
        let events = client.linkEvents()
        let started = Task { await client.start() }
        await clock.waitForSleepers(count: 2)
        #expect(await client.handlePastedLink(url(Self.tapped)))
        clock.advance(by: 2)
        _ = await started.value
        let outcome = await client.installOutcome()
        #expect(outcome.attribution?.method == .pasteboard && outcome.attribution?.installID == "inst-fp")
        #expect(await eventsUntilMarker(client, events).compactMap(\.link).map(\.path) == ["/spring"])
    }

    // MARK: The App Clip

    @Test(
        "the App Clip saves its invocation URL; the full app's first launch delivers it once and removes it; never again, not after clearData()"
    )
    func appClipHandoff() async throws {
        scriptFingerprintMatch()
        let group = InMemoryStore()
        let clip = makeClient(backend, clock: clock, store: InMemoryStore()) {
            $0.appClipHandoff = AppClipHandoff(store: group, isAppClip: true)
        }
        clip.handle(url("https://go.acme.app/clip-offer?table=7"))
        clip.handle(url("myapp://not-for-the-app"))
        await clip.waitUntilIdle()
        #expect(AppClipHandoff(store: group, isAppClip: false).saved()?.url == url("https://go.acme.app/clip-offer?table=7"))

        let app = launch(pasteboard: false) { $0.appClipHandoff = AppClipHandoff(store: group, isAppClip: false) }
        let events = app.linkEvents()
        await app.start()
        let outcome = await app.installOutcome()
        #expect(outcome.attribution?.method == .appClip && outcome.attribution?.confidence?.score == 100)
        let links = await eventsUntilMarker(app, events).compactMap(\.link)
        #expect(links.map(\.path) == ["/clip-offer"] && links.first?.parameters["table"] == "7")
        #expect(links.first?.origin == .deferred)
        #expect(backend.installMatchCount == 0)
        #expect(AppClipHandoff(store: group, isAppClip: false).saved() == nil)

        // A link saved again (another Clip session), then the user erases their data.
        try AppClipHandoff(store: group, isAppClip: true).save(url("https://go.acme.app/clip-again"))
        await app.clearData()
        await app.start()
        #expect(await app.installOutcome() == .attributed(Self.fingerprinted, Self.fingerprintAttribution))
        #expect(AppClipHandoff(store: group, isAppClip: false).saved() != nil)
    }

    @Test("an App Clip link of another host is removed, not taken; the fingerprint match decides")
    func appClipForeignHost() async throws {
        scriptFingerprintMatch()
        let group = InMemoryStore()
        try AppClipHandoff(store: group, isAppClip: true).save(url("https://other.example/x"))
        let app = launch(pasteboard: false) { $0.appClipHandoff = AppClipHandoff(store: group, isAppClip: false) }
        await app.start()
        #expect(await app.installOutcome() == .attributed(Self.fingerprinted, Self.fingerprintAttribution))
        #expect(AppClipHandoff(store: group, isAppClip: false).saved() == nil)
    }

    @Test("App Clip first, then the pasteboard: with an App Clip link the pasteboard is not read")
    func appClipBeforePasteboard() async throws {
        let group = InMemoryStore()
        try AppClipHandoff(store: group, isAppClip: true).save(url("https://go.acme.app/clip-offer"))
        pasteboard.copy(Self.tapped)
        let app = launch { $0.appClipHandoff = AppClipHandoff(store: group, isAppClip: false) }
        await app.start()
        #expect(await app.installOutcome().attribution?.method == .appClip)
        #expect(pasteboard.calls.isEmpty)
    }

    // MARK: Backends that name the install in its report (LinkForty)

    @Test("a backend that names the install in its report gets the certain link with its token; the outcome carries its install id")
    func installReport() async throws {
        let reporting = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"], needsInstallReport: true)
        reporting.scriptInstall(.success(.organic(.organic(installID: "inst-7"))))
        pasteboard.copy(Self.tapped)
        let client = launch(backend: reporting)
        await client.start()
        let outcome = await client.installOutcome()
        #expect(outcome.attribution?.installID == "inst-7" && outcome.attribution?.method == .pasteboard)
        let report = reporting.contexts.last { $0.certainLink != nil }
        #expect(report?.certainLink?.clickToken == "tok_5d1f0c8e9a7b4e2f8c6a1d3b5e7f9a0c")
        #expect(report?.certainLink?.url == url("https://go.acme.app/spring?utm_source=mail"))
        #expect(reporting.installMatchCount == 1)
    }

    @Test("a failed report: the link is delivered at once, the report sent again on the next launch, the link not again")
    func installReportFails() async throws {
        let reporting = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"], needsInstallReport: true)
        reporting.scriptInstall(.failure(DeepLinkError(.server(status: 503), "down")))
        pasteboard.copy(Self.tapped)
        let client = launch(backend: reporting)
        let events = client.linkEvents()
        await client.start()
        #expect(await client.installOutcome().attribution?.installID == nil)
        #expect(await eventsUntilMarker(client, events).compactMap(\.link).map(\.path) == ["/spring"])
        await client.shutdown()

        reporting.scriptInstall(.success(.organic(.organic(installID: "inst-8"))))
        let next = launch(backend: reporting)
        let nextEvents = next.linkEvents()
        await next.start()
        #expect(await eventsUntilMarker(next, nextEvents).compactMap(\.link).isEmpty)
        #expect(reporting.installMatchCount == 2)
        #expect(reporting.contexts.filter { $0.certainLink != nil }.count == 2)
        await next.shutdown()
        // The install id is kept from then on.
        let third = launch(backend: reporting)
        await third.start()
        #expect(await third.installOutcome().attribution?.installID == "inst-8")
        #expect(reporting.installMatchCount == 2)
    }

    @Test("a report that keeps failing is sent on at most maximumInstallMatchLaunches launches")
    func installReportBounded() async throws {
        let reporting = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"], needsInstallReport: true)
        reporting.scriptInstall(.failure(DeepLinkError(.server(status: 503), "down")))
        pasteboard.copy(Self.tapped)
        for _ in 0..<5 {
            let client = launch(backend: reporting) { $0.maximumInstallMatchLaunches = 3 }
            await client.start()
            #expect(await client.installOutcome().attribution?.method == .pasteboard)
            await client.shutdown()
        }
        #expect(reporting.installMatchCount == 3)
    }

    // MARK: Routing

    @Test("RoutingBackend resolves a certain link through the member whose domain it has")
    func routing() async throws {
        let old = InMemoryBackend(id: "old", schemes: [], hosts: ["old.acme.app"])
        let routing = RoutingBackend(backend, [old])
        pasteboard.copy("https://old.acme.app/legacy")
        let client = launch(backend: routing)
        await client.start()
        guard case .attributed(let link, let attribution) = await client.installOutcome() else {
            Issue.record("expected attributed")
            return
        }
        #expect(link.provider == "old" && attribution.method == .pasteboard)
        #expect(old.resolvedURLs == [url("https://old.acme.app/legacy")])
    }

    // MARK: Pure parts

    @Test("the click token comes off the link; a pasted text counts only when it is one web URL")
    func pureParts() {
        let certain = CertainLink(url: url("https://go.acme.app/a?lr_click=t1&x=1&lr_click="), source: .pasteboard)
        #expect(certain.url == url("https://go.acme.app/a?x=1") && certain.clickToken == "t1")
        let bare = CertainLink(url: url("https://go.acme.app/a?lr_click=t2"), source: .pasteboard)
        #expect(bare.url == url("https://go.acme.app/a") && bare.clickToken == "t2")
        #expect(CertainLink(url: url("https://go.acme.app/a"), source: .appClip).clickToken == nil)
        #expect(CertainLink.pastedURL("  https://go.acme.app/a\n") == url("https://go.acme.app/a"))
        for text in [
            "go.acme.app/a", "see https://go.acme.app/a", "myapp://a", "https://", "", "https://a https://b",
            String(repeating: "a", count: 5000),
        ] {
            #expect(CertainLink.pastedURL(text) == nil, "\(text.prefix(40))")
        }
    }
}

/// A pasteboard whose content changes between the read and the clear: the user copied
/// something else.
final class ChangingPasteboard: LinkPasteboard, Sendable {
    private let link: URL
    private let state = Locked((changeCount: 1, cleared: false))

    init(link: URL) { self.link = link }

    var cleared: Bool { state.withLock { $0.cleared } }

    func probablyHoldsWebURL() async -> Bool { true }

    func readLink() async -> PastedLink? {
        state.withLock { state in
            defer { state.changeCount += 1 }
            return PastedLink(url: link, changeCount: state.changeCount)
        }
    }

    func clear(ifUnchangedSince changeCount: Int) async {
        state.withLock { state in
            if state.changeCount == changeCount { state.cleared = true }
        }
    }
}
