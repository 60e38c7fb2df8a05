import Foundation
import LinkRelay
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelaySimulator
import LinkRelayTesting
import ShopApp
import Testing

/// A phone with a screen, so every provider's fingerprint has something to match.
let phone = StaticDeviceInfo.iPhone

func shopClient(_ backend: any DeepLinkBackend, simulator: ProviderSimulator) -> DeepLinkClient {
    var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: simulator.clock, transport: simulator)
    configuration.deviceInfo = StaticDeviceInfo(phone)
    configuration.authenticationRule = { ShopRoutes.router.requiresAuthentication($0) }
    return DeepLinkClient(backend: backend, configuration: configuration)
}

@Suite("Provider switching", .timeLimit(.minutes(1)))
struct ProviderSwitchTests {
    @Test("the same app code gives the same routes on every provider", arguments: ShopWorld.Provider.allCases)
    func sameRoutes(_ provider: ShopWorld.Provider) async throws {
        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        let world = try await ShopWorld(provider, sandbox: sandbox, phone: phone)
        try await world.recordWebClick()
        // From here on, only app code: nothing below names the provider.
        var app = ShopApp(client: shopClient(world.backend, simulator: sandbox.simulator))
        let launch = await app.launch()
        #expect(launch.route == .product("42"), "\(provider): \(launch.outcome)")
        #expect(await app.open(world.productLink) == .shown(.product("42")))
        #expect(await app.open(world.cartLink) == .shown(.cart(coupon: "SPRING")))
        #expect(await app.open(world.walletLink) == .signInRequired(.wallet))
        #expect(await app.signedIn() == .wallet)
        #expect(await app.open(URL(string: "https://unrelated.example/x")!) == .notOurs)
        await app.client.shutdown()
    }

    @Test("moving from LimeLink to LinkForty: old LimeLink links keep resolving, new links go to LinkForty")
    func migrationWithRoutingBackend() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let linkForty = simulator.addLinkForty(host: "go.shop.example")
        linkForty.createLink(shortCode: "new42", deepLinkPath: "/product/42", appScheme: ShopWorld.appScheme)
        let limeLink = simulator.addLimeLink(apiKey: "lk_key")
        limeLink.createLink(project: "shop", suffix: "old7", uri: "shopapp://product/7")
        let backend = RoutingBackend(
            LinkFortyBackend(try .init(baseURL: URL(string: "https://go.shop.example")!, appSchemes: [ShopWorld.appScheme])),
            [LimeLinkBackend(try .init(apiKey: "lk_key", appSchemes: [ShopWorld.appScheme]))])
        var app = ShopApp(client: shopClient(backend, simulator: simulator))
        _ = await app.launch()
        #expect(await app.open(URL(string: "https://go.shop.example/new42")!) == .shown(.product("42")))
        #expect(await app.open(URL(string: "https://shop.limelink.org/link/old7")!) == .shown(.product("7")))
        #expect(simulator.requestCount(path: "/api/sdk/v1/resolve/new42") == 1)
        #expect(simulator.requestCount(path: "/api/v1/app/dynamic_link/old7") == 1)
        // Install matching stays with the new provider.
        #expect(simulator.requestCount(path: "/api/sdk/v1/install") == 1)
        #expect(simulator.requestCount(path: "/api/v1/deferred-deep-link") == 0)
        await simulator.waitForRequests(path: "/api/v1/stats/event", count: 1)
        #expect(limeLink.statsEvents.count == 1)  // the old provider still hears about its own links
        await app.client.shutdown()
    }
}
