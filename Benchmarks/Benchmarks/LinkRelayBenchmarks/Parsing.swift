import Benchmark
import Foundation
import LinkRelay

/// 2. `LinkParser` against `URLComponents` + `queryItems`, over the same 1,000 links.
enum ParsingBenchmarks {
    static func register() {
        Benchmark("2 baseline: URLComponents + queryItems, per link") { benchmark in
            for _ in benchmark.scaledIterations {}
            for url in Corpus.links {
                let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
                blackHole(components?.path)
                blackHole(components?.queryItems)
            }
        }

        Benchmark("2 LinkParser.parse, per link") { benchmark in
            for _ in benchmark.scaledIterations {}
            for url in Corpus.links {
                blackHole(try? LinkParser.parse(url))
            }
        }
    }
}
