import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelaySimulator
import LinkRelayTesting
import Testing

/// A client over the simulated providers, with no retries and `logs` as its log.
func simulatedClient(_ backend: any DeepLinkBackend, _ simulator: ProviderSimulator, logs: LogSink) -> DeepLinkClient {
    var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: simulator.clock, transport: simulator)
    configuration.deviceInfo = StaticDeviceInfo()
    configuration.retryPolicy = .none
    configuration.logSink = logs
    return DeepLinkClient(backend: backend, configuration: configuration)
}

/// A wrong API key, as a new user makes the mistake: the app hears it.
@Suite("A wrong API key is loud", .timeLimit(.minutes(1)))
struct WrongKeyTests {
    /// The client's failures until `count` links were delivered.
    func failures(_ client: DeepLinkClient, _ events: AsyncStream<DeepLinkEvent>, links count: Int) async -> [DeepLinkError] {
        var failures: [DeepLinkError] = []
        var links = 0
        for await event in events {
            if case .failure(let error) = event { failures.append(error) }
            if event.link != nil { links += 1 }
            if links == count, failures.contains(where: { $0.message.contains("rejected the API key") }) { break }
        }
        return failures
    }

    func client(_ backend: any DeepLinkBackend, _ simulator: ProviderSimulator, logs: LogSink) -> DeepLinkClient {
        simulatedClient(backend, simulator, logs: logs)
    }

    @Test("LimeLink: the stats report's 401 reaches the app as a failure and the log as a warning")
    func limeLink() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addLimeLink(apiKey: "lk_right")
        server.createLink(project: "shop", suffix: "p42", uri: "shopapp://product/42")
        let warnings = Locked<[String]>([])
        let client = client(
            LimeLinkBackend(try .init(apiKey: "lk_wrong", appSchemes: ["shopapp"])), simulator,
            logs: LogSink(minimumLevel: .warning) { record in warnings.withLock { $0.append(record.message) } })
        let events = client.linkEvents()
        client.handle(URL(string: "https://shop.limelink.org/link/p42")!)
        let failures = await failures(client, events, links: 1)
        let rejected = try #require(failures.first { $0.message.contains("rejected the API key") })
        #expect(rejected.status == 401)
        #expect(rejected.message.contains("reporting an event"))
        #expect(!rejected.message.contains("lk_wrong"))
        #expect(warnings.withLock { $0 }.contains { $0.contains("rejected the API key") })
        await client.shutdown()
    }

    @Test("Dynalinks: a resolution's 401 reaches the app as a failure, not only inside the local link")
    func dynalinks() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addDynalinks(clientAPIKey: "dyn_right", projectHost: "acme.dynalinks.app")
        _ = server.createLink(path: "/promo", shortenedPath: "Ab3", url: "https://acme.example/promo")
        let client = client(
            DynalinksBackend(try .init(apiKey: "dyn_wrong", linkDomains: ["acme.dynalinks.app"])), simulator, logs: .silent)
        let events = client.linkEvents()
        client.handle(URL(string: "https://acme.dynalinks.app/promo")!)
        let failures = await failures(client, events, links: 1)
        let rejected = try #require(failures.first { $0.message.contains("rejected the API key") })
        #expect(rejected.status == 401)
        #expect(rejected.message.contains("resolving the link"))
        await client.shutdown()
    }
}
