import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayTesting
import LinkRelayWire
import Testing

@testable import LinkRelayPaylisher

@Suite("Paylisher deferred match")
struct PaylisherDeferredTests {
    @Test(
        "fingerprints match the reference's values",
        arguments: [
            ("iPhone15,2", "Europe/Istanbul", "tr-TR", "aabeebd3dcfbcad8006c62b8f7832154c39b7f81d461d1cd53ae5176173489cd"),
            ("iPhone16,1", "Europe/Berlin", "de-DE", "6fae7341e5cd0eab163aff4edfa927ef27802fbd5136dfe17f7f01b871c97bfb"),
            ("iPad13,4", "America/New_York", "en-US", "a7c1d1cf7c809042f5b000d7b9ece2b676928fbe0a131500af144d1b3b2d0c9f"),
        ])
    func fingerprints(_ model: String, _ zone: String, _ language: String, _ expected: String) {
        let device = DeviceInfo(
            osName: "iOS", osVersion: "17.0", deviceModel: model, timeZoneIdentifier: zone, preferredLanguages: [language])
        #expect(PaylisherMapping.fingerprint(device) == expected)
    }

    @Test("the family the app supplies (UIDevice.model) is the one hashed; without it, the model's family")
    func suppliedFamily() {
        // A model identifier the SDK never sees, with the family UIDevice reports: the family wins.
        var device = DeviceInfo(
            osName: "iOS", osVersion: "17.0", deviceModel: "Mac14,2", timeZoneIdentifier: "Europe/Istanbul", preferredLanguages: ["tr-TR"])
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
        harness.transport.stub(
            .get, "/v1/deferred-deeplink",
            .json(
                #"""
                {"status":"match","url":"diyetim://products/42?utm_source=instagram&color=red","campaign_key":"X7kdi5Yq9lTVOv46uHYtV",
                 "jid":"jrn_7f3a91","click_timestamp":"2026-07-22T08:51:09.000Z","attribution_window":1800,
                 "metadata":{"utm_source":"instagram","placement":"story"},"attribution_method":"fingerprint","confidence":0.3}
                """#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(
            request.url.absoluteString
                == "https://link.paylisher.com/v1/deferred-deeplink?fingerprint=aabeebd3dcfbcad8006c62b8f7832154c39b7f81d461d1cd53ae5176173489cd"
        )
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

    @Test(
        "an attribution_window that is not a whole number of seconds in Int's range is left out, not a crash",
        arguments: [
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
        harness.transport.stub(
            .get, "/v1/deferred-deeplink",
            .json(
                #"{"status":"match","url":"diyetim://p?k=OWN","campaignKey":"X","attributionWindow":1800,"attributionMethod":"idfa","confidence":0.95}"#
            ))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.link?.url == url("diyetim://p?k=OWN"))
        #expect(match.attribution.method == .deviceIdentifier)
        #expect(match.attribution.confidence?.level == .high)
    }

    @Test("no match (13.5) is organic; an error (13.6) is a server error; a missing status is a decoding error")
    func outcomes() async throws {
        let noMatch = try Harness()
        noMatch.transport.stub(
            .get, "/v1/deferred-deeplink", .json(#"{"status":"no_match","message":"No deferred deeplink found for this device"}"#))
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
        var device = DeviceInfo(
            osName: "iOS", osVersion: "17", deviceModel: "iPhone15,2", timeZoneIdentifier: "Europe/Istanbul", preferredLanguages: ["tr"])
        device.advertisingID = UUID(uuidString: "6D92078A-8246-4BA4-AE5B-76104861E7DC")
        let harness = try Harness(device: device)
        harness.transport.stub(.get, "/v1/deferred-deeplink", .json(#"{"status":"no_match"}"#))
        _ = try await harness.backend.matchInstall(context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(
            request.url.query
                == "fingerprint=aabeebd3dcfbcad8006c62b8f7832154c39b7f81d461d1cd53ae5176173489cd&idfa=6D92078A-8246-4BA4-AE5B-76104861E7DC")
        #expect(request.headers["X-IDFA"] == "6D92078A-8246-4BA4-AE5B-76104861E7DC")
    }
}
