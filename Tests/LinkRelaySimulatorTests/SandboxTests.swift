import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import LinkRelayWire
import Testing

/// The Sandbox's routing and admin API, in process (the Sandbox package's tests run the same
/// over a socket).
@Suite("Sandbox routing and admin API", .timeLimit(.minutes(1)))
struct SandboxTests {
    private func request(
        _ method: HTTPMethod, _ target: String, host: String = "127.0.0.1:8642", headers: HTTPHeaders = [:], body: String? = nil
    ) -> HTTPRequest {
        var all = headers
        all["Host"] = host
        return HTTPRequest(method: method, url: URL(string: "http://\(host)\(target)")!, headers: all, body: body.map { Data($0.utf8) })
    }

    private func response(_ exchange: Sandbox.Exchange) throws -> HTTPResponse {
        guard case .respond(let response) = exchange.outcome else { throw DeepLinkError(.network, "the connection was closed") }
        return response
    }

    @Test("a path prefix serves the provider on its API host, prefix removed, query kept byte for byte")
    func pathPrefix() async throws {
        let sandbox = Sandbox()
        let exchange = await sandbox.handle(request(.get, "/linkforty/api/sdk/v1/health?fp_tz=Etc/GMT+5"))
        #expect(try response(exchange).status == 200)
        #expect(exchange.handler == "linkforty")
        #expect(exchange.routedURL?.absoluteString == "https://go.sandbox.test/api/sdk/v1/health?fp_tz=Etc/GMT+5")
        #expect(sandbox.simulator.requests.last?.headers["Host"] == nil)
    }

    @Test("X-Forwarded-Host picks the provider and the host it sees; with a prefix, only a host of that provider counts")
    func forwardedHost() async throws {
        let sandbox = Sandbox()
        let head = await sandbox.handle(request(.head, "/", headers: ["X-Forwarded-Host": "Shop.LimeLink.org:443"]))
        #expect(head.handler == "limelink")
        #expect(head.routedURL?.absoluteString == "https://shop.limelink.org/")
        #expect(try response(head).headers["Server"] == "limelink-edge")

        let foreign = await sandbox.handle(request(.get, "/paylisher/resolve/x", headers: ["X-Forwarded-Host": "shop.limelink.org"]))
        #expect(foreign.routedURL?.host == "api.paylisher.com")
        let own = await sandbox.handle(request(.get, "/paylisher/resolve/x", headers: ["X-Forwarded-Host": "link.paylisher.com"]))
        #expect(own.routedURL?.host == "link.paylisher.com")
    }

    @Test("a provider's Host is served as is; anything else is a 404 that explains the routes")
    func hostHeaderAndNothing() async throws {
        let sandbox = Sandbox()
        let direct = await sandbox.handle(request(.get, "/api/sdk/v1/health", host: "go.sandbox.test"))
        #expect(direct.handler == "linkforty")
        let nothing = try response(await sandbox.handle(request(.get, "/api/sdk/v1/health")))
        #expect(nothing.status == 404)
        #expect(String(decoding: nothing.body, as: UTF8.self).contains("/linkforty"))
    }

    @Test("a drop fault, an outage and a cut-short delay close the connection mid-response")
    func closes() async throws {
        let sandbox = Sandbox()
        try await sandbox.setFault(.init(path: "/api/sdk/v1/health", fault: .drop, times: 1))
        #expect(await sandbox.handle(request(.get, "/linkforty/api/sdk/v1/health")).outcome == .closeMidResponse)
        #expect(try response(await sandbox.handle(request(.get, "/linkforty/api/sdk/v1/health"))).status == 200)
        sandbox.simulator.isReachable = false
        #expect(await sandbox.handle(request(.get, "/linkforty/api/sdk/v1/health")).outcome == .closeMidResponse)
    }

    @Test("an oversized-body fault is passed through whole: the client, not the sandbox, must refuse it")
    func oversizedPassesThrough() async throws {
        let sandbox = Sandbox()
        try await sandbox.setFault(.init(path: "/resolve/p42", fault: .oversizedBody(3_000_000)))
        let answer = try response(await sandbox.handle(request(.get, "/paylisher/resolve/p42")))
        #expect(answer.body.count == 3_000_000)
        #expect((try? JSONDecoder().decode([Int].self, from: answer.body))?.count == 1_499_999)
    }

    @Test("the admin API scripts links, clicks, faults and the client IP, and reads events and requests back")
    func adminAPI() async throws {
        let sandbox = Sandbox()
        let describe = try response(await sandbox.handle(request(.get, "/_admin", host: "192.168.1.20:9000")))
        let description = try JSONDecoder().decode(SandboxAPI.Description.self, from: describe.body)
        #expect(description.provider(.dynalinks)?.baseURL.absoluteString == "http://192.168.1.20:9000/dynalinks")
        #expect(description.provider(.limeLink)?.hosts == ["limelink.org", "*.limelink.org"])

        let created = try response(
            await sandbox.handle(
                request(.post, "/_admin/limelink/links", body: #"{"project":"shop","suffix":"p42","uri":"shopapp://product/42"}"#)))
        #expect(created.status == 201)
        #expect(sandbox.limeLink.links.map(\.uri) == ["shopapp://product/42"])

        let phone = String(decoding: try JSONEncoder().encode(StaticDeviceInfo.iPhone), as: UTF8.self)
        let click = #"{"url":"https://shop.limelink.org/link/p42","device":"# + phone + "}"
        #expect(try response(await sandbox.handle(request(.post, "/_admin/limelink/clicks", body: click))).status == 201)
        #expect(sandbox.limeLink.clicks.map(\.userAgent) == ["iOS 17_4_1"])

        let fault =
            #"{"path":"/api/v1/stats/event","method":"POST","fault":{"kind":"status","status":503,"headers":{"Retry-After":"2"}},"times":1}"#
        #expect(try response(await sandbox.handle(request(.put, "/_admin/faults", body: fault))).status == 204)
        let faulted = try response(await sandbox.handle(request(.post, "/limelink/api/v1/stats/event", body: "{}")))
        #expect(faulted.status == 503)
        #expect(faulted.headers["Retry-After"] == "2")
        #expect(try response(await sandbox.handle(request(.post, "/limelink/api/v1/stats/event", body: "{}"))).status == 400)

        #expect(try response(await sandbox.handle(request(.put, "/_admin/client-ip", body: #"{"ip":"198.51.100.7"}"#))).status == 204)
        #expect(sandbox.simulator.clientIP == "198.51.100.7")

        let requests = try response(await sandbox.handle(request(.get, "/_admin/requests")))
        let received = try JSONDecoder().decode([HTTPRequest].self, from: requests.body)
        #expect(received.map(\.url.host) == ["limelink.org", "limelink.org"])
        let events = try response(await sandbox.handle(request(.get, "/_admin/linkforty/events")))
        #expect(String(decoding: events.body, as: UTF8.self) == "[]")
    }

    @Test(
        "bad admin calls are 400 or 404 with a message, and change nothing",
        arguments: [
            ("PUT", "/_admin/faults", #"{"path":"/x","fault":{"kind":"explode"}}"#, 400, "Unknown fault kind 'explode'"),
            ("PUT", "/_admin/faults", #"{"path":"/x","fault":{"kind":"delay","seconds":1e12}}"#, 400, "A delay is 0 to 86400 seconds"),
            ("PUT", "/_admin/faults", #"{"path":"/x","fault":{"kind":"delay","seconds":-1}}"#, 400, "A delay is 0 to 86400 seconds"),
            ("PUT", "/_admin/faults", #"{"path":"/x","fault":{"kind":"oversizedBody","bytes":1e15}}"#, 400, "not a valid"),
            (
                "PUT", "/_admin/faults", #"{"path":"/x","fault":{"kind":"oversizedBody","bytes":1000000000}}"#, 400,
                "An oversized body is 0 to 67108864 bytes"
            ),
            ("PUT", "/_admin/faults", #"{"path":"/x","fault":{"kind":"status","status":42}}"#, 400, "A status is 100 to 599"),
            ("POST", "/_admin/linkforty/links", #"{"deepLinkPath":"/x"}"#, 400, "not a valid LinkFortyLink"),
            (
                "POST", "/_admin/linkforty/clicks",
                #"{"url":"https://go.sandbox.test/none","device":{"osName":"iOS","osVersion":"17","timeZoneIdentifier":"UTC","preferredLanguages":[],"isSimulator":false}}"#,
                400, "LinkForty emulation has no link"
            ),
            ("POST", "/_admin/acme/links", "{}", 404, "No admin route"),
            ("GET", "/_admin/faults", "", 404, "No admin route"),
        ])
    func badAdminCalls(_ method: String, _ target: String, _ body: String, _ status: Int, _ message: String) async throws {
        let sandbox = Sandbox()
        let answer = try response(await sandbox.handle(request(HTTPMethod(rawValue: method), target, body: body)))
        #expect(answer.status == status)
        let failure = try JSONDecoder().decode(SandboxAPI.Failure.self, from: answer.body)
        #expect(failure.error.contains(message))
        #expect(sandbox.linkForty.links.isEmpty && sandbox.linkForty.clicks.isEmpty)
    }

    @Test(
        "faults are Codable as the admin API writes them",
        arguments: [
            ProviderSimulator.Fault.delay(2.5), .status(429, body: "{}", headers: ["Retry-After": "3"]), .malformedBody, .oversizedBody(10),
            .drop,
        ])
    func faultCoding(_ fault: ProviderSimulator.Fault) throws {
        let data = try JSONEncoder().encode(fault)
        #expect(try JSONDecoder().decode(ProviderSimulator.Fault.self, from: data) == fault)
    }

    @Test("a counted fault is used up; a host-scoped fault spares other hosts; the most specific route wins")
    func faultScheduling() async throws {
        let simulator = ProviderSimulator()
        simulator.addLinkForty(host: "a.test")
        simulator.addLinkForty(host: "b.test")
        simulator.setFault(.status(500), path: "/api/sdk/v1/health", times: 2)
        simulator.setFault(.status(418), host: "b.test", path: "/api/sdk/v1/health")
        func status(_ host: String) async throws -> Int {
            try await simulator.send(HTTPRequest(method: .get, url: URL(string: "https://\(host)/api/sdk/v1/health")!)).status
        }
        #expect(try await status("b.test") == 418)
        #expect(try await status("a.test") == 500)
        #expect(try await status("a.test") == 500)
        #expect(try await status("a.test") == 200)
        #expect(try await status("b.test") == 418)
        simulator.setFault(.drop, path: "/api/sdk/v1/health", times: 0)
        #expect(try await status("a.test") == 200)
    }
}
