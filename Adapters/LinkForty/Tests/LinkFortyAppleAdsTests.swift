import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import Testing

@testable import LinkRelayLinkForty

/// The Apple Ads token in LinkForty's install body (`appleAdsToken`): LinkRelay Server stores
/// it; LinkForty Core's schema strips the unknown key and answers as always.
@Suite("LinkForty and the Apple Ads token", .timeLimit(.minutes(1)))
struct LinkFortyAppleAdsTests {
    struct FixedToken: AppleAdsTokenSource {
        func attributionToken() async throws -> String { "YWRzLXRva2Vu" }
    }

    @Test("the install body carries the token; Core takes the body and names the install")
    func tokenInTheBody() async throws {
        let clock = ManualClock()
        let simulator = ProviderSimulator(clock: clock)
        let server = simulator.addLinkForty(host: "go.acme.app")
        var configuration = simulatorConfiguration(simulator, clock: clock)
        configuration.appleAds = AppleAdsAttribution(source: FixedToken())
        let client = DeepLinkClient(
            backend: LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"), apiKey: "lf_live_key")), configuration: configuration)
        await client.start()
        let installID = try #require(await client.installOutcome().attribution?.installID)
        #expect(server.installs.map(\.id) == [installID])
        let body = try #require(simulator.requests.first { $0.url.path == "/api/sdk/v1/install" }?.body)
        let sent = try JSONDecoder().decode([String: JSONValue].self, from: body)
        #expect(sent["appleAdsToken"] == "YWRzLXRva2Vu")
    }

    /// A token the system gives after `delay` seconds of the test's clock.
    struct SlowToken: AppleAdsTokenSource {
        let clock: ManualClock
        let delay: TimeInterval
        func attributionToken() async throws -> String {
            try await clock.sleep(for: delay)
            return "YWRzLXRva2Vu"
        }
    }

    @Test(
        "a late token goes to POST /api/sdk/v1/install/apple-ads-token with the install's id; Core has no such route (404), so it is dropped, once"
    )
    func lateToken() async throws {
        let clock = ManualClock()
        let simulator = ProviderSimulator(clock: clock)
        _ = simulator.addLinkForty(host: "go.acme.app")
        var configuration = simulatorConfiguration(simulator, clock: clock)
        configuration.appleAds = AppleAdsAttribution(source: SlowToken(clock: clock, delay: 30), timeout: 2)
        configuration.retryPolicy = .none
        let client = DeepLinkClient(
            backend: LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"), apiKey: "lf_live_key")), configuration: configuration)
        let started = Task { await client.start() }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 2)
        _ = await started.value
        let installID = try #require(await client.installOutcome().attribution?.installID)
        let report = try #require(simulator.requests.first { $0.url.path == "/api/sdk/v1/install" }?.body)
        #expect(try JSONDecoder().decode([String: JSONValue].self, from: report)["appleAdsToken"] == nil)
        clock.advance(by: 28)
        await client.appleAdsTokenSettled()
        let late = simulator.requests.filter { $0.url.path == "/api/sdk/v1/install/apple-ads-token" }
        #expect(late.count == 1 && late.first?.method == .post)
        let body = try JSONDecoder().decode([String: JSONValue].self, from: try #require(late.first?.body))
        #expect(body == ["installId": .string(installID), "appleAdsToken": "YWRzLXRva2Vu"])
        #expect(late.first?.headers["Authorization"] == "Bearer lf_live_key")
        await client.shutdown()
    }
}
