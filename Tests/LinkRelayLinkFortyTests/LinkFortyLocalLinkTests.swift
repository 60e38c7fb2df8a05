import Foundation
import LinkRelay
import LinkRelayConformance
import Testing

@testable import LinkRelayLinkForty

@Suite("LinkForty: the local link when the provider fails", .timeLimit(.minutes(1)))
struct LinkFortyLocalLinkTests {
    let backend: LinkFortyBackend

    init() throws {
        backend = LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"), apiKey: "lf_live_8c1f0e9a2b", appSchemes: ["acmeshop"]))
    }

    @Test("the short code is the last path segment, as LinkForty's SDK reads it (§7.3)", arguments: ProviderOutage.allCases)
    func shortCode(_ outage: ProviderOutage) async throws {
        let link = try await outage.localLink(
            for: url("https://go.acme.app/k3m9x2qa/Qp3rT7wx?utm_source=mail&utm_campaign=spring&ref=a"), backend: backend)
        #expect(link.shortCode == "Qp3rT7wx")
        #expect(link.provider == .linkForty)
        #expect(link.utm.source == "mail")
        #expect(link.utm.campaign == "spring")
        #expect(link.parameters["ref"] == "a")
        let single = try await outage.localLink(for: url("https://go.acme.app/Xk9_2bQz"), backend: backend)
        #expect(single.shortCode == "Xk9_2bQz")
    }

    @Test("a base URL with a path prefix is not part of the short code")
    func basePathPrefix() throws {
        let prefixed = LinkFortyBackend(try .init(baseURL: url("https://acme.app/links"), appSchemes: []))
        let link = url("https://acme.app/links/Qp3rT7wx")
        let local = prefixed.localLink(for: link, parsed: try LinkParser.parse(link), reason: .timedOut)
        #expect(local.shortCode == "Qp3rT7wx")
        #expect(local.resolution == .local(.timedOut))
    }

    @Test("a + in a query value stays a plus, as LinkForty's SDK reads it through URLComponents", arguments: ProviderOutage.allCases)
    func plusStaysAPlus(_ outage: ProviderOutage) async throws {
        let link = try await outage.localLink(
            for: url("https://go.acme.app/Qp3rT7wx?q=running+shoes&tag=a%2Bb&utm_campaign=spring+sale&x+y=1"), backend: backend)
        #expect(link.parameters["q"] == "running+shoes")
        #expect(link.parameters["tag"] == "a+b")
        #expect(link.parameters["x+y"] == "1")
        #expect(link.utm.campaign == "spring+sale")
    }

    @Test("the local parse (C8, §12.1): UTM first wins, custom parameters last wins, empty values kept, reserved names left out in any case", arguments: ProviderOutage.allCases)
    func localParameters(_ outage: ProviderOutage) async throws {
        let link = try await outage.localLink(
            for: url("https://go.acme.app/Qp3rT7wx?utm_source=mail&utm_source=later&ref=a&ref=b&empty=&FP_TZ=UTC&fp_lang=en&Fp_Sw=1179&lf_click=c-1&LF_Click=c-2&UTM_Medium=x"),
            backend: backend)
        #expect(link.parameters == ["ref": "b", "empty": ""])
        #expect(link.utm.source == "mail")
        #expect(link.shortCode == "Qp3rT7wx")
    }
}
