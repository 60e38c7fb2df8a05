import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayTesting
import Testing

@testable import LinkRelayDynalinks

func url(_ string: String) -> URL {
    guard let url = URL(string: string) else { preconditionFailure("Not a URL: \(string)") }
    return url
}

func json(_ data: Data?) throws -> [String: JSONValue] {
    try JSONDecoder().decode([String: JSONValue].self, from: try #require(data))
}

let clientKey = "3b9f0c2e7a1d4e68b5c0f9a2d7e41c83"

/// The reference's device: an iPhone 15 on iOS 17.4.1 in New York.
let iPhone = DeviceInfo(
    screen: .init(width: 393, height: 852, scale: 3), osName: "iOS", osVersion: "17.4.1", deviceModel: "iPhone15,2",
    timeZoneIdentifier: "America/New_York", preferredLanguages: ["en-US", "es-US"], regionCode: "US",
    calendarIdentifier: "gregorian", appVersion: "2.3.0", appBuild: "412",
    vendorID: UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF"))

struct Harness {
    let transport = StubTransport()
    let backend: DynalinksBackend
    let context: BackendContext

    init(baseURL: String = "https://dynalinks.app/api/v1", device: DeviceInfo = iPhone, allowSimulator: Bool = false) throws {
        backend = DynalinksBackend(
            try .init(apiKey: clientKey, baseURL: url(baseURL), linkDomains: ["acme.dynalinks.app"], allowSimulator: allowSimulator))
        context = BackendContext(transport: transport, clock: ManualClock(), device: device)
    }
}

let fullLink = #"""
    {"id":"c2f1a7e4-5b3d-4e9a-8f06-1d2c3b4a5e6f","name":"Spring shoes","path":"/product/shoes",
     "shortened_path":"Ab3xQ9","url":"https://acme.example/product/shoes?color=red&size=42",
     "full_url":"https://acme.dynalinks.app/product/shoes","deep_link_value":"/product/shoes",
     "ios_deferred_deep_linking_enabled":true,
     "android_fallback_url":"https://play.google.com/store/apps/details?id=com.acme.shop",
     "ios_fallback_url":"https://apps.apple.com/app/id1234567890","enable_forced_redirect":false,
     "social_title":"Spring sale","social_description":"Red shoes, 20% off",
     "social_image_url":"https://acme.example/og/shoes.png","clicks":318,
     "referrer":"utm_source=facebook&utm_medium=paid&utm_campaign=spring",
     "provider_token":"118923002","campaign_token":"spring_fb"}
    """#

@Suite("Dynalinks wire protocol: fingerprint match (D1)")
struct DynalinksMatchTests {
    @Test("high-confidence match (7.1): URL, headers, body, and every field mapped")
    func highConfidence() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/v1/fingerprints/match", .json(#"{"matched":true,"confidence":"high","match_score":92,"link":"# + fullLink + "}"))
        let match = try await harness.backend.matchInstall(context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.url.absoluteString == "https://dynalinks.app/api/v1/fingerprints/match")
        #expect(request.method == .post)
        #expect(request.headers["Authorization"] == "Bearer \(clientKey)")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(request.headers["User-Agent"]?.hasPrefix("DynalinksSDK-") == true)
        #expect(request.headers["User-Agent"]?.contains("LinkRelay/\(LinkRelayVersion.string)") == true)
        #expect(
            try json(request.body) == [
                "fingerprint": [
                    "screen_width": 393, "screen_height": 852, "device_pixel_ratio": 3, "os_version": "17.4.1",
                    "timezone": "America/New_York", "calendar": "gregory", "language": "en-US", "languages": ["en-US", "es-US"],
                    "country_code": "US", "device_model": "iPhone15,2", "idfv": "6F9619FF-8B86-D011-B42D-00C04FC964FF",
                    "app_version": "2.3.0", "app_build": "412", "simulator": false,
                ],
                "platform": "ios",
            ])
        #expect(match.attribution.isAttributed)
        #expect(match.attribution.confidence == .init(score: 92, level: .high))
        #expect(match.attribution.method == .fingerprint)
        let link = try #require(match.link)
        #expect(link.origin == .deferred)
        #expect(link.url == url("https://acme.dynalinks.app/product/shoes"))
        #expect(link.pathSegments == ["product", "shoes"])
        #expect(link.destination == url("https://acme.example/product/shoes?color=red&size=42"))
        #expect(link.parameters == ["color": "red", "size": "42"])
        #expect(link.utm == UTMParameters(source: "facebook", medium: "paid", campaign: "spring"))
        #expect(link.shortCode == "Ab3xQ9")
        #expect(link.linkID == "c2f1a7e4-5b3d-4e9a-8f06-1d2c3b4a5e6f")
        #expect(link.campaign == Campaign(id: "spring_fb", name: "Spring shoes", source: "facebook"))
        #expect(link.metadata["provider_token"] == "118923002")
        #expect(link.metadata["clicks"] == 318)
        #expect(link.metadata["ios_fallback_url"] == "https://apps.apple.com/app/id1234567890")
    }

    @Test("no match (7.2): {\"matched\": false}, alone or with nulls, is organic")
    func noMatch() async throws {
        for body in [#"{"matched":false}"#, #"{"matched":false,"confidence":null,"match_score":null,"link":null}"#] {
            let harness = try Harness()
            harness.transport.stub(.post, "/api/v1/fingerprints/match", .json(body))
            let match = try await harness.backend.matchInstall(context: harness.context)
            #expect(match.link == nil)
            #expect(!match.attribution.isAttributed)
        }
    }

    @Test("medium confidence, minimal link (7.3)")
    func mediumMinimal() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/v1/fingerprints/match",
            .json(
                #"{"matched":true,"confidence":"medium","match_score":55,"link":{"id":"7e0d3b9a-4c21-4f6e-9b8d-2a5c1e7f0d34","path":"/promo"}}"#
            ))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.attribution.confidence == .init(score: 55, level: .medium))
        // Without full_url, the link's URL is its path on the project's host.
        let link = try #require(match.link)
        #expect(link.url == url("https://acme.dynalinks.app/promo"))
        #expect(link.pathSegments == ["promo"])
        #expect(link.linkID == "7e0d3b9a-4c21-4f6e-9b8d-2a5c1e7f0d34")
    }

    @Test(
        "a match_score outside 0…100, even past Int's range, is clamped, not a crash (found by fuzzing)",
        arguments: [
            ("92555555555555555555555", 100), ("-1e300", 0), ("1e308", 100), ("250", 100), ("-3", 0),
        ])
    func scoreOutOfRange(_ score: String, _ expected: Int) async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/v1/fingerprints/match",
            .json(#"{"matched":true,"confidence":"high","match_score":"# + score + #","link":{"id":"x","path":"/promo"}}"#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.attribution.confidence == .init(score: expected, level: .high))
    }

    @Test("unknown enum strings and bad URL fields do not fail the answer; a link without id does; missing matched does")
    func leniency() async throws {
        let lenient = try Harness()
        lenient.transport.stub(
            .post, "/api/v1/fingerprints/match",
            .json(
                #"{"matched":true,"confidence":"very_high","match_score":87.5,"link":{"id":"x","url":42,"full_url":"https://acme.dynalinks.app/p","clicks":"many"}}"#
            ))
        let match = try await lenient.backend.matchInstall(context: lenient.context)
        #expect(match.attribution.confidence == .init(score: 88))
        #expect(match.link?.destination == nil)
        #expect(match.link?.linkID == "x")
        for body in [#"{"matched":true,"link":{"path":"/x"}}"#, #"{}"#, #"{"confidence":"high"}"#, "not json"] {
            let harness = try Harness()
            harness.transport.stub(.post, "/api/v1/fingerprints/match", .json(body))
            let error = await #expect(throws: DeepLinkError.self) { try await harness.backend.matchInstall(context: harness.context) }
            #expect(error?.code == .decoding, "\(body)")
        }
    }

    @Test("a match whose link carries only its id is attributed without a link, with the link's id; never organic (§3)")
    func linkWithOnlyID() async throws {
        let answer = #"{"matched":true,"confidence":"high","match_score":91,"link":{"id":"c2f1a7e4-5b3d-4e9a-8f06-1d2c3b4a5e6f"}}"#
        let harness = try Harness()
        harness.transport.stub(.post, "/api/v1/fingerprints/match", .json(answer))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.link == nil)
        #expect(match.attribution.isAttributed)
        #expect(match.attribution.linkID == "c2f1a7e4-5b3d-4e9a-8f06-1d2c3b4a5e6f")

        let transport = StubTransport()
        transport.stub(.post, "/api/v1/fingerprints/match", .json(answer))
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: ManualClock(), transport: transport)
        configuration.deviceInfo = StaticDeviceInfo(iPhone)
        let client = DeepLinkClient(backend: harness.backend, configuration: configuration)
        await client.start()
        let outcome = await client.installOutcome()
        #expect(outcome == .attributedWithoutLink(match.attribution))
        await client.shutdown()
    }

    @Test(
        "a URL field that is not an absolute URL counts as absent (§3.2, K17): the next one is used and the install keeps its link",
        arguments: [
            "not a url", "/product/shoes", "acme.dynalinks.app/product/shoes", "https://", "https:///x", "",
        ])
    func relativeURLFields(_ bad: String) async throws {
        let quoted = String(decoding: try JSONEncoder().encode(bad), as: UTF8.self)
        let withURL = try Harness()
        withURL.transport.stub(
            .post, "/api/v1/fingerprints/match",
            .json(
                #"{"matched":true,"confidence":"high","match_score":90,"link":{"id":"x","full_url":"# + quoted
                    + #","url":"https://acme.example/product/shoes?color=red"}}"#))
        let link = try #require(try await withURL.backend.matchInstall(context: withURL.context).link)
        #expect(link.url == url("https://acme.example/product/shoes?color=red"))
        #expect(link.parameters["color"] == "red")

        let withPath = try Harness()
        withPath.transport.stub(
            .post, "/api/v1/fingerprints/match",
            .json(
                #"{"matched":true,"confidence":"high","match_score":90,"link":{"id":"x","path":"/promo","full_url":"# + quoted + #","url":"#
                    + quoted + #"}}"#))
        let onProjectHost = try #require(try await withPath.backend.matchInstall(context: withPath.context).link)
        #expect(onProjectHost.url == url("https://acme.dynalinks.app/promo"))
        #expect(onProjectHost.destination == nil)
    }

    @Test("errors (7.7): 401 and 429 with fixed messages, others with Dynalinks' text; 429 and 5xx retryable")
    func errors() async throws {
        let cases: [(Int, String, String, Bool)] = [
            (401, #"{"error":"something else"}"#, "client API key", false),
            (429, #"{"error":"Rate limit exceeded"}"#, "rate limit", true),
            (404, #"{"error":"Not found"}"#, "Not found", false),
            (400, #"{"message":"fingerprint is required"}"#, "fingerprint is required", false),
            (500, #"{"error":"Internal server error"}"#, "Internal server error", true),
        ]
        for (status, body, text, retryable) in cases {
            let harness = try Harness()
            harness.transport.stub(.post, "/api/v1/fingerprints/match", .json(body, status: status))
            let error = await #expect(throws: DeepLinkError.self) { try await harness.backend.matchInstall(context: harness.context) }
            #expect(error?.code == (status == 401 ? .unauthorized : .server(status: status)))
            #expect(error?.status == status)
            #expect(error?.message.lowercased().contains(text.lowercased()) == true, "\(status): \(error?.message ?? "")")
            #expect(error?.isRetryable == retryable)
        }
    }

    @Test("on a simulator the match is skipped, without a request, and the error says why; allowSimulator runs it")
    func simulator() async throws {
        var device = iPhone
        device.isSimulator = true
        let skipped = try Harness(device: device)
        let error = await #expect(throws: DeepLinkError.self) { try await skipped.backend.matchInstall(context: skipped.context) }
        #expect(error?.message.contains("simulator") == true)
        #expect(skipped.transport.requests.isEmpty)
        let allowed = try Harness(device: device, allowSimulator: true)
        allowed.transport.stub(.post, "/api/v1/fingerprints/match", .json(#"{"matched":false}"#))
        _ = try await allowed.backend.matchInstall(context: allowed.context)
        #expect(try json(allowed.transport.requests.first?.body)["fingerprint"]?.objectValue?["simulator"] == true)
    }

    // The three answers of Dynalinks' own DeepLinkResultTests (dynalinks-ios-sdk,
    // Tests/DynalinksSDKTests), and what its SDK reads from them.

    @Test("Dynalinks' own matched answer: the link id, score 85 high, the url's query as parameters")
    func sdkMatchedAnswer() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/v1/fingerprints/match",
            .json(
                #"{"matched":true,"confidence":"high","match_score":85,"link":{"id":"abc-123","name":"Product Link","path":"/product/shoes","url":"https://example.com/product/shoes?ref=campaign","full_url":"https://app.dynalinks.app/product/shoes","deep_link_value":"/product/shoes","ios_deferred_deep_linking_enabled":true}}"#
            ))
        let match = try await harness.backend.matchInstall(context: harness.context)
        let link = try #require(match.link)
        #expect(match.attribution.isAttributed)
        #expect(match.attribution.linkID == "abc-123")
        #expect(match.attribution.confidence?.score == 85)
        #expect(match.attribution.confidence?.level == .high)
        #expect(link.linkID == "abc-123")
        #expect(link.parameters["ref"] == "campaign")
        #expect(link.origin == .deferred)
    }

    @Test("Dynalinks' own unmatched answer ({\"matched\": false}) is organic: no link, no confidence")
    func sdkUnmatchedAnswer() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/v1/fingerprints/match", .json(#"{"matched":false}"#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.link == nil)
        #expect(!match.attribution.isAttributed)
        #expect(match.attribution.confidence == nil)
    }

    @Test("Dynalinks' own medium answer (score 45, a link with only id and path) is a match with that link")
    func sdkMediumAnswer() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/v1/fingerprints/match",
            .json(#"{"matched":true,"confidence":"medium","match_score":45,"link":{"id":"xyz-789","path":"/promo"}}"#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.attribution.isAttributed)
        #expect(match.attribution.confidence?.score == 45)
        #expect(match.attribution.confidence?.level == .medium)
        #expect(match.attribution.linkID == "xyz-789")
        let link = try #require(match.link)
        #expect(link.path == "/promo")
    }
}

extension JSONValue {
    var objectValue: [String: JSONValue]? {
        if case .object(let object) = self { return object }
        return nil
    }
}

@Suite("Dynalinks fingerprint encoding")
struct DynalinksFingerprintTests {
    @Test(
        "OS versions have exactly three parts",
        arguments: [("17", "17.0.0"), ("17.4", "17.4.0"), ("17.4.1", "17.4.1"), ("17.4.1.2", "17.4.1")])
    func versions(_ raw: String, _ expected: String) {
        #expect(DynalinksMapping.threePartVersion(raw) == expected)
    }

    @Test(
        "calendars have their BCP-47 / Intl names",
        arguments: [
            ("gregorian", "gregory"), ("buddhist", "buddhist"), ("islamicCivil", "islamic-civil"), ("islamicUmmAlQura", "islamic-umalqura"),
            ("ethiopicAmeteMihret", "ethiopic"), ("ethiopicAmeteAlem", "ethioaa"), ("republicOfChina", "roc"), ("iso8601", "iso8601"),
            ("somethingNew", "gregory"),
        ])
    func calendars(_ identifier: String, _ name: String) {
        #expect(DynalinksMapping.calendarName(identifier) == name)
    }

    @Test("the screen is in points, not pixels; unknown values are omitted, never null or invented")
    func pointsAndOmissions() throws {
        let fingerprint = DynalinksMapping.fingerprint(iPhone)
        #expect(fingerprint.screenWidth == 393)
        #expect(fingerprint.screenHeight == 852)
        let linux = DeviceInfo(osName: "Linux", osVersion: "6.1", timeZoneIdentifier: "Etc/UTC", preferredLanguages: [])
        let body = try JSONEncoder().encode(DynalinksMatchRequest(fingerprint: DynalinksMapping.fingerprint(linux)))
        let object = try json(body)["fingerprint"]?.objectValue ?? [:]
        #expect(Set(object.keys) == ["os_version", "timezone", "simulator"])
        #expect(object["os_version"] == "6.1.0")
        #expect(!String(decoding: body, as: UTF8.self).contains("null"))
    }

    @Test("a language with an underscore is sent with a hyphen")
    func hyphen() {
        var device = iPhone
        device.preferredLanguages = ["zh_Hans_CN", "en-US"]
        #expect(DynalinksMapping.fingerprint(device).language == "zh-Hans-CN")
    }
}

@Suite("Dynalinks wire protocol: attribution (D2)")
struct DynalinksAttributeTests {
    @Test("known link (7.4): the exact URL, no confidence, the clicked URL's query kept")
    func knownLink() async throws {
        let harness = try Harness(baseURL: "https://dynalinks.app/api/v1/")
        harness.transport.stub(
            .post, "/api/v1/links/attribute",
            .json(
                #"""
                {"matched":true,"link":{"id":"c2f1a7e4-5b3d-4e9a-8f06-1d2c3b4a5e6f","name":"Spring shoes",
                 "path":"/product/shoes","deep_link_value":"/product/shoes",
                 "url":"https://acme.example/product/shoes?color=red&size=42","full_url":"https://acme.dynalinks.app/product/shoes"}}
                """#))
        let opened = url("https://acme.dynalinks.app/product/shoes?ref=email#top")
        let link = try await harness.backend.resolve(opened, context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.url.absoluteString == "https://dynalinks.app/api/v1/links/attribute")
        #expect(try json(request.body) == ["url": .string(opened.absoluteString), "platform": "ios"])
        #expect(link.url == opened)
        #expect(link.origin == .universalLink)
        #expect(link.resolution == .server)
        #expect(link.pathSegments == ["product", "shoes"])
        #expect(link.parameters == ["ref": "email", "color": "red", "size": "42"])
        #expect(link.destination == url("https://acme.example/product/shoes?color=red&size=42"))
    }

    @Test("unknown path (7.5): {\"matched\": false} is notFound, so the client falls back locally")
    func unknownLink() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/v1/links/attribute", .json(#"{"matched":false}"#))
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.resolve(url("https://acme.dynalinks.app/does-not-exist"), context: harness.context)
        }
        #expect(error?.code == .notFound)
    }

    @Test("unnamed link (7.6): the destination from url, no route, the social title kept")
    func unnamedLink() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/v1/links/attribute",
            .json(
                #"{"matched":true,"link":{"id":"f04c9e21-6d7a-4b3e-8c15-9a2e7b0d5c63","url":"https://acme.example/item?id=7","deep_link_value":null,"social_title":"Item 7","enable_forced_redirect":true}}"#
            ))
        let link = try await harness.backend.resolve(
            url("https://acme.dynalinks.app/?link=https%3A%2F%2Facme.example%2Fitem%3Fid%3D7&ibi=com.acme.shop&st=Item%207&efr=true"),
            context: harness.context)
        #expect(link.destination == url("https://acme.example/item?id=7"))
        #expect(link.parameters["id"] == "7")
        #expect(link.parameters["ibi"] == "com.acme.shop")
        #expect(link.metadata["social_title"] == "Item 7")
        #expect(link.metadata["enable_forced_redirect"] == true)
    }

    @Test("a deep_link_value that is a URL is the destination and the route")
    func deepLinkValueURL() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .post, "/api/v1/links/attribute",
            .json(#"{"matched":true,"link":{"id":"1","deep_link_value":"acmeshop://cart/checkout","url":"https://acme.example/cart"}}"#))
        let link = try await harness.backend.resolve(url("https://acme.dynalinks.app/cart"), context: harness.context)
        #expect(link.destination == url("acmeshop://cart/checkout"))
        #expect(link.pathSegments == ["cart", "checkout"])
    }

    @Test("configuration: key required, https base, link domains named; the key never printed; no events or link creation")
    func configuration() throws {
        for (make, field) in [
            ({ try DynalinksBackend.Configuration(apiKey: "", linkDomains: ["a.dynalinks.app"]) }, "apiKey"),
            (
                { try DynalinksBackend.Configuration(apiKey: "k", baseURL: url("http://dynalinks.app/api/v1"), linkDomains: ["a"]) },
                "baseURL"
            ),
            ({ try DynalinksBackend.Configuration(apiKey: "k", linkDomains: []) }, "linkDomains"),
        ] as [(() throws -> DynalinksBackend.Configuration, String)] {
            let error = #expect(throws: DeepLinkError.self) { try make() }
            #expect(error?.message.hasPrefix(field) == true)
        }
        let backend = try Harness().backend
        #expect(!backend.configuration.description.contains(clientKey))
        #expect(!((backend as any DeepLinkBackend) is any EventTrackingBackend))
        #expect(!((backend as any DeepLinkBackend) is any LinkCreatingBackend))
        #expect(backend.canHandle(url("https://ACME.dynalinks.app/x")))
        #expect(!backend.canHandle(url("https://other.dynalinks.app/x")))
    }
}
