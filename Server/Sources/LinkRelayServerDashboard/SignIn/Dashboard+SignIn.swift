import Foundation
import HTTPTypes
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import NIOCore

extension Dashboard {
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
            return Self.redirect(DashboardPath.root)
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
            DashboardPath.root,
            cookies: [
                cookies.set(cookies.session, token, maxAge: Int(DashboardSecurity.sessionLifetime)),
                cookies.set(cookies.signIn, "", maxAge: 0),
            ])
    }

    /// Ends the session in the database and removes its cookie.
    func signOut(_ request: Request, _ context: ServerContext) async throws -> Response {
        let session = try await checkedForm(request, context).session
        try await store.deleteSession(hash: session.tokenHash)
        return Self.redirect(DashboardPath.signIn, cookies: [cookies.set(cookies.session, "", maxAge: 0)])
    }
}
