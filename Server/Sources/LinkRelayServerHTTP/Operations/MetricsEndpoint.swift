import Hummingbird
import LinkRelayServerCore
import LinkRelayServerStorage
import Logging
import NIOCore

/// `GET /metrics` in Prometheus's text format, on a listener of its own (`--metrics-port`,
/// loopback unless `--metrics-host` says otherwise), never on the API's port: a scrape needs no
/// key, and what it shows (``ServerMetrics``) is for the operator's network only.
package enum MetricsEndpoint {
    /// The content type Prometheus scrapes.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The router: `GET /metrics`, and a 404 for anything else.
    package static func router(metrics: ServerMetrics) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: contentType, .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        return router
    }

    /// The most connections the listener keeps open; at the cap the longest-idle one is closed
    /// (``IdleConnections``). A scraper needs one; a flood of the port (it may listen on every
    /// address) used to take every file the process could open and time out the API. Counted in
    /// the open-file budget (``OpenFileLimit/connectionLimit(for:metrics:)``).
    package static let maximumConnections = 16
    /// Seconds a metrics connection may stay idle (a scrape every 15 s keeps one alive).
    package static let idleTimeout = Duration.seconds(20)

    /// The listener on `host`:`port` (0: any free port), said in the log once it listens;
    /// `onServerRunning` is given its channel.
    package static func application(
        metrics: ServerMetrics, host: String, port: Int, logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let connections = IdleConnections()
        return Application(
            router: router(metrics: metrics),
            server: connections.http1(idleTimeout: idleTimeout),
            configuration: .init(
                address: .hostname(host, port: port), serverName: "LinkRelay Server metrics",
                availableConnectionsDelegate: ConnectionBudget(maximum: maximumConnections, connections: connections)),
            onServerRunning: { channel in
                logger.info("Metrics at http://\(host):\(channel.localAddress?.port ?? port)/metrics")
                await onServerRunning(channel)
            },
            logger: logger)
    }
}
