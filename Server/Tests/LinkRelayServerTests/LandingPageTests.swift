import Foundation
import Hummingbird
import Logging
import HummingbirdTesting
import LinkRelay
import Testing

@testable import LinkRelayServer

/// The pasteboard landing page and its click tokens: an iPhone without the app gets one button
/// that copies the link with a token naming its click, and an install reporting that token is
/// attributed to the click with certainty, once.
@Suite("Pasteboard landing page and click tokens")
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

    @Test("on for the project: the page with the app's name and icon, one button to the store copying the link with a token of its click", arguments: TestEngine.available)
    func page(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            try await world.app().test(.live) { client in
                try await client.execute(
                    uri: "/api/landing-page", method: .put, headers: HTTPTest.headers(key: world.adminKey, json: true),
                    body: HTTPTest.body(["enabled": true, "appName": "Acme <Shop>", "appIconUrl": "https://acme.example/icon.png"])
                ) { response async throws in
                    #expect(response.status == .ok)
                    #expect(try HTTPTest.object(response.body) == ["enabled": true, "appName": "Acme <Shop>", "appIconUrl": "https://acme.example/icon.png"])
                }
                try await RedirectTests.get(client, "/spring" + Self.tap, userAgent: HTTPTest.safari) { response async throws in
                    #expect(response.status == .ok)
                    let page = String(buffer: response.body)
                    #expect(page.contains(#"<a id="get" class="button" href="https://apps.apple.com/app/id1""#))
                    #expect(page.contains("Get Acme &lt;Shop&gt;") && !page.contains("Acme <Shop>"))
                    #expect(page.contains(#"<img src="https://acme.example/icon.png""#) && page.contains(#"<html lang="en">"#))
                    #expect(page.contains("navigator.clipboard.writeText"))
                    let policy = response.headers[.contentSecurityPolicy] ?? ""
                    #expect(policy.contains("img-src https:") && policy.contains("script-src 'nonce-") && policy.hasPrefix("default-src 'none'"))
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
                try await RedirectTests.get(client, "/spring", userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/124.0 Safari/537.36") {
                    #expect($0.status == .found)
                }
            }
        }
    }

    @Test("a link may turn the page on or off against its project; a universal link or no store URL means no page", arguments: TestEngine.available)
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
                    #expect($0.status == .found && $0.headers[.location]?.hasPrefix("https://app.acme.example/p/42") == true, "\($0.headers[.location] ?? "")")
                }
                try await RedirectTests.get(client, "/default" + Self.tap, userAgent: HTTPTest.safari) { #expect($0.status == .found) }
                // Turned on for the project; the link made with "landingPage": false keeps going to the store.
                try await client.execute(
                    uri: "/api/landing-page", method: .put, headers: HTTPTest.headers(key: world.adminKey, json: true), body: HTTPTest.body(["enabled": true])
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
                for (key, status) in [(world.sdkKey, HTTPResponse.Status.forbidden), (nil, .unauthorized)] as [(String?, HTTPResponse.Status)] {
                    try await client.execute(uri: "/api/landing-page", method: .get, headers: HTTPTest.headers(key: key)) { #expect($0.status == status) }
                }
                for (body, field) in [
                    (["enabled": "yes"], "enabled"), (["appIconUrl": "http://acme.example/i.png"], "appIconUrl"),
                    (["appName": .string(String(repeating: "a", count: 129))], "appName"), (["colour": "red"], "colour"),
                ] as [([String: JSONValue], String)] {
                    try await client.execute(
                        uri: "/api/landing-page", method: .put, headers: HTTPTest.headers(key: world.adminKey, json: true), body: HTTPTest.body(body)
                    ) { response async throws in
                        #expect(response.status == .badRequest)
                        #expect(try HTTPTest.object(response.body)["field"] == .string(field), "\(body)")
                    }
                }
                try await client.execute(uri: "/api/landing-page", method: .get, headers: HTTPTest.headers(key: world.adminKey)) { response async throws in
                    #expect(try HTTPTest.object(response.body) == ["enabled": false, "appName": nil, "appIconUrl": nil])
                }
            }
        }
    }

    @Test("an install with the token: attributed to that click at 100, method pasteboard, the right link", arguments: TestEngine.available)
    func tokenAttribution(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var springLink = try await world.link("spring")
            springLink.landingPage = true
            #expect(try await world.store.updateLink(springLink))
            let spring = springLink
            // Another link tapped later from the install's own address: the fingerprint's pick.
            try await world.link("summer", scheme: nil)
            try await world.app().test(.live) { client in
                var page = ""
                try await RedirectTests.get(client, "/spring" + Self.tap, userAgent: HTTPTest.safari, ip: "203.0.113.50") { page = String(buffer: $0.body) }
                let token = try #require(Self.token(page))
                world.clock.advance(hours: 0.1)
                try await RedirectTests.get(client, "/summer" + Self.tap, userAgent: HTTPTest.safari, ip: "198.51.100.99") { #expect($0.status == .found) }
                world.clock.advance(hours: 0.1)

                let first = try await Self.install(client, key: world.sdkKey, token: token)
                #expect(first["attributed"] == true && first["attributionMethod"] == "pasteboard" && first["confidenceScore"] == 100)
                #expect(first["clickToken"] == "accepted" && first["matchedFactors"] == ["click_token"])
                guard case .object(let data)? = first["deepLinkData"] else { Issue.record("no deepLinkData"); return }
                #expect(data["shortCode"] == "spring" && data["linkId"] == .string(spring.id) && data["deepLinkPath"] == "/product/42")
                let clicks = try await world.store.clicks(link: spring.id)
                #expect(data["clickId"] == clicks.first.map { .string($0.id) })
                let stored = try await world.store.install(project: world.project.id, id: first["installId"]?.stringValue ?? "")
                #expect(stored?.method == .pasteboard && stored?.clickID == clicks.first?.id && stored?.confidence == 100)
            }
        }
    }

    @Test(
        "a used token: the same install reporting again gets its install back, nothing stored; another device holding the link is attributed to it too, and past the window it is not",
        arguments: TestEngine.available)
    func usedToken(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var springLink = try await world.link("spring", window: 24)
            springLink.landingPage = true
            #expect(try await world.store.updateLink(springLink))
            let spring = springLink
            try await world.link("summer", scheme: nil)
            try await world.app().test(.live) { client in
                var page = ""
                try await RedirectTests.get(client, "/spring" + Self.tap, userAgent: HTTPTest.safari, ip: "203.0.113.50") { page = String(buffer: $0.body) }
                let token = try #require(Self.token(page))
                world.clock.advance(hours: 0.1)
                try await RedirectTests.get(client, "/summer" + Self.tap, userAgent: HTTPTest.safari, ip: "198.51.100.99") { #expect($0.status == .found) }
                let click = try #require(try await world.store.clicks(link: spring.id).first)
                world.clock.advance(hours: 0.1)
                let first = try await Self.install(client, key: world.sdkKey, token: token)
                #expect(first["clickToken"] == "accepted")
                let installs = { try await world.store.installs(project: world.project.id, link: nil, limit: 100) }
                #expect(try await installs().count == 1)

                // Its answer was lost; the app sends the same report on its next launch, from
                // another network. Before, that was a second install, matched by fingerprint
                // to summer, while the app delivered spring as certain and kept the second id.
                world.clock.advance(hours: 1)
                let again = try await Self.install(client, key: world.sdkKey, token: token, ip: "192.0.2.44")
                #expect(again["installId"] == first["installId"] && again["clickToken"] == "accepted")
                #expect(again["attributionMethod"] == "pasteboard" && again["deepLinkData"] == first["deepLinkData"])
                #expect(try await installs().count == 1)

                // The link reached another device too (the pasteboard syncs across a person's
                // devices): the app there holds it and delivers it as certain, and so does the
                // server now, to the same link and click, saying the tap was counted before.
                let other = try await Self.install(client, key: world.sdkKey, token: token, screenWidth: 820)
                #expect(other["installId"] != first["installId"] && other["clickToken"] == "used")
                #expect(other["attributed"] == true && other["attributionMethod"] == "pasteboard" && other["confidenceScore"] == 100)
                #expect(other["matchedFactors"] == ["click_token_used"])
                guard case .object(let data)? = other["deepLinkData"] else { Issue.record("no deepLinkData"); return }
                #expect(data["shortCode"] == "spring" && data["clickId"] == .string(click.id))
                let stored = try await world.store.install(project: world.project.id, id: other["installId"]?.stringValue ?? "")
                #expect(stored?.linkID == spring.id && stored?.clickID == click.id && stored?.method == .pasteboard)
                #expect(try await installs().count == 2)
                let why = Dashboard.whyItMatched(stored?.matchedFactors ?? [])
                #expect(why.contains("had brought an earlier install"))

                // Past the link's window the token decides nothing for another device; the same
                // install still gets its own back.
                world.clock.advance(hours: 24)
                let late = try await Self.install(client, key: world.sdkKey, token: token, screenWidth: 744)
                #expect(late["clickToken"] == "expired" && late["attributionMethod"] != "pasteboard")
                let lateAgain = try await Self.install(client, key: world.sdkKey, token: token)
                #expect(lateAgain["installId"] == first["installId"])
            }
        }
    }

    @Test("a token of another project, a made-up or malformed one, an expired one: never attributed by token, each answered why", arguments: TestEngine.available)
    func refusedTokens(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var spring = try await world.link("spring", window: 1)
            spring.landingPage = true
            #expect(try await world.store.updateLink(spring))
            try await world.app().test(.live) { client in
                var tokens: [String] = []
                for _ in 0..<2 {
                    try await RedirectTests.get(client, "/spring" + Self.tap, userAgent: HTTPTest.safari) { tokens.append(Self.token(String(buffer: $0.body)) ?? "") }
                }
                let other = try await Self.install(client, key: world.otherProjectKey, token: tokens[0])
                #expect(other["clickToken"] == "unknown" && other["attributed"] == false)
                for made in [ClickTokens.make(), "short", String(repeating: "é", count: 32), String(repeating: "a", count: 256)] {
                    let answer = try await Self.install(client, key: world.sdkKey, token: made)
                    #expect(answer["clickToken"] == "unknown" && answer["attributionMethod"] != "pasteboard")
                }
                // The other project's try did not use it up.
                #expect(try await Self.install(client, key: world.sdkKey, token: tokens[0])["clickToken"] == "accepted")
                world.clock.advance(hours: 1.01)
                #expect(try await Self.install(client, key: world.sdkKey, token: tokens[1])["clickToken"] == "expired")
                // Past 256 characters the body is refused as it is for every field.
                var body = HTTPTest.installBody
                body["clickToken"] = .string(String(repeating: "a", count: 257))
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true), body: HTTPTest.body(body)
                ) { #expect($0.status == .badRequest) }
            }
        }
    }

    @Test("installs at once with one token from eight devices: exactly one claims its click", arguments: TestEngine.available)
    func oneUse(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var spring = try await world.link("spring")
            spring.landingPage = true
            #expect(try await world.store.updateLink(spring))
            try await world.app().test(.live) { client in
                var page = ""
                try await RedirectTests.get(client, "/spring" + Self.tap, userAgent: HTTPTest.safari) { page = String(buffer: $0.body) }
                let token = try #require(Self.token(page))
                let answers = try await withThrowingTaskGroup(of: JSONValue?.self) { group in
                    for index in 0..<8 {
                        group.addTask {
                            try await Self.install(client, key: world.sdkKey, token: token, ip: "192.0.2.\(index + 1)", screenWidth: 700 + index)["clickToken"]
                        }
                    }
                    return try await group.reduce(into: [JSONValue?]()) { $0.append($1) }
                }
                // Eight devices: one claims the click, seven are told it was claimed.
                #expect(answers.filter { $0 == "accepted" }.count == 1 && answers.filter { $0 == "used" }.count == 7)
            }
        }
    }

    @Test("a click claimed by its token's install attributes no other install; given back, it is a candidate again", arguments: TestEngine.available)
    func claimedClick(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var spring = try await world.link("spring")
            spring.landingPage = true
            #expect(try await world.store.updateLink(spring))
            let linkID = spring.id
            try await world.app().test(.live) { client in
                var page = ""
                try await RedirectTests.get(client, "/spring" + Self.tap, userAgent: HTTPTest.safari, ip: "198.51.100.99") { page = String(buffer: $0.body) }
                let token = try #require(Self.token(page))
                world.clock.advance(hours: 0.1)
                // Before any install, a report from that household would match the tap.
                let candidates = try await world.store.matchCandidates(
                    project: world.project.id, address: "198.51.100.99", since: world.clock.date.addingTimeInterval(-86_400), limit: 10)
                #expect(candidates.map(\.click.linkID) == [linkID])
                #expect(try await Self.install(client, key: world.sdkKey, token: token)["clickToken"] == "accepted")
                // Another phone of the household, no token: the tap is the first phone's.
                let other = try await Self.install(client, key: world.sdkKey, token: nil)
                #expect(other["attributed"] == false, "\(other)")
            }
            // A token given back (its install not stored) gives its click back too.
            let click = try #require(try await world.store.clicks(link: linkID).first)
            let hash = "given-back"
            try await world.store.insertClickToken(
                ClickTokenRecord(
                    tokenHash: hash, projectID: world.project.id, linkID: linkID, clickID: click.id, clickedAt: click.clickedAt,
                    expiresAt: world.clock.date.addingTimeInterval(3600)))
            try await world.store.releaseClickToken(hash: "no-such", installID: "none")
            let since = world.clock.date.addingTimeInterval(-86_400)
            #expect(try await world.store.matchCandidates(project: world.project.id, address: "198.51.100.99", since: since, limit: 10).isEmpty)
            _ = try await world.store.useClickToken(hash: hash, project: world.project.id, installID: "i-2", at: world.clock.date)
            try await world.store.releaseClickToken(hash: hash, installID: "i-2")
            #expect(try await world.store.matchCandidates(project: world.project.id, address: "198.51.100.99", since: since, limit: 10).count == 1)
        }
    }

    @Test("retention deletes tokens that expired before its cutoff", arguments: TestEngine.available)
    func retention(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            let now = world.clock.date
            for (index, expiry) in [now.addingTimeInterval(-100 * 86_400), now.addingTimeInterval(3600)].enumerated() {
                try await world.store.insertClickToken(
                    ClickTokenRecord(
                        tokenHash: "h\(index)", projectID: world.project.id, linkID: link.id, clickID: "c\(index)",
                        clickedAt: now.addingTimeInterval(-101 * 86_400), expiresAt: expiry))
            }
            _ = try await ClickRetention(store: world.store, retention: 90 * 86_400, clock: world.clock.function, logger: Logger(label: "test")).sweep()
            let left: [String] = try await world.store.engine.select("SELECT token_hash FROM click_tokens").map { try $0["token_hash"] }
            #expect(left == ["h1"])
        }
    }
}
