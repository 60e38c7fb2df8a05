import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelaySimulator
import LinkRelayTesting
import Testing

/// The same event code on every provider: `track` never makes the app change its code.
@Suite("The same event code on every backend", .timeLimit(.minutes(1)))
struct SameEventCodeTests {
    func client(_ backend: any DeepLinkBackend, _ simulator: ProviderSimulator, logs: LogSink) -> DeepLinkClient {
        simulatedClient(backend, simulator, logs: logs)
    }

    @Test("on a backend without events, track and trackRevenue do nothing, with one warning per client")
    func noEvents() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        _ = simulator.addLimeLink(apiKey: "lk_key")
        let warnings = Locked<[String]>([])
        let client = client(
            LimeLinkBackend(try .init(apiKey: "lk_key", appSchemes: ["shopapp"])), simulator,
            logs: LogSink(minimumLevel: .warning) { record in warnings.withLock { $0.append(record.message) } })
        try await client.track("signup")
        try await client.trackRevenue(amount: 9, currency: "EUR")
        await client.flushEvents()
        #expect(await client.queuedEventCount == 0)
        #expect(
            warnings.withLock { $0 } == [
                "The limelink backend does not report events: track and trackRevenue do nothing (client.capabilities has no .eventTracking)."
            ])
        // Mistakes in the call itself are still errors, on every backend.
        await #expect(throws: DeepLinkError.self) { try await client.track(" ") }
        await #expect(throws: DeepLinkError.self) { try await client.trackRevenue(amount: -1, currency: "EUR") }
        await client.shutdown()
    }

    @Test("in a RoutingBackend, events go to the first member that reports events")
    func routingToTheTracker() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        _ = simulator.addLimeLink(apiKey: "lk_key")
        let paylisher = simulator.addPaylisher(apiKey: "phc_key")
        let backend = RoutingBackend(
            LimeLinkBackend(try .init(apiKey: "lk_key", appSchemes: ["shopapp"])),
            [PaylisherBackend(try .init(apiKey: "phc_key", appSchemes: ["shopapp"]))])
        let client = client(backend, simulator, logs: .silent)
        await client.start()
        try await client.track("signup", properties: ["plan": "pro"])
        await client.flushEvents()
        #expect(paylisher.events.map(\.event) == ["signup"])
        await client.shutdown()
    }
}
