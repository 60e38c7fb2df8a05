import Foundation
import LinkRelay
import LinkRelayConformance
import LinkRelaySimulator
import LinkRelayTesting
import Testing

@testable import LinkRelayDynalinks

struct DynalinksFixture: ConformanceFixture {
    let name = "Dynalinks"

    func makeWorld(simulator: ProviderSimulator) throws -> ConformanceWorld {
        let server = simulator.addDynalinks(clientAPIKey: clientKey, projectHost: "acme.dynalinks.app")
        server.createLink(
            path: "/product/shoes", shortenedPath: "Ab3xQ9", url: "https://acme.example/product/shoes?color=red&size=42",
            name: "Spring shoes", referrer: "utm_source=facebook&utm_campaign=spring")
        let backend = DynalinksBackend(try .init(apiKey: clientKey, linkDomains: ["acme.dynalinks.app"], appSchemes: ["acmeshop"]))
        return ConformanceWorld(
            backend: backend, apiKey: clientKey,
            ownLinks: [url("https://acme.dynalinks.app/product/shoes"), url("https://ACME.dynalinks.app/Ab3xQ9"), url("acmeshop://x")],
            foreignLinks: [url("https://other.dynalinks.app/x"), url("https://evil.example/product/shoes"), url("otherapp://x")],
            knownLink: url("https://acme.dynalinks.app/product/shoes?ref=email"), knownLinkPath: ["product", "shoes"],
            unknownLink: url("https://acme.dynalinks.app/does-not-exist"),
            resolveRoute: (.post, "/api/v1/links/attribute"), installRoute: (.post, "/api/v1/fingerprints/match"),
            device: iPhone,
            scriptAttributedInstall: {
                try server.recordWebClick(
                    url: url("https://acme.dynalinks.app/product/shoes"), from: iPhone, ip: simulator.clientIP,
                    at: simulator.clock.currentDate)
                return ExpectedDeferredLink(
                    pathSegments: ["product", "shoes"], parameters: ["color": "red", "size": "42"], shortCode: "Ab3xQ9")
            })
    }
}

@Suite("Dynalinks conformance", .timeLimit(.minutes(1)))
struct DynalinksConformanceTests {
    @Test("conforms", arguments: ConformanceCheck.allCases)
    func conforms(_ check: ConformanceCheck) async throws {
        try await ConformanceSuite(DynalinksFixture()).run(check)
    }
}

@Suite("Dynalinks end to end over the simulator", .timeLimit(.minutes(1)))
struct DynalinksEndToEndTests {
    func makeClient(_ simulator: ProviderSimulator, store: InMemoryStore = InMemoryStore()) throws -> DeepLinkClient {
        var configuration = DeepLinkClient.Configuration(store: store, clock: simulator.clock, transport: simulator)
        configuration.deviceInfo = StaticDeviceInfo(iPhone)
        configuration.retryPolicy = .none
        return DeepLinkClient(
            backend: DynalinksBackend(try .init(apiKey: clientKey, linkDomains: ["acme.dynalinks.app"])), configuration: configuration)
    }

    @Test("web click, first launch, deferred link with confidence; then a universal link, attributed")
    func story() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addDynalinks(clientAPIKey: clientKey, projectHost: "acme.dynalinks.app")
        server.createLink(
            path: "/product/shoes", shortenedPath: "Ab3xQ9", url: "https://acme.example/product/shoes?color=red",
            referrer: "utm_source=facebook")
        server.createLink(path: "/sale", url: "https://acme.example/sale")
        try server.recordWebClick(
            url: url("https://acme.dynalinks.app/product/shoes"), from: iPhone, ip: "198.51.100.23", at: simulator.clock.currentDate)
        simulator.clientIP = "198.51.100.80"

        let client = try makeClient(simulator)
        var links = client.deepLinks().makeAsyncIterator()
        await client.start()
        let deferred = try #require(await links.next())
        #expect(deferred.origin == .deferred)
        #expect(deferred.pathSegments == ["product", "shoes"])
        #expect(deferred.parameters == ["color": "red"])
        #expect(deferred.utm.source == "facebook")
        guard case .attributed(_, let attribution) = await client.installOutcome() else {
            Issue.record("expected an attributed install")
            return
        }
        #expect(attribution.confidence == .init(score: 100, level: .high))

        client.handle(url("https://acme.dynalinks.app/sale?ref=push"))
        let direct = try #require(await links.next())
        #expect(direct.resolution == .server)
        #expect(direct.destination == url("https://acme.example/sale"))
        #expect(direct.parameters == ["ref": "push"])
        #expect(server.attributedURLs == ["https://acme.dynalinks.app/sale?ref=push"])
        await client.shutdown()
    }

    @Test("a failed direct link does not cancel the deferred check: the match is made and reported, and not delivered on top")
    func failedDirectLinkThenDeferredCheck() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addDynalinks(clientAPIKey: clientKey, projectHost: "acme.dynalinks.app")
        server.createLink(path: "/product/shoes", url: "https://acme.example/product/shoes")
        try server.recordWebClick(
            url: url("https://acme.dynalinks.app/product/shoes"), from: iPhone, ip: simulator.clientIP, at: simulator.clock.currentDate)
        simulator.setFault(.status(500, body: #"{"error":"Internal server error"}"#), path: "/api/v1/links/attribute")

        let client = try makeClient(simulator)
        let events = client.linkEvents()
        client.handle(url("https://acme.dynalinks.app/product/shoes"))
        await client.start()
        var received: [DeepLinkEvent] = []
        var iterator = events.makeAsyncIterator()
        while let event = await iterator.next() {  // up to the direct link, whatever order
            received.append(event)
            if event.link != nil { break }
        }
        await client.shutdown()
        while let event = await iterator.next() { received.append(event) }

        #expect(server.matchRequests.count == 1)  // Dynalinks' SDK would have skipped the match here
        guard case .attributed(let link, _) = await client.installOutcome() else {
            Issue.record("expected an attributed install")
            return
        }
        #expect(link.pathSegments == ["product", "shoes"])
        let delivered = received.compactMap(\.link)
        #expect(delivered.count == 1)
        #expect(delivered.first?.origin == .universalLink)
        guard case .local(.failed(let error))? = delivered.first?.resolution else {
            Issue.record("expected the direct link parsed on the device")
            return
        }
        #expect(error.code == .server(status: 500))
    }

    @Test("the deferred link arrives once per install across launches")
    func oncePerInstall() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addDynalinks(clientAPIKey: clientKey, projectHost: "acme.dynalinks.app")
        server.createLink(path: "/p", url: "https://acme.example/p")
        try server.recordWebClick(
            url: url("https://acme.dynalinks.app/p"), from: iPhone, ip: simulator.clientIP, at: simulator.clock.currentDate)
        let store = InMemoryStore()
        var delivered = 0
        for _ in 0..<3 {
            let client = try makeClient(simulator, store: store)
            let events = client.linkEvents()
            await client.start()
            await client.shutdown()
            for await event in events where event.link != nil { delivered += 1 }
        }
        #expect(delivered == 1)
        #expect(server.matchRequests.count == 1)
    }
}

@Suite("README: Dynalinks example")
struct DynalinksReadmeTests {
    @Test("the Dynalinks setup snippet compiles and claims the project's links")
    func setup() throws {
        let backend = DynalinksBackend(
            try .init(
                apiKey: "your-client-api-key",
                linkDomains: ["acme.dynalinks.app"]
            ))
        #expect(backend.canHandle(url("https://acme.dynalinks.app/product/shoes")))
        #expect(backend.configuration.baseURL == url("https://dynalinks.app/api/v1"))
    }
}
