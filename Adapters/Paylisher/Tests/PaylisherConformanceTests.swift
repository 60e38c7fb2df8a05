import Foundation
import LinkRelay
import LinkRelayConformance
import LinkRelaySimulator
import LinkRelayTesting
import Testing

@testable import LinkRelayPaylisher

let istanbulPhone = DeviceInfo(
    screen: .init(width: 393, height: 852, scale: 3), osName: "iOS", osVersion: "17.4.1", deviceModel: "iPhone15,2",
    timeZoneIdentifier: "Europe/Istanbul", preferredLanguages: ["tr-TR"], regionCode: "TR")

struct PaylisherFixture: ConformanceFixture {
    let name = "Paylisher"

    func makeWorld(simulator: ProviderSimulator) throws -> ConformanceWorld {
        let server = simulator.addPaylisher(apiKey: apiKey)
        server.createCampaign(keyName: "SUMMER", title: "Summer Sale", scheme: "diyetim://products/42", jid: "jrn_1")
        let backend = PaylisherBackend(try .init(apiKey: apiKey, appSchemes: ["diyetim"], linkDomains: ["shop.example"]))
        return ConformanceWorld(
            backend: backend, apiKey: apiKey,
            ownLinks: [url("diyetim://products/42"), url("https://link.paylisher.com/nARvW"), url("https://shop.example/x")],
            foreignLinks: [url("https://link.paylisher.com/nARvW/bridge"), url("https://evil.example/x"), url("otherapp://x")],
            knownLink: url("diyetim://products/42?keyName=SUMMER"), knownLinkPath: ["products", "42"],
            unknownLink: url("diyetim://products/1?keyName=NOPE"),
            resolveRoute: (.get, "/campaign/resolve/SUMMER"), installRoute: (.get, "/v1/deferred-deeplink"),
            device: istanbulPhone,
            scriptAttributedInstall: {
                try server.recordWebClick(
                    url: url("diyetim://products/42?utm_source=instagram&color=red"), campaignKey: "SUMMER", from: istanbulPhone,
                    at: simulator.clock.currentDate)
                return ExpectedDeferredLink(pathSegments: ["products", "42"], parameters: ["color": "red", "keyName": "SUMMER"])
            })
    }
}

@Suite("Paylisher conformance", .timeLimit(.minutes(1)))
struct PaylisherConformanceTests {
    @Test("conforms", arguments: ConformanceCheck.allCases)
    func conforms(_ check: ConformanceCheck) async throws {
        try await ConformanceSuite(PaylisherFixture()).run(check)
    }
}

@Suite("Paylisher over the simulator", .timeLimit(.minutes(1)))
struct PaylisherSimulatorTests {
    @Test("a reinstall does not match the same click again; events arrive in the batch endpoint, unpacked")
    func singleUseAndBatches() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addPaylisher(apiKey: apiKey)
        server.createCampaign(keyName: "SUMMER", title: "Summer Sale", scheme: "diyetim://products/42")
        try server.recordWebClick(
            url: url("diyetim://products/42"), campaignKey: "SUMMER", from: istanbulPhone, at: simulator.clock.currentDate)
        var outcomes: [Bool] = []
        for _ in 0..<2 {  // install, uninstall, reinstall: a new store each time
            var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: simulator.clock, transport: simulator)
            configuration.deviceInfo = StaticDeviceInfo(istanbulPhone)
            let client = DeepLinkClient(
                backend: PaylisherBackend(try .init(apiKey: apiKey, appSchemes: ["diyetim"])), configuration: configuration)
            await client.start()
            if case .attributed = await client.installOutcome() { outcomes.append(true) } else { outcomes.append(false) }
            try await client.track("signup", properties: ["plan": "pro"])
            await client.flushEvents()
            await client.shutdown()
        }
        #expect(outcomes == [true, false])
        let signups = server.events.filter { $0.event == "signup" }
        #expect(signups.count == 2)
        #expect(signups.first?.properties["plan"] == "pro")
        #expect(Set(signups.map(\.distinctID)).count == 2)  // a new install is a new anonymous id
    }
}

@Suite("Paylisher: once, and nothing lost", .timeLimit(.minutes(1)))
struct PaylisherDeliveryTests {
    func client(_ simulator: ProviderSimulator, gated: Bool = false) throws -> DeepLinkClient {
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: simulator.clock, transport: simulator)
        configuration.deviceInfo = StaticDeviceInfo(istanbulPhone)
        return DeepLinkClient(
            backend: PaylisherBackend(
                try .init(apiKey: apiKey, appSchemes: ["diyetim"], authRequiredDestinations: gated ? ["wallet"] : [])),
            configuration: configuration)
    }

    @Test("a link that arrives before anybody listens reaches the first subscriber (Paylisher's SDK drops it before setup)")
    func notDroppedBeforeSubscriber() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addPaylisher(apiKey: apiKey)
        server.createCampaign(keyName: "SUMMER", scheme: "diyetim://products/42")
        let client = try client(simulator)
        #expect(client.handle(url("diyetim://products/42?keyName=SUMMER")))
        var links = client.deepLinks().makeAsyncIterator()
        let link = try #require(await links.next())
        #expect(link.destination == url("diyetim://products/42"))
        #expect(link.campaign?.key == "SUMMER")
        await client.shutdown()
    }

    @Test("a gated link is delivered once, after sign-in; a deferred match is delivered once, not again by auto-handling")
    func deliveredOnce() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addPaylisher(apiKey: apiKey)
        server.createCampaign(keyName: "SUMMER", title: "Summer Sale", scheme: "diyetim://products/42")
        try server.recordWebClick(
            url: url("diyetim://products/42?color=red"), campaignKey: "SUMMER", from: istanbulPhone, at: simulator.clock.currentDate)
        let client = try client(simulator, gated: true)
        let events = client.linkEvents()
        await client.start()
        client.handle(url("diyetim://wallet?campaign=cashback"))
        var iterator = events.makeAsyncIterator()
        var received: [DeepLinkEvent] = []
        while let event = await iterator.next() {
            received.append(event)
            if case .authenticationRequired = event { break }
        }
        await client.completePendingLink()
        while let event = await iterator.next() {
            received.append(event)
            if event.link?.path == "/wallet" { break }
        }
        await client.shutdown()
        while let event = await iterator.next() { received.append(event) }
        let links = received.compactMap(\.link)
        #expect(links.map(\.path) == ["/products/42", "/wallet"])
        #expect(links.first?.origin == .deferred)
        #expect(received.filter { if case .authenticationRequired = $0 { true } else { false } }.count == 1)
    }
}

@Suite("README: Paylisher example")
struct PaylisherReadmeTests {
    @Test("the Paylisher setup snippet compiles and claims what it says")
    func setup() throws {
        var configuration = DeepLinkClient.Configuration()
        configuration.authenticationRequiredPaths = ["wallet"]
        let backend = PaylisherBackend(
            try .init(
                apiKey: "phc_…",
                analyticsHost: URL(string: "https://ds-tr.paylisher.com")!,
                appSchemes: ["diyetim"],
                linkDomains: ["link.diyetim.example.com"]
            ))
        #expect(backend.canHandle(url("diyetim://products/42")))
        #expect(backend.canHandle(url("https://link.diyetim.example.com/products/42")))
        #expect(backend.canHandle(url("https://link.paylisher.com/nARvW")))
        #expect(configuration.authenticationRequiredPaths == ["wallet"])
        #expect(!((backend as any DeepLinkBackend) is any LinkCreatingBackend))  // Paylisher's SDK creates no links
    }

    @Test("createLink is unsupported with Paylisher")
    func noLinkCreation() async throws {
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: ManualClock(), transport: StubTransport())
        configuration.deviceInfo = StaticDeviceInfo(istanbulPhone)
        let client = DeepLinkClient(backend: PaylisherBackend(try .init(apiKey: apiKey)), configuration: configuration)
        let error = await #expect(throws: DeepLinkError.self) { try await client.createLink(LinkRequest(title: "x")) }
        #expect(error?.code == .unsupported)
    }
}
