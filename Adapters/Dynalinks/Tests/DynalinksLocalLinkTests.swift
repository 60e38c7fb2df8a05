import Foundation
import LinkRelay
import LinkRelayConformance
import Testing

@testable import LinkRelayDynalinks

@Suite("Dynalinks: the local link when the provider fails", .timeLimit(.minutes(1)))
struct DynalinksLocalLinkTests {
    let backend: DynalinksBackend

    init() throws {
        backend = DynalinksBackend(try .init(apiKey: "dl_client_key_123", linkDomains: ["acme.dynalinks.app"], appSchemes: ["acmeshop"]))
    }

    @Test("a one-segment link on the Dynalinks domain keeps that segment as its short code", arguments: ProviderOutage.allCases)
    func shortCode(_ outage: ProviderOutage) async throws {
        let link = try await outage.localLink(for: url("https://acme.dynalinks.app/Ab3xQ9?utm_source=mail"), backend: backend)
        #expect(link.shortCode == "Ab3xQ9")
        #expect(link.utm.source == "mail")
        let path = try await outage.localLink(for: url("https://acme.dynalinks.app/product/shoes"), backend: backend)
        #expect(path.shortCode == nil)
        #expect(path.pathSegments == ["product", "shoes"])
    }

    @Test("a + in a query value stays a plus, as Dynalinks' SDK reads it through URLComponents", arguments: ProviderOutage.allCases)
    func plusStaysAPlus(_ outage: ProviderOutage) async throws {
        try await outage.checkPlusStaysAPlus(on: "https://acme.dynalinks.app/Ab3xQ9", backend: backend)
    }
}
