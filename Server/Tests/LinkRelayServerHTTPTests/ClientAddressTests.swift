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

/// The client's address behind a proxy: `X-Forwarded-For` read from the right, where the
/// proxies wrote, so a client cannot choose its network by writing the header itself.
@Suite("Client address")
struct ClientAddressTests {
    @Test(
        "with no proxy named, the entry the proxy in front appended; only addresses; the peer without a proxy",
        arguments: [
            // nginx's $proxy_add_x_forwarded_for: what the client sent, then its real address.
            ("198.51.100.66, 203.0.113.7", "10.0.0.2", true, "203.0.113.7"),
            ("203.0.113.7", "127.0.0.1", true, "203.0.113.7"),
            ("<script>, 203.0.113.7", "10.0.0.2", true, "203.0.113.7"),
            ("203.0.113.7, <script>", "10.0.0.2", true, "10.0.0.2"),
            (String(repeating: "9", count: 8192), "10.0.0.2", true, "10.0.0.2"),
            // A client on a private network behind the proxy is its own address, whatever it
            // wrote to the left (0.6.0 skipped private entries by default: these chose
            // 203.0.113.50, 10.1.1.1 and 2001:db8::1).
            ("203.0.113.50, 10.9.9.9", "10.0.0.2", true, "10.9.9.9"),
            ("10.1.1.1, 192.168.0.4", "10.0.0.2", true, "192.168.0.4"),
            ("2001:db8::1, fd00::5", "10.0.0.2", true, "fd00::5"),
            ("::ffff:203.0.113.9", "10.0.0.2", true, "203.0.113.9"),
            ("1.2.3", "10.0.0.2", true, "10.0.0.2"),
            ("203.0.113.7", "198.51.100.1", false, "198.51.100.1"),
        ] as [(String, String, Bool, String)])
    func forwardedFor(_ header: String, _ peer: String, _ trust: Bool, _ expected: String) {
        #expect(ClientAddress.of(forwardedFor: header, peer: peer, trustProxy: trust) == expected)
    }

    @Test("named proxies: a load balancer's or a CDN's range is skipped; a hop outside them is the client")
    func configured() throws {
        let balancer = try #require(IPNetwork("10.0.1.0/24"))
        #expect(
            ClientAddress.of(
                forwardedFor: "6.6.6.6, 203.0.113.7, 10.0.1.5", peer: "127.0.0.1", trustProxy: true, trustedProxies: [balancer])
                == "203.0.113.7")
        let cdn = try #require(IPNetwork("198.51.100.0/24"))
        #expect(
            ClientAddress.of(forwardedFor: "203.0.113.7, 198.51.100.20", peer: "10.0.0.2", trustProxy: true, trustedProxies: [cdn])
                == "203.0.113.7")
        #expect(
            ClientAddress.of(forwardedFor: "203.0.113.7, 10.0.0.9", peer: "10.0.0.2", trustProxy: true, trustedProxies: [cdn]) == "10.0.0.9"
        )
        #expect(IPNetwork("10.0.0.0/33") == nil && IPNetwork("x/8") == nil && IPNetwork("2001:db8::/129") == nil)
        #expect(IPNetwork("2001:db8::/32")?.description == "2001:db8:0:0:0:0:0:0/32")
        #expect(
            IPNetwork("172.16.0.0/12")?.contains([172, 31, 255, 1]) == true
                && IPNetwork("172.16.0.0/12")?.contains([172, 32, 0, 1]) == false)
    }

    @Test(
        "a private client after another address, with no proxy named, is said to look like an unnamed proxy; a public one, a lone one, or one after words is not"
    )
    func unnamedProxy() {
        #expect(ClientAddress.looksLikeUnnamedProxy("10.0.1.5", forwardedFor: "203.0.113.7, 10.0.1.5"))
        #expect(ClientAddress.looksLikeUnnamedProxy("fd00::5", forwardedFor: "2001:db8::1, fd00::5"))
        #expect(!ClientAddress.looksLikeUnnamedProxy("203.0.113.7", forwardedFor: "10.0.0.1, 203.0.113.7"))
        #expect(!ClientAddress.looksLikeUnnamedProxy("10.9.9.9", forwardedFor: "10.9.9.9"))
        #expect(!ClientAddress.looksLikeUnnamedProxy("10.9.9.9", forwardedFor: "<script>, 10.9.9.9"))
        #expect(!ClientAddress.looksLikeUnnamedProxy(nil, forwardedFor: "203.0.113.7, 10.0.1.5"))
    }

    @Test(
        "an install whose X-Forwarded-For was written by the client is stored with the proxy-appended address",
        arguments: TestEngine.available)
    func installAddress(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post,
                    headers: HTTPTest.headers(key: world.sdkKey, ip: "<script>alert(1)</script>, 198.51.100.4", json: true),
                    body: HTTPTest.body(HTTPTest.installBody)
                ) { response async throws in
                    #expect(response.status == .ok)
                    guard case .string(let id)? = try HTTPTest.object(response.body)["installId"] else { return }
                    #expect(try await world.store.install(project: world.project.id, id: id)?.device.ip == "198.51.100.4")
                }
            }
        }
    }
}
