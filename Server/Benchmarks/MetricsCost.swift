import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage

/// `linkrelay-server-bench metrics-cost N`: records N requests' metrics (a count by method,
/// route and status, and a time by route), spread over the routes and statuses a redirect-heavy
/// server answers, into a Prometheus registry; then renders one scrape. Run it under callgrind
/// with N and 2N: the difference over N is the instructions one request's metrics cost.
enum MetricsCost {
    static func run(_ arguments: ArraySlice<String>) -> Bool {
        guard let count = arguments.first.flatMap({ Int($0) }), count > 0 else {
            print("usage: linkrelay-server-bench metrics-cost N")
            return false
        }
        let metrics = ServerMetrics.prometheus()
        let routes = ["/{code}", "/{templateSlug}/{code}", "/api/sdk/v1/install", "/api/sdk/v1/event", "/api/sdk/v1/resolve/{code}"]
        let statuses = [302, 200, 404]
        for index in 0..<count {
            metrics.request(
                method: index % 5 < 2 ? "GET" : "POST", route: routes[index % routes.count], status: statuses[index % statuses.count],
                duration: .microseconds(800 + index % 1000))
        }
        let scrape = metrics.exposition()
        print("metrics-cost: \(count) requests recorded; one scrape of \(scrape.count) bytes")
        return true
    }
}
