import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkRelay
import Logging
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

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
            let response = try await client.execute(uri: uri, method: .get, headers: headers()) { (response: TestResponse) async throws in
                response
            }
            keep(response)
            return response
        }

        func post(
            _ client: some TestClientProtocol, _ uri: String, _ fields: [(String, String)], extra: HTTPFields = [:]
        ) async throws -> TestResponse {
            var components = URLComponents()
            components.queryItems = fields.map { URLQueryItem(name: $0.0, value: $0.1) }
            let body = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
            var headers = headers(form: true)
            headers.append(contentsOf: extra)
            let response = try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body)) {
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

    @Test(
        "signed out, every page goes to the sign-in; a wrong or an SDK key is refused with one sentence; an admin key makes a stored session",
        arguments: TestEngine.available)
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
                #expect(
                    String(buffer: page.body).contains("<html lang=\"en\">") && String(buffer: page.body).contains("<label for=\"key\">"))

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
                #expect(
                    cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/dashboard")
                        && !cookie.contains("Secure"))
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

    @Test(
        "a form without the session's token is refused and changes nothing; a revoked key or an expired session ends the session",
        arguments: TestEngine.available)
    func forms(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                for token in [nil, "wrong"] as [String?] {
                    let refused = try await browser.post(
                        client, "/dashboard/links/\(link.id)/deactivate", token.map { [("csrf", $0)] } ?? [])
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

    @Test(
        "ten failed sign-ins from one address in 15 minutes stop its attempts, the right key too; another address is not stopped",
        arguments: TestEngine.available)
    func signInLimit(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let browser = Browser()
                for _ in 0..<SignInLimiter.limit {
                    #expect(
                        try await Self.signIn(browser, client, key: "lr_admin_00000000_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx").status
                            == .unauthorized)
                }
                let stopped = try await Self.signIn(browser, client, key: world.adminKey)
                #expect(stopped.status == .tooManyRequests && String(buffer: stopped.body).contains("Try again in 15 minutes"))
                world.clock.advance(hours: 0.26)
                #expect(try await Self.signIn(browser, client, key: world.adminKey).status == .seeOther)
            }
        }
        let limiter = SignInLimiter()
        let now = Date()
        for _ in 0..<SignInLimiter.limit { #expect(limiter.attempt("203.0.113.7", at: now) == nil) }
        #expect(limiter.attempt("203.0.113.7", at: now) != nil && limiter.attempt("198.51.100.1", at: now) == nil)
        // Issue 63, 10: an IPv6 client counted by its /64, whatever address it picks in it.
        for index in 0..<SignInLimiter.limit { #expect(limiter.attempt("2001:db8:1:2::\(index + 1)", at: now) == nil) }
        #expect(limiter.attempt("2001:db8:1:2:ffff::9", at: now) != nil && limiter.attempt("2001:db8:1:3::1", at: now) == nil)
        // A success is given back: ten right sign-ins in a row never lock the client out.
        for _ in 0..<(3 * SignInLimiter.limit) {
            #expect(limiter.attempt("192.0.2.1", at: now) == nil)
            limiter.succeeded("192.0.2.1", at: now)
        }
    }

    @Test(
        "issue 63, 10: 200 concurrent wrong sign-ins from one address: exactly the limit are judged, every other is refused before its key is looked up"
    )
    func signInRace() async throws {
        try await ServerWorld.with(.sqlite) { world in
            try await world.app().test(.router) { client in
                let browser = Browser()
                let page = try await browser.get(client, "/dashboard/sign-in")
                let csrf = Self.csrf(page) ?? ""
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for _ in 0..<200 {
                        group.addTask {
                            try await browser.post(
                                client, "/dashboard/sign-in",
                                [("csrf", csrf), ("key", "lr_admin_00000000_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")]
                            ).status
                        }
                    }
                    return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .unauthorized }.count == SignInLimiter.limit)
                #expect(statuses.filter { $0 == .tooManyRequests }.count == 200 - SignInLimiter.limit)
            }
        }
        let limiter = SignInLimiter()
        let now = Date()
        let judged = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<400 { group.addTask { limiter.attempt("203.0.113.9", at: now) == nil } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(judged == SignInLimiter.limit)
    }

    @Test(
        "the link form: created through the same checks as the API, a wrong field shown next to it; hostile text shown as text",
        arguments: TestEngine.available)
    func linkForm(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let form = try await browser.get(client, "/dashboard/links/new")
                let csrf = try #require(Self.csrf(form))
                let html = String(buffer: form.body)
                for name in [
                    "originalUrl", "customCode", "deepLinkParameters", "utm_source", "countries", "attributionWindowHours", "landingPage",
                ] {
                    #expect(html.contains("<label for=\"f-\(name)\">"), "\(name) has a label")
                }

                let wrong = try await browser.post(
                    client, "/dashboard/links", [("csrf", csrf), ("originalUrl", "javascript:alert(1)"), ("title", "Kept")])
                let wrongHTML = String(buffer: wrong.body)
                #expect(
                    wrong.status == .badRequest && wrongHTML.contains("id=\"e-originalUrl\"") && wrongHTML.contains("aria-invalid=\"true\"")
                )
                #expect(wrongHTML.contains("value=\"Kept\""), "what was typed is kept")

                // Read by Hummingbird's form decoder: a field given twice is not a form these
                // pages post, and nothing is made of it.
                let twice = try await browser.post(
                    client, "/dashboard/links",
                    [("csrf", csrf), ("originalUrl", "https://a.example/"), ("originalUrl", "https://b.example/")])
                #expect(twice.status == .badRequest)
                #expect(String(buffer: twice.body).contains("The form could not be read"))
                #expect(try await world.store.links(project: world.project.id, filter: LinkFilter(), after: nil, limit: 10).isEmpty)

                let hostile = "<script>alert(1)</script>"
                let created = try await browser.post(
                    client, "/dashboard/links",
                    [
                        ("csrf", csrf), ("originalUrl", "https://acme.example/p?a=%22quoted%22&b='x'"), ("title", hostile),
                        ("customCode", "hostile"),
                        ("deepLinkParameters", "{\"productId\": \"42\"}"), ("utm_source", "mail"), ("attributionWindowHours", "24"),
                    ])
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
            try await ClickRetention(store: world.store, retention: nil, clock: world.clock, logger: Logger(label: "test")).sweep()
            #expect(
                try await world.store.deleteSessions(expiredBefore: world.clock.date.addingTimeInterval(7200)) == 1,
                "only the live one was left")
        }
    }

    @Test("the session cookie is Secure when the public URL is https")
    func secureCookie() async throws {
        try await ServerWorld.with { world in
            var configuration = world.configuration()
            configuration.publicBaseURL = URL(string: "https://go.acme.app")
            try await world.app(configuration).test(.live) { client in
                let signed = try await Self.signIn(Browser(), client, key: world.adminKey)
                let cookie = try #require(signed.headers[values: .setCookie].first { $0.hasPrefix("__Host-lr_session=") })
                let attributes = Set(cookie.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) })
                #expect(attributes.isSuperset(of: ["Path=/", "Secure", "HttpOnly", "SameSite=Strict"]))
                #expect(!attributes.contains { $0.hasPrefix("Domain") })
                #expect(
                    try await Browser().get(client, "/dashboard/sign-in").headers[values: .setCookie].contains {
                        $0.hasPrefix("__Host-lr_signin=")
                    })
            }
        }
    }

    @Test(
        "issue 63, 11: over https, a session or sign-in cookie without the __Host- prefix (one another page of the host could set) is not read",
        arguments: TestEngine.available)
    func tossedCookiesIgnored(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var configuration = world.configuration()
            configuration.publicBaseURL = URL(string: "https://go.acme.app")
            try await world.app(configuration).test(.live) { client in
                let attacker = Browser()
                _ = try await Self.signIn(attacker, client, key: world.adminKey)
                let session = try #require(attacker.cookies["__Host-lr_session"])
                let victim = Browser()
                victim.cookies = ["lr_session": session]
                #expect(try await victim.get(client, "/dashboard").status == .seeOther, "a tossed lr_session is not a session")
                victim.cookies = ["lr_signin": "tossed"]
                let posted = try await victim.post(client, "/dashboard/sign-in", [("csrf", "tossed"), ("key", world.adminKey)])
                #expect(posted.status == .forbidden && victim.cookies["__Host-lr_session"] == nil)
            }
        }
    }

    @Test(
        "issue 63, 11: login CSRF by cookie tossing: another port of the host sets the sign-in cookie and posts its own key; the browser's Sec-Fetch-Site or Origin says so and nothing is signed in",
        arguments: TestEngine.available)
    func loginCSRF(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let fields = [("csrf", "tossed"), ("key", world.adminKey)]
                for (headers, what) in [
                    ([HTTPField(name: HTTPField.Name("Sec-Fetch-Site")!, value: "same-site")], "Sec-Fetch-Site: same-site"),
                    ([HTTPField(name: HTTPField.Name("Sec-Fetch-Site")!, value: "cross-site")], "Sec-Fetch-Site: cross-site"),
                    ([HTTPField(name: .origin, value: "http://localhost:9999")], "Origin: another port"),
                    ([HTTPField(name: .origin, value: "null")], "Origin: null"),
                ] {
                    let victim = Browser()
                    victim.cookies = [DashboardSecurity.signInCookie: "tossed"]
                    let posted = try await victim.post(client, "/dashboard/sign-in", fields, extra: HTTPFields(headers))
                    #expect(posted.status == .forbidden && String(buffer: posted.body).contains("sent from another site"), "\(what)")
                    #expect(victim.cookies[DashboardSecurity.sessionCookie] == nil, "\(what)")
                }
                // Its own page's post, as a browser marks it, signs in.
                let own = Browser()
                let page = try await own.get(client, "/dashboard/sign-in")
                let signed = try await own.post(
                    client, "/dashboard/sign-in", [("csrf", Self.csrf(page) ?? ""), ("key", world.adminKey)],
                    extra: [HTTPField.Name("Sec-Fetch-Site")!: "same-origin"])
                #expect(signed.status == .seeOther && own.cookies[DashboardSecurity.sessionCookie] != nil)
                // A signed-in form from another port is refused too, its token right.
                let keys = try await own.get(client, "/dashboard/keys")
                let forged = try await own.post(
                    client, "/dashboard/destination-hosts", [("csrf", Self.csrf(keys) ?? ""), ("mode", "any")],
                    extra: [HTTPField.Name("Sec-Fetch-Site")!: "same-site"])
                #expect(forged.status == .forbidden)
                #expect(try await world.store.destinationHosts(project: world.project.id).mode == .learned)
            }
        }
    }

    @Test(
        "which form posts come from the dashboard's own pages: Sec-Fetch-Site first, then Origin against the public URL or the request's host"
    )
    func originCheck() throws {
        func request(_ fields: [(String, String)], authority: String? = "go.acme.app:8080") -> Request {
            var head = HTTPRequest(method: .post, scheme: "http", authority: authority, path: "/dashboard/sign-in")
            for (name, value) in fields { head.headerFields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
            return Request(head: head, body: .init(buffer: ByteBuffer()))
        }
        let base = URL(string: "https://go.acme.app")
        #expect(DashboardSecurity.fromThisDashboard(request([]), publicBaseURL: nil), "no browser header: curl, a script")
        #expect(DashboardSecurity.fromThisDashboard(request([("Sec-Fetch-Site", "same-origin")]), publicBaseURL: nil))
        #expect(DashboardSecurity.fromThisDashboard(request([("Sec-Fetch-Site", "none")]), publicBaseURL: nil))
        #expect(
            !DashboardSecurity.fromThisDashboard(
                request([("Sec-Fetch-Site", "same-site"), ("Origin", "http://go.acme.app:8080")]), publicBaseURL: nil),
            "the browser's word first")
        #expect(DashboardSecurity.fromThisDashboard(request([("Origin", "http://go.acme.app:8080")]), publicBaseURL: nil))
        #expect(DashboardSecurity.fromThisDashboard(request([("Origin", "HTTP://Go.Acme.App:8080")]), publicBaseURL: nil))
        #expect(!DashboardSecurity.fromThisDashboard(request([("Origin", "http://go.acme.app:8081")]), publicBaseURL: nil))
        #expect(!DashboardSecurity.fromThisDashboard(request([("Origin", "http://go.acme.app")]), publicBaseURL: nil))
        #expect(
            DashboardSecurity.fromThisDashboard(
                request([("Origin", "https://go.acme.app")], authority: "127.0.0.1:8080"), publicBaseURL: base),
            "behind a proxy: the public URL's origin")
        #expect(
            !DashboardSecurity.fromThisDashboard(
                request([("Origin", "https://go.acme.app:8443")], authority: "127.0.0.1:8080"), publicBaseURL: base))
        #expect(
            DashboardSecurity.fromThisDashboard(request([("Origin", "http://[::1]:8080")], authority: "[::1]:8080"), publicBaseURL: nil))
        #expect(!DashboardSecurity.fromThisDashboard(request([("Origin", "null")]), publicBaseURL: nil))
        #expect(!DashboardSecurity.fromThisDashboard(request([("Origin", "not a url")]), publicBaseURL: nil))
    }

    @Test("the chart: one bar a day, zero days drawn flat, the counts in titles")
    func chart() {
        let now = Date(timeIntervalSince1970: 20_000 * 86_400 + 3600)
        let svg = ClickChart.svg([(day: 19_999, clicks: 4), (day: 20_000, clicks: 2)], endingAt: now, days: 7)
        #expect(svg.components(separatedBy: "<rect class=\"bar\"").count == 8)
        #expect(svg.contains("data-clicks=\"4\"") && svg.contains("height=\"0\""))
        #expect(svg.contains("<title>\(Timestamp.date(ofDay: 20_000)): 2 clicks</title>"))
        #expect(
            Dashboard.whyItMatched(["address", "user_agent", "timezone"])
                == "the same address, the same device and OS version and the same time zone")
    }
}
