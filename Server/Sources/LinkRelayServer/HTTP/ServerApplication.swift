import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage
import Logging
import NIOCore
import ServiceLifecycle

/// How the server listens and what it trusts.
package struct ServerConfiguration: Sendable {
    /// The address to listen on. Default `127.0.0.1`.
    package var host: String
    /// The port; 0 for any free port. Default 8080.
    package var port: Int
    /// Whether `X-Forwarded-For` names the client (behind a proxy you run; on loopback in
    /// tests). Off by default: a client could otherwise claim any address.
    package var trustProxy: Bool
    /// The proxies `X-Forwarded-For` passes through, besides the one the server is reached from
    /// (with ``trustProxy``): the client is the rightmost entry outside them. Default: none, so
    /// the client is the entry the proxy in front appended. (0.6.0's default was loopback and
    /// private networks, which let a client on a private network choose its address.)
    package var trustedProxies: [IPNetwork]
    /// The origin share links are made on (`https://go.acme.app`); `nil` for the request's
    /// own (`Host`, and `X-Forwarded-Proto` behind a trusted proxy).
    package var publicBaseURL: URL?
    /// The deferred match's settings.
    package var matcher: DeferredMatcher
    /// Whether private and loopback addresses take part in the deferred match (each /24 its own
    /// network). For trying deferred links on one machine (the Simulator and its Safari) or a
    /// LAN; off by default and never for production, where every phone behind a home router
    /// shares `192.168.1`.
    package var matchPrivateNetworks: Bool
    /// Whether an event naming an install this server does not know (a UUID: an install made by
    /// the server the app used before, LinkForty Core or Cloud) is kept, its install taken as
    /// the project's (unattributed, method `adopted`). For moving an app: its existing users'
    /// events are not lost. Off by default: an unknown install is a 404, as in Core.
    package var adoptUnknownInstalls: Bool
    /// How long clicks are kept (deleted hourly after that, in batches); `nil` (or infinity)
    /// keeps them forever. Default 90 days, the longest attribution window; a shorter one (zero,
    /// negative) is raised to it, so no click that could still match is deleted; NaN is the
    /// default.
    package var clickRetention: TimeInterval?
    /// Clicks one address may have recorded a minute (``ClickLimiter``); past it, links still
    /// answer but the clicks are not stored. Default 120; `0` for no limit (a load test from one
    /// address).
    package var clicksPerAddressPerMinute: Int
    /// How long a request's whole body may take to arrive (``JSONBody``): past it, `408`. Default
    /// 10 seconds; clamped to 1 second…5 minutes. The idle timeout does not end a body sent a
    /// byte at a time.
    package var bodyTimeout: Duration
    /// The most connections open at once; at it, the longest-idle connection is closed for the
    /// next client (``IdleConnections``), and when none is idle the next waits in the listen
    /// backlog. `nil` for no limit. `linkrelay-server serve` sets it below the open-file limit
    /// (``OpenFileLimit``). At least 1.
    package var maximumConnections: Int?
    /// Whether each request leaves a line in the log (``ResponseMiddleware``). Default `true`.
    package var accessLog: Bool
    /// How long a connection may be idle (no request, or a request's body stalled) before it is
    /// closed. Default 30 seconds; clamped to 1 second…1 hour.
    package var idleTimeout: Duration
    /// The header in which the proxy in front names the client's country (`CF-IPCountry`
    /// behind Cloudflare), read only with ``trustProxy`` (as `X-Forwarded-For` is); `nil` (the
    /// default): clicks have no country.
    package var countryHeader: HTTPField.Name?
    /// Whether the web dashboard is served at `/dashboard`. Default `true`;
    /// `linkrelay-server serve` turns it on when it listens on loopback, off elsewhere unless
    /// `--dashboard` says so.
    package var dashboard: Bool
    /// Where the server's metrics are recorded (``ServerMetrics``). Default: nowhere (``ServerMetrics/off``).
    package var metrics: ServerMetrics
    /// The address (host and port) of the separate listener serving `GET /metrics` in
    /// Prometheus's format (``MetricsEndpoint``); `nil` (the default): none. The API's port never
    /// serves metrics. Given with ``metrics`` off, metrics are recorded (in a registry of their own).
    package var metricsAddress: (host: String, port: Int)?
    /// The access log's format (and, through `linkrelay-server serve`, every log line's).
    package var logFormat: LogFormat

    /// A configuration; see each property.
    package init(
        host: String = "127.0.0.1", port: Int = 8080, trustProxy: Bool = false, trustedProxies: [IPNetwork] = [],
        publicBaseURL: URL? = nil,
        matcher: DeferredMatcher = DeferredMatcher(), matchPrivateNetworks: Bool = false, adoptUnknownInstalls: Bool = false,
        clickRetention: TimeInterval? = DeferredMatcher.lookback, idleTimeout: Duration = .seconds(30), accessLog: Bool = true,
        maximumConnections: Int? = nil, bodyTimeout: Duration = .seconds(10), clicksPerAddressPerMinute: Int = 120,
        countryHeader: HTTPField.Name? = nil, dashboard: Bool = true, metrics: ServerMetrics = .off,
        metricsAddress: (host: String, port: Int)? = nil, logFormat: LogFormat = .text
    ) {
        self.metrics = metricsAddress != nil && !metrics.isEnabled ? .prometheus() : metrics
        self.metricsAddress = metricsAddress
        self.logFormat = logFormat
        self.countryHeader = countryHeader
        self.dashboard = dashboard
        self.clicksPerAddressPerMinute = max(clicksPerAddressPerMinute, 0)
        self.bodyTimeout = min(max(bodyTimeout, .seconds(1)), .seconds(300))
        self.maximumConnections = maximumConnections.map { max($0, 1) }
        self.accessLog = accessLog
        self.host = host
        self.port = port
        self.trustProxy = trustProxy
        self.trustedProxies = trustedProxies
        self.publicBaseURL = publicBaseURL
        self.matcher = matcher
        self.matchPrivateNetworks = matchPrivateNetworks
        self.adoptUnknownInstalls = adoptUnknownInstalls
        self.clickRetention =
            switch clickRetention {
            case let retention? where retention == .infinity: nil
            case let retention? where retention.isNaN: DeferredMatcher.lookback
            case let retention?: max(retention, DeferredMatcher.lookback)
            case nil: nil
            }
        self.idleTimeout = min(max(idleTimeout, .seconds(1)), .seconds(3600))
    }
}

extension ServerConfiguration {
    /// Whether `host` is a loopback address or name (`127.0.0.1`, `::1`, `localhost`): only this
    /// machine reaches it.
    package static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// A header's name as an operator writes it (`CF-IPCountry`); `nil` when it is not a
    /// valid header name.
    package static func headerName(_ text: String) -> HTTPField.Name? {
        HTTPField.Name(text)
    }
}

/// The server: its routes over a store.
package enum ServerApplication {
    /// The protocol version the SDK endpoints speak, as `GET /api/sdk/v1/health` reports it.
    package static let apiVersion = "v1"

    /// The router with every route, over `store`.
    /// - Parameter accessLog: where each request's line goes (``ResponseMiddleware``); `nil`, none.
    package static func router(
        store: any ServerStore, configuration: ServerConfiguration = ServerConfiguration(),
        clock: @escaping @Sendable () -> Date = Date.init,
        accessLog: AccessLog? = nil
    ) -> Router<ServerContext> {
        let router = Router(context: ServerContext.self)
        router.middlewares.add(ResponseMiddleware(accessLog: accessLog, configuration: configuration))
        // Before every route: a middleware applies to the routes added after it.
        let routeTable = RouteTable()
        router.middlewares.add(JSONErrorMiddleware(metrics: configuration.metrics, routes: routeTable))
        store.report(to: configuration.metrics)
        // Healthy only when the database takes a write: a server whose every write fails (a
        // read-only file, a full disk, a deleted file) answers 503 with the reason, so a load
        // balancer sends its traffic elsewhere.
        router.get("api/sdk/v1/health") { _, _ -> Response in
            let now = clock()
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
        if configuration.dashboard {
            switch DashboardPages.shipped {
            case .success(let pages): Dashboard(store: store, configuration: configuration, clock: clock, pages: pages).register(on: router)
            case .failure(let error):
                router.get("dashboard/**") { _, _ -> Response in throw APIError(.serviceUnavailable, error.description) }
            }
        }
        APIDescription.register(on: router)
        Redirect(store: store, configuration: configuration, clock: clock, limiter: limiter).register(on: groups)
        routeTable.load(router.routes)
        return router
    }

    /// `scheme://host[:port]` of the request: behind a trusted proxy its `X-Forwarded-Proto`
    /// and `X-Forwarded-Host`, else `http` and the request's `Host`.
    static func origin(of request: Request, trustProxy: Bool) -> URL {
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

    /// A JSON response (keys sorted, slashes unescaped).
    /// `body` written compactly (``JSONText/compact(_:)``), without Foundation's encoder.
    static func json(_ body: [String: JSONValue], status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: JSONText.compact(.object(body)))))
    }

    /// A JSON array (LinkForty Core's listing).
    static func json(array: [JSONValue], status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: JSONText.compact(.array(array)))))
    }

    static func json<Body: Encodable>(_ body: Body, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Dates as every other date the server writes (a template's or an app's `createdAt`
        // were seconds since 2001, Foundation's default).
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(timestamp(date))
        }
        let data = (try? encoder.encode(body)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The application on `configuration`'s address, with the click retention job as a service
    /// of its `ServiceGroup`.
    /// - Parameters:
    ///   - runningStore: whether the store is one of the group's services too (the server's own
    ///     process: the database opens with the group and closes after the HTTP server and the
    ///     retention job, which the group shuts down first); `false` when the caller runs it
    ///     (``ServerStore/withRunning(_:)``, a test).
    ///   - setUp: what must be done before the first request and the first retention pass (the
    ///     schema's migrations, the first start's project), with the store running.
    package static func application(
        store: any ServerStore, configuration: ServerConfiguration, logger: Logger, runningStore: Bool = false,
        setUp: @escaping @Sendable () async throws -> Void = {}, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let (ready, readying) = AsyncStream.makeStream(of: Void.self)
        // Also when clicks are kept forever: the pass makes PostgreSQL's day partitions.
        let retention = ClickRetention(
            store: store, retention: configuration.clickRetention, after: ready, logger: logger, metrics: configuration.metrics)
        let accessLog = configuration.accessLog ? AccessLog(format: configuration.logFormat) : nil
        // The metrics' own listener, beside the API's: a service of the same group, so it
        // starts and stops with the server.
        let metricsEndpoint = configuration.metricsAddress.map {
            MetricsEndpoint.application(metrics: configuration.metrics, host: $0.host, port: $0.port, logger: logger)
        }
        let services: [any Service] =
            (runningStore ? [store] : []) + [retention] + (accessLog.map { [$0] } ?? []) + (metricsEndpoint.map { [$0] } ?? [])
        // At the cap, the longest-idle connection is closed to make room (``IdleConnections``).
        let connections = IdleConnections()
        var application = Application(
            router: router(store: store, configuration: configuration, accessLog: accessLog),
            server: connections.http1(idleTimeout: configuration.idleTimeout),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "LinkRelay Server",
                availableConnectionsDelegate: configuration.maximumConnections.map {
                    ConnectionBudget(maximum: $0, connections: connections)
                }),
            services: services,
            onServerRunning: onServerRunning,
            logger: logger)
        application.beforeServerStarts {
            try await store.checkConnection()
            try await setUp()
            readying.finish()
        }
        return application
    }

    /// `2026-03-01T10:15:30.123Z`: ISO 8601 with milliseconds, as LinkForty's server writes dates.
    static func timestamp(_ date: Date) -> String {
        Timestamp.withMilliseconds(date)
    }

    /// `2026-03-01T10:15:30Z`: ISO 8601 in whole seconds (the fraction dropped), for the dates
    /// LinkForty's SDKs decode (`clickedAt` in an install's `deepLinkData` and in a resolve). Its
    /// iOS SDK reads them with a default `ISO8601DateFormatter`, which takes no fraction and makes
    /// Core's `…30.123Z` a `nil`; Android's `Instant.parse`, Flutter's `DateTime.parse` and React
    /// Native (a string) read both forms.
    static func sdkTimestamp(_ date: Date) -> String {
        DeepLinkData.timestamp(date)
    }

    /// An ISO 8601 date and time, with or without a fraction of a second, `Z` or an offset of
    /// RFC 3339's range (`±HH:MM`, hours 0…23; Foundation's parser stops at 18).
    static func parseTimestamp(_ text: String) -> Date? {
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

/// `GET /api/sdk/v1/health`: `{"status":"healthy","version":"v1","timestamp":"…"}`.
struct Health: ResponseEncodable, Decodable {
    var status: String
    var version: String
    var timestamp: String
    /// Why the server is unhealthy; absent when healthy.
    var reason: String?
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
                        "\(request.method.rawValue) is not allowed on \(ResponseMiddleware.loggedPath(request.uri.path)) (allowed: \(list))."
                    )
                    refusal.headers[.allow] = list
                    throw refusal
                }
            }
            let message =
                switch error.status {
                // Core's wording; the path cut at 200 bytes and escaped (it is the client's own text).
                case .notFound: "Route \(request.method.rawValue):\(ResponseMiddleware.loggedPath(request.uri.path)) not found"
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
