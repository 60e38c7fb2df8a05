import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import Logging
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The pasteboard landing page and its click tokens: an iPhone without the app gets one button
/// that copies the link with a token naming its click, and an install reporting that token is
/// attributed to the click with certainty, once.
@Suite("Pasteboard landing page")
struct LandingPageTests {
    static let tap = "?fp_tz=America/New_York&fp_lang=en-US&fp_sw=1179&fp_sh=2556"

    /// The page's copied link (`data-link`), unescaped.
    static func copiedLink(_ page: String) -> String? {
        guard let start = page.range(of: "data-link=\"")?.upperBound, let end = page[start...].firstIndex(of: "\"") else { return nil }
        return String(page[start..<end]).replacingOccurrences(of: "&amp;", with: "&")
    }

    static func token(_ page: String) -> String? {
        copiedLink(page).flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == "lr_click" }?.value }
    }

    static func install(
        _ client: some TestClientProtocol, key: String, token: String?, ip: String = "198.51.100.99", screenWidth: Int? = nil
    ) async throws -> [String: JSONValue] {
        var body = HTTPTest.installBody
        if let token { body["clickToken"] = .string(token) }
        // Another device: another screen.
        if let screenWidth { body["screenWidth"] = .int(screenWidth) }
        return try await client.execute(
            uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: key, ip: ip, json: true), body: HTTPTest.body(body)
        ) { response async throws in
            #expect(response.status == .ok)
            return try HTTPTest.object(response.body)
        }
    }

    @Test("off by default: the iPhone goes to the store, no token is made", arguments: TestEngine.available)
    func offByDefault(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("spring", scheme: nil)
            try await world.app().test(.live) { client in
                try await RedirectTests.get(client, "/spring" + Self.tap, userAgent: HTTPTest.safari) { response async throws in
                    #expect(response.status == .found && response.headers[.location] == "https://apps.apple.com/app/id1")
                }
            }
            #expect(try await world.store.engine.select("SELECT token_hash FROM click_tokens").isEmpty)
        }
    }

    @Test(
        "on for the project: the page with the app's name and icon, one button to the store copying the link with a token of its click",
        arguments: TestEngine.available)
    func page(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            try await world.app().test(.live) { client in
                try await client.execute(
                    uri: "/api/landing-page", method: .put, headers: HTTPTest.headers(key: world.adminKey, json: true),
                    body: HTTPTest.body(["enabled": true, "appName": "Acme <Shop>", "appIconUrl": "https://acme.example/icon.png"])
                ) { response async throws in
                    #expect(response.status == .ok)
                    #expect(
                        try HTTPTest.object(response.body) == [
                            "enabled": true, "appName": "Acme <Shop>", "appIconUrl": "https://acme.example/icon.png",
                        ])
                }
                try await RedirectTests.get(client, "/spring" + Self.tap, userAgent: HTTPTest.safari) { response async throws in
                    #expect(response.status == .ok)
                    let page = String(buffer: response.body)
                    #expect(page.contains(#"<a id="get" class="button" href="https://apps.apple.com/app/id1""#))
                    #expect(page.contains("Get Acme &lt;Shop&gt;") && !page.contains("Acme <Shop>"))
                    #expect(page.contains(#"<img src="https://acme.example/icon.png""#) && page.contains(#"<html lang="en">"#))
                    #expect(page.contains("navigator.clipboard.writeText"))
                    let policy = response.headers[.contentSecurityPolicy] ?? ""
                    #expect(
                        policy.contains("img-src https:") && policy.contains("script-src 'nonce-") && policy.hasPrefix("default-src 'none'")
                    )
                    let copied = try #require(Self.copiedLink(page))
                    #expect(copied.hasPrefix("http://127.0.0.1") || copied.hasPrefix("http://localhost"), "\(copied)")
                    #expect(copied.contains("/spring?lr_click="))
                    let token = try #require(Self.token(page))
                    #expect(ClickTokens.isWellFormed(token))
                    // Stored by its hash alone, naming the click just stored, until the link's window ends.
                    let rows = try await world.store.engine.select("SELECT token_hash, click_id, expires_at FROM click_tokens")
                    let clicks = try await world.store.clicks(link: link.id)
                    #expect(rows.count == 1 && clicks.count == 1)
                    #expect(try rows.first?["token_hash"] == ClickTokens.hash(token))
                    #expect(try rows.first?["click_id"] == clicks.first?.id)
                    #expect(try rows.first?["expires_at"] == world.clock.date.addingTimeInterval(168 * 3600).storedPrecision)
                }
                // Without JavaScript (the fingerprint page's `lf_fp=0`) nothing can be copied: the
                // link's usual way (here the interstitial that tries the app's scheme, then the
                // store), and no token.
                try await RedirectTests.get(client, "/spring?lf_fp=0", userAgent: HTTPTest.safari) { response async throws in
                    let page = String(buffer: response.body)
                    #expect(response.status == .ok && page.contains("Open in the app") && !page.contains("data-link"))
                }
                #expect(try await world.store.engine.select("SELECT token_hash FROM click_tokens").count == 1)
                // A desktop browser and Android are not shown it.
                try await RedirectTests.get(
                    client, "/spring", userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/124.0 Safari/537.36"
                ) {
                    #expect($0.status == .found)
                }
            }
        }
    }

    @Test(
        "a link may turn the page on or off against its project; a universal link or no store URL means no page",
        arguments: TestEngine.available)
    func perLink(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var on = try await world.link("on", scheme: nil)
            on.landingPage = true
            #expect(try await world.store.updateLink(on))
            var universal = try await world.link("universal", scheme: nil)
            universal.landingPage = true
            universal.iosUniversalLink = "https://app.acme.example/p/42"
            #expect(try await world.store.updateLink(universal))
            try await world.link("default", scheme: nil)
            try await world.app().test(.live) { client in
                try await RedirectTests.get(client, "/on" + Self.tap, userAgent: HTTPTest.safari) { #expect($0.status == .ok) }
                try await RedirectTests.get(client, "/universal" + Self.tap, userAgent: HTTPTest.safari) {
                    #expect(
                        $0.status == .found && $0.headers[.location]?.hasPrefix("https://app.acme.example/p/42") == true,
                        "\($0.headers[.location] ?? "")")
                }
                try await RedirectTests.get(client, "/default" + Self.tap, userAgent: HTTPTest.safari) { #expect($0.status == .found) }
                // Turned on for the project; the link made with "landingPage": false keeps going to the store.
                try await client.execute(
                    uri: "/api/landing-page", method: .put, headers: HTTPTest.headers(key: world.adminKey, json: true),
                    body: HTTPTest.body(["enabled": true])
                ) { #expect($0.status == .ok) }
                try await client.execute(
                    uri: "/api/links", method: .post, headers: HTTPTest.headers(key: world.adminKey, json: true),
                    body: HTTPTest.body([
                        "customCode": "off", "originalUrl": "https://acme.example/x", "iosAppStoreUrl": "https://apps.apple.com/app/id1",
                        "landingPage": false,
                    ])
                ) { response async throws in
                    #expect(response.status == .created)
                    #expect(try HTTPTest.object(response.body)["landing_page"] == false)
                }
                try await RedirectTests.get(client, "/off" + Self.tap, userAgent: HTTPTest.safari) { #expect($0.status == .found) }
                try await RedirectTests.get(client, "/default" + Self.tap, userAgent: HTTPTest.safari) { #expect($0.status == .ok) }
            }
        }
    }

    @Test("the settings: admin only, fields checked, an icon only over https, an unknown field refused", arguments: TestEngine.available)
    func settings(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                for (key, status) in [(world.sdkKey, HTTPResponse.Status.forbidden), (nil, .unauthorized)]
                    as [(String?, HTTPResponse.Status)]
                {
                    try await client.execute(uri: "/api/landing-page", method: .get, headers: HTTPTest.headers(key: key)) {
                        #expect($0.status == status)
                    }
                }
                for (body, field) in [
                    (["enabled": "yes"], "enabled"), (["appIconUrl": "http://acme.example/i.png"], "appIconUrl"),
                    (["appName": .string(String(repeating: "a", count: 129))], "appName"), (["colour": "red"], "colour"),
                ] as [([String: JSONValue], String)] {
                    try await client.execute(
                        uri: "/api/landing-page", method: .put, headers: HTTPTest.headers(key: world.adminKey, json: true),
                        body: HTTPTest.body(body)
                    ) { response async throws in
                        #expect(response.status == .badRequest)
                        #expect(try HTTPTest.object(response.body)["field"] == .string(field), "\(body)")
                    }
                }
                try await client.execute(uri: "/api/landing-page", method: .get, headers: HTTPTest.headers(key: world.adminKey)) {
                    response async throws in
                    #expect(try HTTPTest.object(response.body) == ["enabled": false, "appName": nil, "appIconUrl": nil])
                }
            }
        }
    }
}
