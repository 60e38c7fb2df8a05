import Hummingbird
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

    /// The listener on `host`:`port` (0: any free port), said in the log once it listens;
    /// `onServerRunning` is given its channel.
    package static func application(
        metrics: ServerMetrics, host: String, port: Int, logger: Logger, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(metrics: metrics),
            configuration: .init(address: .hostname(host, port: port), serverName: "LinkRelay Server metrics"),
            onServerRunning: { channel in
                logger.info("Metrics at http://\(host):\(channel.localAddress?.port ?? port)/metrics")
                await onServerRunning(channel)
            },
            logger: logger)
    }
}
