import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayTesting
import Testing

@testable import LinkRelayLinkForty

/// The device of the reference's examples: an iPhone 15 Pro in New York.
let newYorkPhone = DeviceInfo(
    screen: .init(width: 393, height: 852, scale: 3), osName: "iOS", osVersion: "17.4.1", deviceModel: "iPhone16,1",
    timeZoneIdentifier: "America/New_York", preferredLanguages: ["en-US"], regionCode: "US", appVersion: "2.3.0",
    appBuild: "412")

func url(_ string: String) -> URL {
    guard let url = URL(string: string) else { preconditionFailure("Not a URL: \(string)") }
    return url
}

func json(_ data: Data?) throws -> [String: JSONValue] {
    try JSONDecoder().decode([String: JSONValue].self, from: try #require(data))
}

struct Harness {
    let transport = StubTransport()
    let backend: LinkFortyBackend
    let context: BackendContext

    init(apiKey: String? = "lf_live_8c1f0e9a2b", baseURL: String = "https://go.acme.app", installID: String? = nil, device: DeviceInfo = newYorkPhone) throws {
        backend = LinkFortyBackend(try .init(baseURL: url(baseURL), apiKey: apiKey, appName: "Acme Shop"))
        context = BackendContext(transport: transport, clock: ManualClock(), device: device, installID: installID)
    }
}

@Suite("LinkForty wire protocol: install (E1)")
struct LinkFortyInstallTests {
    @Test("the install request is exactly the reference's: path, headers, camelCase body without nulls; LinkRelay names itself as LinkForty's later SDKs do (§12.6)")
    func installRequest() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/sdk/v1/install", .json(#"{"installId":"x","attributed":false,"confidenceScore":0,"matchedFactors":[],"deepLinkData":{}}"#))
        _ = try await harness.backend.matchInstall(context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.url.absoluteString == "https://go.acme.app/api/sdk/v1/install")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(request.headers["Authorization"] == "Bearer lf_live_8c1f0e9a2b")
        #expect(request.headers["User-Agent"] == "Acme Shop/2.3.0 iOS/17.4.1")
        #expect(request.headers["X-LinkForty-SDK"] == "linkrelay/\(LinkRelayVersion.string)")
        #expect(
            try json(request.body) == [
                "userAgent": "Acme Shop/2.3.0 iOS/17.4.1", "timezone": "America/New_York", "language": "en_US",
                "screenWidth": 1179, "screenHeight": 2556, "platform": "iOS", "platformVersion": "17.4.1",
                "appVersion": "2.3.0", "attributionWindowHours": 168, "sdkName": "linkrelay", "sdkVersion": .string(LinkRelayVersion.string),
            ])
    }

    @Test("the User-Agent's app name: the configured one, else the device's (an app or a test can supply it), else App")
    func appNameFromDevice() async throws {
        var device = newYorkPhone
        device.appName = "Acme Outlet"
        for (configured, device, expected) in [("Acme Shop", device, "Acme Shop"), (nil, device, "Acme Outlet"), (nil, newYorkPhone, "App")] as [(String?, DeviceInfo, String)] {
            let transport = StubTransport()
            transport.stub(.post, "/api/sdk/v1/install", .json(#"{"installId":"x","attributed":false}"#))
            let backend = LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"), appName: configured))
            _ = try await backend.matchInstall(context: BackendContext(transport: transport, clock: ManualClock(), device: device))
            #expect(transport.requests.first?.headers["User-Agent"] == "\(expected)/2.3.0 iOS/17.4.1")
        }
    }

    @Test("unknown values are omitted, never null; no Authorization without a key; a consented device id is sent")
    func installRequestWithoutOptionalValues() async throws {
        var device = DeviceInfo(osName: "Linux", osVersion: "6.1.0", timeZoneIdentifier: "Etc/UTC", preferredLanguages: [])
        device.advertisingID = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")
        let harness = try Harness(apiKey: nil, device: device)
        harness.transport.stub(.post, "/api/sdk/v1/install", .json(#"{"installId":"x","attributed":false,"matchedFactors":[],"deepLinkData":{}}"#))
        _ = try await harness.backend.matchInstall(context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.headers["Authorization"] == nil)
        let body = try json(request.body)
        #expect(
            body.keys.sorted() == ["attributionWindowHours", "deviceId", "platform", "platformVersion", "sdkName", "sdkVersion", "timezone", "userAgent"])
        #expect(body["deviceId"] == "6F9619FF-8B86-D011-B42D-00C04FC964FF")
        #expect(!String(decoding: request.body ?? Data(), as: UTF8.self).contains("null"))
    }

    @Test("attributed (9.1): the deferred link, its parameters, UTM and millisecond clickedAt")
    func attributed() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/sdk/v1/install", .json(#"""
            {"installId":"3f1c9a52-7d4e-4b8a-9e21-6c0d5b8f4a17","attributed":true,"confidenceScore":70,
             "matchedFactors":["ip","timezone","language","screen"],
             "deepLinkData":{"shortCode":"Xk9_2bQz","originalUrl":"https://acme.example/products/42",
               "iosUrl":"https://apps.apple.com/app/id1234567890",
               "androidUrl":"https://play.google.com/store/apps/details?id=com.acme.shop",
               "webFallbackUrl":"https://acme.example/products/42",
               "utmParameters":{"source":"instagram","medium":"social","campaign":"spring_sale"},
               "targetingRules":{},"deepLinkParameters":{"route":"product","productId":"42"},
               "clickedAt":"2026-03-01T10:15:30.123Z","confidenceScore":70,
               "matchedFactors":["ip","timezone","language","screen"]}}
            """#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        let attribution = match.attribution
        #expect(attribution.installID == "3f1c9a52-7d4e-4b8a-9e21-6c0d5b8f4a17")
        #expect(attribution.isAttributed)
        #expect(attribution.confidence == .init(score: 70, level: .low))
        #expect(attribution.matchedFactors == ["ip", "timezone", "language", "screen"])
        #expect(attribution.method == .fingerprint)
        #expect(attribution.clickedAt == Date(timeIntervalSince1970: 1_772_360_130.123))
        let link = try #require(match.link)
        #expect(link.url == url("https://go.acme.app/Xk9_2bQz"))
        #expect(link.origin == .deferred)
        #expect(link.provider == .linkForty)
        #expect(link.shortCode == "Xk9_2bQz")
        #expect(link.parameters == ["route": "product", "productId": "42"])
        #expect(link.utm == UTMParameters(source: "instagram", medium: "social", campaign: "spring_sale"))
        #expect(link.metadata["webFallbackUrl"] == "https://acme.example/products/42")
        #expect(link.metadata["originalUrl"] == "https://acme.example/products/42")
        #expect(link.metadata["iosUrl"] == "https://apps.apple.com/app/id1234567890")
        #expect(link.metadata["targetingRules"] == [:])
    }

    @Test("an install answer without installId is a decoding error (§12.4), retried on a later launch; never organic", arguments: [
        #"{"attributed":false,"confidenceScore":0,"matchedFactors":[],"deepLinkData":{}}"#,
        #"{"installId":null,"attributed":false}"#, #"{"installId":"","attributed":true,"deepLinkData":{"shortCode":"abc"}}"#,
        #"{"installId":42,"attributed":false}"#,
    ])
    func installWithoutID(_ body: String) async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/sdk/v1/install", .json(body))
        let error = await #expect(throws: DeepLinkError.self) { try await harness.backend.matchInstall(context: harness.context) }
        #expect(error?.code == .decoding)
    }

    @Test("organic (9.2): deepLinkData {} is an organic install, not an error")
    func organic() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/sdk/v1/install", .json(#"{"installId":"a8d0e6b1-04c2-4f7e-b3a9-55e1c2d7f920","attributed":false,"confidenceScore":0,"matchedFactors":[],"deepLinkData":{}}"#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.link == nil)
        #expect(match.attribution.isAttributed == false)
        #expect(match.attribution.installID == "a8d0e6b1-04c2-4f7e-b3a9-55e1c2d7f920")
        #expect(match.attribution.method == .none)
        #expect(match.attribution.confidence?.score == 0)
    }

    @Test("a confidenceScore outside 0…100, even past Int's range, is clamped, not a crash", arguments: [
        ("1e30", 100), ("-1e30", 0), ("92555555555555555555555", 100), ("85.4", 85),
    ])
    func scoreOutOfRange(_ score: String, _ expected: Int) async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/sdk/v1/install",
            .json(#"{"installId":"i","attributed":false,"confidenceScore":"# + score + #","matchedFactors":[],"deepLinkData":{}}"#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.attribution.confidence?.score == expected)
    }

    @Test("clickedAt without fractional seconds and parameters of any JSON type are read")
    func lenientValues() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/sdk/v1/install", .json(#"""
            {"installId":"i","attributed":true,"confidenceScore":100,"matchedFactors":["ip","user_agent"],
             "deepLinkData":{"shortCode":"abc","clickedAt":"2026-03-01T10:15:30Z","utmParameters":{"source":5},
             "deepLinkParameters":{"count":3,"vip":true,"price":9.5,"tags":["a"],"none":null}}}
            """#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.attribution.clickedAt == Date(timeIntervalSince1970: 1_772_360_130))
        #expect(match.attribution.confidence == .init(score: 100, level: .high))
        #expect(match.link?.parameters == ["count": "3", "vip": "true", "price": "9.5", "tags": #"["a"]"#])
        #expect(match.link?.utm == UTMParameters())
    }

    @Test("validation error (9.3): a 500 is a server error with LinkForty's message, and retryable")
    func validationError() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/sdk/v1/install", .json(#"{"statusCode":500,"error":"Internal Server Error","message":"[ invalid_type deviceId ]"}"#, status: 500))
        let error = await #expect(throws: DeepLinkError.self) { try await harness.backend.matchInstall(context: harness.context) }
        #expect(error?.code == .server(status: 500))
        #expect(error?.isRetryable == true)
        #expect(error?.message.contains("Internal Server Error") == true)
    }

    @Test("a body that is not JSON is a decoding error")
    func malformed() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/sdk/v1/install", .status(200, body: Data("<html>".utf8)))
        let error = await #expect(throws: DeepLinkError.self) { try await harness.backend.matchInstall(context: harness.context) }
        #expect(error?.code == .decoding)
    }
}

@Suite("LinkForty wire protocol: resolve (E2/E3)")
struct LinkFortyResolveTests {
    @Test("template-slug link (9.4, §12.1–12.3): path, fingerprint query, server fields and UTM, the click's own query over the link's, reserved names left out")
    func templateSlugResolve() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/api/sdk/v1/resolve/k3m9x2qa/Xk9_2bQz", .json(#"""
            {"shortCode":"Xk9_2bQz","linkId":"b7e2d1c4-2a9f-4e63-8d15-0f9a6c3e2b81","deepLinkPath":"/product/42",
             "appScheme":"acmeshop","iosUrl":"https://apps.apple.com/app/id1234567890",
             "androidUrl":"https://play.google.com/store/apps/details?id=com.acme.shop",
             "webUrl":"https://acme.example/products/42",
             "utmParameters":{"source":"instagram","medium":"social","campaign":"spring_sale"},
             "customParameters":{"route":"product","productId":"42"},"clickedAt":"2026-03-02T08:00:01.456Z"}
            """#))
        let clicked = url(
            "https://go.acme.app/k3m9x2qa/Xk9_2bQz?utm_source=newsletter&utm_campaign=march&ref=friend42&route=sale&LF_Click=c-91&FP_TZ=UTC&Fp_Lang=en&UTM_Term=x")
        let link = try await harness.backend.resolve(clicked, context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.method == .get)
        #expect(
            request.url.absoluteString
                == "https://go.acme.app/api/sdk/v1/resolve/k3m9x2qa/Xk9_2bQz?fp_tz=America/New_York&fp_lang=en_US&fp_sw=1179&fp_sh=2556&fp_platform=iOS&fp_pv=17.4.1")
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
        harness.transport.stub(.get, "/api/sdk/v1/resolve/Qp3rT7wx", .json(#"{"shortCode":"Qp3rT7wx","linkId":"0c5e8f2a-91d3-4b67-a4e0-7d2c9b1f3e56","utmParameters":{},"customParameters":{},"clickedAt":"2026-03-02T09:12:44.007Z"}"#))
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

@Suite("LinkForty wire protocol: events (E4) and link creation (E5/E6)")
struct LinkFortyEventAndLinkTests {
    let timestamp = Date(timeIntervalSince1970: 1_772_438_700)  // 2026-03-02T08:05:00Z

    @Test("event (9.7): body with installId, eventName, eventData and a second-precision UTC timestamp")
    func event() async throws {
        let harness = try Harness(installID: "3f1c9a52-7d4e-4b8a-9e21-6c0d5b8f4a17")
        harness.transport.stub(.post, "/api/sdk/v1/event", .json(#"{"eventId":"9d4b2f61-3c8e-4a05-b7d2-e1f06a3c5b98","acknowledged":true}"#))
        try await harness.backend.send(ConversionEvent(name: "signup", timestamp: timestamp), context: harness.context)
        let body = try json(harness.transport.requests.first?.body)
        #expect(body == [
            "installId": "3f1c9a52-7d4e-4b8a-9e21-6c0d5b8f4a17", "eventName": "signup", "eventData": [:],
            "timestamp": "2026-03-02T08:05:00Z", "sdkName": "linkrelay", "sdkVersion": .string(LinkRelayVersion.string),
        ])
        #expect(harness.transport.requests.first?.headers["X-LinkForty-SDK"] == "linkrelay/\(LinkRelayVersion.string)")
    }

    @Test("revenue (9.7): eventName revenue, revenue and currency in eventData")
    func revenue() async throws {
        let harness = try Harness(installID: "3f1c9a52-7d4e-4b8a-9e21-6c0d5b8f4a17")
        harness.transport.stub(.post, "/api/sdk/v1/event", .status(200))
        let event = ConversionEvent(
            name: "revenue", properties: ["product_id": "123"], timestamp: timestamp,
            revenue: .init(amount: Decimal(string: "29.99")!, currency: "USD"))
        try await harness.backend.send(event, context: harness.context)
        let body = try json(harness.transport.requests.first?.body)
        #expect(body["eventName"] == "revenue")
        #expect(body["eventData"] == ["revenue": 29.99, "currency": "USD", "product_id": "123"])
    }

    @Test("unknown install: 404 is a failure that is not retried")
    func unknownInstall() async throws {
        let harness = try Harness(installID: "00000000-0000-4000-8000-000000000000")
        harness.transport.stub(.post, "/api/sdk/v1/event", .json(#"{"error":"Install event not found"}"#, status: 404))
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.send(ConversionEvent(name: "x", timestamp: timestamp), context: harness.context)
        }
        #expect(error?.code == .server(status: 404))
        #expect(error?.isRetryable == false)
    }

    @Test("without an install id the event waits: notStarted, no request")
    func noInstallID() async throws {
        let harness = try Harness(installID: nil)
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.send(ConversionEvent(name: "x", timestamp: timestamp), context: harness.context)
        }
        #expect(error?.code == .notStarted)
        #expect(harness.transport.requests.isEmpty)
    }

    @Test("link creation from a template (9.8, §7.4): POST /api/links with originalUrl and description, snake_case answer, slug in the URL")
    func createFromTemplate() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/links", .json(#"{"id":"e41b6a0c-77d2-4c1f-9a3e-0b5d8c2f6a91","short_code":"Ru8vN2kd","template_id":"5a1e7c3d-0b92-4f48-8e6a-c2d9f1a0b347","clickCount":0}"#))
        let created = try await harness.backend.createLink(
            LinkRequest(
                fallbackURL: url("https://acme.example/videos/vid123"), parameters: ["route": "VIDEO_VIEWER", "id": "vid123"],
                utm: UTMParameters(source: "app", campaign: "share"), title: "Check this out",
                description: "A video from Ana", templateID: "5a1e7c3d-0b92-4f48-8e6a-c2d9f1a0b347", templateSlug: "k3m9x2qa", externalUserID: "user-7"),
            context: harness.context)
        #expect(created == CreatedLink(url: url("https://go.acme.app/k3m9x2qa/Ru8vN2kd"), shortCode: "Ru8vN2kd", linkID: "e41b6a0c-77d2-4c1f-9a3e-0b5d8c2f6a91"))
        let request = try #require(harness.transport.requests.first)
        #expect(request.headers["Authorization"] == "Bearer lf_live_8c1f0e9a2b")
        #expect(try json(request.body) == [
            "templateId": "5a1e7c3d-0b92-4f48-8e6a-c2d9f1a0b347", "templateSlug": "k3m9x2qa",
            "originalUrl": "https://acme.example/videos/vid123",
            "deepLinkParameters": ["route": "VIDEO_VIEWER", "id": "vid123"], "title": "Check this out",
            "description": "A video from Ana", "utmParameters": ["source": "app", "campaign": "share"], "externalUserId": "user-7",
        ])
    }

    @Test("link creation without a template (9.8): POST /api/sdk/v1/links, camelCase answer with deduplicated")
    func createWithoutTemplate() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/sdk/v1/links", .json(#"{"url":"https://go.acme.app/k3m9x2qa/Ru8vN2kd","shortCode":"Ru8vN2kd","linkId":"e41b6a0c-77d2-4c1f-9a3e-0b5d8c2f6a91","deduplicated":false}"#))
        let created = try await harness.backend.createLink(
            LinkRequest(parameters: ["route": "VIDEO_VIEWER", "id": "vid123"], title: "Check this out"), context: harness.context)
        #expect(created == CreatedLink(url: url("https://go.acme.app/k3m9x2qa/Ru8vN2kd"), shortCode: "Ru8vN2kd", linkID: "e41b6a0c-77d2-4c1f-9a3e-0b5d8c2f6a91", deduplicated: false))
        #expect(try json(harness.transport.requests.first?.body) == [
            "deepLinkParameters": ["route": "VIDEO_VIEWER", "id": "vid123"], "title": "Check this out",
        ])
    }

    @Test("link creation needs an API key, checked before any request; a template needs the web URL")
    func createLinkPreconditions() async throws {
        let keyless = try Harness(apiKey: nil)
        let error = await #expect(throws: DeepLinkError.self) {
            try await keyless.backend.createLink(LinkRequest(title: "x"), context: keyless.context)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(keyless.transport.requests.isEmpty)
        let keyed = try Harness()
        let templateError = await #expect(throws: DeepLinkError.self) {
            try await keyed.backend.createLink(LinkRequest(templateID: "t"), context: keyed.context)
        }
        #expect(templateError?.code == .invalidArgument)
        #expect(keyed.transport.requests.isEmpty)
    }

    @Test("Core without the Cloud endpoint: 404 route-not-found is a server error")
    func coreWithoutCloudEndpoint() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/sdk/v1/links", .json(#"{"message":"Route POST:/api/sdk/v1/links not found","error":"Not Found","statusCode":404}"#, status: 404))
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.createLink(LinkRequest(title: "x"), context: harness.context)
        }
        #expect(error?.code == .server(status: 404))
    }
}

@Suite("LinkForty configuration")
struct LinkFortyConfigurationTests {
    @Test("invalid configurations are rejected with the field named", arguments: [
        ("http://go.acme.app", 168, "lf", "baseURL"), ("https://go.acme.app", 0, "lf", "attributionWindowHours"),
        ("https://go.acme.app", 2161, "lf", "attributionWindowHours"), ("https://go.acme.app", 168, "", "apiKey"),
    ])
    func invalid(_ base: String, _ hours: Int, _ key: String, _ field: String) {
        let error = #expect(throws: DeepLinkError.self) {
            try LinkFortyBackend.Configuration(baseURL: url(base), apiKey: key, attributionWindowHours: hours)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.hasPrefix(field) == true)
    }

    @Test("loopback http is allowed; the link hosts default to the base host; the key is never printed")
    func valid() throws {
        let configuration = try LinkFortyBackend.Configuration(baseURL: url("http://127.0.0.1:8642"), apiKey: "lf_secret_key")
        #expect(configuration.linkDomains == ["127.0.0.1"])
        #expect(!configuration.description.contains("lf_secret_key"))
        #expect(LinkFortyBackend(configuration).secrets == ["lf_secret_key"])
    }
}
