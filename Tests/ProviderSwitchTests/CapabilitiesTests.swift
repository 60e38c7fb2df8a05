import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelaySimulator
import LinkRelayTesting
import ShopApp
import Testing

/// After a switch of provider the app can ask what the new one offers, instead of finding out
/// from a thrown `.unsupported` or a silent no-op.
@Suite("Backend capabilities", .timeLimit(.minutes(1)))
struct CapabilitiesTests {
    static func backends() throws -> [(String, any DeepLinkBackend, BackendCapabilities)] {
        [
            (
                "LinkForty", LinkFortyBackend(try .init(baseURL: URL(string: "https://go.acme.app")!)),
                [.linkResolution, .deferredLinks, .eventTracking, .linkCreation, .appleAdsToken, .lateAppleAdsToken]
            ),
            ("LimeLink", LimeLinkBackend(try .init(apiKey: "lk")), [.linkResolution, .deferredLinks]),
            (
                "Dynalinks", DynalinksBackend(try .init(apiKey: "dyn", linkDomains: ["acme.dynalinks.app"])),
                [.linkResolution, .deferredLinks]
            ),
            (
                "Paylisher", PaylisherBackend(try .init(apiKey: "phc", linkDomains: ["acme.example"])),
                [.linkResolution, .deferredLinks, .eventTracking, .eventBatching]
            ),
            ("LocalBackend", LocalBackend(.init(schemes: ["acme"])), []),
        ]
    }

    @Test("each backend says what it offers, and the client says the same")
    func perBackend() throws {
        for (name, backend, expected) in try Self.backends() {
            #expect(backend.capabilities == expected, "\(name): \(backend.capabilities)")
            #expect(DeepLinkClient(backend: backend, configuration: .init(store: InMemoryStore())).capabilities == expected, "\(name)")
        }
    }

    @Test(
        "a routing backend offers deferred links and link creation as its primary does, events (and batches) as the member its events go to"
    )
    func routing() throws {
        let linkForty = LinkFortyBackend(try .init(baseURL: URL(string: "https://go.acme.app")!))
        let limeLink = LimeLinkBackend(try .init(apiKey: "lk"))
        let local = LocalBackend(.init(schemes: ["acme"]))
        let paylisher = PaylisherBackend(try .init(apiKey: "phc", linkDomains: ["acme.example"]))
        #expect(
            RoutingBackend(linkForty, [limeLink]).capabilities == [
                .linkResolution, .deferredLinks, .eventTracking, .linkCreation, .appleAdsToken, .lateAppleAdsToken,
            ])
        #expect(RoutingBackend(limeLink, [linkForty]).capabilities == [.linkResolution, .deferredLinks, .eventTracking])
        // Events go to the first member that tracks them, and travel as it sends them.
        #expect(
            RoutingBackend(limeLink, [paylisher, linkForty]).capabilities == [
                .linkResolution, .deferredLinks, .eventTracking, .eventBatching,
            ])
        #expect(RoutingBackend(limeLink, [paylisher]).eventBatching == paylisher.eventBatching)
        #expect(RoutingBackend(limeLink, [linkForty]).eventBatching == .oneByOne)
        #expect(RoutingBackend(local, [limeLink]).capabilities == [.linkResolution])
        #expect(RoutingBackend(local, []).capabilities == [])
    }

    @Test("what the capabilities say is what the calls do: createLink throws .unsupported exactly without .linkCreation")
    func createLinkFollowsCapabilities() async throws {
        for (name, backend, _) in try Self.backends() {
            let client = DeepLinkClient(backend: backend, configuration: .init(store: InMemoryStore(), transport: StubTransport()))
            do {
                _ = try await client.createLink(LinkRequest(deepLinkPath: "/x"))
            } catch let error as DeepLinkError {
                #expect((error.code == .unsupported) == !client.capabilities.contains(.linkCreation), "\(name): \(error)")
            }
            await client.shutdown()
        }
    }

    /// The shop app on `provider` in a sandbox of its own, started.
    func startedShop(_ provider: ShopWorld.Provider) async throws -> (Sandbox, ShopApp) {
        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        let world = try await ShopWorld(provider, sandbox: sandbox, phone: phone)
        let app = ShopApp(client: shopClient(world.backend, simulator: sandbox.simulator))
        await app.client.start()
        return (sandbox, app)
    }

    @Test("the demo's purchase row says what the provider received", arguments: ShopWorld.Provider.allCases)
    func purchaseRowIsTrue(_ provider: ShopWorld.Provider) async throws {
        let (sandbox, app) = try await startedShop(provider)
        let source = SandboxProvider(rawValue: provider.rawValue)
        let before = try await sandbox.receivedEvents(source).filter {
            $0.name.lowercased().contains("revenue") || $0.name.contains("purchase")
        }
        let row = await app.purchase(amount: 29)
        let after = try await sandbox.receivedEvents(source).filter {
            $0.name.lowercased().contains("revenue") || $0.name.contains("purchase")
        }
        if app.client.capabilities.contains(.eventTracking) {
            #expect(row == "sent", "\(provider)")
            #expect(after.count == before.count + 1, "\(provider): \(after)")
        } else {
            #expect(row == "not offered by this provider", "\(provider)")
            #expect(after.count == before.count, "\(provider): \(after)")
        }
        await app.client.shutdown()
    }

    @Test("the demo's share-link row says what the provider created", arguments: ShopWorld.Provider.allCases)
    func shareRowIsTrue(_ provider: ShopWorld.Provider) async throws {
        let (sandbox, app) = try await startedShop(provider)
        let linksBefore = sandbox.linkForty.links.count
        let row = await app.shareProduct()
        if app.client.capabilities.contains(.linkCreation) {
            #expect(provider == .linkForty)
            #expect(sandbox.linkForty.links.count == linksBefore + 1)
            let created = try #require(sandbox.linkForty.links.last)
            #expect(row == "created go.shop.example/\(created.shortCode)")
        } else {
            #expect(row == "not offered by this provider", "\(provider)")
            #expect(sandbox.linkForty.links.count == linksBefore)
        }
        await app.client.shutdown()
    }
}
