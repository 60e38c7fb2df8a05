import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayLinkForty
import LinkRelayTesting
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The Apple Ads attribution token an install report carries, or that the app adds to its
/// install afterwards (`POST /api/sdk/v1/install/apple-ads-token`, the token having come after
/// the report): stored with the install (both engines) and shown in the install's record to an
/// admin key.
@Suite("Apple Ads token")
struct AppleAdsTokenTests {
    static let token = "YWRzLXRva2VuLTEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5eg=="

    static func install(
        _ client: some TestClientProtocol, key: String, token: JSONValue?
    ) async throws -> (HTTPResponse.Status, [String: JSONValue]) {
        var body = HTTPTest.installBody
        if let token { body["appleAdsToken"] = token }
        return try await client.execute(
            uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: key, ip: "198.51.100.7", json: true),
            body: HTTPTest.body(body)
        ) { response async throws in (response.status, try HTTPTest.object(response.body)) }
    }

    @Test(
        "stored with the install and shown in its record to an admin key; never to an SDK key or another project",
        arguments: TestEngine.available)
    func storedAndShown(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let (status, answer) = try await Self.install(client, key: world.sdkKey, token: .string(Self.token))
                #expect(status == .ok && answer["appleAdsToken"] == nil, "the answer does not echo it")
                let id = try #require(answer["installId"]?.stringValue)
                #expect(try await world.store.install(project: world.project.id, id: id)?.appleAdsToken == Self.token)
                try await client.execute(uri: "/api/installs/\(id)", method: .get, headers: HTTPTest.headers(key: world.adminKey)) {
                    response async throws in
                    #expect(response.status == .ok)
                    let record = try HTTPTest.object(response.body)
                    #expect(
                        record["appleAdsToken"] == .string(Self.token) && record["id"] == .string(id)
                            && record["attributionMethod"] == "none")
                    guard case .object(let device)? = record["device"] else { Issue.record("no device"); return }
                    #expect(device["timezone"] == "America/New_York")
                }
                try await client.execute(uri: "/api/installs/\(id)", method: .get, headers: HTTPTest.headers(key: world.sdkKey)) {
                    #expect($0.status == .forbidden)
                }
                // Without a token: stored as none.
                let (_, plain) = try await Self.install(client, key: world.sdkKey, token: nil)
                let plainID = try #require(plain["installId"]?.stringValue)
                try await client.execute(uri: "/api/installs/\(plainID)", method: .get, headers: HTTPTest.headers(key: world.adminKey)) {
                    response async throws in
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

    static func addLate(
        _ client: some TestClientProtocol, key: String, _ body: [String: JSONValue]
    ) async throws -> (HTTPResponse.Status, [String: JSONValue]) {
        try await client.execute(
            uri: "/api/sdk/v1/install/apple-ads-token", method: .post, headers: HTTPTest.headers(key: key, ip: "198.51.100.7", json: true),
            body: HTTPTest.body(body)
        ) { response async throws in (response.status, try HTTPTest.object(response.body)) }
    }

    @Test(
        "a late token is added to the install the report made; the first token stays; an unknown install, another project's and a bad token are refused",
        arguments: TestEngine.available)
    func lateToken(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let (_, report) = try await Self.install(client, key: world.sdkKey, token: nil)
                let id = try #require(report["installId"]?.stringValue)
                let (status, answer) = try await Self.addLate(
                    client, key: world.sdkKey, ["installId": .string(id), "appleAdsToken": .string(Self.token)])
                #expect(status == .ok && answer == ["installId": .string(id), "success": true])
                #expect(try await world.store.install(project: world.project.id, id: id)?.appleAdsToken == Self.token)
                // A retry, or a second token: the first stays.
                let (again, _) = try await Self.addLate(client, key: world.sdkKey, ["installId": .string(id), "appleAdsToken": "c2Vjb25k"])
                #expect(again == .ok)
                #expect(try await world.store.install(project: world.project.id, id: id)?.appleAdsToken == Self.token)

                let (unknown, _) = try await Self.addLate(
                    client, key: world.sdkKey, ["installId": "nope", "appleAdsToken": .string(Self.token)])
                #expect(unknown == .notFound)
                let (foreign, _) = try await Self.addLate(
                    client, key: world.otherProjectKey, ["installId": .string(id), "appleAdsToken": "b3RoZXI="])
                #expect(foreign == .notFound)
                for (body, field) in [
                    (["installId": .string(id), "appleAdsToken": "two words"], "appleAdsToken"),
                    (["installId": .string(id), "appleAdsToken": ""], "appleAdsToken"),
                    (["installId": .string(id)], "appleAdsToken"), (["appleAdsToken": .string(Self.token)], "installId"),
                ] as [([String: JSONValue], String)] {
                    let (status, answer) = try await Self.addLate(client, key: world.sdkKey, body)
                    #expect(status == .badRequest && answer["field"] == .string(field), "\(body)")
                }
                try await client.execute(
                    uri: "/api/sdk/v1/install/apple-ads-token", method: .post, headers: HTTPTest.headers(key: nil, json: true),
                    body: HTTPTest.body(["installId": .string(id)])
                ) {
                    #expect($0.status == .unauthorized)
                }
            }
        }
    }

    @Test(
        "LinkFortyBackend's late token (what the client sends when the token came after the report) reaches the install",
        arguments: TestEngine.available)
    func lateTokenFromTheAdapter(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { http in
                let port = try #require(http.port)
                let (_, report) = try await Self.install(http, key: world.sdkKey, token: nil)
                let id = try #require(report["installId"]?.stringValue)
                let backend = LinkFortyBackend(try .init(baseURL: URL(string: "http://127.0.0.1:\(port)")!, apiKey: world.sdkKey))
                #expect(backend.capabilities.contains(.lateAppleAdsToken))
                let context = BackendContext(transport: EndToEndTests.PhoneNetwork(address: "198.51.100.7"))
                try await backend.addAppleAdsToken(Self.token, toInstall: id, context: context)
                #expect(try await world.store.install(project: world.project.id, id: id)?.appleAdsToken == Self.token)
                // An install the server does not know: the token has nowhere to go.
                await #expect(throws: DeepLinkError.self) {
                    try await backend.addAppleAdsToken(Self.token, toInstall: "nope", context: context)
                }
                do {
                    try await backend.addAppleAdsToken(Self.token, toInstall: "nope", context: context)
                } catch let error as DeepLinkError {
                    #expect(error.code == .unsupported && !error.description.contains(world.sdkKey))
                }
            }
        }
    }
}
