import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayTesting
import Testing

@testable import LinkRelayLinkForty

@Suite("LinkForty wire protocol: resolve (E2/E3)")
struct LinkFortyResolveTests {
    @Test(
        "template-slug link (9.4, §12.1–12.3): path, fingerprint query, server fields and UTM, the click's own query over the link's, reserved names left out"
    )
    func templateSlugResolve() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .get, "/api/sdk/v1/resolve/k3m9x2qa/Xk9_2bQz",
            .json(
                #"""
                {"shortCode":"Xk9_2bQz","linkId":"b7e2d1c4-2a9f-4e63-8d15-0f9a6c3e2b81","deepLinkPath":"/product/42",
                 "appScheme":"acmeshop","iosUrl":"https://apps.apple.com/app/id1234567890",
                 "androidUrl":"https://play.google.com/store/apps/details?id=com.acme.shop",
                 "webUrl":"https://acme.example/products/42",
                 "utmParameters":{"source":"instagram","medium":"social","campaign":"spring_sale"},
                 "customParameters":{"route":"product","productId":"42"},"clickedAt":"2026-03-02T08:00:01.456Z"}
                """#))
        let clicked = url(
            "https://go.acme.app/k3m9x2qa/Xk9_2bQz?utm_source=newsletter&utm_campaign=march&ref=friend42&route=sale&LF_Click=c-91&FP_TZ=UTC&Fp_Lang=en&UTM_Term=x"
        )
        let link = try await harness.backend.resolve(clicked, context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.method == .get)
        #expect(
            request.url.absoluteString
                == "https://go.acme.app/api/sdk/v1/resolve/k3m9x2qa/Xk9_2bQz?fp_tz=America/New_York&fp_lang=en_US&fp_sw=1179&fp_sh=2556&fp_platform=iOS&fp_pv=17.4.1"
        )
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(link.url == clicked)
        #expect(link.resolution == .server)
        #expect(link.shortCode == "Xk9_2bQz")
        #expect(link.linkID == "b7e2d1c4-2a9f-4e63-8d15-0f9a6c3e2b81")
        #expect(link.pathSegments == ["product", "42"])
        #expect(link.destination == url("acmeshop://product/42"))
        // The clicked URL wins a collision; utm_*, fp_* and lf_click never reach the parameters.
        #expect(link.parameters == ["route": "sale", "productId": "42", "ref": "friend42"])
        // UTM stays as the server sent it.
        #expect(link.utm == UTMParameters(source: "instagram", medium: "social", campaign: "spring_sale"))
        #expect(link.clickedAt == Date(timeIntervalSince1970: 1_772_438_401.456))
        #expect(link.metadata["templateSlug"] == "k3m9x2qa")
        #expect(link.metadata["webUrl"] == "https://acme.example/products/42")
        #expect(link.metadata["utmParameters"] == ["source": "instagram", "medium": "social", "campaign": "spring_sale"])
    }

    @Test("minimal link (9.5): one segment, {} columns, falsy fields absent")
    func minimalResolve() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .get, "/api/sdk/v1/resolve/Qp3rT7wx",
            .json(
                #"{"shortCode":"Qp3rT7wx","linkId":"0c5e8f2a-91d3-4b67-a4e0-7d2c9b1f3e56","utmParameters":{},"customParameters":{},"clickedAt":"2026-03-02T09:12:44.007Z"}"#
            ))
        let link = try await harness.backend.resolve(url("https://go.acme.app/Qp3rT7wx"), context: harness.context)
        #expect(link.shortCode == "Qp3rT7wx")
        #expect(link.pathSegments == ["Qp3rT7wx"])
        #expect(link.destination == nil)
        #expect(link.parameters.isEmpty)
        #expect(link.utm.isEmpty)
    }

    @Test("three segments use the last two; a base path prefix is not taken for a template slug")
    func segmentHandling() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/api/sdk/v1/resolve/b/c", .json(#"{"shortCode":"c","linkId":"l"}"#))
        _ = try await harness.backend.resolve(url("https://go.acme.app/a/b/c"), context: harness.context)
        #expect(harness.transport.requests.last?.url.path == "/api/sdk/v1/resolve/b/c")

        let prefixed = try Harness(baseURL: "https://acme.app/links/")
        prefixed.transport.stub(.get, "/links/api/sdk/v1/resolve/Xk9", .json(#"{"shortCode":"Xk9","linkId":"l"}"#))
        let link = try await prefixed.backend.resolve(url("https://acme.app/links/Xk9"), context: prefixed.context)
        #expect(prefixed.transport.requests.last?.url.path == "/links/api/sdk/v1/resolve/Xk9")
        #expect(link.shortCode == "Xk9")
    }

    @Test("fingerprint values are encoded so a form-decoding server reads them as sent")
    func fingerprintEncoding() async throws {
        let device = DeviceInfo(
            osName: "iOS", osVersion: "17.4", timeZoneIdentifier: "Etc/GMT+5", preferredLanguages: ["zh-Hans-CN@calendar=chinese"])
        let harness = try Harness(device: device)
        harness.transport.stub(.get, "/api/sdk/v1/resolve/abc", .json(#"{"shortCode":"abc"}"#))
        _ = try await harness.backend.resolve(url("https://go.acme.app/abc"), context: harness.context)
        let query = try #require(harness.transport.requests.first?.url.query)
        #expect(query == "fp_tz=Etc/GMT%2B5&fp_lang=zh_Hans_CN&fp_platform=iOS&fp_pv=17.4")
    }

    @Test("unknown code (9.6): 404 is notFound, so the client falls back to the local link")
    func unknownCode() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/api/sdk/v1/resolve/nope1234", .json(#"{"error":"Link not found"}"#, status: 404))
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.resolve(url("https://go.acme.app/nope1234"), context: harness.context)
        }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("Link not found") == true)
    }

    @Test("a link without a path sends no request")
    func noPathNoRequest() async throws {
        let harness = try Harness()
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.resolve(url("https://go.acme.app/"), context: harness.context)
        }
        #expect(error?.code == .notFound)
        #expect(harness.transport.requests.isEmpty)
    }

    @Test("an app-scheme link is the route already: parsed on the device, no request")
    func appSchemeLink() async throws {
        let backend = LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"), appSchemes: ["acmeshop"]))
        let transport = StubTransport()
        let link = try await backend.resolve(
            url("acmeshop://product/42?route=product"), context: BackendContext(transport: transport, device: newYorkPhone))
        #expect(link.pathSegments == ["product", "42"])
        #expect(link.resolution == .local(.onDevice))
        #expect(transport.requests.isEmpty)
        #expect(backend.canHandle(url("ACMESHOP://x")))
        #expect(backend.canHandle(url("https://GO.acme.app/x")))
        #expect(!backend.canHandle(url("https://other.app/x")))
        #expect(!backend.canHandle(url("otherapp://x")))
    }
}
