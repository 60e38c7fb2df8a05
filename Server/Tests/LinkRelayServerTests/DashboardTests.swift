import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import Logging
import Testing

@testable import LinkRelayServer

/// The dashboard's sign-in, sessions and forms, over HTTP: a session stored by its hash and
/// ended by signing out (or revoking its key), a token on every form, the security headers,
/// sign-in attempts limited per address, hostile text shown as text.
@Suite("The dashboard: sign-in, sessions and forms")
struct DashboardTests {
    /// A browser's cookies, as far as the tests need them.
    final class Browser: @unchecked Sendable {
        var cookies: [String: String] = [:]

        func headers(form: Bool = false) -> HTTPFields {
            var headers = HTTPTest.headers(key: nil)
            if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
            if form { headers[.contentType] = "application/x-www-form-urlencoded" }
            return headers
        }

        func keep(_ response: TestResponse) {
            for value in response.headers[values: .setCookie] {
                let pair = value.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
                let name = String(pair[0])
                let content = pair.count > 1 ? String(pair[1]) : ""
                if value.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = content }
            }
        }

        func get(_ client: some TestClientProtocol, _ uri: String) async throws -> TestResponse {
            let response = try await client.execute(uri: uri, method: .get, headers: headers()) { (response: TestResponse) async throws in response }
            keep(response)
            return response
        }

        func post(_ client: some TestClientProtocol, _ uri: String, _ fields: [(String, String)]) async throws -> TestResponse {
            var components = URLComponents()
            components.queryItems = fields.map { URLQueryItem(name: $0.0, value: $0.1) }
            let body = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
            let response = try await client.execute(uri: uri, method: .post, headers: headers(form: true), body: ByteBuffer(string: body)) {
                (response: TestResponse) async throws in response
            }
            keep(response)
            return response
        }
    }

    /// The value of the hidden `csrf` field in a page.
    static func csrf(_ page: TestResponse) -> String? {
        let html = String(buffer: page.body)
        guard let range = html.range(of: "name=\"csrf\" value=\"") else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    /// Signs `browser` in with `key`; the answer to the sign-in.
    static func signIn(_ browser: Browser, _ client: some TestClientProtocol, key: String) async throws -> TestResponse {
        let page = try await browser.get(client, "/dashboard/sign-in")
        return try await browser.post(client, "/dashboard/sign-in", [("csrf", csrf(page) ?? ""), ("key", key)])
    }

    @Test("signed out, every page goes to the sign-in; a wrong or an SDK key is refused with one sentence; an admin key makes a stored session", arguments: TestEngine.available)
    func signingIn(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let browser = Browser()
                let away = try await browser.get(client, "/dashboard/links")
                #expect(away.status == .seeOther && away.headers[.location] == "/dashboard/sign-in")
                let page = try await browser.get(client, "/dashboard/sign-in")
                #expect(page.status == .ok && page.headers[.contentType] == "text/html; charset=utf-8")
                #expect(page.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'self'") == true)
                #expect(page.headers[.init("X-Frame-Options")!] == "DENY" && page.headers[.init("X-Content-Type-Options")!] == "nosniff")
                #expect(String(buffer: page.body).contains("<html lang=\"en\">") && String(buffer: page.body).contains("<label for=\"key\">"))

                for key in ["lr_admin_00000000_wrongwrongwrongwrongwrongwrong12", world.sdkKey, "", String(repeating: "x", count: 5000)] {
                    let refused = try await Self.signIn(browser, client, key: key)
                    #expect(refused.status == .unauthorized)
                    #expect(String(buffer: refused.body).contains("That is not an admin key of this server."))
                    #expect(browser.cookies[DashboardSecurity.sessionCookie] == nil)
                }
                let forged = try await browser.post(client, "/dashboard/sign-in", [("csrf", "forged"), ("key", world.adminKey)])
                #expect(forged.status == .forbidden, "a sign-in form from elsewhere")

                let signed = try await Self.signIn(browser, client, key: world.adminKey)
                #expect(signed.status == .seeOther && signed.headers[.location] == "/dashboard")
                let cookie = try #require(signed.headers[values: .setCookie].first { $0.hasPrefix("lr_session=") })
                #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/dashboard") && !cookie.contains("Secure"))
                let token = try #require(browser.cookies[DashboardSecurity.sessionCookie])
                // Stored by its hash only.
                #expect(try await world.store.session(hash: sha256Hex(token), at: world.clock.date) != nil)
                #expect(try await world.store.session(hash: token, at: world.clock.date) == nil)

                for path in ["/dashboard/nope", "/dashboard/links/x/y/z"] {
                    let missing = try await browser.get(client, path)
                    #expect(missing.status == .notFound && missing.headers[.contentType] == "text/html; charset=utf-8", "\(path)")
                    #expect(String(buffer: missing.body).contains("There is no such page in the dashboard."))
                }
                #expect(try await browser.get(client, "/dashboard/static/style.css").status == .ok)
                let overview = try await browser.get(client, "/dashboard")
                #expect(overview.status == .ok && String(buffer: overview.body).contains("<h1>Overview</h1>"))
                #expect(try await browser.get(client, "/dashboard/sign-in").status == .seeOther, "signed in already")

                // Signing out ends the session in the database.
                let out = try await browser.post(client, "/dashboard/sign-out", [("csrf", Self.csrf(overview) ?? "")])
                #expect(out.status == .seeOther && browser.cookies[DashboardSecurity.sessionCookie] == nil)
                #expect(try await world.store.session(hash: sha256Hex(token), at: world.clock.date) == nil)
                browser.cookies[DashboardSecurity.sessionCookie] = token
                #expect(try await browser.get(client, "/dashboard").status == .seeOther, "the old cookie opens nothing")
            }
        }
    }

    @Test("a form without the session's token is refused and changes nothing; a revoked key or an expired session ends the session", arguments: TestEngine.available)
    func forms(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                for token in [nil, "wrong"] as [String?] {
                    let refused = try await browser.post(client, "/dashboard/links/\(link.id)/deactivate", token.map { [("csrf", $0)] } ?? [])
                    #expect(refused.status == .forbidden && String(buffer: refused.body).contains("Nothing was changed"))
                }
                #expect(try await world.store.link(id: link.id)?.isActive == true)
                let page = try await browser.get(client, "/dashboard/links/\(link.id)")
                let done = try await browser.post(client, "/dashboard/links/\(link.id)/deactivate", [("csrf", Self.csrf(page) ?? "")])
                let after = try await world.store.link(id: link.id)
                #expect(done.status == .seeOther && after?.isActive == false)

                world.clock.advance(hours: 13)
                #expect(try await browser.get(client, "/dashboard").status == .seeOther, "12 hours at most")
                world.clock.advance(hours: -13)
                let keys = try await world.store.keys(project: world.project.id)
                let admin = try #require(keys.first { $0.scope == .admin })
                _ = try await world.store.revokeKey(id: admin.id, at: world.clock.date)
                #expect(try await browser.get(client, "/dashboard").status == .seeOther, "the key's revocation ends its sessions")
            }
        }
    }

    @Test("ten failed sign-ins from one address in 15 minutes stop its attempts, the right key too; another address is not stopped", arguments: TestEngine.available)
    func signInLimit(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let browser = Browser()
                for _ in 0..<SignInLimiter.limit {
                    #expect(try await Self.signIn(browser, client, key: "lr_admin_00000000_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").status == .unauthorized)
                }
                let stopped = try await Self.signIn(browser, client, key: world.adminKey)
                #expect(stopped.status == .tooManyRequests && String(buffer: stopped.body).contains("Try again in 15 minutes"))
                world.clock.advance(hours: 0.26)
                #expect(try await Self.signIn(browser, client, key: world.adminKey).status == .seeOther)
            }
        }
        let limiter = SignInLimiter()
        let now = Date()
        for _ in 0..<SignInLimiter.limit { limiter.failed("203.0.113.7", at: now) }
        #expect(limiter.wait("203.0.113.7", at: now) != nil && limiter.wait("198.51.100.1", at: now) == nil)
    }

    @Test("the link form: created through the same checks as the API, a wrong field shown next to it; hostile text shown as text", arguments: TestEngine.available)
    func linkForm(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let form = try await browser.get(client, "/dashboard/links/new")
                let csrf = try #require(Self.csrf(form))
                let html = String(buffer: form.body)
                for name in ["originalUrl", "customCode", "deepLinkParameters", "utm_source", "countries", "attributionWindowHours", "landingPage"] {
                    #expect(html.contains("<label for=\"f-\(name)\">"), "\(name) has a label")
                }

                let wrong = try await browser.post(
                    client, "/dashboard/links", [("csrf", csrf), ("originalUrl", "javascript:alert(1)"), ("title", "Kept")])
                let wrongHTML = String(buffer: wrong.body)
                #expect(wrong.status == .badRequest && wrongHTML.contains("id=\"e-originalUrl\"") && wrongHTML.contains("aria-invalid=\"true\""))
                #expect(wrongHTML.contains("value=\"Kept\""), "what was typed is kept")

                let hostile = "<script>alert(1)</script>"
                let created = try await browser.post(
                    client, "/dashboard/links",
                    [("csrf", csrf), ("originalUrl", "https://acme.example/p?a=\"quoted\"&b='x'"), ("title", hostile), ("customCode", "hostile"),
                     ("deepLinkParameters", "{\"productId\": \"42\"}"), ("utm_source", "mail"), ("attributionWindowHours", "24")])
                #expect(created.status == .seeOther)
                let location = try #require(created.headers[.location])
                let page = String(buffer: try await browser.get(client, location).body)
                #expect(!page.contains(hostile) && page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
                #expect(!page.contains("\"quoted\"&b='x'"))
                let stored = try #require(try await world.store.link(project: world.project.id, shortCode: "hostile", templateSlug: nil))
                #expect(stored.title == hostile && stored.deepLinkParameters == ["productId": "42"] && stored.attributionWindowHours == 24)

                let list = String(buffer: try await browser.get(client, "/dashboard/links?q=host").body)
                #expect(list.contains(">hostile</a>") && !list.contains(hostile))
            }
        }
    }

    @Test("the retention pass deletes the sessions that ended, also when clicks are kept forever", arguments: TestEngine.available)
    func endedSessionsDeleted(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let admin = try #require(try await world.store.keys(project: world.project.id).first { $0.scope == .admin })
            for (hash, hours) in [("ended", -1.0), ("live", 1)] {
                try await world.store.insertSession(
                    DashboardSession(
                        tokenHash: hash, projectID: world.project.id, keyID: admin.id, csrfToken: "t", createdAt: world.clock.date,
                        expiresAt: world.clock.date.addingTimeInterval(hours * 3600)))
            }
            try await ClickRetention(store: world.store, retention: nil, clock: world.clock.function, logger: Logger(label: "test")).sweep()
            #expect(try await world.store.deleteSessions(expiredBefore: world.clock.date.addingTimeInterval(7200)) == 1, "only the live one was left")
        }
    }

    @Test("keys: one made with a scope is shown once and works; listed by prefix only; revoked, it is refused at once", arguments: TestEngine.available)
    func keys(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let page = try await browser.get(client, "/dashboard/keys")
                let made = try await browser.post(client, "/dashboard/keys", [("csrf", Self.csrf(page) ?? ""), ("name", "CI <b>"), ("scope", "admin")])
                let html = String(buffer: made.body)
                #expect(made.status == .ok && html.contains("It is shown once"))
                guard let start = html.range(of: "<code id=\"new-secret\">") else {
                    Issue.record("no secret shown")
                    return
                }
                let secret = String(html[start.upperBound...].prefix { $0 != "<" })
                #expect(secret.hasPrefix("lr_admin_") && html.contains("CI &lt;b&gt;"))
                #expect(try await LinkAdminTests.request(client, "/api/links", key: secret).status == .ok, "the new key works")
                let listed = String(buffer: try await browser.get(client, "/dashboard/keys").body)
                #expect(!listed.contains(secret) && listed.contains(String(secret.prefix(17))), "listed by its prefix, never whole")

                let stored = try #require(try await world.store.keys(project: world.project.id).first { $0.name == "CI <b>" })
                let refused = try await browser.post(client, "/dashboard/keys/\(stored.id)/revoke", [("csrf", "wrong")])
                #expect(refused.status == .forbidden)
                let revoked = try await browser.post(client, "/dashboard/keys/\(stored.id)/revoke", [("csrf", Self.csrf(page) ?? "")])
                #expect(revoked.status == .seeOther && revoked.headers[.location] == "/dashboard/keys")
                #expect(try await LinkAdminTests.request(client, "/api/links", key: secret).status == .unauthorized)
                let bad = try await browser.post(client, "/dashboard/keys", [("csrf", Self.csrf(page) ?? ""), ("name", "x"), ("scope", "root")])
                #expect(bad.status == .badRequest && String(buffer: bad.body).contains("The scope must be sdk or admin."))
            }
        }
    }

    @Test("events: counts and revenue by name and by day, summed exactly per currency", arguments: TestEngine.available)
    func events(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let install = InstallRecord(
                projectID: world.project.id, linkID: nil, clickID: nil, confidence: 0, matchedFactors: [], method: .none,
                installedAt: world.clock.date, device: DeviceSignals(), platform: .ios, platformVersion: "17.4", deviceID: nil, fingerprintHash: "h",
                attributionWindowHours: nil, deepLinkData: [:])
            try await world.store.recordInstall(install)
            let purchases: [[String: JSONValue]] = [
                ["revenue": 29.99, "currency": "USD"], ["revenue": 29.99, "currency": "USD"], ["revenue": 5, "currency": "EUR"],
                ["revenue": "lots", "currency": "USD"], [:],
            ]
            for (index, properties) in purchases.enumerated() {
                _ = try await world.store.recordEvent(
                    EventRecord(
                        projectID: world.project.id, installID: install.id, name: properties.isEmpty ? "signup" : "revenue", properties: properties,
                        occurredAt: world.clock.date.addingTimeInterval(-Double(index)), receivedAt: world.clock.date, dedupeKey: "e\(index)"))
            }
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let html = String(buffer: try await browser.get(client, "/dashboard/events").body)
                #expect(html.contains("<tr><td>revenue</td><td>4</td><td>5.00 EUR, 59.98 USD</td></tr>"), "\(html)")
                #expect(html.contains("<tr><td>signup</td><td>1</td><td></td></tr>"))
            }
        }
    }

    @Test("apps: the association files as served, with the doctor's verdict on a link of the project", arguments: TestEngine.available)
    func apps(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("spring")
            for app in [
                AppRecord(projectID: world.project.id, platform: .ios, identifier: "ABCDE12345.com.acme.shop", paths: ["/*"], createdAt: world.clock.date),
                AppRecord(projectID: world.project.id, platform: .ios, identifier: "com.acme.noteam", paths: ["/help/*"], createdAt: world.clock.date),
                AppRecord(projectID: world.project.id, platform: .appClip, identifier: "ABCDE12345.com.acme.shop.Clip", createdAt: world.clock.date),
                AppRecord(
                    projectID: world.project.id, platform: .android, identifier: "com.acme.shop", certificateFingerprints: ["AA:BB"],
                    createdAt: world.clock.date),
            ] {
                try await world.store.insertApp(app)
            }
            var configuration = world.configuration()
            configuration.publicBaseURL = URL(string: "https://go.acme.app")
            try await world.app(configuration).test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let html = String(buffer: try await browser.get(client, "/dashboard/apps").body)
                #expect(html.contains("A link such as https://go.acme.app/spring"))
                #expect(html.contains("<td class=\"verdict\">opens the app (by {&quot;/&quot;: &quot;/*&quot;})</td>"), "\(html)")
                #expect(html.contains("<td class=\"verdict\">stays in Safari: no path matches</td>"))
                #expect(html.contains("no: an app ID is TEAMID.bundle.id"))
                #expect(html.contains("<code>ABCDE12345.com.acme.shop.Clip</code>") && html.contains("<code>com.acme.shop</code>"))
                #expect(html.contains("&quot;applinks&quot;"), "the file, escaped")
            }
        }
    }

    @Test("CSV exports stream page after page: 2,500 clicks of a link in order, the links and the installs; fields quoted and formulas defused", arguments: TestEngine.available)
    func csvExports(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var link = try await world.link("spring")
            link.title = "=HYPERLINK(\"x\"), \"quoted\""
            _ = try await world.store.updateLink(link)
            let start = world.clock.date.addingTimeInterval(-10_000)
            var clicks: [ClickRecord] = []
            for index in 0..<2500 {
                clicks.append(
                    ClickRecord(
                        linkID: link.id, projectID: world.project.id, clickedAt: start.addingTimeInterval(Double(index)),
                        device: DeviceSignals(ip: "203.0.113.7", networkPrefix: "203.0.113", userAgent: index == 0 ? "Agent, \"with\" quotes\nand a line" : "UA"),
                        platform: .ios, isBot: false, source: ClickSource(referrerHost: "news.example.com", country: "DE", utmSource: "mail")))
            }
            try await world.store.importClicks(clicks)
            let (linkID, clickTimes) = (link.id, clicks.map(\.clickedAt))
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let export = try await browser.get(client, "/dashboard/links/\(linkID)/clicks.csv")
                #expect(export.status == .ok && export.headers[.contentType] == "text/csv; charset=utf-8")
                #expect(export.headers[.contentDisposition] == "attachment; filename=\"spring-clicks.csv\"")
                let text = String(buffer: export.body)
                let lines = text.components(separatedBy: "\r\n")
                #expect(lines.first == "clicked_at,platform,country,referrer,utm_source,bot,network,user_agent")
                #expect(lines.count == 2502, "a header, 2,500 rows and the final line break: \(lines.count)")
                #expect(lines[1].hasSuffix(",ios,DE,news.example.com,mail,no,203.0.113,\"Agent, \"\"with\"\" quotes\nand a line\""))
                #expect(lines[2500].hasPrefix(ServerApplication.timestamp(clickTimes[2499])), "in time order to the last")

                let links = String(buffer: try await browser.get(client, "/dashboard/links.csv").body)
                #expect(links.contains(",\"'=HYPERLINK(\"\"x\"\"), \"\"quoted\"\"\",active,2500,"), "\(links)")
                let installs = try await browser.get(client, "/dashboard/installs.csv")
                #expect(String(buffer: installs.body) == "installed_at,id,link_id,method,confidence,matched_factors,platform,platform_version\r\n")
            }
        }
        #expect(CSV.field("plain") == "plain" && CSV.field("-1") == "'-1" && CSV.field("@x") == "'@x" && CSV.field("a,b") == "\"a,b\"")
    }

    @Test("installs: attributed and organic by method over 30 days, the newest with why they matched", arguments: TestEngine.available)
    func installsPage(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            for (method, factors) in [(AttributionMethod.fingerprint, ["address", "user_agent"]), (.none, [])] {
                try await world.store.recordInstall(
                    InstallRecord(
                        projectID: world.project.id, linkID: method == .none ? nil : link.id, clickID: nil, confidence: method == .none ? 0 : 85,
                        matchedFactors: factors, method: method, installedAt: world.clock.date, device: DeviceSignals(), platform: .ios,
                        platformVersion: "17.4", deviceID: nil, fingerprintHash: "h", attributionWindowHours: nil, deepLinkData: [:]))
            }
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let html = String(buffer: try await browser.get(client, "/dashboard/installs").body)
                #expect(html.contains("<span id=\"attributed\">1</span> attributed, <span id=\"organic\">1</span> organic"))
                #expect(html.contains("<tr><td>fingerprint</td><td>1</td></tr>") && html.contains("<tr><td>organic</td><td>1</td></tr>"))
                #expect(html.contains(">spring</a>") && html.contains("the same address and the same device and OS version"))
            }
        }
    }

    @Test("the session cookie is Secure when the public URL is https")
    func secureCookie() async throws {
        try await ServerWorld.with { world in
            var configuration = world.configuration()
            configuration.publicBaseURL = URL(string: "https://go.acme.app")
            try await world.app(configuration).test(.live) { client in
                let signed = try await Self.signIn(Browser(), client, key: world.adminKey)
                #expect(signed.headers[values: .setCookie].contains { $0.hasPrefix("lr_session=") && $0.hasSuffix("; Secure") })
            }
        }
    }

    @Test("the chart: one bar a day, zero days drawn flat, the counts in titles")
    func chart() {
        let now = Date(timeIntervalSince1970: 20_000 * 86_400 + 3600)
        let svg = ClickChart.svg([(day: 19_999, clicks: 4), (day: 20_000, clicks: 2)], endingAt: now, days: 7)
        #expect(svg.components(separatedBy: "<rect class=\"bar\"").count == 8)
        #expect(svg.contains("data-clicks=\"4\"") && svg.contains("height=\"0\""))
        #expect(svg.contains("<title>\(LinkAdmin.date(ofDay: 20_000)): 2 clicks</title>"))
        #expect(Dashboard.whyItMatched(["address", "user_agent", "timezone"]) == "the same address, the same device and OS version and the same time zone")
    }
}
