import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayTesting
import Testing

@testable import LinkRelayServer

/// The Apple Ads attribution token an install report carries: stored with the install (both
/// engines) and shown in the install's record to an admin key.
@Suite("Apple Ads token")
struct AppleAdsTokenTests {
    static let token = "YWRzLXRva2VuLTEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5eg=="

    static func install(_ client: some TestClientProtocol, key: String, token: JSONValue?) async throws -> (HTTPResponse.Status, [String: JSONValue]) {
        var body = HTTPTest.installBody
        if let token { body["appleAdsToken"] = token }
        return try await client.execute(
            uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: key, ip: "198.51.100.7", json: true), body: HTTPTest.body(body)
        ) { response async throws in (response.status, try HTTPTest.object(response.body)) }
    }

    @Test("stored with the install and shown in its record to an admin key; never to an SDK key or another project", arguments: TestEngine.available)
    func storedAndShown(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let (status, answer) = try await Self.install(client, key: world.sdkKey, token: .string(Self.token))
                #expect(status == .ok && answer["appleAdsToken"] == nil, "the answer does not echo it")
                let id = try #require(answer["installId"]?.stringValue)
                #expect(try await world.store.install(project: world.project.id, id: id)?.appleAdsToken == Self.token)
                try await client.execute(uri: "/api/installs/\(id)", method: .get, headers: HTTPTest.headers(key: world.adminKey)) { response async throws in
                    #expect(response.status == .ok)
                    let record = try HTTPTest.object(response.body)
                    #expect(record["appleAdsToken"] == .string(Self.token) && record["id"] == .string(id) && record["attributionMethod"] == "none")
                    guard case .object(let device)? = record["device"] else { Issue.record("no device"); return }
                    #expect(device["timezone"] == "America/New_York")
                }
                try await client.execute(uri: "/api/installs/\(id)", method: .get, headers: HTTPTest.headers(key: world.sdkKey)) {
                    #expect($0.status == .forbidden)
                }
                // Without a token: stored as none.
                let (_, plain) = try await Self.install(client, key: world.sdkKey, token: nil)
                let plainID = try #require(plain["installId"]?.stringValue)
                try await client.execute(uri: "/api/installs/\(plainID)", method: .get, headers: HTTPTest.headers(key: world.adminKey)) { response async throws in
                    #expect(try HTTPTest.object(response.body)["appleAdsToken"] == .null)
                }
                try await client.execute(uri: "/api/installs/nope", method: .get, headers: HTTPTest.headers(key: world.adminKey)) {
                    #expect($0.status == .notFound)
                }
            }
        }
    }

    @Test("a token that is not one AdServices gives is refused, naming the field, and nothing is stored", arguments: TestEngine.available)
    func refused(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                for token: JSONValue in ["", "two words", .string(String(repeating: "A", count: 4097)), 42] {
                    let (status, answer) = try await Self.install(client, key: world.sdkKey, token: token)
                    #expect(status == .badRequest && answer["field"] == "appleAdsToken", "\(token)")
                }
            }
            #expect(try await world.store.counts().installs == 0)
        }
    }

    struct FixedToken: AppleAdsTokenSource {
        func attributionToken() async throws -> String { AppleAdsTokenTests.token }
    }

    @Test("end to end: LinkFortyBackend's first launch sends the token, and the install's record holds it", arguments: TestEngine.available)
    func endToEnd(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { http in
                let port = try #require(http.port)
                let client = try EndToEndTests.client(port: port, key: world.sdkKey, network: .init(address: "198.51.100.7")) {
                    $0.appleAds = AppleAdsAttribution(source: FixedToken())
                }
                await client.start()
                let id = try #require(await client.installOutcome().attribution?.installID)
                #expect(try await world.store.install(project: world.project.id, id: id)?.appleAdsToken == Self.token)
                await client.shutdown()
            }
        }
    }
}
