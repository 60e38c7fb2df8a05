import Benchmark
import Foundation
import LinkRelay

/// 2. `LinkParser` against `URLComponents` + `queryItems`, over the same 1,000 links.
enum ParsingBenchmarks {
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

        Benchmark("2 LinkParser.parse, per link", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {}
            for url in Corpus.links {
                blackHole(try LinkParser.parse(url))
            }
        }
    }
}
