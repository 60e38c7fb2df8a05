import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayTesting
import LinkRelayWire
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

    init(
        device: DeviceInfo = DeviceInfo(
            osName: "iOS", osVersion: "17.4.1", deviceModel: "iPhone15,2", timeZoneIdentifier: "Europe/Istanbul",
            preferredLanguages: ["tr-TR"])
    ) throws {
        backend = PaylisherBackend(try configuration())
        context = BackendContext(transport: transport, clock: ManualClock(), device: device)
    }
}

@Suite("Paylisher parsing")
struct PaylisherParsingTests {
    @Test(
        "destination, key and path as the reference's table gives them, and where LinkRelay differs",
        arguments: [
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

    @Test(
        "canonical traffic source",
        arguments: [
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
        let opened = url(
            "diyetim://products/42?keyName=X7kdi5Yq9lTVOv46uHYtV&jid=jrn_7f3a91&utm_source=ig&utm_medium=paid&campaign=summer25")
        let link = try await harness.backend.resolve(opened, context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.url.absoluteString == "https://api.paylisher.com/campaign/resolve/X7kdi5Yq9lTVOv46uHYtV")
        #expect(request.headers.fields.isEmpty)
        #expect(link.resolution == .server)
        #expect(link.pathSegments == ["products", "42"])
        #expect(link.destination == url("diyetim://products/42"))
        #expect(link.metadata["resolved_destination"] == "products")
        #expect(
            link.campaign
                == Campaign(id: "summer25", key: "X7kdi5Yq9lTVOv46uHYtV", name: "Summer Sale", journeyID: "jrn_7f3a91", source: "instagram")
        )
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
        harness.transport.stub(
            .get, "/resolve/nARvW",
            .json(
                #"{"keyName":"nARvW","title":"Profile promo","scheme":"diyetim://profile","iosUniversalUrl":"https://studio.paylisher.com/profile","jid":"jrn_b20c"}"#
            ))
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
        harness.transport.stub(
            .get, "/campaign/resolve/K1",
            .json(#"{"_id":"abc","__v":"3","createdAt":"2026-06-01","adId":{"$oid":"x9"},"scheme":"https://shop.example/p/9"}"#))
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
