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

    /// `title (code)`, or the code alone.
    static func label(_ link: LinkRecord) -> String {
        link.title.map { "\($0) (\(link.shortCode))" } ?? link.shortCode
    }
}
