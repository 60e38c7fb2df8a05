import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayTesting
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// `GET /api/sdk/v1/resolve/…` over a real socket: LinkForty's answer, keys, projects, and the
/// click on disk before the answer.
@Suite("Resolve")
struct ResolveTests {
    struct World {
        let store: SQLStore
        let project: Project
        let sdkKey: String
        let otherProjectKey: String
        let link: LinkRecord
        let now = Date(timeIntervalSince1970: 1_780_000_000)
    }

    static func withWorld(_ engine: TestEngine, _ body: (World) async throws -> Void) async throws {
        try await ScratchDatabase.with(engine) { store, _ async throws in
            _ = try await store.migrate()
            let project = try await store.createProject(name: "acme", at: Date())
            let other = try await store.createProject(name: "other", at: Date())
            let sdk = APIKeys.issue(project: project.id, scope: .sdk, name: "iOS", at: Date())
            let foreign = APIKeys.issue(project: other.id, scope: .sdk, name: "iOS", at: Date())
            try await store.insertKey(sdk.record)
            try await store.insertKey(foreign.record)
            let link = LinkRecord(
                projectID: project.id, templateSlug: "k3m9x2qa", shortCode: "Xk9_2bQz", originalURL: "https://acme.example/p/42",
                deepLinkPath: "/product/42", appScheme: "acmeshop", iosAppStoreURL: "https://apps.apple.com/app/id1",
                utmParameters: ["source": "mail"], deepLinkParameters: ["productId": "42", "discount": 20], createdAt: Date())
            try await store.insertLink(link)
            try await body(World(store: store, project: project, sdkKey: sdk.secret, otherProjectKey: foreign.secret, link: link))
        }
    }

    static func app(_ world: World) -> some ApplicationProtocol {
        Application(
            router: ServerApplication.router(
                store: world.store, configuration: .init(trustProxy: true), clock: ManualClock(date: world.now)),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    static func object(_ body: ByteBuffer) throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: Data(String(buffer: body).utf8))
    }

    @Test("both URL forms answer the link's fields, and the click with its fingerprint is stored", arguments: TestEngine.available)
    func resolves(_ engine: TestEngine) async throws {
        try await Self.withWorld(engine) { world in
            try await Self.app(world).test(.live) { client in
                let query = "?fp_tz=America/New_York&fp_lang=en_US&fp_sw=1179&fp_sh=2556&fp_platform=iOS&fp_pv=17.4"
                for path in ["/api/sdk/v1/resolve/Xk9_2bQz", "/api/sdk/v1/resolve/k3m9x2qa/Xk9_2bQz"] {
                    try await client.execute(
                        uri: path + query, method: .get,
                        headers: [
                            .authorization: "Bearer \(world.sdkKey)", .userAgent: "AcmeShop/412 CFNetwork/1494.0.7 Darwin/23.4.0",
                            .init("X-Forwarded-For")!: "198.51.100.66, 203.0.113.7",
                        ]
                    ) { response async throws in
                        #expect(response.status == .ok)
                        let answer = try Self.object(response.body)
                        #expect(answer["shortCode"] == "Xk9_2bQz" && answer["linkId"] == .string(world.link.id))
                        #expect(answer["deepLinkPath"] == "/product/42" && answer["appScheme"] == "acmeshop")
                        #expect(answer["iosUrl"] == "https://apps.apple.com/app/id1" && answer["webUrl"] == nil, "falsy fields are omitted")
                        #expect(answer["utmParameters"] == ["source": "mail"])
                        #expect(answer["customParameters"] == ["productId": "42", "discount": 20])
                        #expect(answer["clickedAt"] == .string(ServerHTTP.sdkTimestamp(world.now)))
                    }
                }
            }
            let clicks = try await world.store.clicks(link: world.link.id)
            #expect(clicks.count == 2)
            #expect(clicks.first?.device.ip == "203.0.113.7" && clicks.first?.device.networkPrefix == "203.0.113")
            #expect(clicks.first?.device.timezone == "America/New_York" && clicks.first?.device.language == "en_US")
            #expect(clicks.first?.device.screenWidth == 1179 && clicks.first?.device.screenHeight == 2556)
            #expect(clicks.first?.platform == .ios && clicks.first?.isBot == false)
        }
    }

    @Test("no key, a wrong key, a malformed one: the same JSON 401, and no click", arguments: TestEngine.available)
    func unauthorized(_ engine: TestEngine) async throws {
        try await Self.withWorld(engine) { world in
            try await Self.app(world).test(.live) { client in
                let wrong = String(world.sdkKey.dropLast()) + (world.sdkKey.hasSuffix("A") ? "B" : "A")
                for header in [nil, "Bearer \(wrong)", "Bearer letmein", "Basic \(world.sdkKey)"] {
                    var headers: HTTPFields = [:]
                    if let header { headers[.authorization] = header }
                    try await client.execute(uri: "/api/sdk/v1/resolve/Xk9_2bQz", method: .get, headers: headers) { response async throws in
                        #expect(response.status == .unauthorized)
                        let body = String(buffer: response.body)
                        #expect(try Self.object(response.body)["error"] != nil)
                        #expect(!body.contains(world.sdkKey) && !body.contains("letmein"), "no key is echoed")
                    }
                }
            }
            #expect(try await world.store.clicks(link: world.link.id).isEmpty)
        }
    }

    @Test(
        "another project's key, an unknown code, a wrong slug, an inactive or expired link: 404 Link not found, no click",
        arguments: TestEngine.available)
    func notFound(_ engine: TestEngine) async throws {
        try await Self.withWorld(engine) { world in
            var inactive = LinkRecord(
                projectID: world.project.id, shortCode: "off", originalURL: "https://acme.example", isActive: false, createdAt: Date())
            try await world.store.insertLink(inactive)
            inactive = LinkRecord(
                projectID: world.project.id, shortCode: "old", originalURL: "https://acme.example", expiresAt: world.now, createdAt: Date())
            try await world.store.insertLink(inactive)
            try await Self.app(world).test(.live) { client in
                let cases = [
                    ("/api/sdk/v1/resolve/Xk9_2bQz", world.otherProjectKey), ("/api/sdk/v1/resolve/nope", world.sdkKey),
                    ("/api/sdk/v1/resolve/wrongslug/Xk9_2bQz", world.sdkKey), ("/api/sdk/v1/resolve/off", world.sdkKey),
                    ("/api/sdk/v1/resolve/old", world.sdkKey),
                ]
                for (path, key) in cases {
                    try await client.execute(uri: path, method: .get, headers: [.authorization: "Bearer \(key)"]) { response async throws in
                        #expect(response.status == .notFound, "\(path)")
                        #expect(try Self.object(response.body) == ["error": "Link not found"])
                    }
                }
            }
            #expect(try await world.store.clicks(link: world.link.id).isEmpty)
        }
    }

    @Test("a revoked key stops working at once", arguments: TestEngine.available)
    func revoked(_ engine: TestEngine) async throws {
        try await Self.withWorld(engine) { world in
            guard let prefix = APIKeys.prefix(of: world.sdkKey), let record = try await world.store.key(prefix: prefix) else {
                Issue.record("no key")
                return
            }
            #expect(try await world.store.revokeKey(id: record.id, at: Date()))
            try await Self.app(world).test(.live) { client in
                try await client.execute(
                    uri: "/api/sdk/v1/resolve/Xk9_2bQz", method: .get, headers: [.authorization: "Bearer \(world.sdkKey)"]
                ) {
                    #expect($0.status == .unauthorized)
                }
            }
        }
    }

    @Test(
        "network prefixes: public IPv4 /24 and IPv6 /64; private, loopback, carrier NAT and link-local have none",
        arguments: [
            ("203.0.113.7", "203.0.113"), ("8.8.8.8", "8.8.8"), ("10.1.2.3", nil), ("192.168.1.1", nil), ("127.0.0.1", nil),
            ("100.64.0.1", nil), ("172.20.0.1", nil), ("169.254.1.1", nil), ("256.1.1.1", nil), ("1.2.3", nil),
            ("2001:db8:85a3::8a2e:370:7334", "2001:db8:85a3:0"), ("2001:DB8:1:2:3:4:5:6", "2001:db8:1:2"), ("::1", nil), ("fd00::1", nil),
            ("fe80::1", nil), ("::", nil), ("2001:db8::1::2", nil), ("not an address", nil),
        ] as [(String, String?)])
    func prefixes(_ address: String, _ prefix: String?) {
        #expect(ClientAddress.networkPrefix(of: address) == prefix)
    }
}
