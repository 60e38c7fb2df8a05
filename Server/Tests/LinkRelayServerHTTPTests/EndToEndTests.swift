import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayLinkForty
import LinkRelayTesting
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The project's own `LinkFortyBackend`, unchanged, against the server over real HTTP on
/// loopback: a link made through the API, a tap in Safari, a fresh app's first launch, a
/// universal link, events retried by the client, link creation, a wrong key.
@Suite("End to end with LinkFortyBackend", .timeLimit(.minutes(1)))
struct EndToEndTests {
    /// The proxy in front of the server (it names the phone's public address) and a network
    /// that loses the answer to each event's first send, so the client sends it again.
    final class PhoneNetwork: HTTPTransport {
        let inner = URLSessionTransport()
        let address: String
        private let sentEvents = Mutex<Set<JSONValue>>([])
        let lostAnswers = Mutex(0)

        init(address: String) {
            self.address = address
        }

        func send(_ request: LinkRelay.HTTPRequest) async throws -> LinkRelay.HTTPResponse {
            var request = request
            request.headers["X-Forwarded-For"] = address
            let response = try await inner.send(request)
            // The same event, however its keys are ordered this time.
            if request.url.path == "/api/sdk/v1/event", let body = request.body,
                let event = try? JSONDecoder().decode(JSONValue.self, from: body), sentEvents.withLock({ $0.insert(event).inserted })
            {
                lostAnswers.withLock { $0 += 1 }
                throw URLError(.networkConnectionLost)
            }
            return response
        }
    }

    static func client(
        port: Int, key: String, network: PhoneNetwork, configure: (inout DeepLinkClient.Configuration) -> Void = { _ in }
    ) throws -> DeepLinkClient {
        let backend = LinkFortyBackend(
            try .init(baseURL: URL(string: "http://127.0.0.1:\(port)")!, apiKey: key, appSchemes: ["shopapp"], appName: "Acme Shop"))
        var configuration = DeepLinkClient.Configuration()
        configuration.clock = ManualClock()
        configuration.transport = network
        configuration.store = InMemoryStore()
        configuration.deviceInfo = StaticDeviceInfo(StaticDeviceInfo.iPhone)
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, initialBackoff: 0, jitter: 0)
        configure(&configuration)
        return DeepLinkClient(backend: backend, configuration: configuration)
    }

    @Test(
        "link, tap, first launch attributed with score and factors, delivered once; universal link; events once; createLink; a wrong key is loud",
        arguments: TestEngine.available)
    func story(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { http in
                let port = try #require(http.port)
                // The app's team makes the link.
                try await LinkCreationTests.post(
                    http, "/api/links", key: world.adminKey,
                    [
                        "customCode": "p42", "originalUrl": "https://shop.example/product/42", "appScheme": "shopapp",
                        "deepLinkPath": "/product/42", "iosAppStoreUrl": "https://apps.apple.com/app/id1",
                        "utmParameters": ["source": "instagram"], "deepLinkParameters": ["productId": "42"],
                    ]
                ) { response, _ in #expect(response.status == .created) }
                // The tap in Safari, the app not installed: the page adds the fingerprint, then the click.
                try await RedirectTests.get(
                    http, "/p42?fp_tz=Europe/Berlin&fp_lang=de-DE&fp_sw=1179&fp_sh=2556", userAgent: HTTPTest.safari, ip: "203.0.113.7"
                ) { response in
                    #expect(response.status == .ok && String(buffer: response.body).contains("shopapp://product/42"))
                }
                let link = try #require(try await world.store.link(project: world.project.id, shortCode: "p42", templateSlug: nil))
                world.clock.advance(hours: 3)

                // The first launch, from the same household's address.
                let network = PhoneNetwork(address: "203.0.113.7")
                let client = try Self.client(port: port, key: world.sdkKey, network: network)
                var events = client.linkEvents().makeAsyncIterator()
                _ = await client.start()
                guard case .attributed(let deferred, let attribution) = await client.installOutcome() else {
                    Issue.record("not attributed: \(await client.installOutcome())")
                    return
                }
                #expect(attribution.confidence?.score == 90)
                #expect(attribution.matchedFactors == ["ip", "address", "timezone", "language", "screen"])
                #expect(deferred.linkID == link.id)
                #expect(deferred.shortCode == "p42" && deferred.path == "/product/42")
                #expect(deferred.destination == URL(string: "shopapp://product/42") && deferred.parameters["productId"] == "42")
                #expect(
                    try await world.store.clicks(link: link.id).count == 1,
                    "the route came with the install: no second request, no second click")

                var delivered: [DeepLink] = []
                // The universal link, through the server.
                client.handle(URL(string: "http://127.0.0.1:\(port)/p42?utm_source=newsletter")!)
                while let event = await events.next() {
                    if case .link(let link) = event { delivered.append(link) }
                    if delivered.count == 2 { break }
                }
                #expect(delivered.map(\.origin) == [.deferred, .universalLink], "the deferred link once, then the tap")
                #expect(delivered.last?.resolution == .server && delivered.last?.destination == URL(string: "shopapp://product/42"))
                #expect(delivered.last?.utm.source == "instagram")

                // Events: each answer lost once, so each is sent twice; stored once.
                try await client.track("purchase", properties: ["sku": "A-1"])
                try await client.trackRevenue(amount: Decimal(string: "9.99")!, currency: "EUR")
                // A lost answer keeps the event queued for the next flush: at most one more each.
                for _ in 0..<3 where await client.queuedEventCount > 0 { await client.flushEvents() }
                #expect(await client.queuedEventCount == 0)
                let installID = try #require(await client.installOutcome().attribution?.installID)
                let stored = try await world.store.events(install: installID)
                #expect(network.lostAnswers.withLock { $0 } == 2)
                #expect(stored.map(\.name).sorted() == ["purchase", "revenue"])
                #expect(stored.first { $0.name == "revenue" }?.properties["currency"] == "EUR")

                // A share link with the SDK key.
                let created = try await client.createLink(LinkRequest(deepLinkPath: "/product/7", parameters: ["ref": "u7"]))
                #expect(created.url.host == "127.0.0.1" && created.url.port == port)
                let made = try await world.store.link(
                    project: world.project.id, shortCode: try #require(created.shortCode), templateSlug: nil)
                #expect(made?.deepLinkPath == "/product/7" && made?.deepLinkParameters == ["ref": "u7"])
                await client.shutdown()

                // A wrong key: the install fails, and the app hears why.
                let wrong = "lr_sdk_00000000_" + String(repeating: "x", count: 32)
                let rejected = try Self.client(port: port, key: wrong, network: PhoneNetwork(address: "203.0.113.99"))
                var rejectedEvents = rejected.linkEvents().makeAsyncIterator()
                _ = await rejected.start()
                var failure: DeepLinkError?
                while let event = await rejectedEvents.next() {
                    if case .failure(let error) = event {
                        failure = error
                        break
                    }
                }
                #expect(failure?.code == .unauthorized && failure?.status == 401)
                #expect(failure?.description.contains(wrong) == false, "the key is never shown")
                await rejected.shutdown()
            }
        }
    }
}
