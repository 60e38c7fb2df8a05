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

/// `POST /api/sdk/v1/install` and `GET /api/sdk/v1/attribution/{hash}` over a real socket.
@Suite("Install")
struct InstallTests {
    @Test(
        "a resolve from the phone, then its install from another address of its IPv6 /64 (privacy addresses rotate): attributed at 70 (an app's agent earns no user_agent), with the route, stored, on disk before the answer",
        arguments: TestEngine.available)
    func attributed(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("Xk9_2bQz")
            try await world.app().test(.live) { client in
                try await HTTPTest.resolveOnPhone(client, code: "Xk9_2bQz", key: world.sdkKey, ip: "2001:db8:7:1:a4c1:1f2e:93b0:7")
                world.clock.advance(hours: 2)
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post,
                    headers: HTTPTest.headers(key: world.sdkKey, ip: "2001:db8:7:1:5e21:88d0:4a7c:99", json: true),
                    body: HTTPTest.body(HTTPTest.installBody)
                ) { response async throws in
                    #expect(response.status == .ok)
                    let answer = try HTTPTest.object(response.body)
                    #expect(answer["attributed"] == true && answer["confidenceScore"] == 70)
                    #expect(answer["matchedFactors"] == ["ip", "timezone", "language", "screen"])
                    #expect(answer["attributionMethod"] == "fingerprint")
                    guard case .object(let data)? = answer["deepLinkData"], case .string(let installID)? = answer["installId"] else {
                        Issue.record("no deepLinkData or installId: \(answer)")
                        return
                    }
                    #expect(data["shortCode"] == "Xk9_2bQz" && data["linkId"] == .string(link.id))
                    #expect(data["deepLinkPath"] == "/product/42" && data["appScheme"] == "acmeshop", "the route, so no second request")
                    #expect(data["iosUrl"] == "https://apps.apple.com/app/id1" && data["androidUrl"] == .null)
                    #expect(data["webFallbackUrl"] == "https://acme.example/p/42" && data["originalUrl"] == "https://acme.example/p/42")
                    #expect(data["deepLinkParameters"] == ["productId": "42"] && data["utmParameters"] == ["source": "mail"])
                    #expect(data["confidenceScore"] == 70 && data["targetingRules"] == [:])
                    let clicks = try await world.store.clicks(link: link.id)
                    #expect(data["clickedAt"] == .string(ServerHTTP.sdkTimestamp(clicks[0].clickedAt)))
                    let stored = try await world.store.install(project: world.project.id, id: installID)
                    #expect(stored?.linkID == link.id && stored?.clickID == clicks[0].id && stored?.confidence == 70)
                    #expect(stored?.device.ip == "2001:db8:7:1:5e21:88d0:4a7c:99" && stored?.attributionWindowHours == 168)
                    // The install keeps the signals a click keeps, its network too, and its platform by name.
                    #expect(stored?.device.networkPrefix != nil && stored?.device.networkPrefix == clicks[0].device.networkPrefix)
                    #expect(stored?.device.timezone == "America/New_York" && stored?.device.screenWidth == 1179)
                    #expect(stored?.platform == .ios && clicks[0].platform == .ios)
                }
            }
        }
    }

    @Test(
        "a report with \"fingerprint\": false (the user has not allowed tracking) is never matched by its signals, and neither its address nor its signals are stored",
        arguments: TestEngine.available)
    func withoutFingerprint(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            _ = try await world.link("Xk9_2bQz")
            try await world.app().test(.live) { client in
                try await HTTPTest.resolveOnPhone(client, code: "Xk9_2bQz", key: world.sdkKey, ip: "198.51.100.7")
                var body = HTTPTest.installBody
                body["fingerprint"] = false
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, ip: "198.51.100.7", json: true),
                    body: HTTPTest.body(body)
                ) { response async throws in
                    #expect(response.status == .ok)
                    let answer = try HTTPTest.object(response.body)
                    #expect(answer["attributed"] == false && answer["attributionMethod"] == "none")
                    let installID = try #require(answer["installId"]?.stringValue)
                    let stored = try #require(try await world.store.install(project: world.project.id, id: installID))
                    #expect(stored.device.ip == nil && stored.device.timezone == nil && stored.device.screenWidth == nil)
                }
                // The same report with its fingerprint: matched.
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, ip: "198.51.100.7", json: true),
                    body: HTTPTest.body(HTTPTest.installBody)
                ) { response async throws in
                    #expect(try HTTPTest.object(response.body)["attributed"] == true)
                }
            }
        }
    }

    @Test(
        "54 fingerprints sprayed through the redirect from one address in minutes: a phone there that never tapped stays organic; its own tap past the spray's four hours is attributed",
        arguments: TestEngine.available)
    func sprayer(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            _ = try await world.link("Xk9_2bQz")
            try await world.app().test(.live) { client in
                for index in 0..<54 {
                    // One of them exactly the phone's (America/New_York, en, 1179 × 2556).
                    let width = index == 27 ? 1179 : 700 + index
                    try await RedirectTests.get(
                        client, "/Xk9_2bQz?fp_tz=America/New_York&fp_lang=en-US&fp_sw=\(width)&fp_sh=2556", userAgent: HTTPTest.safari,
                        ip: "198.51.100.23"
                    ) { response in #expect(response.status == .ok) }
                    world.clock.advance(hours: 4 / 3600)
                }
                world.clock.advance(hours: 1)
                func install() async throws -> [String: JSONValue] {
                    try await client.execute(
                        uri: "/api/sdk/v1/install", method: .post,
                        headers: HTTPTest.headers(key: world.sdkKey, ip: "198.51.100.23", json: true),
                        body: HTTPTest.body(HTTPTest.installBody)
                    ) { response async throws in try HTTPTest.object(response.body) }
                }
                #expect(try await install()["attributed"] == false, "the sprayer's look-alike click does not attribute")
                // Four hours after the spray (its longest span: issue 63, 6), the phone's own tap
                // from the same address.
                world.clock.advance(hours: 3.5)
                try await RedirectTests.get(
                    client, "/Xk9_2bQz?fp_tz=America/New_York&fp_lang=en-US&fp_sw=1179&fp_sh=2556", userAgent: HTTPTest.safari,
                    ip: "198.51.100.23"
                ) { response in #expect(response.status == .ok) }
                world.clock.advance(hours: 0.5)
                let answer = try await install()
                #expect(answer["attributed"] == true && answer["matchedFactors"] == ["ip", "address", "timezone", "language", "screen"])
            }
        }
    }

    @Test(
        "a tap in Safari and the install from the same household address: attributed at 90 with `address`, through the endpoints",
        arguments: TestEngine.available)
    func sameAddress(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("Xk9_2bQz", scheme: nil)
            try await world.app().test(.live) { client in
                try await RedirectTests.get(
                    client, "/Xk9_2bQz?fp_tz=America/New_York&fp_lang=en-US&fp_sw=1179&fp_sh=2556", userAgent: HTTPTest.safari,
                    ip: "198.51.100.23"
                ) { #expect($0.status == .found) }
                world.clock.advance(hours: 1)
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post,
                    headers: HTTPTest.headers(key: world.sdkKey, ip: "198.51.100.23", json: true),
                    body: HTTPTest.body(HTTPTest.installBody)
                ) { response async throws in
                    let answer = try HTTPTest.object(response.body)
                    #expect(answer["attributed"] == true && answer["confidenceScore"] == 90)
                    #expect(answer["matchedFactors"] == ["ip", "address", "timezone", "language", "screen"])
                }
            }
        }
    }

    @Test(
        "organic: Core's shape without deepLinkData (LinkForty's iOS SDK cannot decode {}), confidence 0; each report is a new install",
        arguments: TestEngine.available)
    func organic(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("Xk9_2bQz")
            try await world.app().test(.live) { client in
                var ids: Set<String> = []
                for ip in ["198.51.100.4", "127.0.0.1", "10.0.0.2"] {
                    try await client.execute(
                        uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, ip: ip, json: true),
                        body: HTTPTest.body(HTTPTest.installBody)
                    ) { response async throws in
                        #expect(response.status == .ok)
                        let answer = try HTTPTest.object(response.body)
                        #expect(answer["attributed"] == false && answer["confidenceScore"] == 0 && answer["matchedFactors"] == [])
                        #expect(answer["deepLinkData"] == nil && answer["attributionMethod"] == "none")
                        if case .string(let id)? = answer["installId"] { ids.insert(id) }
                    }
                }
                #expect(ids.count == 3)
            }
        }
    }

    @Test("on one machine (the Simulator and its Safari): loopback matches only with matchPrivateNetworks", arguments: TestEngine.available)
    func privateNetworks(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("Xk9_2bQz")
            for allowed in [false, true] {
                try await world.app(ServerConfiguration(matchPrivateNetworks: allowed)).test(.live) { client in
                    try await HTTPTest.resolveOnPhone(client, code: "Xk9_2bQz", key: world.sdkKey)
                    try await client.execute(
                        uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                        body: HTTPTest.body(HTTPTest.installBody)
                    ) { response async throws in
                        let answer = try HTTPTest.object(response.body)
                        #expect(answer["attributed"] == .bool(allowed), "matchPrivateNetworks: \(allowed)")
                    }
                }
            }
        }
    }

    @Test("the project's own clicks only: another project's install from the same phone is organic", arguments: TestEngine.available)
    func projectsAreIsolated(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("Xk9_2bQz")
            try await world.app().test(.live) { client in
                try await HTTPTest.resolveOnPhone(client, code: "Xk9_2bQz", key: world.sdkKey, ip: "203.0.113.7")
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post,
                    headers: HTTPTest.headers(key: world.otherProjectKey, ip: "203.0.113.7", json: true),
                    body: HTTPTest.body(HTTPTest.installBody)
                ) { response async throws in
                    #expect(try HTTPTest.object(response.body)["attributed"] == false)
                }
            }
        }
    }

    @Test("a link's window past: organic; the window is the link's, not the body's attributionWindowHours", arguments: TestEngine.available)
    func windowIsTheLinks(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("short", window: 1)
            try await world.app().test(.live) { client in
                try await HTTPTest.resolveOnPhone(client, code: "short", key: world.sdkKey, ip: "203.0.113.7")
                world.clock.advance(hours: 1.5)
                var body = HTTPTest.installBody
                body["attributionWindowHours"] = 2160
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, ip: "203.0.113.7", json: true),
                    body: HTTPTest.body(body)
                ) { response async throws in
                    #expect(try HTTPTest.object(response.body)["attributed"] == false)
                }
            }
        }
    }

    @Test(
        "the attribution lookup finds the newest install by LinkForty's fingerprint hash, in the caller's project only",
        arguments: TestEngine.available)
    func attributionLookup(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("Xk9_2bQz")
            try await world.app().test(.live) { client in
                try await HTTPTest.resolveOnPhone(client, code: "Xk9_2bQz", key: world.sdkKey, ip: "203.0.113.7")
                var installID: JSONValue?
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, ip: "203.0.113.7", json: true),
                    body: HTTPTest.body(HTTPTest.installBody)
                ) { installID = try HTTPTest.object($0.body)["installId"] }
                let hash = DeferredMatcher.fingerprintHash(
                    DeviceSignals(
                        ip: "203.0.113.7", userAgent: "Acme Shop/2.3.0 iOS/17.4.1", timezone: "America/New_York", language: "en_US",
                        screenWidth: 1179, screenHeight: 2556),
                    platform: "iOS", platformVersion: "17.4.1")
                try await client.execute(uri: "/api/sdk/v1/attribution/\(hash)", method: .get, headers: HTTPTest.headers(key: world.sdkKey))
                {
                    (response: TestResponse) async throws in
                    #expect(response.status == .ok)
                    let answer = try HTTPTest.object(response.body)
                    #expect(answer["attributed"] == true)
                    guard case .object(let install)? = answer["installEvent"], case .object(let link)? = answer["linkData"] else {
                        Issue.record("\(answer)")
                        return
                    }
                    #expect(install["id"] == installID && install["confidenceScore"] == 90, "the same address as the resolve")
                    #expect(link["shortCode"] == "Xk9_2bQz")
                }
                for (path, key) in [
                    ("/api/sdk/v1/attribution/\(hash)", world.otherProjectKey), ("/api/sdk/v1/attribution/nothex", world.sdkKey),
                ] {
                    try await client.execute(uri: path, method: .get, headers: HTTPTest.headers(key: key)) { response async throws in
                        #expect(response.status == .notFound)
                        #expect(try HTTPTest.object(response.body) == ["error": "No install event found for this fingerprint"])
                    }
                }
            }
        }
    }
}
