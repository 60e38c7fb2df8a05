import Foundation
import LinkRelay
import LinkRelayConformance
import LinkRelaySimulator
import LinkRelayTesting
import Testing

@testable import LinkRelayLimeLink

struct LimeLinkFixture: ConformanceFixture {
    let name = "LimeLink"

    func makeWorld(simulator: ProviderSimulator) throws -> ConformanceWorld {
        let server = simulator.addLimeLink(apiKey: apiKey)
        server.createLink(project: "abc123", suffix: "summer-sale", uri: "abc123app://promo/summer")
        let backend = LimeLinkBackend(try .init(apiKey: apiKey, linkDomains: ["go.brand.example"], appSchemes: ["abc123app"]))
        let clicked = url("https://abc123.limelink.org/link/summer-sale?utm_source=google&product_id=789")
        return ConformanceWorld(
            backend: backend, apiKey: apiKey,
            ownLinks: [
                url("https://abc123.limelink.org/link/summer-sale"), url("https://limelink.org/api/v1/app/dynamic_link/x"),
                url("https://go.brand.example/a"), url("abc123app://open"),
            ],
            foreignLinks: [url("https://evil.example/link/x"), url("otherapp://x"), url("https://limelink.org.evil.example/x")],
            knownLink: url("https://abc123.limelink.org/link/summer-sale?utm_source=instagram"), knownLinkPath: ["link", "summer-sale"],
            unknownLink: url("https://abc123.limelink.org/link/does-not-exist"),
            resolveRoute: (.get, "/api/v1/app/dynamic_link/summer-sale"), installRoute: (.get, "/api/v1/deferred-deep-link"),
            device: iPhone15,
            scriptAttributedInstall: {
                try server.recordWebClick(url: clicked, from: iPhone15)
                return ExpectedDeferredLink(parameters: ["utm_source": "google", "product_id": "789"], shortCode: "summer-sale")
            })
    }
}

@Suite("LimeLink conformance", .timeLimit(.minutes(1)))
struct LimeLinkConformanceTests {
    @Test("conforms", arguments: ConformanceCheck.allCases)
    func conforms(_ check: ConformanceCheck) async throws {
        try await ConformanceSuite(LimeLinkFixture()).run(check)
    }
}

@Suite("LimeLink end to end over the simulator", .timeLimit(.minutes(1)))
struct LimeLinkEndToEndTests {
    @Test(
        "web click, first launch, deferred link (setup recorded); a universal link resolved to its uri, then stats: first_run, then rerun")
    func story() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addLimeLink(apiKey: apiKey)
        server.createLink(project: "abc123", suffix: "summer-sale", uri: "abc123app://promo/summer")
        server.createLink(project: nil, suffix: "prod-789", uri: "https://shop.example.com/p/789/reviews")
        try server.recordWebClick(url: url("https://abc123.limelink.org/link/summer-sale?utm_source=google&product_id=789"), from: iPhone15)

        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: simulator.clock, transport: simulator)
        configuration.deviceInfo = StaticDeviceInfo(iPhone15)
        let client = DeepLinkClient(
            backend: LimeLinkBackend(try .init(apiKey: apiKey, appSchemes: ["abc123app"])), configuration: configuration)
        var links = client.deepLinks().makeAsyncIterator()

        await client.start()
        let deferred = try #require(await links.next())
        #expect(deferred.origin == .deferred)
        #expect(deferred.destination == url("abc123app://promo/summer"))
        #expect(deferred.parameters == ["utm_source": "google", "product_id": "789"])
        #expect(
            server.setups == [
                .init(
                    suffix: "summer-sale", fullRequestURL: "https://abc123.limelink.org/link/summer-sale?utm_source=google&product_id=789")
            ])
        #expect(server.clicks.allSatisfy { $0.consumed })

        client.handle(url("https://limelink.org/api/v1/app/dynamic_link/prod-789?ref=mail"))
        let direct = try #require(await links.next())
        #expect(direct.destination == url("https://shop.example.com/p/789/reviews"))
        #expect(direct.parameters == ["ref": "mail"])
        await simulator.waitForRequests(path: "/api/v1/stats/event", count: 1)
        #expect(server.statsEvents == [.init(suffix: "p", handle: "reviews", eventType: "first_run", operatingSystem: "ios")])

        client.handle(url("https://abc123.limelink.org/link/summer-sale"))
        _ = try #require(await links.next())
        await simulator.waitForRequests(path: "/api/v1/stats/event", count: 2)
        #expect(server.statsEvents.last == .init(suffix: "summer", handle: nil, eventType: "rerun", operatingSystem: "ios"))

        // No event API: track does nothing (the same app code runs), link creation is unsupported.
        try await client.track("signup")
        #expect(await client.queuedEventCount == 0)
        let createError = await #expect(throws: DeepLinkError.self) { try await client.createLink(LinkRequest()) }
        #expect(createError?.code == .unsupported)
        await client.shutdown()
    }

    @Test("a second launch neither asks for a deferred link again nor sends first_run again")
    func secondLaunch() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addLimeLink(apiKey: apiKey)
        server.createLink(project: nil, suffix: "x", uri: "myapp://p/1")
        let store = InMemoryStore()
        for launch in 1...2 {
            var configuration = DeepLinkClient.Configuration(store: store, clock: simulator.clock, transport: simulator)
            configuration.deviceInfo = StaticDeviceInfo(iPhone15)
            let client = DeepLinkClient(
                backend: LimeLinkBackend(try .init(apiKey: apiKey, appSchemes: ["myapp"])), configuration: configuration)
            await client.start()
            let links = client.deepLinks()
            client.handle(url("https://limelink.org/api/v1/app/dynamic_link/x"))
            var iterator = links.makeAsyncIterator()
            _ = await iterator.next()
            await simulator.waitForRequests(path: "/api/v1/stats/event", count: launch)
            await client.shutdown()
        }
        #expect(simulator.requestCount(path: "/api/v1/deferred-deep-link") == 1)
        #expect(server.statsEvents.map(\.eventType) == ["first_run", "rerun"])
    }
}

@Suite("README: LimeLink example")
struct LimeLinkReadmeTests {
    @Test("the LimeLink setup snippet compiles and claims what it says")
    func setup() throws {
        let backend = LimeLinkBackend(
            try .init(
                apiKey: "lk_live_…",
                linkDomains: ["go.brand.example"],
                appSchemes: ["abc123app"]
            ))
        #expect(backend.canHandle(url("https://abc123.limelink.org/link/summer-sale")))
        #expect(backend.canHandle(url("https://go.brand.example/spring")))
        #expect(backend.appSchemes == ["abc123app"])
    }
}
