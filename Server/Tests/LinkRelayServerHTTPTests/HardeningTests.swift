import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayTesting
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// What the red-team run of issue 48 broke, each tried again as the attacker did.
@Suite("Hardening")
struct HardeningTests {
    @Test(
        "every answer forbids sniffing, framing and referrers; JSON has a deny-all policy; a page runs only its own nonce's script",
        arguments: TestEngine.available)
    func headers(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("Xk9_2bQz")
            try await world.app().test(.live) { client in
                for (path, isPage) in [
                    ("/api/sdk/v1/health", false), ("/nothing/here/at/all", false), ("/Xk9_2bQz", true),
                    ("/Xk9_2bQz?fp_tz=America/New_York&fp_lang=en-US&fp_sw=1179&fp_sh=2556", true),
                ] {
                    try await RedirectTests.get(client, path, userAgent: HTTPTest.safari) { response in
                        #expect(response.headers[.init("X-Content-Type-Options")!] == "nosniff", "\(path)")
                        #expect(
                            response.headers[.init("X-Frame-Options")!] == "DENY"
                                && response.headers[.init("Referrer-Policy")!] == "no-referrer")
                        let policy = response.headers[.contentSecurityPolicy] ?? ""
                        #expect(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"), "\(path): \(policy)")
                        if isPage {
                            let page = String(buffer: response.body)
                            let nonce = policy.split(separator: "'nonce-").dropFirst().first?.prefix(while: { $0 != "'" })
                            #expect(nonce?.count == 22, "\(policy)")
                            #expect(page.contains("<script nonce=\"\(nonce ?? "")\">"), "the page's script carries the policy's nonce")
                            #expect(page.components(separatedBy: "<script").count == 2, "one script")
                        }
                    }
                }
            }
        }
    }

    @Test("the JSON 404 cuts and escapes the path it names")
    func notFoundPath() {
        #expect(AccessLogMiddleware.loggedPath("/a\"b\n") == "/a\\\"b\\u{a}")
        #expect(AccessLogMiddleware.loggedPath("/t1/abc-DEF_123.~") == "/t1/abc-DEF_123.~")
        #expect(AccessLogMiddleware.loggedPath("/caf\u{e9}") == "/caf\u{e9}")
        #expect(AccessLogMiddleware.milliseconds(.microseconds(12_345)) == "12.3")
        #expect(AccessLogMiddleware.milliseconds(.microseconds(12_350)) == "12.4")
        #expect(AccessLogMiddleware.milliseconds(.zero) == "0.0")
        #expect(AccessLogMiddleware.milliseconds(.seconds(2)) == "2000.0")
        #expect(AccessLogMiddleware.milliseconds(.seconds(-1)) == "0.0")
        let long = AccessLogMiddleware.loggedPath("/" + String(repeating: "x", count: 5000))
        #expect(long.utf8.count <= 203 && long.hasSuffix("…"))
    }

    @Test(
        "appScheme must be a scheme an app can register: javascript, data, http… refused; a stored one is never tried",
        arguments: TestEngine.available)
    func schemes(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                for scheme in ["javascript", "data", "vbscript", "file", "https", "JavaScript", "java script"] {
                    try await client.execute(
                        uri: "/api/links", method: .post, headers: HTTPTest.headers(key: world.adminKey, json: true),
                        body: HTTPTest.body(["appScheme": .string(scheme), "deepLinkPath": "/x", "originalUrl": "https://acme.example"])
                    ) { response async throws in
                        #expect(response.status == .badRequest, "\(scheme)")
                        #expect(try HTTPTest.object(response.body)["field"] == "appScheme")
                    }
                }
                // A link stored before the check (or written to the database by hand).
                try await world.link("evil", scheme: "javascript")
                try await RedirectTests.get(client, "/evil?fp_tz=x&fp_lang=en&fp_sw=1&fp_sh=1", userAgent: HTTPTest.safari) { response in
                    #expect(response.status == .found && response.headers[.location] == "https://apps.apple.com/app/id1")
                    #expect(!String(buffer: response.body).contains("javascript"))
                }
            }
            #expect(try await world.store.counts().links == 1)
        }
    }

    @Test("an SDK key cannot set a link's attribution window (admin-only, as documented)", arguments: TestEngine.available)
    func window(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                for (key, status) in [(world.sdkKey, HTTPResponse.Status.forbidden), (world.adminKey, .ok)] {
                    try await client.execute(
                        uri: "/api/sdk/v1/links", method: .post, headers: HTTPTest.headers(key: key, json: true),
                        body: HTTPTest.body(["attributionWindowHours": 2160, "deepLinkParameters": ["a": "1"]])
                    ) { #expect($0.status == status) }
                }
            }
        }
    }

    @Test(
        "share-link de-duplication covers every destination: a planted link with another web fallback is not handed back",
        arguments: TestEngine.available)
    func dedupe(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                func create(_ fallback: String) async throws -> (String, Bool) {
                    try await client.execute(
                        uri: "/api/sdk/v1/links", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                        body: HTTPTest.body([
                            "externalUserId": "user-1", "deepLinkPath": "/invite", "deepLinkParameters": ["from": "user-1"],
                            "webFallbackUrl": .string(fallback),
                        ])
                    ) { response async throws in
                        let answer = try HTTPTest.object(response.body)
                        return (answer["linkId"]?.stringValue ?? "", answer["deduplicated"] == true)
                    }
                }
                let planted = try await create("https://evil.example/phish")
                let real = try await create("https://acme.example/invite")
                #expect(!real.1 && real.0 != planted.0, "the attacker's link is not the user's")
                let again = try await create("https://acme.example/invite")
                #expect(again.1 && again.0 == real.0, "the user's own repeat still de-duplicates")
            }
        }
    }

    @Test(
        "lengths are bytes: a one-character title of 600 combining marks is refused; a click keeps 512 bytes of a 61 KiB agent",
        arguments: TestEngine.available)
    func bytes(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("Xk9_2bQz")
            try await world.app().test(.live) { client in
                let title = "e" + String(repeating: "\u{301}", count: 600)
                #expect(title.count == 1)
                try await client.execute(
                    uri: "/api/sdk/v1/links", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                    body: HTTPTest.body(["title": .string(title)])
                ) { response async throws in
                    let answer = try HTTPTest.object(response.body)
                    #expect(response.status == .badRequest && answer["field"] == "title")
                }
                let agent = HTTPTest.safari + String(repeating: " é", count: 20_000)
                try await RedirectTests.get(client, "/Xk9_2bQz?fp_tz=UTC&fp_lang=en&fp_sw=1&fp_sh=1", userAgent: agent) {
                    #expect($0.status == .ok)
                }
            }
            let stored = try await world.store.clicks(link: link.id).first?.device.userAgent ?? ""
            #expect(stored.utf8.count <= 512 && stored.hasPrefix(HTTPTest.safari) && stored.utf8.count > 500)
        }
    }

    @Test(
        "issue 63, 5: a tap without fp_lang (or with one too long) keeps no 70 KB Accept-Language; a utm_source of one letter and 12,000 combining marks is not stored, nor counted",
        arguments: TestEngine.available)
    func clickFieldsInBytes(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("Xk9_2bQz")
            let language = String(repeating: "x", count: 70_000)
            let marks = "E" + String(repeating: "\u{301}", count: 12_000)
            #expect(marks.count == 1)
            let encoded = marks.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            try await world.app().test(.live) { client in
                // (Each within the 80 KiB a request's head may hold.)
                for (path, acceptLanguage) in [
                    ("/Xk9_2bQz?fp_tz=UTC&fp_sw=1&fp_sh=1", language),
                    ("/Xk9_2bQz?fp_tz=UTC&fp_lang=\(String(repeating: "y", count: 65))&fp_sw=1&fp_sh=1", language),
                    ("/Xk9_2bQz?fp_tz=UTC&fp_lang=en&fp_sw=1&fp_sh=1&utm_source=\(encoded)", "en-US"),
                    ("/Xk9_2bQz?fp_tz=UTC&fp_sw=1&fp_sh=1&utm_source=e%CC%81", "de-DE,de;q=0.9"),
                ] {
                    try await RedirectTests.get(client, path, userAgent: HTTPTest.safari, headers: [.acceptLanguage: acceptLanguage]) {
                        #expect($0.status == .ok)
                    }
                }
            }
            let clicks = try await world.store.clicks(link: link.id)
            // (The clicks share one instant on the manual clock, so their order is not the taps'; compared as sets.
            // A tap without a valid utm_source keeps the link's own, "mail".)
            #expect(
                clicks.map { $0.device.language ?? "-" }.sorted() == ["-", "-", "de-DE", "en"],
                "\(clicks.map { $0.device.language?.utf8.count ?? 0 })")
            #expect(
                clicks.map { $0.source.utmSource ?? "-" }.sorted() == ["mail", "mail", "mail", "\u{e9}"], "the last in its composed form")
            let largest =
                clicks.map { click in
                    [
                        click.device.userAgent, click.device.timezone, click.device.language, click.source.utmSource,
                        click.source.referrerHost,
                    ]
                    .reduce(0) { $0 + ($1?.utf8.count ?? 0) }
                }.max() ?? 0
            #expect(largest < 1024, "a click's text fields: \(largest) bytes")
        }
        #expect(
            ClickSource.utmSource(String(repeating: "a", count: 100)) != nil
                && ClickSource.utmSource(String(repeating: "a", count: 101)) == nil)
        #expect(ClickSource.utmSource("e\u{301}") == ClickSource.utmSource("\u{e9}"))
    }

    @Test("issue 63, 12: limits count Unicode scalars, so bytes are bounded: one letter and 6,000 marks is 6,001 characters, not one")
    func textLimits() {
        let marks = "E" + String(repeating: "\u{301}", count: 6_000)
        #expect(marks.count == 1)
        #expect(!TextLimit.fits(marks, characters: APIKeys.maxNameLength))
        #expect(TextLimit.fits(String(repeating: "\u{1F600}", count: 100), characters: 100))
        #expect(!TextLimit.fits(String(repeating: "\u{1F600}", count: 101), characters: 100))
        #expect(TextLimit.fits("", characters: 0) && !TextLimit.fits("a", characters: 0))
    }

    @Test(
        "a link with a path but no way into the app is made with a warning saying so; with a scheme, none", arguments: TestEngine.available)
    func pathWithoutScheme(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                for (body, warned) in [
                    (["deepLinkPath": "/p/1", "originalUrl": "https://acme.example"] as [String: JSONValue], true),
                    (["deepLinkPath": "/p/2", "appScheme": "acmeshop", "originalUrl": "https://acme.example"], false),
                    (["originalUrl": "https://acme.example"], false),
                ] {
                    try await client.execute(
                        uri: "/api/links", method: .post, headers: HTTPTest.headers(key: world.adminKey, json: true),
                        body: HTTPTest.body(body)
                    ) { response async throws in
                        #expect(response.status == .created)
                        guard case .array(let warnings)? = try HTTPTest.object(response.body)["warnings"] else {
                            Issue.record("no warnings list")
                            return
                        }
                        #expect(warnings.isEmpty != warned, "\(body)")
                        if warned { #expect(warnings.first?.stringValue?.contains("appScheme") == true) }
                    }
                }
            }
        }
    }

    @Test("apps and templates answer createdAt in ISO 8601, as links do", arguments: TestEngine.available)
    func dates(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                for (path, body) in [
                    ("/api/apps", ["platform": "ios", "appId": "ABCDE12345.com.acme.shop"] as [String: JSONValue]),
                    ("/api/templates", ["name": "Promo"]),
                ] {
                    try await client.execute(
                        uri: path, method: .post, headers: HTTPTest.headers(key: world.adminKey, json: true), body: HTTPTest.body(body)
                    ) {
                        response async throws in
                        let created = try HTTPTest.object(response.body)["createdAt"]?.stringValue
                        #expect(created.flatMap(ServerHTTP.parseTimestamp) != nil, "\(path): \(String(buffer: response.body))")
                    }
                }
            }
        }
    }

    @Test(
        "the access log: one line per request (a 401, a 404, an attributed install) with the route's pattern and the key's prefix, never the key, the code or the query",
        arguments: TestEngine.available)
    func accessLog(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("Xk9_2bQz")
            let written = Mutex<[UInt8]>([])
            let accessLog = AccessLog(clock: ManualClock()) { block in written.withLock { $0 += block } }
            let app = Application(
                router: ServerApplication.router(
                    store: world.store, configuration: world.configuration(), clock: world.clock, accessLog: accessLog),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { client in
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post,
                    headers: HTTPTest.headers(key: "lr_sdk_0badbeef_" + String(repeating: "x", count: 32), json: true)
                ) { _ in }
                try await client.execute(uri: "/no/such/route", method: .get) { _ in }
                try await RedirectTests.get(
                    client, "/Xk9_2bQz?fp_tz=America/New_York&fp_lang=en-US&fp_sw=1179&fp_sh=2556", userAgent: HTTPTest.safari
                ) { _ in }
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, ip: "203.0.113.99", json: true),
                    body: HTTPTest.body(HTTPTest.installBody)
                ) { #expect($0.status == .ok) }
            }
            #expect(written.withLock { $0.isEmpty }, "gathered, not written line by line")
            accessLog.flush()
            // Each line after its time: `2027-01-15T08:00:00.000Z ACCESS …`.
            let logged = String(decoding: written.withLock { $0 }, as: UTF8.self).split(separator: "\n").map { String($0.dropFirst(25)) }
            #expect(logged.count == 4, "\(logged)")
            // The route's pattern, not the path with its code; the key's public prefix (an
            // unknown key's too), never its secret part.
            #expect(logged[0].hasPrefix("ACCESS 127.0.0.1 lr_sdk_0badbeef \"POST /api/sdk/v1/install\" 401 "))
            #expect(logged[1].hasPrefix("ACCESS 127.0.0.1 - \"GET (unmatched)\" 404 "))
            #expect(logged[2].hasPrefix("ACCESS 203.0.113.7 - \"GET /{code}\" 200 "))
            let sdkPrefix = try #require(APIKeys.prefix(of: world.sdkKey))
            #expect(logged[3].hasPrefix("ACCESS 203.0.113.99 \(sdkPrefix) \"POST /api/sdk/v1/install\" 200 ") && logged[3].hasSuffix(" ms"))
            #expect(!logged.joined().contains(world.sdkKey) && !logged.joined().contains("fp_tz") && !logged.joined().contains("Xk9_2bQz"))
            #expect(!logged.joined().contains(String(repeating: "x", count: 32)))
        }
    }
}
