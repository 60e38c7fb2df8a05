import Foundation
import LinkRelay
import LinkRelayConformance
import LinkRelaySimulator
import Testing

@testable import LinkRelayLinkForty

struct LinkFortyFixture: ConformanceFixture {
    let name = "LinkForty"
    static let apiKey = "lf_live_8c1f0e9a2b"

    func makeWorld(simulator: ProviderSimulator) throws -> ConformanceWorld {
        let server = simulator.addLinkForty(host: "go.acme.app")
        server.createLink(
            shortCode: "Xk9_2bQz", templateSlug: "k3m9x2qa", originalURL: "https://acme.example/products/42",
            deepLinkPath: "/product/42", appScheme: "acmeshop", deepLinkParameters: ["route": "product", "productId": "42"])
        let backend = LinkFortyBackend(
            try .init(baseURL: url("https://go.acme.app"), apiKey: Self.apiKey, appSchemes: ["acmeshop"], appName: "Acme Shop"))
        return ConformanceWorld(
            backend: backend, apiKey: Self.apiKey,
            ownLinks: [url("https://go.acme.app/Xk9_2bQz"), url("https://GO.ACME.APP/a/b"), url("acmeshop://product/42")],
            foreignLinks: [url("https://evil.example/Xk9_2bQz"), url("otherapp://x"), url("https://acme.app/x")],
            knownLink: url("https://go.acme.app/k3m9x2qa/Xk9_2bQz"), knownLinkPath: ["product", "42"],
            unknownLink: url("https://go.acme.app/nope1234"),
            resolveRoute: (.get, "/api/sdk/v1/resolve/k3m9x2qa/Xk9_2bQz"), installRoute: (.post, "/api/sdk/v1/install"),
            device: newYorkPhone,
            scriptAttributedInstall: {
                try server.recordWebClick(
                    url: URL(string: "https://go.acme.app/Xk9_2bQz")!, from: newYorkPhone, ip: simulator.clientIP,
                    at: simulator.clock.currentDate)
                return ExpectedDeferredLink(parameters: ["route": "product", "productId": "42"], shortCode: "Xk9_2bQz")
            })
    }
}

@Suite("LinkForty conformance", .timeLimit(.minutes(1)))
struct LinkFortyConformanceTests {
    @Test("conforms", arguments: ConformanceCheck.allCases)
    func conforms(_ check: ConformanceCheck) async throws {
        try await ConformanceSuite(LinkFortyFixture()).run(check)
    }
}
