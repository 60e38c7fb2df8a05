import CoreMetrics
@_spi(Backend) import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage
import Prometheus
import Synchronization

/// What the server counts and times, through swift-metrics, for an operator's Prometheus
/// (`--metrics-port`, ``MetricsEndpoint``). Every label is the server's own word (a route's
/// pattern, a status, a method's name): never a key, an address, a code or a value a client
/// sent, so a scrape shows nothing private and the series stay few.
///
/// | Metric | Type | Labels |
/// |---|---|---|
/// | `linkrelay_http_requests_total` | counter | `method`, `route`, `status` |
/// | `linkrelay_http_request_duration_seconds` | histogram | `route` |
/// | `linkrelay_installs_total` | counter | `method` (`fingerprint`, `fingerprint_shared_network`, `pasteboard`, `none`) |
/// | `linkrelay_clicks_stored_total` | counter | |
/// | `linkrelay_events_stored_total` | counter | |
/// | `linkrelay_group_commit_batch_size` | histogram | |
/// | `linkrelay_group_commit_duration_seconds` | histogram | |
/// | `linkrelay_database_errors_total` | counter | `operation` (`write`: a durable write; `request`: a read or write a request made) |
/// | `linkrelay_retention_passes_total` | counter | `outcome` (`completed`, `failed`) |
/// | `linkrelay_retention_clicks_deleted_total` | counter | |
/// | `linkrelay_build_info` | gauge, always 1 | `version` (``LinkRelayVersion/string``) |
///
/// Without metrics (``off``, the default) nothing is recorded and nothing is allocated.
package final class ServerMetrics: StoreMetrics {
    private let factory: (any MetricsFactory)?
    /// Where Prometheus's metrics gather, for ``exposition()``; `nil` when off.
    private let registry: PrometheusCollectorRegistry?
    /// Each request's counter and timer, kept once made: the factory finds a metric by its name
    /// and labels under its lock and wraps it anew each time (11,200 instructions a request,
    /// measured with callgrind); a lookup here is one lock and one hash.
    private let requestMetrics = Mutex(RequestMetrics())

    private struct RequestKey: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    private struct RequestMetrics {
        var counters: [RequestKey: CoreMetrics.Counter] = [:]
        var timers: [String: CoreMetrics.Timer] = [:]
    }

    /// Records nothing.
    package static let off = ServerMetrics(factory: nil, registry: nil)

    /// Metrics kept in a Prometheus registry of their own (one per server, so two servers in
    /// one process, as in the tests, count apart).
    package static func prometheus() -> ServerMetrics {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // A redirect takes about a millisecond; a slow one tens: buckets from 1 ms to 10 s.
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .microseconds(2_500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500), .seconds(5), .seconds(10),
        ]
        // A batch holds 1…512 writes (``GroupCommit``).
        factory.valueHistogramBuckets["linkrelay_group_commit_batch_size"] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
        // Which version answers (a rolling restart shows both for a while).
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "linkrelay", metricName: "build", unitName: "info", helpText: "The server's version."),
            labels: [("version", LinkRelayVersion.string)]
        ).set(to: 1)
        return ServerMetrics(factory: factory, registry: registry)
    }

    private init(factory: (any MetricsFactory)?, registry: PrometheusCollectorRegistry?) {
        self.factory = factory
        self.registry = registry
    }

    /// Whether anything is recorded.
    package var isEnabled: Bool { factory != nil }

    /// The metrics in Prometheus's text format (version 0.0.4); empty when off.
    package func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        registry?.emit(into: &buffer)
        return buffer
    }

    /// A request answered: its count by method, route and status, and its time by route.
    package func request(method: String, route: String, status: Int, duration: Duration) {
        guard let factory else { return }
        let key = RequestKey(method: method, route: route, status: status)
        let (counter, timer) = requestMetrics.withLock { made in
            let counter =
                made.counters[key]
                ?? Counter(
                    label: "linkrelay_http_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))],
                    factory: factory)
            let timer =
                made.timers[route]
                ?? CoreMetrics.Timer(label: "linkrelay_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            made.counters[key] = counter
            made.timers[route] = timer
            return (counter, timer)
        }
        counter.increment()
        timer.record(duration: duration)
    }

    /// An install stored, by its attribution method.
    func install(method: String) {
        guard let factory else { return }
        Counter(label: "linkrelay_installs_total", dimensions: [("method", method)], factory: factory).increment()
    }

    /// A batch of durable writes committed: its size and time, the clicks and events it stored,
    /// and its failures (not a taken value's conflict, which is the request's fault).
    package func groupCommit(size: Int, duration: Duration, clicks: Int, events: Int, failures: Int) {
        guard let factory else { return }
        Recorder(label: "linkrelay_group_commit_batch_size", factory: factory).record(size)
        CoreMetrics.Timer(label: "linkrelay_group_commit_duration_seconds", factory: factory).record(duration: duration)
        if clicks > 0 { Counter(label: "linkrelay_clicks_stored_total", factory: factory).increment(by: clicks) }
        if events > 0 { Counter(label: "linkrelay_events_stored_total", factory: factory).increment(by: events) }
        if failures > 0 { databaseError(operation: "write", count: failures) }
    }

    /// A database error: `write` for a durable write, `request` for what a request read or wrote.
    func databaseError(operation: String, count: Int = 1) {
        guard let factory else { return }
        Counter(label: "linkrelay_database_errors_total", dimensions: [("operation", operation)], factory: factory).increment(by: count)
    }

    /// A retention pass: whether it completed, and the clicks it deleted.
    package func retentionPass(completed: Bool, clicksDeleted: Int) {
        guard let factory else { return }
        Counter(label: "linkrelay_retention_passes_total", dimensions: [("outcome", completed ? "completed" : "failed")], factory: factory)
            .increment()
        Counter(label: "linkrelay_retention_clicks_deleted_total", factory: factory).increment(by: clicksDeleted)
    }
}
