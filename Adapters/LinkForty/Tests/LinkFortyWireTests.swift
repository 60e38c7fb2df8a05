import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayTesting
import Testing

@testable import LinkRelayLinkForty

func url(_ string: String) -> URL {
    guard let url = URL(string: string) else { preconditionFailure("Not a URL: \(string)") }
    return url
}

func json(_ data: Data?) throws -> [String: JSONValue] {
    try JSONDecoder().decode([String: JSONValue].self, from: try #require(data))
}

struct Harness {
    let transport: StubTransport
    let backend: LinkFortyBackend
    let context: BackendContext

    init(
        apiKey: String? = "lf_live_8c1f0e9a2b", baseURL: String = "https://go.acme.app", installID: String? = nil,
        device: DeviceInfo = newYorkPhone
    ) throws {
        let transport = StubTransport()
        self.transport = transport
        backend = LinkFortyBackend(try .init(baseURL: url(baseURL), apiKey: apiKey, appName: "Acme Shop"))
        context = BackendContext(transport: transport, clock: ManualClock(), device: device, installID: installID)
    }

    init(transport: StubTransport, backend: LinkFortyBackend, context: BackendContext) {
        self.transport = transport
        self.backend = backend
        self.context = context
    }
}

@Suite("LinkForty wire protocol: install (E1)")
struct LinkFortyInstallTests {
    @Test(
        "the install request is exactly the reference's: path, headers, camelCase body without nulls; LinkRelay names itself as LinkForty's later SDKs do (§12.6)"
    )
    func installRequest() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/sdk/v1/install",
            .json(#"{"installId":"x","attributed":false,"confidenceScore":0,"matchedFactors":[],"deepLinkData":{}}"#))
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
                "appVersion": "2.3.0", "attributionWindowHours": 168, "sdkName": "linkrelay",
                "sdkVersion": .string(LinkRelayVersion.string),
            ])
    }

    @Test("the User-Agent's app name: the configured one, else the device's (an app or a test can supply it), else App")
    func appNameFromDevice() async throws {
        var device = newYorkPhone
        device.appName = "Acme Outlet"
        for (configured, device, expected) in [
            ("Acme Shop", device, "Acme Shop"), (nil, device, "Acme Outlet"), (nil, newYorkPhone, "App"),
        ] as [(String?, DeviceInfo, String)] {
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
        harness.transport.stub(
            .post, "/api/sdk/v1/install", .json(#"{"installId":"x","attributed":false,"matchedFactors":[],"deepLinkData":{}}"#))
        _ = try await harness.backend.matchInstall(context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.headers["Authorization"] == nil)
        let body = try json(request.body)
        #expect(
            body.keys.sorted() == [
                "attributionWindowHours", "deviceId", "platform", "platformVersion", "sdkName", "sdkVersion", "timezone", "userAgent",
            ])
        #expect(body["deviceId"] == "6F9619FF-8B86-D011-B42D-00C04FC964FF")
        #expect(!String(decoding: request.body ?? Data(), as: UTF8.self).contains("null"))
    }

    @Test("attributed (9.1): the deferred link, its parameters, UTM and millisecond clickedAt")
    func attributed() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/sdk/v1/install",
            .json(
                #"""
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

    @Test(
        "an install answer without installId is a decoding error (§12.4), retried on a later launch; never organic",
        arguments: [
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
        harness.transport.stub(
            .post, "/api/sdk/v1/install",
            .json(
                #"{"installId":"a8d0e6b1-04c2-4f7e-b3a9-55e1c2d7f920","attributed":false,"confidenceScore":0,"matchedFactors":[],"deepLinkData":{}}"#
            ))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.link == nil)
        #expect(match.attribution.isAttributed == false)
        #expect(match.attribution.installID == "a8d0e6b1-04c2-4f7e-b3a9-55e1c2d7f920")
        #expect(match.attribution.method == .none)
        #expect(match.attribution.confidence?.score == 0)
    }

    @Test(
        "a confidenceScore outside 0…100, even past Int's range, is clamped, not a crash",
        arguments: [
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
        harness.transport.stub(
            .post, "/api/sdk/v1/install",
            .json(
                #"""
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
        harness.transport.stub(
            .post, "/api/sdk/v1/install",
            .json(#"{"statusCode":500,"error":"Internal Server Error","message":"[ invalid_type deviceId ]"}"#, status: 500))
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

@Suite("LinkForty configuration")
struct LinkFortyConfigurationTests {
    @Test(
        "invalid configurations are rejected with the field named",
        arguments: [
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
