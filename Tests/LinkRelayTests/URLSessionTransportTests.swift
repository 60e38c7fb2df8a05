import Foundation
import Testing

@testable import LinkRelay

@Suite("URLSessionTransport over loopback", .timeLimit(.minutes(1)))
struct URLSessionTransportTests {
    @Test("sends method, headers and body, and returns status, headers and body")
    func roundTrip() async throws {
        let server = try LoopbackServer { request in
            LoopbackServer.response(
                status: 201, headers: ["Content-Type": "application/json", "X-Echo": request.header("X-Key") ?? "-"],
                body: request.body)
        }
        defer { withExtendedLifetime(server) {} }
        let transport = URLSessionTransport()
        let body = Data(#"{"name":"signup"}"#.utf8)
        let response = try await transport.send(
            HTTPRequest(
                method: .post, url: server.url("/api/event"),
                headers: ["Content-Type": "application/json", "X-Key": "abc"], body: body))
        #expect(response.status == 201)
        #expect(response.body == body)
        #expect(response.headers["x-echo"] == "abc")
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(server.requests.first?.requestLine == "POST /api/event HTTP/1.1")
        #expect(server.requests.first?.body == body)
    }

    @Test("an error status is a response, not an error")
    func errorStatusIsAResponse() async throws {
        let server = try LoopbackServer { _ in
            LoopbackServer.response(status: 404, body: Data(#"{"error":"Link not found"}"#.utf8))
        }
        defer { withExtendedLifetime(server) {} }
        let response = try await URLSessionTransport().send(HTTPRequest(method: .get, url: server.url("/x")))
        #expect(response.status == 404)
        #expect(!response.isSuccess)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"Link not found"}"#)
    }

    @Test("a response larger than the bound is refused (declared length)")
    func declaredOversizeRefused() async throws {
        let server = try LoopbackServer { _ in LoopbackServer.response(status: 200, body: Data(count: 4096)) }
        defer { withExtendedLifetime(server) {} }
        let transport = URLSessionTransport(configuration: .init(maximumResponseSize: 1024))
        let error = await #expect(throws: DeepLinkError.self) {
            try await transport.send(HTTPRequest(method: .get, url: server.url("/big")))
        }
        #expect(error?.code == .responseTooLarge)
        #expect(error?.message.contains("1024") == true)
    }

    @Test("a 1 GB Content-Length with a short body is refused from its header, with the default bound")
    func gigabyteContentLength() async throws {
        let server = try LoopbackServer { _ in
            [
                Data(
                    "HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"a\":"
                        .utf8)
            ]
        }
        defer { withExtendedLifetime(server) {} }
        let error = await #expect(throws: DeepLinkError.self) {
            try await URLSessionTransport().send(HTTPRequest(method: .get, url: server.url("/huge")))
        }
        #expect(error?.code == .responseTooLarge)
    }

    @Test("a response larger than the bound is refused while it streams (no declared length)")
    func streamedOversizeRefused() async throws {
        let server = try LoopbackServer { _ in
            [Data("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".utf8)] + Array(repeating: Data(count: 1024), count: 8)
        }
        defer { withExtendedLifetime(server) {} }
        let transport = URLSessionTransport(configuration: .init(maximumResponseSize: 2048))
        let error = await #expect(throws: DeepLinkError.self) {
            try await transport.send(HTTPRequest(method: .get, url: server.url("/stream")))
        }
        #expect(error?.code == .responseTooLarge)
    }

    @Test("a response within the bound is accepted whole")
    func withinBoundAccepted() async throws {
        let server = try LoopbackServer { _ in LoopbackServer.response(status: 200, body: Data(count: 1024)) }
        defer { withExtendedLifetime(server) {} }
        let transport = URLSessionTransport(configuration: .init(maximumResponseSize: 1024))
        #expect(try await transport.send(HTTPRequest(method: .get, url: server.url("/ok"))).body.count == 1024)
    }

    @Test("a server that closes the connection mid-response is a network error")
    func truncatedResponse() async throws {
        let server = try LoopbackServer { _ in
            [Data("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n".utf8), Data(count: 10)]
        }
        defer { withExtendedLifetime(server) {} }
        let error = await #expect(throws: DeepLinkError.self) {
            try await URLSessionTransport().send(HTTPRequest(method: .get, url: server.url("/cut")))
        }
        #expect(error?.code == .network)
    }

    @Test(
        "any backstop timeout and response size are clamped, and a request still works",
        arguments: [(.infinity, Int.min), (.nan, -1), (1e300, Int.max), (-5, 0), (0.2, 10)] as [(TimeInterval, Int)])
    func clampedSettings(_ backstop: TimeInterval, _ size: Int) async throws {
        let transport = URLSessionTransport(configuration: .init(maximumResponseSize: size, backstopTimeout: backstop))
        let expected = backstop.isNaN ? 60 : min(max(backstop, 1), 7 * 86_400)
        #expect(transport.configuration.backstopTimeout == expected)
        #expect(transport.configuration.maximumResponseSize == max(size, 0))
        let server = try LoopbackServer { _ in LoopbackServer.response(status: 204, headers: [:], body: Data()) }
        defer { withExtendedLifetime(server) {} }
        let response = try await transport.send(HTTPRequest(method: .get, url: server.url("/ok")))
        #expect(response.status == 204)
    }

    @Test("a refused connection is a network error that does not repeat the URL")
    func connectionRefused() async throws {
        let port: UInt16
        do {
            let server = try LoopbackServer { _ in [] }
            defer { withExtendedLifetime(server) {} }
            port = server.port
        }  // the server is gone: its port now refuses connections
        let transport = URLSessionTransport()
        let secretURL = URL(string: "http://127.0.0.1:\(port)/x?api_key=SECRETKEY")!
        let error = await #expect(throws: DeepLinkError.self) {
            try await transport.send(HTTPRequest(method: .get, url: secretURL))
        }
        #expect(error?.code == .network)
        #expect(error.map { !$0.description.contains("SECRETKEY") } == true)
    }

    @Test(
        "URL errors are classified",
        arguments: [
            (URLError.Code.timedOut, DeepLinkError.Code.timedOut), (.cancelled, .cancelled),
            (.cannotConnectToHost, .network), (.notConnectedToInternet, .network), (.badURL, .network),
        ])
    func classification(_ code: URLError.Code, _ expected: DeepLinkError.Code) {
        #expect(URLSessionTransport.classify(URLError(code)).code == expected)
    }

    @Test("an unknown failure once the status line arrived is a connection lost mid-response (Linux reports -1)")
    func lostMidResponse() {
        #expect(
            URLSessionTransport.classify(URLError(.unknown), responseStarted: true).message
                == "The connection was lost before the response was complete.")
        #expect(URLSessionTransport.classify(URLError(.unknown)).message == "The request failed (URL error -1).")
    }

    @Test(
        "a redirect to another host is not followed: the 3xx comes back and nothing is sent there")
    func redirectElsewhereNotFollowed() async throws {
        let elsewhere = try LoopbackServer { _ in LoopbackServer.response(status: 200, body: Data("leaked".utf8)) }
        defer { withExtendedLifetime(elsewhere) {} }
        let target = elsewhere.url("/steal").absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let server = try LoopbackServer { _ in LoopbackServer.response(status: 302, headers: ["Location": target], body: Data()) }
        defer { withExtendedLifetime(server) {} }
        let response = try await URLSessionTransport().send(
            HTTPRequest(method: .get, url: server.url("/api"), headers: ["Authorization": "Bearer SECRET"]))
        #expect(response.status == 302)
        #expect(elsewhere.requests.isEmpty)
    }

    @Test(
        "a redirect within the same origin is followed")
    func sameOriginRedirectFollowed() async throws {
        let server = try LoopbackServer { request in
            request.requestLine.hasPrefix("GET /final")
                ? LoopbackServer.response(status: 200, body: Data("ok".utf8))
                : LoopbackServer.response(status: 302, headers: ["Location": "/final"], body: Data())
        }
        defer { withExtendedLifetime(server) {} }
        let response = try await URLSessionTransport().send(HTTPRequest(method: .get, url: server.url("/start")))
        #expect(response.status == 200)
        #expect(server.requests.map(\.requestLine) == ["GET /start HTTP/1.1", "GET /final HTTP/1.1"])
    }

    @Test(
        "the redirect rule: same origin, or up to https on the same host; never another host, never down to http",
        arguments: [
            ("https://a.example/x", "https://a.example/y", true), ("http://127.0.0.1:8/x", "http://127.0.0.1:8/y", true),
            ("http://a.example/x", "https://a.example/y", true), ("https://a.example/x", "http://a.example/y", false),
            ("https://a.example/x", "https://b.example/y", false), ("https://a.example/x", "https://a.example:8443/y", false),
            ("https://a.example/x", "https://A.EXAMPLE/y", true),
        ])
    func redirectRule(_ from: String, _ to: String, _ follows: Bool) {
        #expect(SessionDelegate.follows(from: URL(string: from), to: URL(string: to)) == follows)
    }
}
