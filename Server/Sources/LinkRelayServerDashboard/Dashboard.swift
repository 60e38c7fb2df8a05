import Foundation
import HTTPTypes
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import NIOCore

/// The web dashboard at `/dashboard`: server-rendered pages (``DashboardPages``), usable without
/// JavaScript, behind a sign-in with an admin key that becomes a session
/// (``DashboardSecurity``). Every page reads the same store as the admin API, over the signed-in
/// key's project only.
package struct Dashboard: Sendable {
    let store: any ServerStore
    let configuration: ServerConfiguration
    /// The dashboard's cookies, named for this server's scheme (``DashboardSecurity/Cookies``).
    var cookies: DashboardSecurity.Cookies { DashboardSecurity.Cookies(configuration) }
    let clock: any LinkRelayClock
    let pages: DashboardPages
    let limiter = SignInLimiter()

    /// Links on one page of the list.
    static let pageSize = 50

    /// The dashboard's pages at `/dashboard` on `router`, over `store`; when its templates are
    /// not installed, every page answers `503` saying which file is missing.
    package static func register(
        on router: Router<ServerContext>, store: any ServerStore, configuration: ServerConfiguration,
        clock: any LinkRelayClock
    ) {
        switch DashboardPages.shipped {
        case .success(let pages): Dashboard(store: store, configuration: configuration, clock: clock, pages: pages).register(on: router)
        case .failure(let error):
            router.get("dashboard/**") { _, _ -> Response in throw APIError(.serviceUnavailable, error.description) }
        }
    }

    func register(on router: Router<ServerContext>) {
        let open = router.group("dashboard").add(middleware: DashboardPageMiddleware(pages: pages))
        open.get("static/style.css") { _, _ in staticFile(pages.stylesheet, type: "text/css; charset=utf-8") }
        open.get("static/app.js") { _, _ in staticFile(pages.script, type: "text/javascript; charset=utf-8") }
        open.get("sign-in") { request, context in try await signInPage(request, context) }
        open.post("sign-in") { request, context in try await signIn(request, context) }
        // Any other address under /dashboard: a page that says so (the router's own 404 is JSON).
        open.get("**") { _, _ -> Response in throw DashboardError(.notFound, "There is no such page in the dashboard.") }

        let signedIn = open.group().add(middleware: DashboardSessionMiddleware(store: store, clock: clock, cookies: cookies))
        signedIn.get("") { request, context in try await overview(context) }
        signedIn.post("sign-out") { request, context in try await signOut(request, context) }
        signedIn.get("links") { request, context in try await links(request, context) }
        signedIn.get("links/new") { _, context in try newLink(context) }
        signedIn.post("links") { request, context in try await createLink(request, context) }
        signedIn.get("links/:id") { request, context in try await link(request, context, id: context.parameters.require("id")) }
        signedIn.get("links/:id/edit") { _, context in try await editLink(context, id: context.parameters.require("id")) }
        signedIn.post("links/:id/edit") { request, context in try await saveLink(request, context, id: context.parameters.require("id")) }
        signedIn.post("links/:id/deactivate") { request, context in
            try await setActive(false, request, context, id: context.parameters.require("id"))
        }
        signedIn.post("links/:id/activate") { request, context in
            try await setActive(true, request, context, id: context.parameters.require("id"))
        }
        signedIn.post("links/:id/duplicate") { request, context in
            try await duplicate(request, context, id: context.parameters.require("id"))
        }
        signedIn.get("links/:id/qr.svg") { request, context in try await qr(request, context, id: context.parameters.require("id")) }
        signedIn.get("installs") { _, context in try await installs(context) }
        signedIn.get("events") { request, context in try await events(request, context) }
        signedIn.get("links.csv") { _, context in try await linksCSV(context) }
        signedIn.get("links/:id/clicks.csv") { _, context in try await clicksCSV(context, id: context.parameters.require("id")) }
        signedIn.get("installs.csv") { _, context in try await installsCSV(context) }
        signedIn.get("apps") { request, context in try await apps(request, context) }
        signedIn.get("keys") { _, context in try await keysPage(context) }
        signedIn.post("keys") { request, context in try await createKey(request, context) }
        signedIn.post("destination-hosts") { request, context in try await setDestinations(request, context) }
        signedIn.post("keys/:id/revoke") { request, context in try await revokeKey(request, context, id: context.parameters.require("id")) }
    }

    private func staticFile(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=3600"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func redirect(_ location: String, cookies: [String] = []) -> Response {
        var headers: HTTPFields = [.location: location]
        for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie)) }
        return Response(status: .seeOther, headers: headers)
    }

    // MARK: Signing in and out

    struct SignInView {
        let chrome = Chrome(title: "Sign in", csrf: nil)
        let csrf: String
        let problem: String?
    }

    /// The sign-in form, with a fresh form token in its own short-lived cookie.
    func signInPage(
        _ request: Request, _ context: ServerContext, problem: String? = nil, status: HTTPResponse.Status = .ok
    ) async throws
        -> Response
    {
        if problem == nil, let token = DashboardSecurity.cookie(cookies.session, in: request),
            try await store.session(hash: sha256Hex(token), at: clock.currentDate) != nil
        {
            return Self.redirect("/dashboard")
        }
        let csrf = DashboardSecurity.token()
        var response = pages.page("sign_in", SignInView(csrf: csrf, problem: problem), status: status)
        response.headers.append(
            HTTPField(
                name: .setCookie,
                value: cookies.set(cookies.signIn, csrf, maxAge: 600)))
        return response
    }

    /// Signs in with an admin key: a session in the database, its token in an HttpOnly,
    /// SameSite=Strict cookie. A wrong key says so without saying which part was wrong; ten
    /// failures from one address in 15 minutes stop its attempts until the oldest is older.
    func signIn(_ request: Request, _ context: ServerContext) async throws -> Response {
        let now = clock.currentDate
        let address = context.clientAddress ?? "unknown"
        // Counted before it is judged, and given back when it succeeds (``SignInLimiter``).
        if let wait = limiter.attempt(address, at: now) {
            let minutes = max(Int((wait / 60).rounded(.up)), 1)
            return try await signInPage(
                request, context,
                problem: "Too many failed sign-ins from this address. Try again in \(minutes) minute\(minutes == 1 ? "" : "s").",
                status: .tooManyRequests)
        }
        try Self.requireThisDashboard(request, configuration)
        let form = try await FormBody.read(request, timeout: configuration.bodyTimeout)
        guard DashboardSecurity.same(form["csrf"], DashboardSecurity.cookie(cookies.signIn, in: request)) else {
            throw DashboardError(
                .forbidden, "The sign-in form's token is missing or wrong: open the sign-in page again and sign in from there.")
        }
        let secret = form["key"] ?? ""
        guard case .valid(let key) = try await store.check(secret: secret, scopes: [.admin]) else {
            return try await signInPage(request, context, problem: "That is not an admin key of this server.", status: .unauthorized)
        }
        limiter.succeeded(address, at: now)
        let token = DashboardSecurity.token()
        try await store.insertSession(
            DashboardSession(
                tokenHash: sha256Hex(token), projectID: key.projectID, keyID: key.id, csrfToken: DashboardSecurity.token(), createdAt: now,
                expiresAt: now.addingTimeInterval(DashboardSecurity.sessionLifetime)))
        return Self.redirect(
            "/dashboard",
            cookies: [
                cookies.set(cookies.session, token, maxAge: Int(DashboardSecurity.sessionLifetime)),
                cookies.set(cookies.signIn, "", maxAge: 0),
            ])
    }

    /// Ends the session in the database and removes its cookie.
    func signOut(_ request: Request, _ context: ServerContext) async throws -> Response {
        let session = try await checkedForm(request, context).session
        try await store.deleteSession(hash: session.tokenHash)
        return Self.redirect("/dashboard/sign-in", cookies: [cookies.set(cookies.session, "", maxAge: 0)])
    }

    /// Refuses a form a browser sent from another origin (another port of this host included):
    /// ``DashboardSecurity/fromThisDashboard(_:publicBaseURL:)``.
    static func requireThisDashboard(_ request: Request, _ configuration: ServerConfiguration) throws {
        guard DashboardSecurity.fromThisDashboard(request, publicBaseURL: configuration.publicBaseURL) else {
            throw DashboardError(.forbidden, "This form was sent from another site, not from this dashboard's page. Nothing was changed.")
        }
    }

    /// A posted form of the signed-in session, its origin and token checked: a form from
    /// another site (or another session) is refused.
    func checkedForm(_ request: Request, _ context: ServerContext) async throws -> (session: DashboardSession, form: FormBody) {
        let session = try context.requireSession()
        try Self.requireThisDashboard(request, configuration)
        let form = try await FormBody.read(request, timeout: configuration.bodyTimeout)
        guard DashboardSecurity.same(form["csrf"], session.csrfToken) else {
            throw DashboardError(
                .forbidden, "The form's token is missing or wrong: it did not come from this dashboard's page. Nothing was changed.")
        }
        return (session, form)
    }

    // MARK: Overview

    struct OverviewView {
        let chrome: Chrome
        let links: Int
        let clicksToday: Int
        let clicksWeek: Int
        let clicksMonth: Int
        let attributed: Int
        let organic: Int
        let top: [TopLink]
        let hasTop: Bool
        /// SDK-key links may go to any host (``DestinationHosts/Mode/any``): said on the overview.
        let anyHost: Bool
    }

    struct TopLink {
        let id: String
        let label: String
        let clicks: Int
    }

    /// The UTC day of `date`, counted from 1970.
    static func day(of date: Date) -> Int {
        Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    func overview(_ context: ServerContext) async throws -> Response {
        let session = try context.requireSession()
        let now = clock.currentDate
        let project = session.projectID
        // Whole UTC days, from the daily counts: today, the last 7 and the last 30.
        let today = Self.day(of: now)
        let month = try await store.dailyClicks(project: project, link: nil, fromDay: today - 29, toDay: today)
        func clicks(since day: Int) -> Int { month.byDay.filter { (Int($0.name ?? "") ?? .min) >= day }.reduce(0) { $0 + $1.count } }
        let installs = try await store.installSummary(project: project, link: nil, from: now.addingTimeInterval(-30 * 86_400), to: now)
        let organic = installs.filter { $0.name == AttributionMethod.none.rawValue }.reduce(0) { $0 + $1.count }
        var top: [TopLink] = []
        for entry in month.topLinks {
            guard let id = entry.name else { continue }
            let link = try await store.link(id: id)
            top.append(TopLink(id: id, label: link.map(Self.label) ?? id, clicks: entry.count))
        }
        return pages.page(
            "overview",
            OverviewView(
                chrome: Chrome(title: "Overview", csrf: session.csrfToken, section: "overview"),
                links: try await store.linkCount(project: project),
                clicksToday: clicks(since: today), clicksWeek: clicks(since: today - 6), clicksMonth: month.total,
                attributed: installs.reduce(0) { $0 + $1.count } - organic, organic: organic, top: top, hasTop: !top.isEmpty,
                anyHost: try await store.destinationHosts(project: project).mode == .any))
    }

    /// `title (code)`, or the code alone.
    static func label(_ link: LinkRecord) -> String {
        link.title.map { "\($0) (\(link.shortCode))" } ?? link.shortCode
    }

    // MARK: Installs

    struct InstallsView {
        let chrome: Chrome
        let rows: [Row]
        let hasRows: Bool
        /// The last 30 days' installs by method, attributed and organic.
        let methods: [Method]
        let attributed: Int
        let organic: Int

        struct Method {
            let method: String
            let installs: Int
        }

        struct Row {
            let when: String
            let method: String
            let confidence: Int
            let why: String
            let link: String?
            let linkID: String?
        }
    }

    func installs(_ context: ServerContext) async throws -> Response {
        let session = try context.requireSession()
        let installs = try await store.installs(project: session.projectID, link: nil, limit: 100)
        let now = clock.currentDate
        let methods = try await store.installSummary(
            project: session.projectID, link: nil, from: now.addingTimeInterval(-30 * 86_400), to: now)
        let organic = methods.filter { $0.name == AttributionMethod.none.rawValue }.reduce(0) { $0 + $1.count }
        var codes: [String: String] = [:]
        for id in Set(installs.compactMap(\.linkID)) { codes[id] = try await store.link(id: id)?.shortCode }
        return pages.page(
            "installs",
            InstallsView(
                chrome: Chrome(title: "Installs", csrf: session.csrfToken, section: "installs"),
                rows: installs.map {
                    InstallsView.Row(
                        when: ServerHTTP.timestamp($0.installedAt), method: Self.methodName($0.method), confidence: $0.confidence,
                        why: $0.method == .none ? "" : Self.whyItMatched($0.matchedFactors), link: $0.linkID.flatMap { codes[$0] },
                        linkID: $0.linkID.flatMap { codes[$0] == nil ? nil : $0 })
                }, hasRows: !installs.isEmpty,
                methods: methods.map {
                    InstallsView.Method(method: Self.methodName(AttributionMethod(rawValue: $0.name ?? "") ?? .none), installs: $0.count)
                },
                attributed: methods.reduce(0) { $0 + $1.count } - organic, organic: organic))
    }
}

/// Clicks per day as an SVG bar chart the server draws: no script, no library.
enum ClickChart {
    /// `days` bars ending with the day of `now` (UTC), each with its date and count as a title;
    /// the highest count and the first and last dates as labels.
    static func svg(_ byDay: [(day: Int, clicks: Int)], endingAt now: Date, days: Int) -> String {
        let last = Int((now.timeIntervalSince1970 / 86_400).rounded(.down))
        let counts = Dictionary(byDay.map { ($0.day, $0.clicks) }, uniquingKeysWith: +)
        let series = (0..<days).map { offset in (day: last - days + 1 + offset, clicks: counts[last - days + 1 + offset] ?? 0) }
        let highest = max(series.map(\.clicks).max() ?? 0, 1)
        let (width, height, left, bottom) = (days * 20 + 40, 180, 36, 24)
        let barWidth = 14
        var bars = ""
        for (index, point) in series.enumerated() {
            let barHeight =
                point.clicks == 0 ? 0 : max(Int((Double(point.clicks) / Double(highest) * Double(height - bottom - 10)).rounded()), 1)
            let x = left + index * 20 + 3
            let y = height - bottom - barHeight
            let date = Timestamp.date(ofDay: point.day)
            bars +=
                "<rect class=\"bar\" x=\"\(x)\" y=\"\(y)\" width=\"\(barWidth)\" height=\"\(barHeight)\" fill=\"#0b57d0\" data-date=\"\(date)\" data-clicks=\"\(point.clicks)\"><title>\(date): \(point.clicks) clicks</title></rect>"
        }
        let first = Timestamp.date(ofDay: series.first?.day ?? last)
        let end = Timestamp.date(ofDay: last)
        return """
            <svg class="chart" role="img" aria-label="Clicks per day from \(first) to \(end); the most in a day: \(highest)" viewBox="0 0 \(width) \(height)" xmlns="http://www.w3.org/2000/svg">\
            <line x1="\(left)" y1="\(height - bottom)" x2="\(width - 4)" y2="\(height - bottom)" stroke="#57606a"/>\
            <text x="\(left - 6)" y="14" text-anchor="end" font-size="11" fill="#57606a">\(highest)</text>\
            <text x="\(left - 6)" y="\(height - bottom)" text-anchor="end" font-size="11" fill="#57606a">0</text>\
            \(bars)\
            <text x="\(left)" y="\(height - 6)" font-size="11" fill="#57606a">\(first)</text>\
            <text x="\(width - 4)" y="\(height - 6)" text-anchor="end" font-size="11" fill="#57606a">\(end)</text></svg>
            """
    }
}
