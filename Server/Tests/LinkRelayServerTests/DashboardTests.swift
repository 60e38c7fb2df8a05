import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import Logging
import Synchronization
import Testing

@testable import LinkRelayServer

/// The dashboard's sign-in, sessions and forms, over HTTP: a session stored by its hash and
/// ended by signing out (or revoking its key), a token on every form, the security headers,
/// sign-in attempts limited per address, hostile text shown as text.
@Suite("The dashboard: sign-in, sessions and forms")
struct DashboardTests {
    /// A browser's cookies, as far as the tests need them.
    final class Browser: Sendable {
        let jar = Mutex<[String: String]>([:])

        var cookies: [String: String] {
            get { jar.withLock { $0 } }
            set { jar.withLock { $0 = newValue } }
        }

        func headers(form: Bool = false) -> HTTPFields {
            var headers = HTTPTest.headers(key: nil)
            let cookies = self.cookies
            if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
            if form { headers[.contentType] = "application/x-www-form-urlencoded" }
            return headers
        }

        func keep(_ response: TestResponse) {
            for value in response.headers[values: .setCookie] {
                let pair = value.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
                let name = String(pair[0])
                let content = pair.count > 1 ? String(pair[1]) : ""
                jar.withLock { $0[name] = value.contains("Max-Age=0") ? nil : content }
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
                    [("csrf", csrf), ("originalUrl", "https://acme.example/p?a=%22quoted%22&b='x'"), ("title", hostile), ("customCode", "hostile"),
                     ("deepLinkParameters", "{\"productId\": \"42\"}"), ("utm_source", "mail"), ("attributionWindowHours", "24")])
                #expect(created.status == .seeOther)
                let location = try #require(created.headers[.location])
                let page = String(buffer: try await browser.get(client, location).body)
                #expect(!page.contains(hostile) && page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
                #expect(!page.contains("%22quoted%22&b='x'"), "the destination's & and ' are escaped in the page")
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
