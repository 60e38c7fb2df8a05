import Benchmark
import Foundation
import LinkRelay

/// 8. `DeepLinkRouter`: 1,000 links against 50 patterns.
enum RoutingBenchmarks {
    enum Route: Sendable {
        case list(String), new(String), item(String, Int), reviews(String, Int), shared(String, String, [String])
    }

    static let resources = ["products", "orders", "campaigns", "users", "stores", "brands", "collections", "articles", "events", "coupons"]

    /// Five shapes per resource: 50 patterns.
    static let router: DeepLinkRouter<Route> = {
        do {
            return try DeepLinkRouter<Route>(
                routes: resources.flatMap { name in
                    [
                        LinkRoute<Route>("/\(name)") { _ in .list(name) },
                        LinkRoute<Route>("/\(name)/new") { _ in .new(name) },
                        LinkRoute<Route>("/\(name)/:id") { try .item(name, $0.capture("id")) },
                        LinkRoute<Route>("/\(name)/:id/reviews") { try .reviews(name, $0.capture("id")) },
                        LinkRoute<Route>("/\(name)/:slug/share/*") { try .shared(name, $0.capture("slug"), $0.rest) },
                    ]
                })
        } catch {
            preconditionFailure("\(error)")
        }
    }()

    /// 1,000 links, the same in every run: both URL forms, every shape, one in ten matching
    /// nothing (an unknown section or an id that is not a number).
    static func links(destinations: Bool) -> [DeepLink] {
        var generator = SeededGenerator(seed: 0x5EED)
        func next(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }
        return (0..<1_000).compactMap { index -> DeepLink? in
            let name = resources[next(resources.count)]
            let path: String
            switch next(10) {
            case 0: path = "/\(name)"
            case 1: path = "/\(name)/new"
            case 2, 3, 4: path = "/\(name)/\(next(100_000))"
            case 5, 6: path = "/\(name)/\(next(100_000))/reviews"
            case 7: path = "/\(name)/spring-\(next(100))/share/mail/\(next(9))"
            case 8: path = "/\(name)/not-a-number/reviews"
            default: path = "/unknown/\(next(100))"
            }
            let text = index % 2 == 0 ? "https://go.acme.app\(path)?utm_source=mail&ref=\(next(1000))" : "acme:/\(path)"
            guard let url = URL(string: text) else { return nil }
            var link: DeepLink
            do {
                link = try LinkParser.parse(url).deepLink(provider: "bench", resolution: .server)
            } catch {
                fatalError("a routing corpus link does not parse: \(text)")
            }
            if destinations {
                // As LimeLink delivers them: the short link's own path, the route in the destination.
                link.destination = URL(string: "acme:/\(path)")
                link.setPathSegments(["link", "code\(index)"])
            }
            return link
        }
    }

    static func register() {
        let configuration = Benchmark.Configuration(
            metrics: [.wallClock, .cpuTotal, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 30)
        let paths = links(destinations: false)
        let withDestinations = links(destinations: true)
        let table = Dictionary(paths.map { ($0.pathSegments.joined(separator: "/"), 0) }, uniquingKeysWith: { first, _ in first })

        Benchmark("8 baseline: a dictionary lookup of each link's joined path", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {}
            for link in paths { blackHole(table[link.pathSegments.joined(separator: "/")]) }
        }

        Benchmark("8 DeepLinkRouter.route, 1,000 links against 50 patterns", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {}
            for link in paths { blackHole(router.route(link)) }
        }

        Benchmark("8 DeepLinkRouter.route, 1,000 links with app-scheme destinations", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {}
            for link in withDestinations { blackHole(router.route(link)) }
        }
    }
}
