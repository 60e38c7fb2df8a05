import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import Testing

@testable import LinkRelayLinkForty

@Suite("LinkForty end to end over the simulator", .timeLimit(.minutes(1)))
struct LinkFortyEndToEndTests {
    @Test("web click, first launch, deferred link; then universal and custom-scheme links; an event through an outage; link creation")
    func story() async throws {
        let clock = ManualClock()
        let simulator = ProviderSimulator(clock: clock)
        let server = simulator.addLinkForty(host: "go.acme.app")
        server.createLink(
            shortCode: "spring", originalURL: "https://acme.example/sale", deepLinkPath: "/sale/spring", appScheme: "acmeshop",
            utmParameters: ["source": "instagram", "campaign": "spring_sale"], deepLinkParameters: ["route": "sale", "discount": 20])
        server.createLink(shortCode: "Xk9_2bQz", templateSlug: "k3m9x2qa", deepLinkPath: "/product/42", appScheme: "acmeshop")

        // The user taps the link in Instagram, on the phone, before installing the app.
        try server.recordWebClick(
            url: URL(string: "https://go.acme.app/spring")!, from: newYorkPhone, ip: "198.51.100.23", at: clock.currentDate)
        clock.advance(by: 600)
        simulator.clientIP = "198.51.100.77"  // same /24 network, later

        let client = DeepLinkClient(
            backend: LinkFortyBackend(
                try .init(baseURL: url("https://go.acme.app"), apiKey: "lf_live_key", appSchemes: ["acmeshop"], appName: "Acme Shop")),
            configuration: simulatorConfiguration(simulator, clock: clock))
        let links = client.deepLinks()
        var iterator = links.makeAsyncIterator()

        // First launch: the deferred link arrives through for await.
        await client.start()
        let deferred = try #require(await iterator.next())
        #expect(deferred.origin == .deferred)
        #expect(deferred.shortCode == "spring")
        #expect(deferred.parameters == ["route": "sale", "discount": "20"])
        #expect(deferred.utm == UTMParameters(source: "instagram", campaign: "spring_sale"))
        guard case .attributed(_, let attribution) = await client.installOutcome() else {
            Issue.record("expected an attributed install")
            return
        }
        #expect(attribution.matchedFactors == ["ip", "timezone", "language", "screen"])
        #expect(attribution.confidence?.score == 70)
        #expect(server.installs.count == 1)

        // A universal link, resolved by the server to the in-app route.
        client.handle(url("https://go.acme.app/k3m9x2qa/Xk9_2bQz?utm_source=newsletter"))
        let universal = try #require(await iterator.next())
        #expect(universal.resolution == .server)
        #expect(universal.pathSegments == ["product", "42"])
        #expect(universal.destination == url("acmeshop://product/42"))
        // UTM is the link's own, as the server sent it (none here); the clicked URL's utm_source
        // stays in `url` only (§12.3).
        #expect(universal.utm.isEmpty)
        #expect(universal.url.query == "utm_source=newsletter")

        // A custom-scheme link: the route itself, no request.
        let before = simulator.requests.count
        client.handle(url("acmeshop://cart?coupon=SPRING"))
        let custom = try #require(await iterator.next())
        #expect(custom.pathSegments == ["cart"])
        #expect(custom.parameters == ["coupon": "SPRING"])
        #expect(simulator.requests.count == before)

        // An event while the server is down stays queued, and goes out once it is back.
        simulator.isReachable = false
        try await client.track("purchase", properties: ["sku": "A-1"])
        await client.flushEvents()
        #expect(await client.queuedEventCount == 1)
        #expect(server.events.isEmpty)
        simulator.isReachable = true
        await client.flushEvents()
        #expect(await client.queuedEventCount == 0)
        #expect(server.events.map(\.name) == ["purchase"])
        #expect(server.events.first?.installID == attribution.installID)
        #expect(server.events.first?.data == ["sku": "A-1"])

        // Link creation (Cloud endpoint), with the external user id attached.
        await client.setExternalUserID("user-7")
        let created = try await client.createLink(LinkRequest(deepLinkPath: "/product/42", parameters: ["ref": "user-7"]))
        #expect(created.url.host == "go.acme.app")
        #expect(created.shortCode?.count == 8)
        #expect(created.deduplicated == false)
        let again = try await client.createLink(LinkRequest(deepLinkPath: "/product/42", parameters: ["ref": "user-7"]))
        #expect(again.deduplicated == true)
        #expect(again.shortCode == created.shortCode)
        #expect(server.links.last?.externalUserID == "user-7")
        await client.shutdown()
    }

    @Test("a second launch does not report the install again")
    func installReportedOnce() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addLinkForty(host: "go.acme.app")
        let store = InMemoryStore()
        for _ in 0..<3 {
            var configuration = DeepLinkClient.Configuration(store: store, clock: simulator.clock, transport: simulator)
            configuration.deviceInfo = StaticDeviceInfo(newYorkPhone)
            let client = DeepLinkClient(
                backend: LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"))), configuration: configuration)
            await client.start()
            #expect(await client.installOutcome() != .timedOut)
            await client.shutdown()
        }
        #expect(server.installs.count == 1)
    }

    @Test("link creation from a template on Core: 8-character code or the custom code, slug in the URL")
    func coreLinkCreation() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addLinkForty(host: "go.acme.app", emulatesCloud: false)
        let template = server.createTemplate(slug: "k3m9x2qa")
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: simulator.clock, transport: simulator)
        configuration.deviceInfo = StaticDeviceInfo(newYorkPhone)
        let client = DeepLinkClient(
            backend: LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"), apiKey: "lf_live_key")), configuration: configuration)
        let generated = try await client.createLink(
            LinkRequest(fallbackURL: url("https://acme.example/v/1"), templateID: template.id, templateSlug: template.slug))
        let code = try #require(generated.shortCode)
        #expect(code.count == 8)
        #expect(code.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" })
        #expect(generated.url == url("https://go.acme.app/k3m9x2qa/\(code)"))
        let custom = try await client.createLink(
            LinkRequest(
                fallbackURL: url("https://acme.example/v/2"), templateID: template.id, templateSlug: template.slug, customCode: "spring"))
        #expect(custom.shortCode == "spring")
        let taken = try await client.createLink(
            LinkRequest(
                fallbackURL: url("https://acme.example/v/3"), templateID: template.id, templateSlug: template.slug, customCode: "spring"))
        #expect(taken.shortCode != "spring")
        // Core has no SDK link endpoint: without a template the call fails with Core's 404.
        let error = await #expect(throws: DeepLinkError.self) { try await client.createLink(LinkRequest(title: "x")) }
        #expect(error?.code == .server(status: 404))
        await client.shutdown()
    }
}

@Suite("README: LinkForty examples")
struct LinkFortyReadmeTests {
    @Test("the LinkForty setup and simulator snippets compile and work together")
    func setupAndSimulator() async throws {
        let linkFortyKey = "lf_live_readme"
        let device = newYorkPhone
        let simulator = ProviderSimulator(clock: ManualClock())
        let linkForty = simulator.addLinkForty(host: "go.acme.app")
        linkForty.createLink(
            shortCode: "spring", deepLinkPath: "/sale/spring", appScheme: "acmeshop", deepLinkParameters: ["route": "sale"])
        try linkForty.recordWebClick(
            url: URL(string: "https://go.acme.app/spring")!, from: device, ip: "198.51.100.23", at: simulator.clock.currentDate)
        var configuration = DeepLinkClient.Configuration()
        configuration.transport = simulator
        configuration.store = InMemoryStore()
        configuration.clock = simulator.clock
        configuration.deviceInfo = StaticDeviceInfo(device)
        simulator.clientIP = "198.51.100.77"
        let client = DeepLinkClient(
            backend: LinkFortyBackend(
                try .init(
                    baseURL: URL(string: "https://go.acme.app")!,
                    apiKey: linkFortyKey,
                    appSchemes: ["acmeshop"]
                )),
            configuration: configuration
        )
        await client.start()
        guard case .attributed(let link, _) = await client.installOutcome() else {
            Issue.record("expected an attributed install")
            return
        }
        // LinkForty's install answer has no in-app path; the adapter resolves the short code,
        // so the deferred link has its link's route.
        #expect(link.shortCode == "spring")
        #expect(link.parameters == ["route": "sale"])
        #expect(link.path == "/sale/spring")
        #expect(link.destination == URL(string: "acmeshop://sale/spring"))
        await client.shutdown()
    }
}

@Suite("The testing article's LinkForty example", .timeLimit(.minutes(1)))
struct TestingArticleExample {
    @Test func campaignLinkOpensTheSale() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addLinkForty(host: "go.acme.app")
        server.createLink(shortCode: "spring", deepLinkPath: "/sale/spring", appScheme: "acme")

        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: simulator.clock, transport: simulator)
        configuration.deviceInfo = StaticDeviceInfo()
        let client = DeepLinkClient(
            backend: LinkFortyBackend(try .init(baseURL: URL(string: "https://go.acme.app")!, appSchemes: ["acme"])),
            configuration: configuration)
        var links = client.deepLinks().makeAsyncIterator()

        client.handle(URL(string: "https://go.acme.app/spring")!)
        #expect(await links.next()?.pathSegments == ["sale", "spring"])
        #expect(simulator.requestCount(path: "/api/sdk/v1/resolve/spring") == 1)
        await client.shutdown()
    }
}
