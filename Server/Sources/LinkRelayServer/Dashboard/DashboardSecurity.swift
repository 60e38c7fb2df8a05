import Foundation
import HTTPTypes
import Hummingbird
import LinkRelay
import Synchronization

/// The dashboard's sign-in and what guards it: a session per signed-in browser (its cookie's
/// token kept only as a hash, in the database, with an expiry), a token on every form, the
/// security headers on every page, and a limit on sign-in attempts per address.
enum DashboardSecurity {
    /// The session cookie, and the cookie that carries the sign-in form's token.
    static let sessionCookie = "lr_session"
    static let signInCookie = "lr_signin"
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
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    return String(parts[1].trimmingCharacters(in: .whitespaces))
                }
            }
        }
        return nil
    }

    /// A `Set-Cookie` value: HttpOnly, SameSite=Strict, for the dashboard's path; Secure when the
    /// server's public URL is https. `maxAge` 0 removes it.
    static func setCookie(_ name: String, _ value: String, maxAge: Int, secure: Bool) -> String {
        "\(name)=\(value); Path=/dashboard; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
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

/// Sign-in attempts per client address: at most ``limit`` failures in ``window``; past that,
/// every attempt from the address is refused until the oldest failure leaves the window.
final class SignInLimiter: Sendable {
    static let limit = 10
    static let window: TimeInterval = 15 * 60
    /// The most addresses remembered; beyond it the oldest are forgotten.
    static let addresses = 10_000

    private let failures = Mutex<[String: [Date]]>([:])

    /// How long `address` must wait before it may try again at `now`; `nil` when it may now.
    func wait(_ address: String, at now: Date) -> TimeInterval? {
        failures.withLock { failures in
            let recent = (failures[address] ?? []).filter { now.timeIntervalSince($0) < Self.window }
            failures[address] = recent.isEmpty ? nil : recent
            guard recent.count >= Self.limit, let oldest = recent.first else { return nil }
            return Self.window - now.timeIntervalSince(oldest)
        }
    }

    /// Counts a failed attempt from `address`.
    func failed(_ address: String, at now: Date) {
        failures.withLock { failures in
            if failures.count >= Self.addresses, failures[address] == nil, let any = failures.keys.first { failures[any] = nil }
            failures[address, default: []].append(now)
        }
    }
}

/// Every dashboard answer: the security headers, and an error as an HTML page (never JSON,
/// never a detail the log alone should hold).
struct DashboardPageMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let pages: DashboardPages

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as DashboardError {
            response = pages.error(error)
        } catch let error as APIError {
            response = pages.error(DashboardError(error.status, error.message))
        } catch let error as any HTTPResponseError {
            response = pages.error(DashboardError(error.status, error.status == .notFound ? "There is no such page." : "The request could not be served."))
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
    let store: any ServerStore
    let clock: @Sendable () -> Date

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        guard let token = DashboardSecurity.cookie(DashboardSecurity.sessionCookie, in: request), token.utf8.count <= 128,
            let session = try await store.session(hash: sha256Hex(token), at: clock())
        else {
            if request.method == .get || request.method == .head {
                return Response(status: .seeOther, headers: [.location: "/dashboard/sign-in"])
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
