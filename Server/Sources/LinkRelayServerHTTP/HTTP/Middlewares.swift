import Foundation
import Hummingbird
import LinkRelayServerCore
import LinkRelayServerStorage
import Synchronization

/// The outermost middleware: the client's address as the server's configuration reads it (the
/// peer, or `X-Forwarded-For` behind a trusted proxy; ``ClientAddress``), worked out once per
/// request for the routes, the click limit, the access log and the metrics alike.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = ServerContext

    let configuration: ServerConfiguration
    /// The unnamed proxy's warning, logged once per process.
    private let unnamedProxyWarning = Once()

    init(configuration: ServerConfiguration) {
        self.configuration = configuration
    }

    func handle(
        _ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        let forwarded = configuration.trustProxy ? ClientAddress.forwardedFor(request) : nil
        context.clientAddress = ClientAddress.of(
            forwardedFor: forwarded, peer: context.remoteAddress?.ipAddress, trustProxy: configuration.trustProxy,
            trustedProxies: configuration.trustedProxies)
        // Checked until it is said: one atomic load per request after that.
        if forwarded != nil, configuration.trustedProxies.isEmpty, !unnamedProxyWarning.happened,
            ClientAddress.looksLikeUnnamedProxy(context.clientAddress, forwardedFor: forwarded), unnamedProxyWarning.first()
        {
            context.logger.warning(
                "X-Forwarded-For names a private address (\(context.clientAddress ?? "")) as the client, after another address: if a load balancer or another proxy is in front of the one this server is reached from, name its network with --trusted-proxy (until then every client behind it has its address and no install is matched); if not, a client on a private network wrote the header. Said once."
            )
        }
        return try await next(request, context)
    }
}

/// Every answer, an error's too, counted in the metrics and (with an access log) left as one
/// line (``AccessLog``, ``AccessEntry``): the client as the deferred match sees it, the key's
/// public prefix, the method and the route's pattern (never the path: it holds a link's code,
/// and a tap's query the phone's signals), the status, the bytes and the time taken.
///
/// Hummingbird's `LogRequestsMiddleware` and `MetricsMiddleware` were weighed for these jobs:
/// the first logs the request's URI (a link's code, a tap's signals), unbuffered, through the
/// logger; the second names its metrics `http_requests_total`, not the `linkrelay_…` names the
/// operators' dashboards and alerts read (Operations.md). Neither fits; this one does both.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = ServerContext

    let accessLog: AccessLog?
    let metrics: ServerMetrics

    func handle(
        _ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response
    ) async throws -> Response {
        guard accessLog != nil || metrics.isEnabled else { return try await next(request, context) }
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let duration = ContinuousClock.now - start
        let route = Self.route(of: context)
        metrics.request(method: request.method.rawValue, route: route, status: response.status.code, duration: duration)
        accessLog?.record(
            AccessEntry(
                client: context.clientAddress, keyPrefix: Self.keyPrefix(of: request), method: request.method.rawValue,
                route: route, status: response.status.code, bytes: response.body.contentLength, duration: duration))
        return response
    }

    /// The pattern of the route that answered (`/{code}`, `/api/links/{id}`), as the router
    /// matched it; `(unmatched)` when none did.
    static func route(of context: ServerContext) -> String {
        guard let path = context.endpointPath, path != "NotFound" else { return "(unmatched)" }
        return path
    }

    /// The public prefix of the API key the request carries (`lr_sdk_1a2b3c4d`), whether or not
    /// the server knows it; `nil` without one or when it is not shaped like a key (its eight
    /// characters hex). The secret part is never read out.
    static func keyPrefix(of request: Request) -> String? {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
        guard let prefix = APIKeys.prefix(of: String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)),
            prefix.utf8.suffix(8).allSatisfy({
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            })
        else { return nil }
        return prefix
    }

    /// `elapsed` in milliseconds with one decimal (`12.3`), without Foundation's `String(format:)`
    /// (a `vfprintf` per request on Linux).
    static func milliseconds(_ elapsed: Duration) -> String {
        // Hundredths of a millisecond (10^13 attoseconds each), rounded to tenths; bounded (a
        // duration past 10^12 s is not a request's).
        let hundredths =
            min(max(elapsed.components.seconds, 0), 1_000_000_000_000) * 100_000 + max(elapsed.components.attoseconds, 0)
            / 10_000_000_000_000
        let tenths = (hundredths + 5) / 10
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// The path as logged: at most 200 bytes, control characters and quotes escaped, so a
    /// request cannot write a line of its own into the log.
    static func loggedPath(_ path: String) -> String {
        // Most paths need nothing escaped or cut: as they are, without a string per character.
        if path.utf8.count <= 200, path.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        {
            return path
        }
        var result = ""
        var bytes = 0
        for scalar in path.unicodeScalars {
            let piece: String =
                switch scalar {
                case "\"", "\\": "\\" + String(scalar)
                case _ where scalar.value < 0x20 || scalar.value == 0x7F: "\\u{\(String(scalar.value, radix: 16))}"
                default: String(scalar)
                }
            bytes += piece.utf8.count
            if bytes > 200 {
                result += "…"
                break
            }
            result += piece
        }
        return result
    }
}

/// Every answer, an error's too (made its response here, so the headers are on it), carries
/// the headers that keep a browser from misreading or framing it: `X-Content-Type-Options:
/// nosniff` (a JSON error is never read as a page), `X-Frame-Options: DENY`, `Referrer-Policy:
/// no-referrer` (the redirect's pages carry the phone's `fp_*` signals in their URL; the
/// destination must not receive them), and, unless the answer set its own (the redirect's pages
/// do, with a nonce for their one script), `Content-Security-Policy: default-src 'none';
/// frame-ancestors 'none'`.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = ServerContext

    static let defaultPolicy = "default-src 'none'; frame-ancestors 'none'"

    func handle(
        _ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.init("X-Content-Type-Options")!] = "nosniff"
        response.headers[.init("X-Frame-Options")!] = "DENY"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        if response.headers[.contentSecurityPolicy] == nil { response.headers[.contentSecurityPolicy] = Self.defaultPolicy }
        return response
    }
}

/// Says `true` to the first caller of ``first()`` and `false` to every later one.
final class Once: Sendable {
    private let done = Atomic(false)

    /// Whether ``first()`` was called.
    var happened: Bool { done.load(ordering: .relaxed) }

    func first() -> Bool {
        !done.exchange(true, ordering: .relaxed)
    }
}
