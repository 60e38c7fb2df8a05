import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage
import Logging
import NIOCore

/// The HTTP API: its routes over a store, and how it writes JSON and dates. The application
/// (the API beside the dashboard, with the server's services) is assembled by
/// `LinkRelayServer`'s `ServerApplication`.
package enum ServerHTTP {
    /// The protocol version the SDK endpoints speak, as `GET /api/sdk/v1/health` reports it.
    package static let apiVersion = "v1"

    /// The router with every route of the API, over `store`.
    /// - Parameters:
    ///   - accessLog: where each request's line goes (``AccessLogMiddleware``); `nil`, none.
    ///   - site: the routes served beside the API (the dashboard), registered after the API's
    ///     and before the redirect's `/{code}`, which would take their paths; given `nil` when
    ///     ``ServerConfiguration/dashboard`` is off.
    package static func router(
        store: any ServerStore, configuration: ServerConfiguration = ServerConfiguration(),
        clock: any LinkRelayClock = SystemClock(),
        accessLog: AccessLog? = nil, site: ((Router<ServerContext>) -> Void)? = nil
    ) -> Router<ServerContext> {
        let router = Router(context: ServerContext.self)
        // Outermost first: the client's address (which the access line names), the access line
        // and the metrics (timing all the rest), the security headers (on errors too).
        router.middlewares.add(ClientAddressMiddleware(configuration: configuration))
        router.middlewares.add(AccessLogMiddleware(accessLog: accessLog, metrics: configuration.metrics))
        router.middlewares.add(SecurityHeadersMiddleware())
        // Before every route: a middleware applies to the routes added after it.
        let routeTable = RouteTable()
        router.middlewares.add(JSONErrorMiddleware(metrics: configuration.metrics, routes: routeTable))
        store.report(to: configuration.metrics)
        // Healthy only when the database takes a write: a server whose every write fails (a
        // read-only file, a full disk, a deleted file) answers 503 with the reason, so a load
        // balancer sends its traffic elsewhere.
        router.get("api/sdk/v1/health") { _, _ -> Response in
            let now = clock.currentDate
            if let problem = await store.writeProblem(at: now) {
                return json(
                    Health(status: "unhealthy", version: apiVersion, timestamp: Self.timestamp(now), reason: problem),
                    status: .serviceUnavailable)
            }
            return json(Health(status: "healthy", version: apiVersion, timestamp: Self.timestamp(now)))
        }
        let limiter = ClickLimiter(perMinute: configuration.clicksPerAddressPerMinute)
        // The routes that need a key are registered on groups whose middleware checks it: a
        // route added there cannot forget it.
        let groups = RouteGroups(
            sdk: router.group().add(middleware: APIKeyMiddleware(store: store, scopes: [.sdk, .admin])),
            admin: router.group().add(middleware: APIKeyMiddleware(store: store, scopes: [.admin])), open: router.group())
        // Each controller registers its own routes; the redirect's `/{code}` last, after every fixed path.
        LinkRoutes(store: store, configuration: configuration, clock: clock, limiter: limiter).register(on: groups)
        AttributionRoutes(store: store, configuration: configuration, clock: clock).register(on: groups)
        LinkCreation(store: store, configuration: configuration, clock: clock).register(on: groups)
        LinkEditing(store: store, configuration: configuration).register(on: groups)
        AdminRoutes(store: store, configuration: configuration, clock: clock).register(on: groups)
        LinkAdmin(store: store, configuration: configuration, clock: clock).register(on: groups)
        if configuration.dashboard { site?(router) }
        APIDescription.register(on: router)
        Redirect(store: store, configuration: configuration, clock: clock, limiter: limiter).register(on: groups)
        routeTable.load(router.routes)
        return router
    }

    /// `scheme://host[:port]` of the request: behind a trusted proxy its `X-Forwarded-Proto`
    /// and `X-Forwarded-Host`, else `http` and the request's `Host`.
    package static func origin(of request: Request, trustProxy: Bool) -> URL {
        func forwarded(_ name: String) -> String? {
            guard trustProxy else { return nil }
            return request.headers.first { $0.name.canonicalName == name }?.value.split(separator: ",").first
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let scheme =
            forwarded("x-forwarded-proto").flatMap { ["http", "https"].contains($0.lowercased()) ? $0.lowercased() : nil } ?? "http"
        let host = forwarded("x-forwarded-host") ?? request.head.authority ?? "localhost"
        return URL(string: "\(scheme)://\(host)") ?? URL(string: "http://localhost")!
    }

    /// `body` as JSON (keys sorted, slashes unescaped, dates as ``timestamp(_:)``). Only a
    /// ``WireAnswer`` is answered, so every answer is a type the description is checked against.
    package static func json<Body: WireAnswer>(_ body: Body, status: HTTPResponse.Status = .ok) -> Response {
        if let value = body.json {
            return Response(
                status: status, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: JSONText.compact(value))))
        }
        return json(encoded: encoded(body), status: status)
    }

    /// A list of `items` as JSON (LinkForty Core's listing).
    package static func json<Item: WireAnswer>(_ items: [Item], status: HTTPResponse.Status = .ok) -> Response {
        json(encoded: encoded(items), status: status)
    }

    private static func json(encoded: Data, status: HTTPResponse.Status) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: encoded)))
    }

    /// `body` as the API writes it, as text (the command line's `--json`).
    package static func jsonText<Body: Encodable>(_ body: Body) -> String {
        String(decoding: encoded(body), as: UTF8.self)
    }

    /// `body`'s JSON bytes; `{}` for a value that cannot be written (a wire type never throws:
    /// it holds strings, numbers and `JSONValue`s, whose doubles are finite).
    package static func encoded<Body: Encodable>(_ body: Body) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Dates as every other date the server writes (a template's or an app's `createdAt`
        // were seconds since 2001, Foundation's default).
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(timestamp(date))
        }
        return (try? encoder.encode(body)) ?? Data("{}".utf8)
    }

    /// A QR code as an SVG answer, shown in place or (`download`) saved as `filename`.
    package static func svg(_ code: QRCode, pixels: Int, filename: String, download: Bool) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "image/svg+xml", .cacheControl: "private, max-age=300",
                .contentDisposition: "\(download ? "attachment" : "inline"); filename=\"\(filename)\"",
            ],
            body: .init(byteBuffer: ByteBuffer(string: code.svg(pixels: pixels))))
    }

    /// `2026-03-01T10:15:30.123Z`: ISO 8601 with milliseconds, as LinkForty's server writes dates.
    package static func timestamp(_ date: Date) -> String {
        Timestamp.withMilliseconds(date)
    }

    /// `2026-03-01T10:15:30Z`: ISO 8601 in whole seconds (the fraction dropped), for the dates
    /// LinkForty's SDKs decode (`clickedAt` in an install's `deepLinkData` and in a resolve). Its
    /// iOS SDK reads them with a default `ISO8601DateFormatter`, which takes no fraction and makes
    /// Core's `…30.123Z` a `nil`; Android's `Instant.parse`, Flutter's `DateTime.parse` and React
    /// Native (a string) read both forms.
    package static func sdkTimestamp(_ date: Date) -> String {
        DeepLinkData.timestamp(date)
    }

    /// An ISO 8601 date and time, with or without a fraction of a second, `Z` or an offset of
    /// RFC 3339's range (`±HH:MM`, hours 0…23; Foundation's parser stops at 18).
    package static func parseTimestamp(_ text: String) -> Date? {
        if let date = (try? withMilliseconds.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text)) { return date }
        // `…±HH:MM`: the time read as UTC, then the offset taken off.
        let utf8 = Array(text.utf8)
        guard utf8.count > 6 else { return nil }
        let offset = utf8[(utf8.count - 6)...]
        let sign = offset[offset.startIndex]
        guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"), offset[offset.startIndex + 3] == UInt8(ascii: ":") else { return nil }
        let digits = [1, 2, 4, 5].map { offset[offset.startIndex + $0] }
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        let values = digits.map { Int($0 - UInt8(ascii: "0")) }
        let hours = values[0] * 10 + values[1]
        let minutes = values[2] * 10 + values[3]
        guard hours < 24, minutes < 60 else { return nil }
        let local = String(decoding: utf8[..<(utf8.count - 6)], as: UTF8.self) + "Z"
        guard let date = (try? withMilliseconds.parse(local)) ?? (try? Date.ISO8601FormatStyle().parse(local)) else { return nil }
        let seconds = TimeInterval(hours * 3600 + minutes * 60)
        return date.addingTimeInterval(sign == UInt8(ascii: "+") ? -seconds : seconds)
    }

    /// Made once (Sendable values), not a formatter per request.
    private static let withMilliseconds = Timestamp.millisecondsStyle
    private static let wholeSeconds = Date.ISO8601FormatStyle()
}

/// Where a controller registers its routes: behind the SDK key (an admin key too), behind an
/// admin key, or open to anyone.
struct RouteGroups {
    let sdk: RouterGroup<ServerContext>
    let admin: RouterGroup<ServerContext>
    let open: RouterGroup<ServerContext>
}

/// Every error as JSON, `{"error": "…"}`: an ``APIError`` as it says, a framework error
/// (an unknown route, a body too large) with its status, anything else a `500` that names no
/// detail (the detail goes to the log, which never holds a key or a value).
struct JSONErrorMiddleware: RouterMiddleware {
    typealias Context = ServerContext

    /// Where a database's failure is counted.
    let metrics: ServerMetrics
    /// Which methods a known path takes, for a `405`.
    let routes: RouteTable

    func handle(
        _ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as any HTTPResponseError {
            // A path the router knows, asked with another method: 405 and the methods it takes.
            if error.status == .notFound, context.endpointPath == "NotFound" {
                let allowed = routes.methods(for: request.uri.path)
                if !allowed.isEmpty {
                    let list = allowed.joined(separator: ", ")
                    var refusal = APIError(
                        .methodNotAllowed,
                        "\(request.method.rawValue) is not allowed on \(AccessLogMiddleware.loggedPath(request.uri.path)) (allowed: \(list))."
                    )
                    refusal.headers[.allow] = list
                    throw refusal
                }
            }
            let message =
                switch error.status {
                // Core's wording; the path cut at 200 bytes and escaped (it is the client's own text).
                case .notFound: "Route \(request.method.rawValue):\(AccessLogMiddleware.loggedPath(request.uri.path)) not found"
                case .contentTooLarge: "The body is too large."
                case .methodNotAllowed: "\(request.method.rawValue) is not allowed here."
                default: error.status.reasonPhrase
                }
            throw APIError(error.status, message)
        } catch {
            if isDatabaseError(error) { metrics.databaseError(operation: "request") }
            context.logger.error("A request failed: \(String(describing: error))")
            throw APIError(.internalServerError, "Internal error")
        }
    }
}
