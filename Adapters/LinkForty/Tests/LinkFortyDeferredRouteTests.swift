import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import Testing

@testable import LinkRelayLinkForty

/// Core's install answer names the clicked link's short code, not its route (§3.4); the adapter
/// resolves the code once, inside the install match, so a deferred link routes as a tap on the
/// same link does.
@Suite("LinkForty: a deferred link goes through the router like its universal link", .timeLimit(.minutes(1)))
struct LinkFortyDeferredRouteTests {
    enum Route: Hashable, Sendable {
        case product(id: Int)
        case campaign(code: String, productID: String?)
    }

    /// The app's table: a product route, and a route for a link that has only its short code,
    /// which reads the link's parameters.
    static func router() throws -> DeepLinkRouter<Route> {
        try DeepLinkRouter<Route> {
            LinkRoute("/products/:id") { try .product(id: $0.capture("id")) }
            LinkRoute("/:code") { .campaign(code: try $0.capture("code"), productID: $0.link.parameters["productId"]) }
        }
    }

    struct World {
        let clock = ManualClock()
        let simulator: ProviderSimulator
        let server: LinkFortyEmulation

        init() throws {
            simulator = ProviderSimulator(clock: clock)
            server = simulator.addLinkForty(host: "go.acme.app")
            server.createLink(
                shortCode: "spring", originalURL: "https://acme.example/sale", deepLinkPath: "/products/42", appScheme: "acme",
                utmParameters: ["source": "instagram"], deepLinkParameters: ["productId": "42", "discount": 20])
            try server.recordWebClick(
                url: URL(string: "https://go.acme.app/spring")!, from: newYorkPhone, ip: "198.51.100.23", at: clock.currentDate)
            clock.advance(by: 600)
            simulator.clientIP = "198.51.100.77"  // the same network, ten minutes later
        }

        func client() throws -> DeepLinkClient {
            DeepLinkClient(
                backend: LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"), appSchemes: ["acme"])),
                configuration: simulatorConfiguration(simulator, clock: clock))
        }
    }

    @Test("the deferred link has the universal link's path, destination and parameters, and the same route")
    func deferredRoutesLikeUniversal() async throws {
        let world = try World()
        let client = try world.client()
        let routes = client.routes(try Self.router())
        var iterator = routes.makeAsyncIterator()
        await client.start()
        let deferred = try #require(await iterator.next())
        client.handle(url("https://go.acme.app/spring"))
        let universal = try #require(await iterator.next())

        #expect(deferred.route == .product(id: 42))
        #expect(universal.route == .product(id: 42))
        #expect(deferred.link.origin == .deferred)
        #expect(deferred.link.path == universal.link.path)
        #expect(deferred.link.destination == url("acme://products/42"))
        #expect(deferred.link.destination == universal.link.destination)
        #expect(deferred.link.parameters == universal.link.parameters)
        #expect(deferred.link.parameters == ["productId": "42", "discount": "20"])
        // What only the install answer knows stays: the click's UTM and time.
        #expect(deferred.link.utm.source == "instagram")
        #expect(deferred.link.shortCode == "spring")
        #expect(deferred.link.metadata["deferredRouteError"] == nil)
        // One resolve for the deferred link, during the install match, without a fingerprint
        // (it is not a tap); then one for the tap.
        let resolves = world.simulator.requests.filter { $0.url.path == "/api/sdk/v1/resolve/spring" }
        #expect(resolves.count == 2)
        #expect(resolves.first?.url.query == nil)
        await client.shutdown()
    }

    @Test("a route the install answer already names needs no resolve")
    func routeInInstallAnswer() async throws {
        let transport = StubTransport()
        transport.stub(
            .post, "/api/sdk/v1/install",
            .json(
                #"{"installId":"i-1","attributed":true,"confidenceScore":90,"matchedFactors":["ip"],"deepLinkData":{"shortCode":"spring","deepLinkPath":"/products/42","appScheme":"acme"}}"#
            ))
        let backend = LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"), appSchemes: ["acme"]))
        let match = try await backend.matchInstall(context: BackendContext(transport: transport))
        #expect(match.link?.path == "/products/42")
        #expect(match.link?.destination == url("acme://products/42"))
        #expect(transport.requests.count == 1)
    }

    @Test(
        "when the route cannot be fetched, the link says so, keeps its parameters, and the short-code route reads them",
        arguments: [ProviderSimulator.Fault.status(404, body: #"{"error":"Link not found"}"#), .status(503), .drop])
    func routeUnavailable(_ fault: ProviderSimulator.Fault) async throws {
        let world = try World()
        world.simulator.setFault(fault, path: "/api/sdk/v1/resolve/spring")
        let client = try world.client()
        let routes = client.routes(try Self.router())
        var iterator = routes.makeAsyncIterator()
        await client.start()
        let deferred = try #require(await iterator.next())
        #expect(deferred.route == .campaign(code: "spring", productID: "42"))
        #expect(deferred.link.destination == nil)
        let reason = try #require(deferred.link.metadata["deferredRouteError"]?.stringValue)
        #expect(!reason.isEmpty)
        // The match is not retried for it: one install report, one resolve.
        #expect(world.server.installs.count == 1)
        #expect(world.simulator.requestCount(path: "/api/sdk/v1/resolve/spring") == 1)
        guard case .attributed = await client.installOutcome() else {
            Issue.record("expected an attributed install")
            return
        }
        await client.shutdown()
    }
}
