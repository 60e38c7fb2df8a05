import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage

/// The dashboard's links: the list, the form to create and edit one, and one link's page.
extension Dashboard {
    // MARK: Links

    struct LinksView {
        let chrome: Chrome
        let query: String
        let rows: [LinkRow]
        let next: String?
        let pageSize = Dashboard.pageSize
        let hasRows: Bool
    }

    struct LinkRow {
        let id: String
        let code: String
        let title: String
        let status: String
        let clicks: Int
        let destination: String
    }

    func links(_ request: Request, _ context: ServerContext) async throws -> Response {
        let session = try context.requireSession()
        let query = AdminQuery(request)
        let search = try query.text("q", maxLength: 200)
        let cursor = query.raw("after").flatMap(LinkCursor.init(token:))
        var links = try await store.links(
            project: session.projectID, filter: LinkFilter(search: search), after: cursor, limit: Self.pageSize + 1)
        let more = links.count > Self.pageSize
        links = Array(links.prefix(Self.pageSize))
        let clicks = try await store.clickCounts(links: links.map(\.id))
        let now = clock.currentDate
        var next: String?
        if more, let last = links.last {
            var components = URLComponents()
            components.path = DashboardPath.links
            components.queryItems =
                (search.map { [URLQueryItem(name: "q", value: $0)] } ?? []) + [
                    URLQueryItem(name: "after", value: LinkCursor(after: last).token)
                ]
            next = components.string
        }
        return pages.page(
            "links",
            LinksView(
                chrome: Chrome(title: "Links", csrf: session.csrfToken, section: "links"), query: search ?? "",
                rows: links.map {
                    LinkRow(
                        id: $0.id, code: ($0.templateSlug.isEmpty ? "" : $0.templateSlug + "/") + $0.shortCode, title: $0.title ?? "",
                        status: $0.status(at: now), clicks: clicks[$0.id] ?? 0, destination: $0.originalURL)
                }, next: next, hasRows: !links.isEmpty))
    }

    struct FormView {
        let chrome: Chrome
        let heading: String
        let action: String
        let submit: String
        let problem: String?
        let fields: [LinkForm.Field]
    }

    func newLink(_ context: ServerContext) throws -> Response {
        let session = try context.requireSession()
        return pages.page(
            "link_form",
            FormView(
                chrome: Chrome(title: "Create a link", csrf: session.csrfToken, section: "links"), heading: "Create a link",
                action: DashboardPath.links, submit: "Create the link", problem: nil, fields: LinkForm().fields))
    }

    /// Creates the link the form describes, as `POST /api/links` with an admin key would; a
    /// field that is wrong is shown again with its error next to it.
    func createLink(_ request: Request, _ context: ServerContext) async throws -> Response {
        let (session, posted) = try await checkedForm(request, context)
        var form = LinkForm()
        form.fill(posted)
        do {
            let draft = try LinkForm.draft(posted)
            let key = try await sessionKey(session)
            let (link, _) = try await LinkMaker(store: store, clock: clock).make(draft, key: key, admin: true)
            return Self.redirect(DashboardPath.link(link.id))
        } catch let error as LinkCreationError {
            return formPage(
                form, error: APIError(error), session: session, heading: "Create a link", action: DashboardPath.links,
                submit: "Create the link")
        } catch let error as APIError {
            return formPage(
                form, error: error, session: session, heading: "Create a link", action: DashboardPath.links, submit: "Create the link")
        }
    }

    /// The key the session signed in with, as the API's calls take it.
    private func sessionKey(_ session: DashboardSession) async throws -> APIKeyRecord {
        guard let key = try await store.keys(project: session.projectID).first(where: { $0.id == session.keyID }), key.revokedAt == nil
        else {
            throw DashboardError(.forbidden, "The key you signed in with was revoked. Sign in again.")
        }
        return key
    }

    private func formPage(
        _ form: LinkForm, error: APIError, session: DashboardSession, heading: String, action: String, submit: String
    ) -> Response {
        var form = form
        let placed = error.field.map { form.mark($0, error.message) } ?? false
        return pages.page(
            "link_form",
            FormView(
                chrome: Chrome(title: heading, csrf: session.csrfToken, section: "links"), heading: heading, action: action, submit: submit,
                problem: placed ? "The link was not saved: see the field marked below." : error.message, fields: form.fields),
            status: error.status)
    }

    func editLink(_ context: ServerContext, id: String) async throws -> Response {
        let session = try context.requireSession()
        let link = try await ownLink(id, session)
        return pages.page(
            "link_form",
            FormView(
                chrome: Chrome(title: "Edit \(link.shortCode)", csrf: session.csrfToken, section: "links"),
                heading: "Edit \(link.shortCode)",
                action: DashboardPath.editLink(link.id), submit: "Save", problem: nil, fields: LinkForm(link).fields))
    }

    /// Saves the edit form as `PATCH /api/links/{id}` would: every field checked, nothing saved
    /// when one is wrong.
    func saveLink(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let (session, posted) = try await checkedForm(request, context)
        var link = try await ownLink(id, session)
        var form = LinkForm(link)
        form.fill(posted)
        do {
            link = try LinkForm.change(posted).applied(to: link)
            guard try await store.updateLink(link) else { throw DashboardError(.notFound, "The link was deleted meanwhile.") }
            try await store.learnDestinations(of: link)
            return Self.redirect(DashboardPath.link(link.id))
        } catch let error as LinkFieldError {
            return formPage(
                form, error: APIError(error), session: session, heading: "Edit \(link.shortCode)",
                action: DashboardPath.editLink(link.id), submit: "Save")
        } catch let error as APIError {
            return formPage(
                form, error: error, session: session, heading: "Edit \(link.shortCode)", action: DashboardPath.editLink(link.id),
                submit: "Save")
        }
    }

    func setActive(_ active: Bool, _ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let (session, _) = try await checkedForm(request, context)
        var link = try await ownLink(id, session)
        link.isActive = active
        _ = try await store.updateLink(link)
        return Self.redirect(DashboardPath.link(link.id))
    }

    func duplicate(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let (session, _) = try await checkedForm(request, context)
        let stored = try await LinkMaker.duplicate(try await ownLink(id, session), at: clock.currentDate, into: store)
        return Self.redirect(DashboardPath.link(stored.id))
    }

    func ownLink(_ id: String, _ session: DashboardSession) async throws -> LinkRecord {
        guard let link = try await store.link(id: id), link.projectID == session.projectID else {
            throw DashboardError(.notFound, "There is no such link in this project.")
        }
        return link
    }

    // MARK: One link

    struct LinkView {
        let chrome: Chrome
        let id: String
        let code: String
        let title: String
        let shortURL: String
        let status: String
        let destination: String
        let toggleAction: String
        let toggleLabel: String
        let days: Int
        let totalClicks: Int
        let clickWord: String
        let chart: String
        let breakdowns: [Breakdown]
        let installs: [InstallRow]
        let hasInstalls: Bool
    }

    struct Breakdown {
        let key: String
        let heading: String
        let column: String
        let rows: [NamedRow]
        let hasRows: Bool

        init(key: String, heading: String, column: String, rows: [NamedRow]) {
            self.key = key
            self.heading = heading
            self.column = column
            self.rows = rows
            hasRows = !rows.isEmpty
        }
    }

    struct NamedRow {
        let name: String
        let count: Int
    }

    struct InstallRow {
        let when: String
        let method: String
        let confidence: Int
        let why: String
    }

    func link(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let session = try context.requireSession()
        let link = try await ownLink(id, session)
        let now = clock.currentDate
        let days = 30
        let today = Self.day(of: now)
        let clicks = try await store.dailyClicks(project: session.projectID, link: link.id, fromDay: today - days + 1, toDay: today)
        let installs = try await store.installs(project: session.projectID, link: link.id, limit: 50)
        let shortURL = link.shareURL(on: configuration.shareOrigin(for: request))
            .absoluteString
        func rows(_ counts: [NamedCount], unknown: String) -> [NamedRow] {
            counts.map { NamedRow(name: $0.name ?? unknown, count: $0.count) }
        }
        return pages.page(
            "link",
            LinkView(
                chrome: Chrome(title: Self.label(link), csrf: session.csrfToken, section: "links"), id: link.id, code: link.shortCode,
                title: Self.label(link), shortURL: shortURL, status: link.status(at: now), destination: link.originalURL,
                toggleAction: link.isActive ? "deactivate" : "activate", toggleLabel: link.isActive ? "Deactivate" : "Activate", days: days,
                totalClicks: clicks.total, clickWord: clicks.total == 1 ? "click" : "clicks",
                chart: ClickChart.svg(clicks.byDay.map { (day: Int($0.name ?? "") ?? 0, clicks: $0.count) }, endingAt: now, days: days),
                breakdowns: [
                    Breakdown(
                        key: "platform", heading: "By platform", column: "Platform", rows: rows(clicks.byPlatform, unknown: "unknown")),
                    Breakdown(key: "country", heading: "By country", column: "Country", rows: rows(clicks.byCountry, unknown: "unknown")),
                    Breakdown(
                        key: "referrer", heading: "By referrer", column: "Referring site",
                        rows: rows(clicks.byReferrer, unknown: "none (typed, an app, or hidden)")),
                    Breakdown(key: "utm", heading: "By UTM source", column: "utm_source", rows: rows(clicks.byUTMSource, unknown: "none")),
                ],
                installs: installs.map {
                    InstallRow(
                        when: ServerHTTP.timestamp($0.installedAt), method: Self.methodName($0.method), confidence: $0.confidence,
                        why: Self.whyItMatched($0.matchedFactors))
                }, hasInstalls: !installs.isEmpty))
    }

    /// An attribution method in words.
    static func methodName(_ method: AttributionMethod) -> String {
        switch method {
        case .none: "organic"
        case .fingerprint: "fingerprint"
        case .fingerprintSharedNetwork: "fingerprint, on a shared network"
        case .pasteboard: "the copied link (certain)"
        case .adopted: "adopted from another server"
        }
    }

    /// The matched factors in words: "the same address, device and OS version, and time zone".
    static func whyItMatched(_ factors: [String]) -> String {
        let words: [String: String] = [
            "ip": "the same network", "address": "the same address", "user_agent": "the same device and OS version",
            "timezone": "the same time zone", "language": "the same language", "screen": "the same screen size",
            "click_token": "the link the landing page copied, pasted in the app",
            "click_token_used": "the link the landing page copied, pasted in the app, whose tap had brought an earlier install",
        ]
        let phrases = factors.map { words[$0] ?? $0 }
        switch phrases.count {
        case 0: return "nothing matched"
        case 1: return phrases[0]
        default: return phrases.dropLast().joined(separator: ", ") + " and " + (phrases.last ?? "")
        }
    }

    /// The link's QR code for the page (and its download).
    func qr(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let session = try context.requireSession()
        let link = try await ownLink(id, session)
        let url = link.shareURL(on: configuration.shareOrigin(for: request)).absoluteString
        guard let code = try? QRCode(text: url, level: .medium) else {
            throw DashboardError(.unprocessableContent, "The link's URL is too long for a QR code.")
        }
        return ServerHTTP.svg(code, pixels: 400, filename: "\(link.shortCode).svg", download: AdminQuery(request).raw("download") == "1")
    }
}
