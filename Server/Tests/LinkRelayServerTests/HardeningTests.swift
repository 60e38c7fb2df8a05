import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayTesting
import Synchronization
import Testing

@testable import LinkRelayServer

/// What the red-team run of issue 48 broke, each tried again as the attacker did.
@Suite("Hardening")
struct HardeningTests {
    @Test("every answer forbids sniffing, framing and referrers; JSON has a deny-all policy; a page runs only its own nonce's script", arguments: TestEngine.available)
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
                        #expect(response.headers[.init("X-Frame-Options")!] == "DENY" && response.headers[.init("Referrer-Policy")!] == "no-referrer")
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
        #expect(ResponseMiddleware.loggedPath("/a\"b\n") == "/a\\\"b\\u{a}")
        #expect(ResponseMiddleware.loggedPath("/t1/abc-DEF_123.~") == "/t1/abc-DEF_123.~")
        #expect(ResponseMiddleware.loggedPath("/caf\u{e9}") == "/caf\u{e9}")
        #expect(ResponseMiddleware.milliseconds(.microseconds(12_345)) == "12.3")
        #expect(ResponseMiddleware.milliseconds(.microseconds(12_350)) == "12.4")
        #expect(ResponseMiddleware.milliseconds(.zero) == "0.0")
        #expect(ResponseMiddleware.milliseconds(.seconds(2)) == "2000.0")
        #expect(ResponseMiddleware.milliseconds(.seconds(-1)) == "0.0")
        let long = ResponseMiddleware.loggedPath("/" + String(repeating: "x", count: 5000))
        #expect(long.utf8.count <= 203 && long.hasSuffix("…"))
    }

    @Test("appScheme must be a scheme an app can register: javascript, data, http… refused; a stored one is never tried", arguments: TestEngine.available)
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

    @Test("share-link de-duplication covers every destination: a planted link with another web fallback is not handed back", arguments: TestEngine.available)
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

    @Test("lengths are bytes: a one-character title of 600 combining marks is refused; a click keeps 512 bytes of a 61 KiB agent", arguments: TestEngine.available)
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
                try await RedirectTests.get(client, "/Xk9_2bQz?fp_tz=UTC&fp_lang=en&fp_sw=1&fp_sh=1", userAgent: agent) { #expect($0.status == .ok) }
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
            #expect(clicks.map { $0.device.language ?? "-" }.sorted() == ["-", "-", "de-DE", "en"], "\(clicks.map { $0.device.language?.utf8.count ?? 0 })")
            #expect(clicks.map { $0.source.utmSource ?? "-" }.sorted() == ["mail", "mail", "mail", "\u{e9}"], "the last in its composed form")
            let largest = clicks.map { click in
                [click.device.userAgent, click.device.timezone, click.device.language, click.source.utmSource, click.source.referrerHost]
                    .reduce(0) { $0 + ($1?.utf8.count ?? 0) }
            }.max() ?? 0
            #expect(largest < 1024, "a click's text fields: \(largest) bytes")
        }
        #expect(ClickSource.utmSource(String(repeating: "a", count: 100)) != nil && ClickSource.utmSource(String(repeating: "a", count: 101)) == nil)
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

    @Test("a link with a path but no way into the app is made with a warning saying so; with a scheme, none", arguments: TestEngine.available)
    func pathWithoutScheme(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                for (body, warned) in [
                    (["deepLinkPath": "/p/1", "originalUrl": "https://acme.example"] as [String: JSONValue], true),
                    (["deepLinkPath": "/p/2", "appScheme": "acmeshop", "originalUrl": "https://acme.example"], false),
                    (["originalUrl": "https://acme.example"], false),
                ] {
                    try await client.execute(
                        uri: "/api/links", method: .post, headers: HTTPTest.headers(key: world.adminKey, json: true), body: HTTPTest.body(body)
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
                    ("/api/apps", ["platform": "ios", "appId": "ABCDE12345.com.acme.shop"] as [String: JSONValue]), ("/api/templates", ["name": "Promo"]),
                ] {
                    try await client.execute(uri: path, method: .post, headers: HTTPTest.headers(key: world.adminKey, json: true), body: HTTPTest.body(body)) {
                        response async throws in
                        let created = try HTTPTest.object(response.body)["createdAt"]?.stringValue
                        #expect(created.flatMap(ServerApplication.parseTimestamp) != nil, "\(path): \(String(buffer: response.body))")
                    }
                }
            }
        }
    }

    @Test("the access log: one line per request (a 401, a 404, an attributed install) with the route's pattern and the key's prefix, never the key, the code or the query", arguments: TestEngine.available)
    func accessLog(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("Xk9_2bQz")
            let written = Mutex<[UInt8]>([])
            let accessLog = AccessLog(clock: ManualClock()) { block in written.withLock { $0 += block } }
            let app = Application(
                router: ServerApplication.router(store: world.store, configuration: world.configuration(), clock: world.clock.function, accessLog: accessLog),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { client in
                try await client.execute(uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: "lr_sdk_0badbeef_" + String(repeating: "x", count: 32), json: true)) { _ in }
                try await client.execute(uri: "/no/such/route", method: .get) { _ in }
                try await RedirectTests.get(client, "/Xk9_2bQz?fp_tz=America/New_York&fp_lang=en-US&fp_sw=1179&fp_sh=2556", userAgent: HTTPTest.safari) { _ in }
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

/// Clicks per address, as a flooding client and a busy carrier address meet them.
@Suite("Clicks per address")
struct ClickLimitTests {
    @Test("a minute's worth, then one per 60/limit seconds; addresses apart; 0 is no limit; the clock going back refills nothing")
    func bucket() {
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        let limiter = ClickLimiter(perMinute: 60)
        #expect((0..<60).allSatisfy { _ in limiter.allow("203.0.113.7", at: start) })
        #expect(!limiter.allow("203.0.113.7", at: start))
        #expect(limiter.allow("203.0.113.8", at: start), "another address has its own minute")
        #expect(!limiter.allow("203.0.113.7", at: start.addingTimeInterval(-3600)))
        #expect(limiter.allow("203.0.113.7", at: start.addingTimeInterval(1)) && !limiter.allow("203.0.113.7", at: start.addingTimeInterval(1)))
        let unlimited = ClickLimiter(perMinute: 0)
        #expect((0..<10_000).allSatisfy { _ in unlimited.allow("x", at: start) })
        let small = ClickLimiter(perMinute: 1, trackedLimit: 100)
        for index in 0..<1000 { _ = small.allow("198.51.100.\(index)", at: start) }
        #expect(small.trackedCount <= 100, "tracking stays bounded")
        #expect(!small.allow("198.51.100.999", at: start), "the address just counted is still tracked")
    }

    @Test("an IPv6 client is limited by its /64: a subscriber's whole prefix, whatever address it picks in it")
    func ipv6Prefix() {
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        let limiter = ClickLimiter(perMinute: 60)
        #expect((0..<60).allSatisfy { limiter.allow(ClickLimiter.key(for: "2001:db8:7:1::\(String($0 + 1, radix: 16))"), at: start) })
        #expect(!limiter.allow(ClickLimiter.key(for: "2001:db8:7:1:ffff::1"), at: start), "another address of the same /64")
        #expect(limiter.allow(ClickLimiter.key(for: "2001:db8:7:2::1"), at: start), "another /64")
        #expect(ClickLimiter.key(for: "203.0.113.7") == "203.0.113.7" && ClickLimiter.key(for: nil) == "-")
        #expect(ClickLimiter.key(for: "not an address") == "not an address")
    }

    @Test("past the limit a tap still reaches its destination, its click is not stored and the answer says so", arguments: TestEngine.available)
    func redirect(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("Xk9_2bQz", scheme: nil)
            var configuration = world.configuration()
            configuration.clicksPerAddressPerMinute = 3
            try await world.app(configuration).test(.live) { client in
                for index in 0..<5 {
                    try await RedirectTests.get(client, "/Xk9_2bQz?fp_tz=UTC&fp_lang=en&fp_sw=1&fp_sh=1", userAgent: HTTPTest.safari) { response in
                        #expect(response.status == .found && response.headers[.location] == "https://apps.apple.com/app/id1")
                        #expect((response.headers[.init("X-LinkRelay-Click-Recorded")!] == "false") == (index >= 3))
                    }
                }
                try await RedirectTests.get(client, "/Xk9_2bQz?fp_tz=UTC&fp_lang=en&fp_sw=1&fp_sh=1", userAgent: HTTPTest.safari, ip: "198.51.100.4") {
                    #expect($0.headers[.init("X-LinkRelay-Click-Recorded")!] == nil)
                }
            }
            #expect(try await world.store.clicks(link: link.id).count == 4)
        }
    }
}

/// Where links made with the SDK key may send people: the project's to say.
@Suite("Destination hosts")
struct DestinationHostTests {
    @Test("patterns: exact hosts and *. subdomains; an empty list allows none, mode any every host")
    func patterns() {
        #expect(!DestinationHosts.allows([], "https://evil.example/x"))
        #expect(DestinationHosts(mode: .any, hosts: []).allows("https://evil.example/x"))
        #expect(!DestinationHosts(mode: .learned, hosts: []).allows("https://evil.example/x"))
        #expect(DestinationHosts.adding(["shop.acme.example", "acme.example", "b.example"], to: ["*.acme.example"]) == ["*.acme.example", "acme.example", "b.example"])
        #expect(DestinationHosts.adding((0..<200).map { "h\($0).example" }, to: []).count == DestinationHosts.maxHosts)
        #expect(DestinationHosts.allows(["acme.example"], "https://ACME.example/p"))
        #expect(!DestinationHosts.allows(["acme.example"], "https://shop.acme.example/p"))
        #expect(DestinationHosts.allows(["*.acme.example"], "https://shop.acme.example/p"))
        #expect(!DestinationHosts.allows(["*.acme.example"], "https://acme.example/p"))
        #expect(!DestinationHosts.allows(["*.acme.example"], "https://evilacme.example/p"))
        #expect(!DestinationHosts.allows(["acme.example"], "https://acme.example.evil.example/p"))
        #expect(DestinationHosts.isValidPattern("*.acme.example") && !DestinationHosts.isValidPattern("acme..example"))
        #expect(!DestinationHosts.isValidPattern("https://acme.example") && !DestinationHosts.isValidPattern("*"))
    }

    @Test(
        "issue 63, 7: by default an SDK key's links go only to the hosts the project's admin links and templates use; any host is said explicitly",
        arguments: TestEngine.available)
    func learnedByDefault(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let other = world.otherProject.id
            #expect(try await world.store.destinationHosts(project: other) == DestinationHosts(mode: .learned, hosts: []))
            let admin = APIKeys.issue(project: other, scope: .admin, name: "CI", at: Date())
            try await world.store.insertKey(admin.record)
            func create(_ key: String, _ fields: [String: JSONValue], path: String = "/api/sdk/v1/links") async throws -> HTTPResponse.Status {
                try await world.app().test(.router) { client in
                    try await client.execute(uri: path, method: .post, headers: HTTPTest.headers(key: key, json: true), body: HTTPTest.body(fields)) {
                        $0.status
                    }
                }
            }
            #expect(try await create(world.otherProjectKey, ["webFallbackUrl": "https://evil.example/phish"]) == .forbidden, "nothing learned yet")
            #expect(try await create(admin.secret, ["originalUrl": "https://brand.example/a", "iosAppStoreUrl": "https://apps.apple.com/app/id1"], path: "/api/links") == .created)
            #expect(try await world.store.destinationHosts(project: other).hosts == ["brand.example", "apps.apple.com"])
            #expect(try await create(world.otherProjectKey, ["webFallbackUrl": "https://brand.example/p/1"]) == .ok)
            for field in ["originalUrl", "webFallbackUrl", "iosAppStoreUrl", "androidAppStoreUrl", "iosUniversalLink", "androidAppLink"] {
                #expect(try await create(world.otherProjectKey, [field: "https://evil.example/phish"]) == .forbidden, "\(field)")
            }
            // An SDK key's links never teach a host; "any" is a choice an admin makes and can undo.
            #expect(try await world.store.destinationHosts(project: other).hosts == ["brand.example", "apps.apple.com"])
            try await world.app().test(.router) { client in
                try await client.execute(
                    uri: "/api/destination-hosts", method: .put, headers: HTTPTest.headers(key: admin.secret, json: true), body: HTTPTest.body(["hosts": []])
                ) { response async throws in
                    let answer = try HTTPTest.object(response.body)
                    #expect(response.status == .badRequest && answer["error"]?.stringValue?.contains("\"mode\": \"any\"") == true)
                }
                try await client.execute(
                    uri: "/api/destination-hosts", method: .put, headers: HTTPTest.headers(key: admin.secret, json: true), body: HTTPTest.body(["mode": "any"])
                ) { response async throws in
                    let answer = try HTTPTest.object(response.body)
                    #expect(response.status == .ok && answer["mode"] == "any")
                }
            }
            #expect(try await create(world.otherProjectKey, ["webFallbackUrl": "https://evil.example/phish"]) == .ok)
        }
    }

    @Test("links stored before the modes existed teach their hosts once, at start; a project with a list keeps it", arguments: TestEngine.available)
    func learnedFromStoredLinks(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let other = world.otherProject.id
            try await world.store.insertLink(LinkRecord(projectID: other, shortCode: "old1", originalURL: "https://old.example/x", createdAt: Date()))
            try await world.store.insertLink(
                LinkRecord(projectID: other, shortCode: "old2", originalURL: "https://old.example/y", webFallbackURL: "https://web.old.example/", createdAt: Date()))
            // As migration 15 leaves a project made before it.
            _ = try await world.store.engine.withConnection { try await $0.run("UPDATE projects SET hosts_learned = 0 WHERE id = \(other)") }
            #expect(try await world.store.learnStoredDestinationHosts() == 1)
            #expect(try await world.store.destinationHosts(project: other).hosts == ["old.example", "web.old.example"])
            #expect(try await world.store.learnStoredDestinationHosts() == 0, "once")
        }
    }

    @Test("once an admin sets the hosts, an SDK key's link to another host is a 403 naming the field; an admin's is not", arguments: TestEngine.available)
    func enforced(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                try await client.execute(
                    uri: "/api/destination-hosts", method: .put, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                    body: HTTPTest.body(["hosts": ["acme.example"]])
                ) { #expect($0.status == .forbidden, "an admin's setting") }
                try await client.execute(
                    uri: "/api/destination-hosts", method: .put, headers: HTTPTest.headers(key: world.adminKey, json: true),
                    body: HTTPTest.body(["hosts": ["Acme.example", "*.acme.example", "acme.example"]])
                ) { response async throws in
                    #expect(response.status == .ok)
                    #expect(try HTTPTest.object(response.body)["hosts"] == ["acme.example", "*.acme.example"])
                }
                for (field, url, key, status) in [
                    ("webFallbackUrl", "https://evil.example/phish", world.sdkKey, HTTPResponse.Status.forbidden),
                    ("originalUrl", "https://evil.example/phish", world.sdkKey, .forbidden),
                    ("webFallbackUrl", "https://shop.acme.example/p/1", world.sdkKey, .ok),
                    ("webFallbackUrl", "https://evil.example/campaign", world.adminKey, .ok),
                ] {
                    try await client.execute(
                        uri: "/api/sdk/v1/links", method: .post, headers: HTTPTest.headers(key: key, json: true),
                        body: HTTPTest.body([field: .string(url)])
                    ) { response async throws in
                        #expect(response.status == status, "\(field) \(url)")
                        if status == .forbidden { #expect(try HTTPTest.object(response.body)["field"] == .string(field)) }
                    }
                }
                try await client.execute(uri: "/api/destination-hosts", method: .get, headers: HTTPTest.headers(key: world.adminKey)) { response async throws in
                    #expect(try HTTPTest.object(response.body)["hosts"] == ["acme.example", "*.acme.example"])
                }
            }
            #expect(try await world.store.destinationHosts(project: world.otherProject.id).hosts == [], "another project's are its own")
        }
    }
}
