import Foundation
import Hummingbird

/// The outermost middleware: every answer, an error's too, carries the headers that keep a
/// browser from misreading or framing it, and (with an access log) leaves one line.
///
/// Headers on every answer: `X-Content-Type-Options: nosniff` (a JSON error is never read as a
/// page), `X-Frame-Options: DENY`, `Referrer-Policy: no-referrer` (the redirect's pages carry
/// the phone's `fp_*` signals in their URL; the destination must not receive them), and, unless
/// the answer set its own (the redirect's pages do, with a nonce for their one script),
/// `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'`.
///
/// The access log's line (``AccessLog``): `ACCESS <client> "<METHOD> <path>" <status> <bytes> <ms> ms`
/// after the time. The path without its query (a tap's query holds the phone's signals; a key is
/// never in a URL), cut at 200 bytes; the client as the deferred match sees it.
struct ResponseMiddleware: RouterMiddleware {
    typealias Context = ServerContext

    let accessLog: AccessLog?
    let configuration: ServerConfiguration

    static let defaultPolicy = "default-src 'none'; frame-ancestors 'none'"

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var context = context
        context.clientAddress = ClientAddress.of(request, context, trustProxy: configuration.trustProxy, trustedProxies: configuration.trustedProxies)
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
        if let accessLog {
            let client = context.clientAddress ?? "-"
            accessLog.record(
                "ACCESS \(client) \"\(request.method.rawValue) \(Self.loggedPath(request.uri.path))\" \(response.status.code) \(response.body.contentLength.map(String.init) ?? "-") \(Self.milliseconds(ContinuousClock.now - start)) ms"
            )
        }
        return response
    }

    /// `elapsed` in milliseconds with one decimal (`12.3`), without Foundation's `String(format:)`
    /// (a `vfprintf` per request on Linux).
    static func milliseconds(_ elapsed: Duration) -> String {
        // Hundredths of a millisecond (10^13 attoseconds each), rounded to tenths; bounded (a
        // duration past 10^12 s is not a request's).
        let hundredths = min(max(elapsed.components.seconds, 0), 1_000_000_000_000) * 100_000 + max(elapsed.components.attoseconds, 0) / 10_000_000_000_000
        let tenths = (hundredths + 5) / 10
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// The path as logged: at most 200 bytes, control characters and quotes escaped, so a
    /// request cannot write a line of its own into the log.
    static func loggedPath(_ path: String) -> String {
        // Most paths need nothing escaped or cut: as they are, without a string per character.
        if path.utf8.count <= 200, path.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
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
