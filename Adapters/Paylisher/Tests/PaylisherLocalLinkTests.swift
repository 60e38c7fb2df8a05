import Foundation
import LinkRelay
import LinkRelayConformance
import Testing

@testable import LinkRelayPaylisher

@Suite("Paylisher: the local link when the provider fails", .timeLimit(.minutes(1)))
struct PaylisherLocalLinkTests {
    let backend: PaylisherBackend

    init() throws {
        backend = PaylisherBackend(
            try .init(
                apiKey: "phc_test_key_123", appSchemes: ["diyetim"], linkDomains: ["shop.example"], authRequiredDestinations: ["wallet"]))
    }

    static let keyed: [(String, String)] = [
        ("https://shop.example/campaign/X7kdi5Yq9lTVOv46uHYtVqq8?jid=j-1", "X7kdi5Yq9lTVOv46uHYtVqq8"),
        ("https://shop.example/c/ab", "ab"),
        ("diyetim://campaign/K", "K"),
        ("diyetim://products/a?keyName=ABC123", "ABC123"),
        ("https://link.paylisher.com/nARvW", "nARvW"),
    ]

    @Test("the campaign key in the path or the query survives every failure (§3.3)", arguments: ProviderOutage.allCases)
    func campaignKey(_ outage: ProviderOutage) async throws {
        for (link, key) in Self.keyed {
            let local = try await outage.localLink(for: url(link), backend: backend)
            #expect(local.campaign?.key == key, "\(link)")
            #expect(local.provider == .paylisher)
        }
        let journey = try await outage.localLink(for: url("https://shop.example/campaign/X7kdi5Yq9?jid=j-1"), backend: backend)
        #expect(journey.campaign?.journeyID == "j-1")
        #expect(journey.metadata["destination"] == "campaign/X7kdi5Yq9")
    }

    @Test("a short link keeps its code as the short code; an auth destination stays gated")
    func shortCodeAndAuth() async throws {
        let short = try await ProviderOutage.serverError.localLink(for: url("https://link.paylisher.com/nARvW"), backend: backend)
        #expect(short.shortCode == "nARvW")
        let gated = backend.localLink(
            for: url("diyetim://wallet?k=K9"), parsed: try LinkParser.parse(url("diyetim://wallet?k=K9")), reason: .notFound)
        #expect(gated.requiresAuthentication)
        #expect(gated.resolution == .local(.notFound))
    }

    @Test("a + in a query value stays a plus, as Paylisher's SDK reads it through URLComponents", arguments: ProviderOutage.allCases)
    func plusStaysAPlus(_ outage: ProviderOutage) async throws {
        try await outage.checkPlusStaysAPlus(on: "https://shop.example/campaign/X7kdi5Yq9", backend: backend)
    }
}
