import Foundation
import LinkRelay
import LinkRelayConformance
import LinkRelayTesting
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
        try await outage.checkPlusStaysAPlus(on: "https://go.acme.app/Qp3rT7wx", backend: backend)
    }

    @Test(
        "the local parse (C8, §12.1): UTM first wins, custom parameters last wins, empty values kept, reserved names left out in any case",
        arguments: ProviderOutage.allCases)
    func localParameters(_ outage: ProviderOutage) async throws {
        let link = try await outage.localLink(
            for: url(
                "https://go.acme.app/Qp3rT7wx?utm_source=mail&utm_source=later&ref=a&ref=b&empty=&FP_TZ=UTC&fp_lang=en&Fp_Sw=1179&lf_click=c-1&LF_Click=c-2&UTM_Medium=x"
            ),
            backend: backend)
        #expect(link.parameters == ["ref": "b", "empty": ""])
        #expect(link.utm.source == "mail")
        #expect(link.shortCode == "Qp3rT7wx")
    }

    /// Rows of LinkForty's own `URLParserTests` (mobile-sdk-ios, Tests/LinkFortySDKTests/DeepLink):
    /// what its SDK reads from a link on the device, and so what an app migrating from it expects
    /// of the local link.
    struct SDKRow: Sendable, CustomTestStringConvertible {
        let url: String
        let shortCode: String?
        var utm = UTMParameters()
        var parameters: [String: String] = [:]
        var testDescription: String { url }
    }

    static let sdkRows: [SDKRow] = [
        SDKRow(url: "https://go.example.com/abc123", shortCode: "abc123"),
        SDKRow(url: "https://go.example.com/xyz789/", shortCode: "xyz789"),
        SDKRow(url: "https://go.example.com/test123?utm_source=email", shortCode: "test123", utm: UTMParameters(source: "email")),
        SDKRow(url: "https://go.example.com/", shortCode: nil),
        SDKRow(url: "myapp://deep/link123", shortCode: "link123"),
        SDKRow(
            url: "https://go.example.com/abc123?utm_source=facebook&utm_medium=cpc&utm_campaign=summer&utm_term=shoes&utm_content=banner",
            shortCode: "abc123", utm: UTMParameters(source: "facebook", medium: "cpc", campaign: "summer", term: "shoes", content: "banner")
        ),
        SDKRow(
            url: "https://go.example.com/abc123?utm_source=google%20ads&utm_campaign=test%2Bcampaign", shortCode: "abc123",
            utm: UTMParameters(source: "google ads", campaign: "test+campaign")),
        SDKRow(
            url: "https://go.example.com/abc123?utm_source=email&productId=789&utm_campaign=test&size=large", shortCode: "abc123",
            utm: UTMParameters(source: "email", campaign: "test"), parameters: ["productId": "789", "size": "large"]),
        SDKRow(
            url: "https://go.example.com/abc123?name=John%20Doe&email=test%40example.com", shortCode: "abc123",
            parameters: ["name": "John Doe", "email": "test@example.com"]),
        SDKRow(url: "myapp://product/abc123?id=456", shortCode: "abc123", parameters: ["id": "456"]),
        SDKRow(url: "https://go.example.com/abc123#section", shortCode: "abc123"),
        SDKRow(url: "https://go.example.com:8080/test123", shortCode: "test123"),
        SDKRow(url: "https://go.example.com/path/to/link123", shortCode: "link123"),
        SDKRow(
            url: "https://go.example.com/abc123?utm_source=&productId=", shortCode: "abc123", utm: UTMParameters(source: ""),
            parameters: ["productId": ""]),
        SDKRow(
            url: "https://go.example.com/abc123?slug=titanic&utm_source=ig&fp_tz=UTC&lf_click=abc", shortCode: "abc123",
            utm: UTMParameters(source: "ig"), parameters: ["slug": "titanic"]),
        SDKRow(url: "https://go.example.com/abc123?UTM_Source=ig&FP_TZ=UTC&LF_Click=x", shortCode: "abc123"),
    ]

    @Test("LinkForty's own URLParserTests, row by row: short code, UTM and custom parameters", arguments: sdkRows)
    func sdkURLParserRows(_ row: SDKRow) throws {
        let backend = LinkFortyBackend(try .init(baseURL: url("https://go.example.com"), appSchemes: ["myapp"]))
        let link = url(row.url)
        let local = backend.localLink(for: link, parsed: try LinkParser.parse(link), reason: .timedOut)
        #expect(local.shortCode == row.shortCode)
        #expect(local.utm == row.utm)
        #expect(local.parameters == row.parameters)
    }

    @Test("an app-scheme link is read the same way when it is resolved: no request, reserved names left out, the SDK's short code")
    func appSchemeResolve() async throws {
        let backend = LinkFortyBackend(try .init(baseURL: url("https://go.example.com"), appSchemes: ["myapp"]))
        let transport = StubTransport()
        let context = BackendContext(transport: transport, clock: ManualClock(), device: .unknown)
        let link = try await backend.resolve(url("myapp://deep/link123?ref=a&fp_tz=UTC&LF_Click=c&utm_source=mail"), context: context)
        #expect(link.shortCode == "link123")
        #expect(link.parameters == ["ref": "a"])
        #expect(link.utm.source == "mail")
        #expect(link.resolution == .local(.onDevice))
        #expect(transport.requests.isEmpty)
    }
}
