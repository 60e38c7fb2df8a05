import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire
import LinkRelayTesting
import Testing

@testable import LinkRelayPaylisher

func url(_ string: String) -> URL {
    guard let url = URL(string: string) else { preconditionFailure("Not a URL: \(string)") }
    return url
}

let apiKey = "phc_demo_3Kx9TqLw"

func configuration() throws -> PaylisherBackend.Configuration {
    try .init(
        apiKey: apiKey, appSchemes: ["diyetim", "yourapp", "myapp"], linkDomains: ["example.com", "links.shop.example"],
        authRequiredDestinations: ["wallet"])
}

struct Harness {
    let transport = StubTransport()
    let backend: PaylisherBackend
    var context: BackendContext

    init(device: DeviceInfo = DeviceInfo(
        osName: "iOS", osVersion: "17.4.1", deviceModel: "iPhone15,2", timeZoneIdentifier: "Europe/Istanbul", preferredLanguages: ["tr-TR"])
    ) throws {
        backend = PaylisherBackend(try configuration())
        context = BackendContext(transport: transport, clock: ManualClock(), device: device)
    }
}

@Suite("Paylisher parsing")
struct PaylisherParsingTests {
    @Test("destination, key and path as the reference's table gives them, and where LinkRelay differs", arguments: [
        ("yourapp://campaign/X7kdi5Yq9", "campaign", "X7kdi5Yq9", ["campaign", "X7kdi5Yq9"]),
        // Paylisher's own PaylisherDeepLinkManagerTest: the destination of its test links.
        ("yourapp://test_destination?param=1", "test_destination", nil, ["test_destination"]),
        ("yourapp://pending_test", "pending_test", nil, ["pending_test"]),
        // LinkRelay reads /c/X on the normalised path (the SDK leaves the host out and finds no key).
        ("yourapp://c/abc", "c", "abc", ["c", "abc"]),
        ("yourapp://X7kdi5Yq9lTVOv46uHYtV", "X7kdi5Yq9lTVOv46uHYtV", nil, ["X7kdi5Yq9lTVOv46uHYtV"]),
        ("yourapp://products?keyName=ABC123&jid=journey_xyz&auth=required&source=email", "products", "ABC123", ["products"]),
        ("https://example.com/campaign/X7kdi5Yq9", "campaign/X7kdi5Yq9", "X7kdi5Yq9", ["campaign", "X7kdi5Yq9"]),
        // Paylisher's SDK takes any single segment of 4+ characters as a key; LinkRelay does not.
        ("https://example.com/home", "home", nil, ["home"]),
        ("yourapp://product/1234", "product", nil, ["product", "1234"]),
        ("https://link.paylisher.com/nARvW", "nARvW", "nARvW", ["nARvW"]),
        ("https://link.paylisher.com/abc", "abc", "abc", ["abc"]),
        ("https://example.com/products/a/content?k=K1&utm_source=ig", "products/a/content", "K1", ["products", "a", "content"]),
        ("yourapp://x?key=&k=K3", "x", "K3", ["x"]),
    ] as [(String, String, String?, [String])])
    func table(_ link: String, _ destination: String, _ key: String?, _ segments: [String]) throws {
        let parsed = try PaylisherMapping.parse(url(link), configuration: configuration())
        #expect(parsed.destination == destination)
        #expect(parsed.campaignKey == key)
        #expect(parsed.parsed.pathSegments == segments)
    }

    @Test("an empty destination is an invalid URL", arguments: ["https://example.com/", "myapp:///products", "myapp:"])
    func emptyDestination(_ link: String) throws {
        let error = #expect(throws: DeepLinkError.self) { try PaylisherMapping.parse(url(link), configuration: configuration()) }
        #expect(error?.code == .invalidURL)
    }

    @Test("aliases, auth and the configured gate")
    func aliases() throws {
        let parsed = try PaylisherMapping.parse(
            url("diyetim://wallet?AUTH=x&auth=REQUIRED&campaign=c1&campaign_id=c2&utm_campaign=c3&jid=j"), configuration: configuration())
        #expect(parsed.campaignID == "c1")
        #expect(parsed.journeyID == "j")
        #expect(parsed.requiresAuthentication)
        let gated = try PaylisherMapping.parse(url("diyetim://wallet"), configuration: configuration())
        #expect(gated.requiresAuthentication)
        let open = try PaylisherMapping.parse(url("https://example.com/wallet/details"), configuration: configuration())
        #expect(!open.requiresAuthentication)  // universal links list the full trimmed path
    }

    @Test("canonical traffic source", arguments: [
        (["ig", nil], "instagram"), (["l.instagram.com", nil], "instagram"), (["newsletter", nil], "unknown"),
        ([nil, nil], "direct"), (["newsletter", "instagram"], "instagram"), (["FB", nil], "facebook"), (["t.co", nil], "twitter"),
        (["https://m.x.com/post", nil], "twitter"), (["qr_code", nil], "qr"), (["whatsapp", nil], "direct"), (["  ", "tt"], "tiktok"),
    ] as [([String?], String)])
    func sources(_ signals: [String?], _ token: String) {
        #expect(PaylisherMapping.canonicalSource(signals) == token)
    }

    @Test("claims the app's schemes and domains and the short-link hosts, not bridge pages or other URLs")
    func claims() throws {
        let backend = try Harness().backend
        for claimed in ["diyetim://x", "https://example.com/a", "https://link.paylisher.com/nARvW", "https://link.usepublisher.com/x"] {
            #expect(backend.canHandle(url(claimed)), "\(claimed)")
        }
        for foreign in ["https://link.paylisher.com/nARvW/bridge", "https://other.example/a", "otherapp://x"] {
            #expect(!backend.canHandle(url(foreign)), "\(foreign)")
        }
    }
}

@Suite("Paylisher campaign resolution")
struct PaylisherResolveTests {
    static let campaign13_1 = #"""
        {"_id":{"$oid":"6762d8a1f0c3b24e9a7d5e10"},"teamId":"team_41","projectId":"proj_9","sourceId":"src_3","type":"promotion",
         "title":"Summer Sale","keyName":"X7kdi5Yq9lTVOv46uHYtV","webUrl":"https://diyetim.example.com/sale",
         "iosUrl":"https://apps.apple.com/app/id1234567890","androidUrl":"https://play.google.com/store/apps/details?id=com.diyetim",
         "fallbackUrl":"https://diyetim.example.com","scheme":"diyetim://products/42","iosUniversalUrl":"https://link.diyetim.example.com/products/42",
         "webhookUrl":"","jid":"jrn_7f3a91","metaData":{"discount":"50%","tier":2},
         "createdAt":{"$date":"2026-06-01T08:00:00.000Z"},"updatedAt":{"$date":"2026-07-01T08:00:00.000Z"},"__v":0}
        """#

    @Test("custom-scheme campaign link (13.1): resolved at the campaign API, no auth header, every field kept")
    func campaignLink() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/campaign/resolve/X7kdi5Yq9lTVOv46uHYtV", .json(Self.campaign13_1))
        let opened = url("diyetim://products/42?keyName=X7kdi5Yq9lTVOv46uHYtV&jid=jrn_7f3a91&utm_source=ig&utm_medium=paid&campaign=summer25")
        let link = try await harness.backend.resolve(opened, context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.url.absoluteString == "https://api.paylisher.com/campaign/resolve/X7kdi5Yq9lTVOv46uHYtV")
        #expect(request.headers.fields.isEmpty)
        #expect(link.resolution == .server)
        #expect(link.pathSegments == ["products", "42"])
        #expect(link.destination == url("diyetim://products/42"))
        #expect(link.metadata["resolved_destination"] == "products")
        #expect(link.campaign == Campaign(id: "summer25", key: "X7kdi5Yq9lTVOv46uHYtV", name: "Summer Sale", journeyID: "jrn_7f3a91", source: "instagram"))
        #expect(link.utm == UTMParameters(source: "ig", medium: "paid"))
        guard case .object(let campaign)? = link.metadata["campaign"] else {
            Issue.record("no campaign metadata")
            return
        }
        #expect(campaign["_id"] == "6762d8a1f0c3b24e9a7d5e10")
        #expect(campaign["createdAt"] == "2026-06-01T08:00:00.000Z")
        #expect(campaign["meta_tier"] == 2)
        #expect(campaign["__v"] == 0)
    }

    @Test("short link (13.2): resolved on its own host; the route comes from the campaign's scheme")
    func shortLink() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/resolve/nARvW", .json(#"{"keyName":"nARvW","title":"Profile promo","scheme":"diyetim://profile","iosUniversalUrl":"https://studio.paylisher.com/profile","jid":"jrn_b20c"}"#))
        let link = try await harness.backend.resolve(url("https://link.paylisher.com/nARvW"), context: harness.context)
        #expect(harness.transport.requests.first?.url.absoluteString == "https://link.paylisher.com/resolve/nARvW")
        #expect(link.destination == url("diyetim://profile"))
        #expect(link.metadata["resolved_destination"] == "profile")
        #expect(link.shortCode == "nARvW")
        #expect(link.campaign?.journeyID == "jrn_b20c")
    }

    @Test("resolution failure (13.3): a 404 is notFound, so the client delivers the link parsed on the device")
    func notFound() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/campaign/resolve/home", .json(#"{"error":"Campaign not found","statusCode":404}"#, status: 404))
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.resolve(url("https://links.shop.example/campaign/home"), context: harness.context)
        }
        #expect(error?.code == .notFound)
    }

    @Test("a link without a key is delivered without a lookup")
    func noKey() async throws {
        let harness = try Harness()
        let link = try await harness.backend.resolve(url("https://example.com/home"), context: harness.context)
        #expect(harness.transport.requests.isEmpty)
        #expect(link.resolution == .local(.onDevice))
        #expect(link.pathSegments == ["home"])
    }

    @Test("a string _id, a string __v and plain dates do not fail the payload")
    func extendedJSONLeniency() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/campaign/resolve/K1", .json(#"{"_id":"abc","__v":"3","createdAt":"2026-06-01","adId":{"$oid":"x9"},"scheme":"https://shop.example/p/9"}"#))
        let link = try await harness.backend.resolve(url("diyetim://p?k=K1"), context: harness.context)
        guard case .object(let campaign)? = link.metadata["campaign"] else {
            Issue.record("no campaign metadata")
            return
        }
        #expect(campaign["_id"] == "abc")
        #expect(campaign["__v"] == 3)
        #expect(campaign["adId"] == "x9")
        #expect(link.metadata["resolved_destination"] == "9")
    }

    @Test("keys with spaces or slashes are one encoded path segment")
    func keyEncoding() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/campaign/resolve/a b/c", .json("{}"))
        _ = try await harness.backend.resolve(url("diyetim://p?k=a%20b%2Fc"), context: harness.context)
        #expect(harness.transport.requests.first?.url.absoluteString == "https://api.paylisher.com/campaign/resolve/a%20b%2Fc")
    }
}

@Suite("Paylisher deferred match")
struct PaylisherDeferredTests {
    @Test("fingerprints match the reference's values", arguments: [
        ("iPhone15,2", "Europe/Istanbul", "tr-TR", "aabeebd3dcfbcad8006c62b8f7832154c39b7f81d461d1cd53ae5176173489cd"),
        ("iPhone16,1", "Europe/Berlin", "de-DE", "6fae7341e5cd0eab163aff4edfa927ef27802fbd5136dfe17f7f01b871c97bfb"),
        ("iPad13,4", "America/New_York", "en-US", "a7c1d1cf7c809042f5b000d7b9ece2b676928fbe0a131500af144d1b3b2d0c9f"),
    ])
    func fingerprints(_ model: String, _ zone: String, _ language: String, _ expected: String) {
        let device = DeviceInfo(osName: "iOS", osVersion: "17.0", deviceModel: model, timeZoneIdentifier: zone, preferredLanguages: [language])
        #expect(PaylisherMapping.fingerprint(device) == expected)
    }

    @Test("the family the app supplies (UIDevice.model) is the one hashed; without it, the model's family")
    func suppliedFamily() {
        // A model identifier the SDK never sees, with the family UIDevice reports: the family wins.
        var device = DeviceInfo(osName: "iOS", osVersion: "17.0", deviceModel: "Mac14,2", timeZoneIdentifier: "Europe/Istanbul", preferredLanguages: ["tr-TR"])
        device.deviceFamily = "iPhone"
        #expect(PaylisherMapping.fingerprint(device) == "aabeebd3dcfbcad8006c62b8f7832154c39b7f81d461d1cd53ae5176173489cd")
        device.deviceFamily = "iPad"
        #expect(PaylisherMapping.fingerprint(device) != "aabeebd3dcfbcad8006c62b8f7832154c39b7f81d461d1cd53ae5176173489cd")
        #expect(DeviceInfo.family(ofModel: "iPod9,1") == "iPod touch")
        #expect(DeviceInfo.family(ofModel: nil) == nil)
    }

    @Test("match (13.4): request, headers, enriched URL, attribution from the answer")
    func match() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/v1/deferred-deeplink", .json(#"""
            {"status":"match","url":"diyetim://products/42?utm_source=instagram&color=red","campaign_key":"X7kdi5Yq9lTVOv46uHYtV",
             "jid":"jrn_7f3a91","click_timestamp":"2026-07-22T08:51:09.000Z","attribution_window":1800,
             "metadata":{"utm_source":"instagram","placement":"story"},"attribution_method":"fingerprint","confidence":0.3}
            """#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.url.absoluteString == "https://link.paylisher.com/v1/deferred-deeplink?fingerprint=aabeebd3dcfbcad8006c62b8f7832154c39b7f81d461d1cd53ae5176173489cd")
        #expect(request.headers["Authorization"] == "Bearer \(apiKey)")
        #expect(request.headers["X-SDK-Version"] == "paylisher-ios/1.8.9")
        #expect(request.headers["X-Device-Platform"] == "ios")
        #expect(request.headers["X-IDFA"] == nil)
        let link = try #require(match.link)
        #expect(link.url == url("diyetim://products/42?utm_source=instagram&color=red&keyName=X7kdi5Yq9lTVOv46uHYtV&jid=jrn_7f3a91"))
        #expect(link.origin == .deferred)
        #expect(link.parameters["color"] == "red")
        #expect(link.campaign?.key == "X7kdi5Yq9lTVOv46uHYtV")
        #expect(match.attribution.confidence == .init(score: 30))
        #expect(match.attribution.method == .fingerprint)
        #expect(match.attribution.clickedAt == ISO8601Timestamp.parse("2026-07-22T08:51:09.000Z"))
        #expect(link.clickedAt == Date(timeIntervalSince1970: 1_784_710_269))
    }

    @Test("an attribution_window that is not a whole number of seconds in Int's range is left out, not a crash", arguments: [
        ("1800", 1800), ("1800.0", 1800), ("1e300", nil), ("-1e300", nil), ("12.5", nil), ("\"1800\"", nil),
    ] as [(String, Int?)])
    func attributionWindow(_ window: String, _ expected: Int?) async throws {
        let harness = try Harness()
        harness.transport.stub(
            .get, "/v1/deferred-deeplink",
            .json(#"{"status":"match","url":"diyetim://products/42","campaign_key":"X","attribution_window":"# + window + "}"))
        let match = try await harness.backend.matchInstall(context: harness.context)
        let deferred = try #require(match.link?.metadata["deferred"])
        guard case .object(let answer) = deferred else {
            Issue.record("no deferred answer in \(deferred)")
            return
        }
        #expect(answer["attribution_window_seconds"] == expected.map { .int($0) })
    }

    @Test("camelCase answers decode the same; an existing keyName is not added twice")
    func camelCase() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/v1/deferred-deeplink", .json(#"{"status":"match","url":"diyetim://p?k=OWN","campaignKey":"X","attributionWindow":1800,"attributionMethod":"idfa","confidence":0.95}"#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.link?.url == url("diyetim://p?k=OWN"))
        #expect(match.attribution.method == .deviceIdentifier)
        #expect(match.attribution.confidence?.level == .high)
    }

    @Test("no match (13.5) is organic; an error (13.6) is a server error; a missing status is a decoding error")
    func outcomes() async throws {
        let noMatch = try Harness()
        noMatch.transport.stub(.get, "/v1/deferred-deeplink", .json(#"{"status":"no_match","message":"No deferred deeplink found for this device"}"#))
        let organic = try await noMatch.backend.matchInstall(context: noMatch.context)
        #expect(organic.link == nil)
        #expect(!organic.attribution.isAttributed)
        let failing = try Harness()
        failing.transport.stub(.get, "/v1/deferred-deeplink", .json(#"{"status":"error","error_code":"INTERNAL_ERROR"}"#, status: 500))
        let error = await #expect(throws: DeepLinkError.self) { try await failing.backend.matchInstall(context: failing.context) }
        #expect(error?.code == .server(status: 500))
        let broken = try Harness()
        broken.transport.stub(.get, "/v1/deferred-deeplink", .json(#"{"url":"diyetim://p"}"#))
        let decoding = await #expect(throws: DeepLinkError.self) { try await broken.backend.matchInstall(context: broken.context) }
        #expect(decoding?.code == .decoding)
    }

    @Test("an app-supplied advertising id goes in the query and the X-IDFA header")
    func idfa() async throws {
        var device = DeviceInfo(osName: "iOS", osVersion: "17", deviceModel: "iPhone15,2", timeZoneIdentifier: "Europe/Istanbul", preferredLanguages: ["tr"])
        device.advertisingID = UUID(uuidString: "6D92078A-8246-4BA4-AE5B-76104861E7DC")
        let harness = try Harness(device: device)
        harness.transport.stub(.get, "/v1/deferred-deeplink", .json(#"{"status":"no_match"}"#))
        _ = try await harness.backend.matchInstall(context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.url.query == "fingerprint=aabeebd3dcfbcad8006c62b8f7832154c39b7f81d461d1cd53ae5176173489cd&idfa=6D92078A-8246-4BA4-AE5B-76104861E7DC")
        #expect(request.headers["X-IDFA"] == "6D92078A-8246-4BA4-AE5B-76104861E7DC")
    }
}

@Suite("Paylisher analytics batches")
struct PaylisherBatchTests {
    @Test("track: POST {host}/batch, gzip, api_key, ms timestamps, an upper-case UUIDv7 stable across retries, a stable UUIDv7 distinct_id, the session's campaign")
    func batch() async throws {
        var harness = try Harness()
        let store = InMemoryStore()
        harness.context.storage = BackendStorage(store: store)
        harness.context.sessionAttribution = Campaign(key: "X7kdi5Yq9", journeyID: "jrn_1", source: "instagram")
        harness.transport.stub(.post, "/batch", .status(200))
        let id = UUID()
        let event = ConversionEvent(
            id: id, name: "purchase", properties: ["sku": "A-1", "campaign_key": "from-event"],
            timestamp: Date(timeIntervalSince1970: 1_784_711_643.512), revenue: .init(amount: Decimal(string: "9.5")!, currency: "EUR"))
        try await harness.backend.send(event, context: harness.context)
        try await harness.backend.send(event, context: harness.context)
        let requests = harness.transport.requests
        #expect(requests[0].url.absoluteString == "https://us.i.paylisher.com/batch")
        #expect(requests[0].headers["Content-Encoding"] == "gzip")
        #expect(requests[0].headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(requests[0].headers["Authorization"] == nil)
        let bodies = try requests.map { try JSONDecoder().decode([String: JSONValue].self, from: Gzip.decompress(#require($0.body))) }
        let first = try #require(bodies.first)
        #expect(first["api_key"] == .string(apiKey))
        guard case .array(let batch)? = first["batch"], case .object(let sent)? = batch.first else {
            Issue.record("no batch")
            return
        }
        #expect(sent["event"] == "purchase")
        // A UUIDv7 in upper case (§7): the event's millisecond time first, version 7, the RFC
        // variant; the same for the same event, so a retry carries the same uuid.
        let uuid = try #require(sent["uuid"]?.stringValue)
        #expect(uuid == uuid.uppercased())
        #expect(uuid.hasPrefix("019F891A-8178-7"))
        #expect(UUIDv7Check.isVersion7(uuid, milliseconds: 1_784_711_643_512))
        guard case .array(let again)? = bodies.last?["batch"], case .object(let resent)? = again.first else {
            Issue.record("no second batch")
            return
        }
        #expect(resent["uuid"] == sent["uuid"])
        #expect(sent["uuid"] != .string(id.uuidString.uppercased()))
        #expect(sent["timestamp"] == "2026-07-22T09:14:03.512Z")
        guard case .object(let properties)? = sent["properties"] else {
            Issue.record("no properties")
            return
        }
        #expect(properties["sku"] == "A-1")
        #expect(properties["revenue"] == 9.5)
        #expect(properties["currency"] == "EUR")
        #expect(properties["campaign_key"] == "X7kdi5Yq9")  // the session's attribution wins
        #expect(properties["deeplink_key"] == "X7kdi5Yq9")
        #expect(properties["campaign_source"] == "instagram")
        #expect(properties["jid"] == "jrn_1")
        #expect(properties["$lib"] == "paylisher-ios")
        // The same anonymous distinct_id on every event of the install.
        let ids = bodies.compactMap { body -> JSONValue? in
            if case .array(let batch)? = body["batch"], case .object(let event)? = batch.first { return event["distinct_id"] }
            return nil
        }
        #expect(ids.count == 2 && ids[0] == ids[1])
        #expect(UUIDv7Check.isVersion7(try #require(ids.first?.stringValue), milliseconds: nil))
        #expect(store.keys == ["backend.distinctId"])
    }

    @Test("the batch URL joins as Paylisher's SDK joins it", arguments: [
        ("https://us.i.paylisher.com", "https://us.i.paylisher.com/batch"), ("https://x.com/ingest", "https://x.com/batch"),
        ("https://x.com/ingest/", "https://x.com/ingest/batch"),
    ])
    func batchURL(_ host: String, _ expected: String) {
        #expect(PaylisherEndpoints.batch(host: url(host)).absoluteString == expected)
    }

    @Test("5xx and 3xx are retryable, 413 is left to the client's batching (it halves the batch), another 4xx is not; no session attribution means none stamped")
    func failures() async throws {
        for (status, retryable) in [(503, true), (302, true), (413, false), (400, false)] {
            let harness = try Harness()
            harness.transport.stub(.post, "/batch", .status(status))
            let error = await #expect(throws: DeepLinkError.self) {
                try await harness.backend.send(ConversionEvent(name: "x", timestamp: Date()), context: harness.context)
            }
            #expect(error?.isRetryable == retryable)
        }
        let event = PaylisherMapping.batchEvent(ConversionEvent(name: "x", timestamp: Date()), distinctID: "d", device: .unknown, session: nil)
        #expect(event.properties["campaign_key"] == nil)
        #expect(event.properties["jid"] == nil)
    }
}

/// Reads a UUID string as RFC 9562 lays out a version 7 UUID.
enum UUIDv7Check {
    /// Whether `text` is an upper-case UUIDv7, with `milliseconds` as its time when given.
    static func isVersion7(_ text: String, milliseconds: UInt64?) -> Bool {
        guard text == text.uppercased(), let uuid = UUID(uuidString: text) else { return false }
        let bytes = uuid.uuid
        let time = [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return bytes.6 >> 4 == 7 && bytes.8 >> 6 == 0b10 && (milliseconds.map { $0 == time } ?? true)
    }
}

@Suite("Paylisher event batch answers")
struct PaylisherBatchAnswerTests {
    let event = ConversionEvent(name: "purchase", timestamp: Date(timeIntervalSince1970: 1_800_000_000))

    @Test("a redirect the transport did not follow is a network error (the events are kept); a 400 is the server's")
    func redirectKeepsEvents() async throws {
        let harness = try Harness()
        let path = PaylisherEndpoints.batch(host: harness.backend.configuration.analyticsHost).path
        harness.transport.stub(.post, path, [.status(302), .status(400)])
        let redirect = try await #require(throws: DeepLinkError.self) { try await harness.backend.send([event], context: harness.context) }
        #expect(redirect.code == .network && redirect.status == 302)
        #expect(redirect.message.hasSuffix("(a redirect; the events are kept)"))
        let refused = try await #require(throws: DeepLinkError.self) { try await harness.backend.send([event], context: harness.context) }
        #expect(refused.code == .server(status: 400))
    }
}
