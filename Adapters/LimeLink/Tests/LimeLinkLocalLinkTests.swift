import Foundation
import LinkRelay
import LinkRelayConformance
import Testing

@testable import LinkRelayLimeLink

@Suite("LimeLink: the local link when the provider fails", .timeLimit(.minutes(1)))
struct LimeLinkLocalLinkTests {
    let backend: LimeLinkBackend

    init() throws {
        backend = LimeLinkBackend(try .init(apiKey: "ll_test_key_123", appSchemes: ["myapp"]))
    }

    @Test("the link's suffix is its short code, and the project is kept (§3)", arguments: ProviderOutage.allCases)
    func suffixAndProject(_ outage: ProviderOutage) async throws {
        let link = try await outage.localLink(for: url("https://abc123.limelink.org/link/summer-sale?utm_source=ig"), backend: backend)
        #expect(link.shortCode == "summer-sale")
        #expect(link.metadata["project"] == "abc123")
        #expect(link.metadata["suffix"] == "summer-sale")
        #expect(link.utm.source == "ig")
        let direct = try await outage.localLink(for: url("https://limelink.org/api/v1/app/dynamic_link/promo1"), backend: backend)
        #expect(direct.shortCode == "promo1")
    }

    @Test("a custom-scheme link's original-url parameters are kept (§9.8)", arguments: ProviderOutage.allCases)
    func originalURL(_ outage: ProviderOutage) async throws {
        let link = try await outage.localLink(
            for: url("myapp://open?original-url=https%3A%2F%2Fabc123.limelink.org%2Flink%2Fsummer-sale%3Fcoupon%3DSAVE10"), backend: backend
        )
        #expect(link.parameters["coupon"] == "SAVE10")
        #expect(link.metadata["project"] == "open")
    }

    @Test("a + in a query value stays a plus, as LimeLink's SDK reads it through URLComponents", arguments: ProviderOutage.allCases)
    func plusStaysAPlus(_ outage: ProviderOutage) async throws {
        try await outage.checkPlusStaysAPlus(on: "https://abc123.limelink.org/link/summer-sale", backend: backend)
    }

    @Test(
        "LimeLink's own UrlHandlerTests: a custom-scheme link's parameters are its original-url's; the original-url item itself is not a parameter",
        arguments: [
            (
                "myapp://open?original-url=https%3A%2F%2Fexample.com%2Fpage%3Fkey%3Dvalue", ["key": "value"],
                "https://example.com/page?key=value"
            ),
            (
                "myapp://open?original-url=https%3A%2F%2Fexample.com%2Fpage%3Fa%3D1%26b%3D2%26c%3D3", ["a": "1", "b": "2", "c": "3"],
                "https://example.com/page?a=1&b=2&c=3"
            ),
            ("myapp://open?original-url=https%3A%2F%2Fexample.com%2Fpage", [:], "https://example.com/page"),
            // LimeLink's SDK reads nothing here (it reads original-url only); LinkRelay keeps the link's own items.
            ("myapp://open?other=param", ["other": "param"], nil),
        ])
    func sdkUrlHandlerRows(_ link: String, _ parameters: [String: String], _ original: String?) async throws {
        for outage in ProviderOutage.allCases {
            let local = try await outage.localLink(for: url(link), backend: backend)
            #expect(local.parameters == parameters, "\(outage)")
            #expect(local.metadata["original_url"] == original.map { .string($0) }, "\(outage)")
        }
    }
}
