import Foundation
import LinkRelay
import LinkRelayTesting
import Testing

@Suite("HostRewritingTransport", .timeLimit(.minutes(1)))
struct HostRewritingTransportTests {
    private func rewriting(_ hosts: Set<String>, to destination: String) -> (HostRewritingTransport, StubTransport) {
        let stub = StubTransport()
        stub.stub(.get, "/link/p42", .json("{}"))
        return (HostRewritingTransport(hosts: hosts, to: url(destination), over: stub), stub)
    }

    @Test("a listed host goes to the destination with its path and query byte for byte, and says where it was going")
    func rewritesListedHost() async throws {
        let (transport, stub) = rewriting(["*.limelink.org", "limelink.org"], to: "http://127.0.0.1:8642")
        let original = url("https://Shop.LimeLink.org/link/p42?full_request_url=https%3A%2F%2Fa.b%2Fc%3Fx%3D1%2B2&sp=a+b&e=%E2%9C%93#frag")
        let request = HTTPRequest(method: .get, url: original, headers: ["Authorization": "Bearer k"])
        _ = try await transport.send(request)
        let sent = try #require(stub.requests.first)
        #expect(
            sent.url.absoluteString
                == "http://127.0.0.1:8642/link/p42?full_request_url=https%3A%2F%2Fa.b%2Fc%3Fx%3D1%2B2&sp=a+b&e=%E2%9C%93")
        #expect(sent.headers["X-Forwarded-Host"] == "shop.limelink.org")
        #expect(sent.headers["X-Forwarded-Proto"] == "https")
        #expect(sent.headers["Authorization"] == "Bearer k")
        #expect(sent.method == .get)
    }

    @Test("a destination's path is put in front; an explicit port is forwarded with the host")
    func prefixAndPort() throws {
        let (transport, _) = rewriting(["limelink.org"], to: "http://127.0.0.1:8642/limelink/")
        let sent = transport.rewritten(
            HTTPRequest(method: .post, url: url("https://limelink.org:8443/api/v1/stats/event"), body: Data("{}".utf8)))
        #expect(sent.url.absoluteString == "http://127.0.0.1:8642/limelink/api/v1/stats/event")
        #expect(sent.headers["X-Forwarded-Host"] == "limelink.org:8443")
        #expect(sent.body == Data("{}".utf8))
        let root = transport.rewritten(HTTPRequest(method: .head, url: url("https://limelink.org")))
        #expect(root.url.absoluteString == "http://127.0.0.1:8642/limelink/")
    }

    @Test("other hosts, and the bare domain of a wildcard, pass through untouched")
    func passThrough() throws {
        let (transport, _) = rewriting(["*.limelink.org"], to: "http://127.0.0.1:8642")
        for text in ["https://limelink.org/x", "https://evil-limelink.org/x", "https://api.paylisher.com/x"] {
            let request = HTTPRequest(method: .get, url: url(text))
            #expect(transport.rewritten(request) == request)
        }
        #expect(transport.rewrites(host: "a.b.limelink.org"))
        #expect(!transport.rewrites(host: "limelink.org"))
    }
}
