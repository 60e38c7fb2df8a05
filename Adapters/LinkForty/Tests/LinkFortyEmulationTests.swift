import Foundation
import LinkRelay
import LinkRelayLinkForty
import LinkRelaySimulator
import LinkRelayTesting
import Testing

@testable import LinkRelayLinkFortyEmulation

@Suite("LinkForty emulation (Core's responses)")
struct LinkFortyEmulationTests {
    let simulator = ProviderSimulator(clock: ManualClock())
    let server: LinkFortyEmulation

    init() {
        server = simulator.addLinkForty(host: "go.acme.app")
    }

    func send(_ method: HTTPMethod, _ path: String, json body: String? = nil, headers: HTTPHeaders = [:]) async throws -> (Int, JSONValue) {
        var request = HTTPRequest(
            method: method, url: URL(string: "https://go.acme.app\(path)")!, headers: headers, body: body.map { Data($0.utf8) })
        request.headers["Content-Type"] = "application/json"
        let response = try await simulator.send(request)
        return (response.status, (try? JSONDecoder().decode(JSONValue.self, from: response.body)) ?? .null)
    }

    @Test("organic install: all five keys, deepLinkData {}, score 0")
    func organicInstall() async throws {
        let (status, body) = try await send(.post, "/api/sdk/v1/install", json: #"{"userAgent":"A/1 iOS/17"}"#)
        #expect(status == 200)
        guard case .object(let object) = body else { throw DeepLinkError(.decoding, "not an object") }
        #expect(Set(object.keys) == ["installId", "attributed", "confidenceScore", "matchedFactors", "deepLinkData"])
        #expect(object["deepLinkData"] == [:])
        #expect(object["confidenceScore"] == 0)
        #expect(object["attributed"] == false)
    }

    @Test("validation: null for an optional, or a missing userAgent, is a 500 with zod's message")
    func validation() async throws {
        let (status, body) = try await send(.post, "/api/sdk/v1/install", json: #"{"userAgent":"A","deviceId":null}"#)
        #expect(status == 500)
        #expect(body.objectValue?["error"] == "Internal Server Error")
        #expect(body.objectValue?["message"]?.stringValue?.contains("deviceId") == true)
        #expect(try await send(.post, "/api/sdk/v1/install", json: "{}").0 == 500)
        #expect(try await send(.post, "/api/sdk/v1/install", json: "not json").0 == 400)
        #expect(try await send(.post, "/api/sdk/v1/install", json: #"{"userAgent":"A","language":"zh-Hans_CN@x"}"#).0 == 500)
    }

    @Test("numbers past Int's range in a request body are not integers, and do not stop the server")
    func hugeNumbers() async throws {
        let (status, _) = try await send(
            .post, "/api/sdk/v1/install", json: #"{"userAgent":"A/1 iOS/17","screenWidth":1e300,"screenHeight":-1e300}"#)
        #expect(status == 200)
        #expect(JSONValue.double(1e300).intValue == nil)
        #expect(JSONValue.double(390).intValue == 390)
        #expect(JSONValue.double(390.5).intValue == nil)
    }

    @Test("resolve: falsy fields omitted, {} columns kept, milliseconds; wrong slug, inactive, expired are 404")
    func resolve() async throws {
        server.createLink(shortCode: "Qp3rT7wx", utmParameters: [:], deepLinkParameters: [:])
        server.createLink(shortCode: "slugged", templateSlug: "k3m9x2qa")
        server.createLink(shortCode: "off", isActive: false)
        server.createLink(shortCode: "old", expiresAt: Date(timeIntervalSince1970: 0))
        let (status, body) = try await send(.get, "/api/sdk/v1/resolve/Qp3rT7wx?fp_tz=Etc/GMT%2B5&fp_sw=1179&fp_sh=2556")
        #expect(status == 200)
        #expect(Set(body.objectValue?.keys.map { $0 } ?? []) == ["shortCode", "linkId", "utmParameters", "customParameters", "clickedAt"])
        #expect(body.objectValue?["clickedAt"]?.stringValue?.contains(".") == true)
        #expect(server.clicks.last?.fingerprint.timezone == "Etc/GMT+5")
        #expect(server.clicks.last?.fingerprint.screenWidth == 1179)
        #expect(try await send(.get, "/api/sdk/v1/resolve/k3m9x2qa/slugged").0 == 200)
        #expect(try await send(.get, "/api/sdk/v1/resolve/slugged").0 == 200)
        for path in ["/api/sdk/v1/resolve/wrong/slugged", "/api/sdk/v1/resolve/off", "/api/sdk/v1/resolve/old", "/api/sdk/v1/resolve/none"]
        {
            let (notFound, error) = try await send(.get, path)
            #expect(notFound == 404)
            #expect(error == ["error": "Link not found"])
        }
    }

    @Test("a resolve click from the SDK matches a later install from the same device with score 100")
    func resolveThenInstallScores100() async throws {
        server.createLink(shortCode: "abc")
        let agent: HTTPHeaders = ["User-Agent": "Acme Shop/2.3.0 iOS/17.4.1"]
        _ = try await send(.get, "/api/sdk/v1/resolve/abc?fp_tz=Europe/Berlin&fp_lang=de_DE&fp_sw=1179&fp_sh=2556", headers: agent)
        let (_, body) = try await send(
            .post, "/api/sdk/v1/install",
            json:
                #"{"userAgent":"Acme Shop/2.3.0 iOS/17.4.1","timezone":"Europe/Berlin","language":"de_DE","screenWidth":1179,"screenHeight":2556}"#
        )
        #expect(body.objectValue?["confidenceScore"] == 100)
        #expect(body.objectValue?["deepLinkData"]?.objectValue?["shortCode"] == "abc")
        #expect(body.objectValue?["deepLinkData"]?.objectValue?["iosUrl"] == .null)
    }

    @Test("the install matches from the X-Forwarded-For address; loopback never matches")
    func clientAddress() async throws {
        server.createLink(shortCode: "abc")
        server.recordClick(shortCode: "abc", fingerprint: .init(ip: "127.0.0.1", userAgent: "A/1 iOS/17"), at: simulator.clock.currentDate)
        simulator.clientIP = "127.0.0.1"
        let (_, loopback) = try await send(.post, "/api/sdk/v1/install", json: #"{"userAgent":"A/1 iOS/17"}"#)
        #expect(loopback.objectValue?["attributed"] == false)
        server.recordClick(
            shortCode: "abc", fingerprint: .init(ip: "198.51.100.1", userAgent: "A/1 iOS/17"), at: simulator.clock.currentDate)
        let (_, forwarded) = try await send(
            .post, "/api/sdk/v1/install", json: #"{"userAgent":"A/1 iOS/17"}"#, headers: ["X-Forwarded-For": "198.51.100.9, 10.0.0.1"])
        #expect(forwarded.objectValue?["attributed"] == true)
        #expect(server.installs.last?.fingerprint.ip == "198.51.100.9")
    }

    @Test("events: stored with Core's answer; unknown install 404; non-UUID install id 500")
    func events() async throws {
        let (_, install) = try await send(.post, "/api/sdk/v1/install", json: #"{"userAgent":"A"}"#)
        let installID = try #require(install.objectValue?["installId"]?.stringValue)
        let (status, body) = try await send(
            .post, "/api/sdk/v1/event",
            json: #"{"installId":"\#(installID)","eventName":"signup","eventData":{"a":1},"timestamp":"2026-03-02T08:05:00Z"}"#)
        #expect(status == 200)
        #expect(body.objectValue?["acknowledged"] == true)
        #expect(server.events.map(\.name) == ["signup"])
        let (unknown, error) = try await send(
            .post, "/api/sdk/v1/event", json: #"{"installId":"00000000-0000-4000-8000-000000000000","eventName":"x"}"#)
        #expect(unknown == 404)
        #expect(error == ["error": "Install event not found"])
        #expect(try await send(.post, "/api/sdk/v1/event", json: #"{"installId":"nope","eventName":"x"}"#).0 == 500)
    }

    @Test("Core's /api/links needs originalUrl; Cloud's endpoint needs a key; unknown routes are Fastify 404s")
    func linkCreation() async throws {
        #expect(try await send(.post, "/api/links", json: #"{"title":"x"}"#).0 == 500)
        #expect(try await send(.post, "/api/sdk/v1/links", json: #"{"title":"x"}"#).0 == 401)
        let (status, body) = try await send(.get, "/api/unknown/route/here")
        #expect(status == 404)
        #expect(body.objectValue?["error"] == "Not Found")
    }

    @Test("faults: status, malformed body, drop, outage, unknown host")
    func faults() async throws {
        simulator.setFault(.status(503), path: "/api/sdk/v1/install")
        #expect(try await send(.post, "/api/sdk/v1/install", json: #"{"userAgent":"A"}"#).0 == 503)
        simulator.setFault(.drop, method: .post, path: "/api/sdk/v1/install")
        await #expect(throws: DeepLinkError.self) { try await send(.post, "/api/sdk/v1/install", json: "{}") }
        simulator.clearFaults()
        simulator.isReachable = false
        await #expect(throws: DeepLinkError.self) { try await send(.post, "/api/sdk/v1/install", json: "{}") }
        simulator.isReachable = true
        let unknownHost = HTTPRequest(method: .get, url: URL(string: "https://nowhere.example/x")!)
        await #expect(throws: DeepLinkError.self) { try await simulator.send(unknownHost) }
    }
}

@Suite("The LinkForty emulation's keys")
struct LinkFortyEmulationKeyTests {
    @Test("with keys set, a wrong key gets Cloud's 401 and the app hears of it as Getting Started shows; the right key works")
    func wrongKey() async throws {
        for (key, rejected) in [("lf_wrong", true), ("lf_right", false)] {
            let simulator = ProviderSimulator(clock: ManualClock())
            _ = simulator.addLinkForty(host: "go.acme.app", apiKeys: ["lf_right"])
            var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: simulator.clock, transport: simulator)
            configuration.retryPolicy = .none
            let warnings = Locked<[String]>([])
            configuration.logSink = LogSink(minimumLevel: .warning) { record in warnings.withLock { $0.append(record.message) } }
            let client = DeepLinkClient(
                backend: LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"), apiKey: key)), configuration: configuration)
            await client.start()
            let outcome = await client.installOutcome()
            if rejected {
                guard case .failed(let error) = outcome else {
                    Issue.record("expected a failure, got \(outcome)")
                    continue
                }
                #expect(error.code == .unauthorized)
                #expect(
                    warnings.withLock { $0 }.contains(
                        "The provider rejected the API key: linkforty answered 401 while asking for the install match. Check the key (and its permissions) in the backend's configuration."
                    ))
                #expect(warnings.withLock { $0 }.allSatisfy { !$0.contains("lf_wrong") })
            } else {
                #expect(outcome == .organic(outcome.attribution))
            }
            await client.shutdown()
        }
    }

    @Test("without keys it accepts any request, as Core does; links never need a key")
    func coreAcceptsAny() async throws {
        let simulator = ProviderSimulator(clock: ManualClock())
        let server = simulator.addLinkForty(host: "go.acme.app", apiKeys: ["lf_right"])
        server.createLink(shortCode: "spring")
        let redirect = try await simulator.send(HTTPRequest(method: .get, url: url("https://go.acme.app/spring")))
        #expect(redirect.status == 302 || redirect.status == 301 || redirect.status == 200)
        let open = ProviderSimulator(clock: ManualClock())
        _ = open.addLinkForty(host: "go.acme.app")
        let health = try await open.send(HTTPRequest(method: .get, url: url("https://go.acme.app/api/sdk/v1/health")))
        #expect(health.status == 200)
    }
}
