import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The server's answers decoded exactly as LinkForty's iOS SDK 1.1.3 decodes them
/// (shared/protocols/linkforty.md §3.5, §8.1 and §12): a test double of its model types, each
/// rule as that SDK applies it. Its later iOS releases decode the same way; the Android SDK
/// (Moshi, `Instant.parse`), the Flutter SDK (`DateTime.parse`) and the React Native SDK (a
/// string) accept everything this one accepts.
@Suite("LinkForty's SDKs")
struct LinkFortySDKDecodingTests {
    /// LinkForty iOS's `InstallResponse`: `deepLinkData` optional, but when the key is there its
    /// object must decode as `DeepLinkData`, which requires `shortCode`.
    struct InstallResponse: Decodable {
        let installId: String
        let attributed: Bool
        let confidenceScore: Double
        let matchedFactors: [String]
        let deepLinkData: DeepLinkData?
    }

    /// LinkForty iOS's `DeepLinkData`: `shortCode` required; `clickedAt` read with a default
    /// `ISO8601DateFormatter` (no fractional seconds: a date with them becomes `nil`).
    struct DeepLinkData: Decodable {
        let shortCode: String
        let deepLinkPath: String?
        let appScheme: String?
        let linkId: String?
        let clickedAt: Date?

        enum CodingKeys: String, CodingKey { case shortCode, deepLinkPath, appScheme, linkId, clickedAt }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            shortCode = try container.decode(String.self, forKey: .shortCode)
            deepLinkPath = try container.decodeIfPresent(String.self, forKey: .deepLinkPath)
            appScheme = try container.decodeIfPresent(String.self, forKey: .appScheme)
            linkId = try container.decodeIfPresent(String.self, forKey: .linkId)
            clickedAt = try container.decodeIfPresent(String.self, forKey: .clickedAt).flatMap { ISO8601DateFormatter().date(from: $0) }
        }
    }

    @Test("the double is faithful: Core's organic answer ({}) fails in it, and a millisecond clickedAt reads as nil")
    func doubleRejectsCore() throws {
        let organic = Data(#"{"installId":"a","attributed":false,"confidenceScore":0,"matchedFactors":[],"deepLinkData":{}}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(InstallResponse.self, from: organic) }
        let attributed = Data(#"{"shortCode":"x","clickedAt":"2026-03-01T10:15:30.123Z"}"#.utf8)
        #expect(try JSONDecoder().decode(DeepLinkData.self, from: attributed).clickedAt == nil)
    }

    @Test("an organic install decodes in LinkForty's SDK: no deepLinkData, attributed false", arguments: TestEngine.available)
    func organic(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, ip: "198.51.100.4", json: true),
                    body: HTTPTest.body(HTTPTest.installBody)
                ) { response async throws in
                    #expect(response.status == .ok)
                    let decoded = try JSONDecoder().decode(InstallResponse.self, from: Data(buffer: response.body))
                    #expect(decoded.attributed == false && decoded.deepLinkData == nil && decoded.confidenceScore == 0)
                    #expect(try HTTPTest.object(response.body)["deepLinkData"] == nil, "absent, not {}")
                }
            }
        }
    }

    @Test("an attributed install and a resolve decode with their click time (whole seconds, Z)", arguments: TestEngine.available)
    func clickedAt(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            // A click at a time with milliseconds: the SDK must still read its time.
            let start = world.clock.date.addingTimeInterval(0.825)
            world.clock.advance(hours: 0.825 / 3600)
            try await world.link("Xk9_2bQz")
            try await world.app().test(.live) { client in
                try await client.execute(
                    uri: "/api/sdk/v1/resolve/Xk9_2bQz" + HTTPTest.fingerprintQuery, method: .get,
                    headers: HTTPTest.headers(key: world.sdkKey, ip: "203.0.113.7", userAgent: HTTPTest.sdkUserAgent)
                ) { response async throws in
                    #expect(response.status == .ok)
                    let link = try JSONDecoder().decode(DeepLinkData.self, from: Data(buffer: response.body))
                    #expect(link.clickedAt == Date(timeIntervalSince1970: start.timeIntervalSince1970.rounded(.down)))
                }
                world.clock.advance(hours: 1)
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, ip: "203.0.113.7", json: true),
                    body: HTTPTest.body(HTTPTest.installBody)
                ) { response async throws in
                    let decoded = try JSONDecoder().decode(InstallResponse.self, from: Data(buffer: response.body))
                    #expect(decoded.attributed && decoded.deepLinkData?.shortCode == "Xk9_2bQz")
                    #expect(decoded.deepLinkData?.deepLinkPath == "/product/42" && decoded.deepLinkData?.appScheme == "acmeshop")
                    #expect(decoded.deepLinkData?.clickedAt == Date(timeIntervalSince1970: start.timeIntervalSince1970.rounded(.down)))
                }
            }
        }
    }
}
