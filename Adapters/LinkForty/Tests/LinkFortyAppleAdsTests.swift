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
}
