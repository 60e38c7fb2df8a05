import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import ShopApp
import Testing

/// No log line and no error a client reports ever contains an API key, a bearer token or the
/// advertising id: every adapter's whole story, at debug level, with the servers failing.
@Suite("Secrets stay out of logs and errors", .timeLimit(.minutes(1)))
struct SecretsTests {
    static let advertisingID = UUID(uuidString: "6D92078A-8246-4BA4-AE5B-76104861E7DC")!

    /// The key each provider's backend is configured with in `ShopWorld`.
    static func key(of provider: ShopWorld.Provider) -> String {
        switch provider {
        case .linkForty: "lf_key"
        case .limeLink: ShopWorld.settings.limeLinkAPIKey
        case .dynalinks: ShopWorld.settings.dynalinksAPIKey
        case .paylisher: ShopWorld.settings.paylisherAPIKey
        }
    }

    @Test("every line and every error description of every adapter's story is free of secrets", arguments: ShopWorld.Provider.allCases)
    func noSecrets(_ provider: ShopWorld.Provider) async throws {
        let sandbox = Sandbox(settings: ShopWorld.settings, clock: ManualClock())
        var device = StaticDeviceInfo.iPhone
        device.advertisingID = Self.advertisingID
        let world = try await ShopWorld(provider, sandbox: sandbox, phone: device)
        try await world.recordWebClick()
        let lines = Locked([String]())
        var configuration = DeepLinkClient.Configuration(
            store: InMemoryStore(), clock: sandbox.simulator.clock, transport: sandbox.simulator)
        configuration.deviceInfo = StaticDeviceInfo(device)
        configuration.retryPolicy = .none
        configuration.authenticationRule = { ShopRoutes.router.requiresAuthentication($0) }
        configuration.logSink = LogSink(minimumLevel: .debug) { record in lines.withLock { $0.append(record.message) } }
        let client = DeepLinkClient(backend: world.backend, configuration: configuration)
        let events = client.linkEvents()
        var app = ShopApp(client: client)

        // The story, then the same links while the server answers 401 with the client's own
        // key echoed back, and then while the network is down.
        let key = Self.key(of: provider)
        _ = await app.launch()
        _ = await app.open(world.productLink)
        _ = await app.purchase(amount: 29)
        for path in [
            "/api/sdk/v1/resolve/p42", "/api/v1/app/dynamic_link/p42", "/api/v1/links/attribute", "/resolve/p42", "/batch",
            "/api/sdk/v1/event",
        ] {
            sandbox.simulator.setFault(.status(401, body: #"{"error":"Invalid key \#(key)","message":"Bearer \#(key)"}"#), path: path)
        }
        _ = await app.open(URL(string: world.productLink.absoluteString + "?again=1")!)
        _ = await app.purchase(amount: 30)
        sandbox.simulator.isReachable = false
        _ = await app.open(URL(string: world.productLink.absoluteString + "?offline=1")!)
        await client.flushEvents()
        await client.shutdown()

        var descriptions: [String] = []
        for await event in events {
            switch event {
            case .failure(let error): descriptions.append(error.description)
            case .link(let link):
                if case .local(.failed(let error)) = link.resolution { descriptions.append(error.description) }
            case .install(.failed(let error)): descriptions.append(error.description)
            default: break
            }
        }
        let logged = lines.withLock { $0 }
        #expect(!logged.isEmpty)
        #expect(!descriptions.isEmpty, "the story produced no error to check")
        let secrets = [key, "Bearer \(key)", Self.advertisingID.uuidString, Self.advertisingID.uuidString.lowercased()]
        for text in logged + descriptions {
            for secret in secrets { #expect(!text.contains(secret), "\(provider): \(text)") }
        }
    }
}
