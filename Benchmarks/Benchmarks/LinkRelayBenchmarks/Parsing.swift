import Benchmark
import Foundation
import LinkRelay

/// 2. `LinkParser` against `URLComponents` + `queryItems`, over the same 1,000 links.
enum ParsingBenchmarks {
    /// A 1 KB link with 93 query items (a tracking-heavy campaign link): allocations per item
    /// show here, not on the short corpus links.
    static let long: URL = {
        let items = (0..<93).map { "k\($0)=v\($0 * 7)" }.joined(separator: "&")
        return URL(string: "https://go.acme.app/campaign/spring?\(items)")!
    }()

    static func register() {
        let configuration = Benchmark.Configuration(
            metrics: [.wallClock, .cpuTotal, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(2),
            maxIterations: 30)
        Benchmark("2 baseline: URLComponents + queryItems, per link", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {}
            for url in Corpus.links {
                let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
                blackHole(components?.path)
                blackHole(components?.queryItems)
            }
        }

        let single = Benchmark.Configuration(
            metrics: [.wallClock, .mallocCountTotal], scalingFactor: .one, maxDuration: .seconds(1), maxIterations: 1000)
        Benchmark("2b baseline: URLComponents + queryItems, a 1 KB link with 93 items", configuration: single) { benchmark in
            for _ in benchmark.scaledIterations {
                let components = URLComponents(url: long, resolvingAgainstBaseURL: false)
                precondition(components?.queryItems?.count == 93)
                blackHole(components?.path)
            }
        }

        Benchmark("2b LinkParser.parse, a 1 KB link with 93 items", configuration: single) { benchmark in
            for _ in benchmark.scaledIterations {
                let parsed = try LinkParser.parse(long)
                precondition(parsed.queryItems.count == 93)
                blackHole(parsed)
            }
        }

        Benchmark("2 LinkParser.parse, per link", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {}
            for url in Corpus.links {
                blackHole(try LinkParser.parse(url))
            }
        }
    }
}
