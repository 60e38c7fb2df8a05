import Foundation
import LinkRelay
import LinkRelayTesting
import Testing

/// The README's examples, compiled and run, so the README cannot drift from the API.
@Suite("README examples", .timeLimit(.minutes(1)))
struct ReadmeTests {
    enum QuickStartRoute: Hashable, Sendable { case product(id: Int) }

    @Test("the quick start routes both forms of a link to the screen and surfaces an unmatched link")
    func quickStart() async throws {
        let router = try DeepLinkRouter<QuickStartRoute> {
            LinkRoute("/products/:id") { try .product(id: $0.capture("id")) }
        }
        var configuration = DeepLinkClient.Configuration()
        configuration.clock = ManualClock()  // the test's own: no deadline passes on a busy machine
        let client = DeepLinkClient(
            backend: LocalBackend(.init(schemes: ["acme"], hosts: ["go.acme.app"])), configuration: configuration)
        let routes = client.routes(router)

        #expect(client.handle(URL(string: "https://go.acme.app/products/42")!))
        client.handle(URL(string: "acme://products/42")!)
        client.handle(URL(string: "acme://products/abc")!)

        var iterator = routes.makeAsyncIterator()
        #expect(await iterator.next()?.route == .product(id: 42))
        #expect(await iterator.next()?.route == .product(id: 42))
        let unmatched = await iterator.next()
        #expect(unmatched?.route == nil)
        #expect(unmatched?.link.pathSegments == ["products", "abc"])
        await client.shutdown()
    }

    @Test("the Debug-only sandbox transport sends the listed hosts to the sandbox and nothing else")
    func sandboxTransport() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/link/p42", .json("{}"))
        stub.stub(.get, "/other", .json("{}"))
        var configuration = DeepLinkClient.Configuration()
        configuration.transport = HostRewritingTransport(
            hosts: ["go.acme.app", "limelink.org", "*.limelink.org"],
            to: URL(string: "http://127.0.0.1:8642")!, over: stub)
        let transport = try #require(configuration.transport)
        _ = try await transport.send(HTTPRequest(method: .get, url: url("https://shop.limelink.org/link/p42?utm_source=x")))
        _ = try await transport.send(HTTPRequest(method: .get, url: url("https://example.com/other")))
        #expect(stub.requests.map(\.url.absoluteString) == ["http://127.0.0.1:8642/link/p42?utm_source=x", "https://example.com/other"])
    }

    @Test("the install attribution article's example: a campaign install opens the sale")
    func campaignInstallOpensTheSale() async throws {
        let backend = InMemoryBackend(schemes: ["acme"])
        let clicked = DeepLink.fixture(path: "/sale/spring", origin: .deferred)
        backend.scriptInstall(
            .success(
                InstallMatch(
                    attribution: InstallAttribution(isAttributed: true, confidence: .init(score: 90), method: .fingerprint),
                    link: clicked)))
        let client = DeepLinkClient(backend: backend, configuration: .init(store: InMemoryStore(), clock: ManualClock()))
        let links = client.deepLinks()

        await client.start()

        var iterator = links.makeAsyncIterator()
        #expect(await iterator.next()?.pathSegments == ["sale", "spring"])
        await client.shutdown()
    }

    @Test("the testing example: a slow provider still opens the product")
    func slowProviderStillOpensTheProduct() async throws {
        let clock = ManualClock()
        let backend = InMemoryBackend(schemes: ["acme"], hosts: ["go.acme.app"])
        let link = URL(string: "https://go.acme.app/products/42")!
        backend.script(link, .parsed, delay: 10)

        var configuration = DeepLinkClient.Configuration()
        configuration.clock = clock
        let client = DeepLinkClient(backend: backend, configuration: configuration)
        let links = client.deepLinks()

        client.handle(link)
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 3)

        var iterator = links.makeAsyncIterator()
        let delivered = try #require(await iterator.next())
        #expect(delivered.pathSegments == ["products", "42"])
        #expect(delivered.resolution == .local(.timedOut))
    }
}

extension ReadmeTests {
    @Test("the first-launch example compiles and reads the outcome")
    func firstLaunchExample() async throws {
        let backend = InMemoryBackend()
        backend.scriptInstall(.success(.organic(.organic())))
        var configuration = DeepLinkClient.Configuration()
        configuration.store = InMemoryStore()
        configuration.clock = ManualClock()
        let client = DeepLinkClient(backend: backend, configuration: configuration)
        await client.start()
        var said = ""
        switch await client.installOutcome() {
        case .attributed(let link, let attribution): said = "installed from \(link.url) \(attribution.confidence?.score ?? 0)"
        case .attributedWithoutLink(let attribution): said = "matched to link \(attribution.linkID ?? "?") with nothing to open"
        case .organic: said = "organic install"
        case .failed(let error): said = "match failed, tried again next launch: \(error.message)"
        case .timedOut: said = "no answer yet"
        case .existingUser: said = "had the app before; no install match"
        }
        #expect(said == "organic install")
        try await client.track("signup", properties: ["plan": "pro"])
        try await client.trackRevenue(amount: Decimal(string: "9.99")!, currency: "EUR")
        await client.flushEvents()
        #expect(backend.sentEvents.map(\.name) == ["signup", "revenue"])
    }
}
