import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import LinkRelay
import LinkRelayServerCore
import Logging
import NIOCore

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
    /// Whether each request leaves a line in the log (``AccessLogMiddleware``). Default `true`.
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
        host: String = "127.0.0.1", port: Int = ServeSettings.port.defaultInteger, trustProxy: Bool = false,
        trustedProxies: [IPNetwork] = [],
        publicBaseURL: URL? = nil,
        matcher: DeferredMatcher = DeferredMatcher(), matchPrivateNetworks: Bool = false, adoptUnknownInstalls: Bool = false,
        clickRetention: TimeInterval? = DeferredMatcher.lookback,
        idleTimeout: Duration = .seconds(ServeSettings.idleTimeout.defaultInteger), accessLog: Bool = true,
        maximumConnections: Int? = nil, bodyTimeout: Duration = .seconds(ServeSettings.bodyTimeout.defaultInteger),
        clicksPerAddressPerMinute: Int = ServeSettings.clicksPerAddress.defaultInteger,
        countryHeader: HTTPField.Name? = nil, dashboard: Bool = true, metrics: ServerMetrics = .off,
        metricsAddress: (host: String, port: Int)? = nil, logFormat: LogFormat = .text
    ) {
        self.metrics = metricsAddress != nil && !metrics.isEnabled ? .prometheus() : metrics
        self.metricsAddress = metricsAddress
        self.logFormat = logFormat
        self.countryHeader = countryHeader
        self.dashboard = dashboard
        self.clicksPerAddressPerMinute = ServeSettings.clicksPerAddress.clamped(clicksPerAddressPerMinute)
        self.bodyTimeout = ServeSettings.bodyTimeout.clamped(bodyTimeout)
        self.maximumConnections = maximumConnections.map(ServeSettings.maxConnections.clamped)
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
        self.idleTimeout = ServeSettings.idleTimeout.clamped(idleTimeout)
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

extension ServerConfiguration {
    /// The origin share links are made on: ``publicBaseURL``, else the request's own
    /// (``ServerHTTP/origin(of:trustProxy:)``).
    package func shareOrigin(for request: Request) -> URL {
        publicBaseURL ?? ServerHTTP.origin(of: request, trustProxy: trustProxy)
    }
}
