import Foundation
import HTTPTypes
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import Synchronization

/// The dashboard's sign-in and what guards it: a session per signed-in browser (its cookie's
/// token kept only as a hash, in the database, with an expiry), a token on every form, the
/// security headers on every page, and a limit on sign-in attempts per address.
enum DashboardSecurity {
    /// The session cookie, and the cookie that carries the sign-in form's token; where the
    /// server's public URL is https, their `__Host-` forms (``Cookies``).
    static let sessionCookie = "lr_session"
    static let signInCookie = "lr_signin"

    /// The dashboard's two cookies as this server names and scopes them.
    ///
    /// Cookies are not kept apart by port: any page of the same host (another service on another
    /// port, over http) can set a cookie the dashboard then receives ("cookie tossing"). Over
    /// https the cookies are `__Host-lr_session` and `__Host-lr_signin`, `Secure`, for `Path=/`
    /// and no `Domain`: a browser lets no http page, and no other host, set a cookie of that
    /// name, and the dashboard reads only that name. Over plain http (loopback, a trial) they are
    /// `lr_session` and `lr_signin` for `Path=/dashboard`; the form posts' origin check
    /// (``fromThisDashboard(_:publicBaseURL:)``) still refuses another port's forms.
    struct Cookies: Sendable {
        let secure: Bool

        init(_ configuration: ServerConfiguration) {
            secure = DashboardSecurity.secureCookies(configuration)
        }

        var session: String { secure ? "__Host-" + sessionCookie : sessionCookie }
        var signIn: String { secure ? "__Host-" + signInCookie : signInCookie }

        /// A `Set-Cookie` value for `name` (Hummingbird's `Cookie`): HttpOnly, SameSite=Strict;
        /// `maxAge` 0 removes it. `value` is a token of ours (letters and digits), valid in a cookie.
        func set(_ name: String, _ value: String, maxAge: Int) -> String {
            Cookie(
                name: name, value: value, maxAge: maxAge, path: secure ? "/" : DashboardPath.root, secure: secure, httpOnly: true,
                sameSite: .strict
            ).description
        }
    }

    /// Whether a form post comes from this dashboard's own pages, as the browser says.
    ///
    /// A page on another port of the same host is another origin but the same site: `SameSite`
    /// cookies go with its posts, and it can set the sign-in form's cookie itself, so the
    /// double-submitted token alone let it sign a visitor into another project (login CSRF,
    /// confirmed in Chromium). A browser marks each request: `Sec-Fetch-Site` (Chromium, Firefox,
    /// Safari 16.4 and later) must be `same-origin` (or `none`, a request the user made);
    /// without it, an `Origin` must be the server's own (its public URL's, or the request's
    /// host); `Origin: null` is refused. A request with neither header (curl, a script, a much
    /// older browser) is not a browser's cross-site form and passes, its token still checked.
    static func fromThisDashboard(_ request: Request, publicBaseURL: URL?) -> Bool {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!] {
            return site == "same-origin" || site == "none"
        }
        guard let origin = request.headers[.origin] else { return true }
        guard let url = URL(string: origin), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return false }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let authority = bracketed + (url.port.map { ":\($0)" } ?? "")
        if let base = publicBaseURL, base.scheme?.lowercased() == scheme, base.host?.lowercased() == host, base.port == url.port {
            return true
        }
        return request.head.authority?.lowercased() == authority
    }
    /// How long a session lasts: 12 hours from sign-in.
    static let sessionLifetime: TimeInterval = 12 * 3600

    /// `default-src 'self'`, no inline script or style, no framing, forms only to itself.
    static let contentSecurityPolicy =
        "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The headers every dashboard answer carries.
    static func harden(_ headers: inout HTTPFields) {
        headers[HTTPField.Name("Content-Security-Policy")!] = contentSecurityPolicy
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        if headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
    }

    /// A new random token: 43 characters of base62 (256 bits).
    static func token() -> String {
        APIKeys.randomString(43, alphabet: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"))
    }

    /// The value of cookie `name` in the request, if sent.
    static func cookie(_ name: String, in request: Request) -> String? {
        request.cookies[name]?.value
    }

    /// Whether the cookie must be Secure: the server's public URL is https.
    static func secureCookies(_ configuration: ServerConfiguration) -> Bool {
        configuration.publicBaseURL?.scheme?.lowercased() == "https"
    }

    /// Whether two tokens are equal, comparing every byte (no early exit).
    static func same(_ a: String?, _ b: String?) -> Bool {
        guard let a, let b else { return false }
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count, !x.isEmpty else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// Sign-in attempts per client (an IPv4 address, an IPv6 /64 as the click limiter counts:
/// ``ClickLimiter/key(for:)``): at most ``limit`` failures in ``window``; past that, every
/// attempt from the client is refused until the oldest failure leaves the window.
///
/// An attempt is counted before it is judged (``attempt(_:at:)``) and given back when it
/// succeeds: checked first and counted after the key's lookup, 400 concurrent wrong sign-ins all
/// passed the check before the first was counted (124 to 269 were judged).
final class SignInLimiter: Sendable {
    static let limit = 10
    static let window: TimeInterval = 15 * 60
    /// The most clients remembered; beyond it the oldest are forgotten.
    static let addresses = 10_000

    private let failures = Mutex<[String: [Date]]>([:])

    /// Counts an attempt from `address` at `now`, to be judged next; `nil` when it may go on,
    /// else how long the client must wait (nothing counted).
    func attempt(_ address: String, at now: Date) -> TimeInterval? {
        let client = ClickLimiter.key(for: address)
        return failures.withLock { failures in
            let recent = (failures[client] ?? []).filter { now.timeIntervalSince($0) < Self.window }
            if recent.count >= Self.limit, let oldest = recent.first {
                failures[client] = recent
                return Self.window - now.timeIntervalSince(oldest)
            }
            if failures.count >= Self.addresses, failures[client] == nil, let any = failures.keys.first { failures[any] = nil }
            failures[client] = recent + [now]
            return nil
        }
    }

    /// The attempt counted at `now` succeeded: it is not a failure.
    func succeeded(_ address: String, at now: Date) {
        let client = ClickLimiter.key(for: address)
        failures.withLock { failures in
            guard var recent = failures[client], let index = recent.lastIndex(of: now) else { return }
            recent.remove(at: index)
            failures[client] = recent.isEmpty ? nil : recent
        }
    }
}

/// Every dashboard answer: the security headers, and an error as an HTML page (never JSON,
/// never a detail the log alone should hold).
struct DashboardPageMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let pages: DashboardPages

    func handle(
        _ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as DashboardError {
            response = pages.error(error)
        } catch let error as APIError {
            response = pages.error(DashboardError(error.status, error.message))
        } catch let error as any HTTPResponseError {
            response = pages.error(
                DashboardError(error.status, error.status == .notFound ? "There is no such page." : "The request could not be served."))
        } catch {
            context.logger.error("Dashboard page failed: \(String(describing: type(of: error)))")
            response = pages.error(DashboardError(.internalServerError, "Something went wrong; the server's log says what."))
        }
        DashboardSecurity.harden(&response.headers)
        return response
    }
}

/// A dashboard page that cannot be shown, and why, in a sentence for the person.
struct DashboardError: Error {
    let status: HTTPResponse.Status
    let message: String

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }
}

/// The signed-in browser's session on every page but sign-in: without one, `GET` goes to the
/// sign-in page and anything else is refused; every form must carry the session's token.
struct DashboardSessionMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let store: any SessionStore
    let clock: any LinkRelayClock
    let cookies: DashboardSecurity.Cookies

    func handle(
        _ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response
    ) async throws -> Response {
        guard let token = DashboardSecurity.cookie(cookies.session, in: request), token.utf8.count <= 128,
            let session = try await store.session(hash: sha256Hex(token), at: clock.currentDate)
        else {
            if request.method == .get || request.method == .head {
                return Response(status: .seeOther, headers: [.location: DashboardPath.signIn])
            }
            throw DashboardError(.forbidden, "You are not signed in (or your session ended). Sign in again.")
        }
        var context = context
        context.dashboardSession = session
        return try await next(request, context)
    }
}

extension ServerContext {
    /// The signed-in session, which ``DashboardSessionMiddleware`` checked.
    func requireSession() throws -> DashboardSession {
        guard let dashboardSession else { throw DashboardError(.forbidden, "You are not signed in.") }
        return dashboardSession
    }
}
