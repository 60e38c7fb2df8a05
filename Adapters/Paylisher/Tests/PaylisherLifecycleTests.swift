import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import Synchronization
import Testing

@testable import LinkRelayPaylisher

@Suite("Paylisher lifecycle events", .timeLimit(.minutes(1)))
struct PaylisherLifecycleTests {
    let clock = ManualClock()
    let simulator: ProviderSimulator
    let server: PaylisherEmulation

    init() {
        simulator = ProviderSimulator(clock: clock)
        server = simulator.addPaylisher(apiKey: apiKey)
        server.createCampaign(keyName: "SUMMER", title: "Summer Sale", scheme: "diyetim://products/42", jid: "jrn_1", metaData: ["tier": 2])
    }

    /// A client whose events go out one per request as they are tracked
    /// (``EventBatching/oneByOne``): these tests read the event catalogue, one batch per event;
    /// PaylisherBatchingTests covers Paylisher's own batching.
    func client(_ configure: (inout PaylisherBackend.Configuration) throws -> Void = { _ in }) throws -> DeepLinkClient {
        var backendConfiguration = try PaylisherBackend.Configuration(
            apiKey: apiKey, appSchemes: ["diyetim"], authRequiredDestinations: ["wallet"], eventBatching: .oneByOne)
        try configure(&backendConfiguration)
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: clock, transport: simulator)
        configuration.deviceInfo = StaticDeviceInfo(istanbulPhone)
        configuration.retryPolicy = .none
        return DeepLinkClient(backend: PaylisherBackend(backendConfiguration), configuration: configuration)
    }

    /// The events the server has received once `count` batches arrived.
    func received(_ count: Int) async -> [PaylisherEmulation.ReceivedEvent] {
        await simulator.waitForRequests(path: "/batch", count: count)
        return server.events
    }

    @Test("opened (with the campaign), completed after sign-in, cancelled, timed out; the deferred check")
    func catalogue() async throws {
        let client = try client()
        let events = client.linkEvents()
        await client.start()  // organic: "Deferred Deep Link Check"
        client.handle(url("diyetim://products/42?keyName=SUMMER&utm_source=ig&utm_medium=paid&campaign=summer25"))
        client.handle(url("diyetim://wallet?campaign=cashback"))
        var iterator = events.makeAsyncIterator()
        while let event = await iterator.next() { if case .authenticationRequired = event { break } }
        // The check and both "Opened" events reach the server before time moves: a jump with a
        // batch in flight would time it out on this manual clock, and it would be sent again.
        _ = await received(3)
        clock.advance(by: 42.5)
        await client.completePendingLink()
        client.handle(url("diyetim://wallet?auth=required&n=2"))
        while let event = await iterator.next() { if case .authenticationRequired(let link) = event, link.parameters["n"] == "2" { break } }
        await client.cancelPendingLink()
        client.handle(url("diyetim://wallet?n=3"))
        while let event = await iterator.next() { if case .authenticationRequired(let link) = event, link.parameters["n"] == "3" { break } }
        // Everything so far has reached the server before time jumps past the sign-in timeout
        // (a jump with requests in flight would time them out on this manual clock).
        _ = await received(7)
        clock.advance(by: 300)

        let all = await received(8)
        #expect(
            all.map(\.event) == [
                "Deferred Deep Link Check", "Deep Link Opened", "Deep Link Opened", "Deep Link Completed", "Deep Link Opened",
                "Deep Link Cancelled", "Deep Link Opened", "Deep Link Timeout",
            ])
        let opened = try #require(all.first { $0.event == "Deep Link Opened" }?.properties)
        #expect(opened["destination"] == "products")
        #expect(opened["campaign_key"] == "SUMMER")
        #expect(opened["has_campaign_key"] == true)
        #expect(opened["campaign_resolved"] == true)
        #expect(opened["campaign_source"] == "instagram")
        #expect(opened["utm_medium"] == "paid")
        #expect(opened["campaign_id"] == "summer25")
        #expect(opened["title"] == "Summer Sale")
        #expect(opened["scheme"] == "diyetim://products/42")  // the payload's scheme wins, as in Paylisher's SDK
        #expect(opened["meta_tier"] == 2)
        #expect(opened["jid"] == "jrn_1")
        let completed = try #require(all.first { $0.event == "Deep Link Completed" }?.properties)
        #expect(completed["was_pending"] == true)
        #expect(completed["time_to_complete"] == 42.5)
        #expect(completed["campaign_id"] == "cashback")
        let timeout = try #require(all.first { $0.event == "Deep Link Timeout" }?.properties)
        #expect(timeout["waited_seconds"] == 300)
        #expect(all.first { $0.event == "Deferred Deep Link Check" }?.properties["status"] == "no_match")
        await client.shutdown()
    }

    @Test(
        "a failed campaign lookup (§13.3): the link arrives with its key, and later events still carry the session's campaign_key and deeplink_key"
    )
    func failedLookupKeepsSessionKey() async throws {
        let client = try client {
            $0 = try .init(apiKey: apiKey, appSchemes: ["diyetim"], captureDeepLinkEvents: false, eventBatching: .oneByOne)
        }
        var links = client.deepLinks().makeAsyncIterator()
        await client.start()
        _ = await received(1)  // the organic check
        client.handle(url("diyetim://campaign/NOPE1"))  // no such campaign: 404
        let link = try #require(await links.next())
        #expect(link.resolution == .local(.notFound))
        #expect(link.campaign?.key == "NOPE1")
        try await client.track("purchase")
        let purchase = try #require(await received(2).last)
        #expect(purchase.event == "purchase")
        #expect(purchase.properties["campaign_key"] == "NOPE1")
        #expect(purchase.properties["deeplink_key"] == "NOPE1")
        #expect(simulator.requests.contains { $0.url.path == "/campaign/resolve/NOPE1" })
        await client.shutdown()
    }

    @Test("a deferred match reports the match and then opens the link once; additional properties are merged")
    func deferredMatch() async throws {
        try server.recordWebClick(
            url: url("diyetim://products/42?color=red"), campaignKey: "SUMMER", jid: "jrn_9", from: istanbulPhone, at: clock.currentDate)
        let client = try client {
            $0 = try .init(apiKey: apiKey, appSchemes: ["diyetim"], additionalEventProperties: ["app": "diyetim"], eventBatching: .oneByOne)
        }
        await client.start()
        let all = await received(2)
        #expect(all.map(\.event) == ["Deferred Deep Link Match", "Deep Link Opened"])
        let match = all[0].properties
        #expect(match["url"] == "diyetim://products/42?color=red")
        #expect(match["campaign_key"] == "SUMMER")
        // As in Paylisher's SDK, the session's journey is stamped over the event's own `jid`: here
        // the campaign's (looked up for the matched link) wins over the click's `jrn_9`.
        #expect(match["jid"] == "jrn_1")
        #expect(match["source"] == "deferred_deeplink")
        #expect(match["attribution_window_seconds"] == 1800)
        #expect(match["attribution_confidence"] == 0.3)
        #expect(match["app"] == "diyetim")
        #expect(all[1].properties["campaign_resolved"] == true)  // the matched link's campaign was looked up
        await client.shutdown()
    }

    @Test(
        "with deferred deep links off (deferredDeepLinksEnabled, Paylisher's deferredDeepLinkConfig.enabled = false): no match request, organic at once, no deferred event (§6.1)"
    )
    func deferredOff() async throws {
        try server.recordWebClick(
            url: url("diyetim://products/42?color=red"), campaignKey: "SUMMER", jid: "jrn_9", from: istanbulPhone, at: clock.currentDate)
        let client = try client {
            $0 = try .init(apiKey: apiKey, appSchemes: ["diyetim"], deferredDeepLinksEnabled: false, eventBatching: .oneByOne)
        }
        await client.start()
        #expect(await client.installOutcome() == .organic(.organic()))
        try await client.track("marker")
        await client.flushEvents()
        #expect(await received(1).map(\.event) == ["marker"])
        #expect(simulator.requests.filter { $0.url.path == "/v1/deferred-deeplink" }.isEmpty)
        await client.shutdown()
    }

    @Test("a match whose campaign_key and jid are null sends them as empty strings in the Match event, as Paylisher's SDK does (§10)")
    func matchWithoutCampaign() async throws {
        let transport = DeferredAnswer(
            base: simulator, body: #"{"status":"match","url":"diyetim://products/42","campaign_key":null,"jid":null}"#)
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: clock, transport: transport)
        configuration.deviceInfo = StaticDeviceInfo(istanbulPhone)
        configuration.retryPolicy = .none
        let client = DeepLinkClient(
            backend: PaylisherBackend(try .init(apiKey: apiKey, appSchemes: ["diyetim"], eventBatching: .oneByOne)),
            configuration: configuration)
        await client.start()
        let match = try #require(await received(1).first)
        #expect(match.event == "Deferred Deep Link Match")
        #expect(match.properties["campaign_key"] == "")
        #expect(match.properties["jid"] == "")
        #expect(match.properties["url"] == "diyetim://products/42")
        await client.shutdown()
    }

    @Test(
        "a match whose url is null or not a URL is attributed without a link: nothing delivered, no Check or Match event, not asked again (§6.5)",
        arguments: [
            #"{"status":"match","url":null,"campaign_key":"SUMMER"}"#, #"{"status":"match","url":"not a url","campaign_key":"SUMMER"}"#,
        ])
    func matchWithoutURL(_ answer: String) async throws {
        let transport = DeferredAnswer(base: simulator, body: answer)
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: clock, transport: transport)
        configuration.deviceInfo = StaticDeviceInfo(istanbulPhone)
        configuration.retryPolicy = .none
        let backend = PaylisherBackend(try .init(apiKey: apiKey, appSchemes: ["diyetim"], eventBatching: .oneByOne))
        let client = DeepLinkClient(backend: backend, configuration: configuration)
        let links = client.deepLinks()
        await client.start()
        let outcome = await client.installOutcome()
        guard case .attributedWithoutLink(let attribution) = outcome else {
            Issue.record("expected an attributed install without a link, got \(outcome)")
            return
        }
        #expect(attribution.isAttributed)
        try await client.track("marker")
        await client.flushEvents()
        // The first thing the server hears about is the marker: no deferred event was sent.
        #expect(await received(1).map(\.event) == ["marker"])
        await client.shutdown()
        var delivered: [DeepLink] = []
        for await link in links { delivered.append(link) }
        #expect(delivered.isEmpty)
        // The next launch (same store) restores the outcome and does not ask again.
        let next = DeepLinkClient(backend: backend, configuration: configuration)
        await next.start()
        #expect(await next.installOutcome() == outcome)
        #expect(transport.deferredRequests == 1)
        await next.shutdown()
    }

    @Test("with captureDeepLinkEvents off only the deferred events go out; diagnostics when asked")
    func switches() async throws {
        let quiet = try client {
            $0 = try .init(apiKey: apiKey, appSchemes: ["diyetim"], captureDeepLinkEvents: false, eventBatching: .oneByOne)
        }
        await quiet.start()
        var links = quiet.deepLinks().makeAsyncIterator()
        quiet.handle(url("diyetim://products/42?keyName=SUMMER"))
        _ = await links.next()
        try await quiet.track("marker")
        let events = await received(2)
        #expect(events.map(\.event) == ["Deferred Deep Link Check", "marker"])
        await quiet.shutdown()

        let verbose = try client {
            $0 = try .init(apiKey: apiKey, appSchemes: ["diyetim"], captureDeepLinkDiagnostics: true, eventBatching: .oneByOne)
        }
        await verbose.start()
        var verboseLinks = verbose.deepLinks().makeAsyncIterator()
        verbose.handle(url("diyetim://products/42?keyName=SUMMER"))
        _ = await verboseLinks.next()
        let more = await received(5)
        #expect(Array(more.map(\.event).suffix(3)) == ["Deferred Deep Link Check", "Deep Link Opened", "deeplink_resolved"])
        #expect(more.last?.properties["has_custom_scheme"] == true)
        await verbose.shutdown()
    }

    @Test("an unparseable link is reported as Deep Link Failed")
    func failed() async throws {
        let client = try client()
        await client.start()
        client.handle(url("diyetim:///products"))
        let all = await received(2)
        let failed = try #require(all.first { $0.event == "Deep Link Failed" }?.properties)
        #expect(failed["failure_reason"] == "parse_error")
        #expect(failed["scheme"] == "diyetim")
        #expect(failed["attempted_destination"] == "products")
        await client.shutdown()
    }
}

/// The simulator, with the deferred answer replaced by `body`; counts the deferred requests.
private final class DeferredAnswer: HTTPTransport {
    let base: ProviderSimulator
    let body: String
    private let asked = Mutex(0)

    init(base: ProviderSimulator, body: String) {
        self.base = base
        self.body = body
    }

    var deferredRequests: Int { asked.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard request.url.path == "/v1/deferred-deeplink" else { return try await base.send(request) }
        asked.withLock { $0 += 1 }
        return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
    }
}
