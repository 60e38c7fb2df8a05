import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerDashboard
import LinkRelayServerHTTP
import LinkRelayServerStorage
import Logging
import NIOCore
import ServiceLifecycle

/// The server assembled: the HTTP API (`LinkRelayServerHTTP`) and the dashboard
/// (`LinkRelayServerDashboard`) on one router over one store, and the services that run beside
/// them (the store, the retention job, the access log, the metrics' listener). The only module
/// that knows every layer; the executable, the bench and the tests start the server through it.
package enum ServerApplication {
    /// The router with every route, over `store`: the API's, and the dashboard's when
    /// ``ServerConfiguration/dashboard`` is on (a page saying why when its files are missing).
    /// - Parameter accessLog: where each request's line goes (``AccessLogMiddleware``); `nil`, none.
    package static func router(
        store: any ServerStore, configuration: ServerConfiguration = ServerConfiguration(),
        clock: any LinkRelayClock = SystemClock(),
        accessLog: AccessLog? = nil
    ) -> Router<ServerContext> {
        ServerHTTP.router(store: store, configuration: configuration, clock: clock, accessLog: accessLog) { router in
            Dashboard.register(on: router, store: store, configuration: configuration, clock: clock)
        }
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

}
