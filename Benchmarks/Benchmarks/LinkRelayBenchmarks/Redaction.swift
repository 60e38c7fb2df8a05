import Benchmark
import Foundation
import LinkRelay
import Synchronization

/// 10. One log line of 1 MB with secret-named values and a known key in it, redacted and cut
/// (what a hostile URL costs the caller of `handle` with logging on), against one pass over its
/// bytes.
enum RedactionBenchmarks {
    /// 1 MB: a query of `token=…` pairs and the API key, then filler.
    static let line: String = {
        let pairs = (0..<20_000).map { "token=v\($0)&page=\($0)" }.joined(separator: "&")
        return "GET https://go.acme.app/x?" + pairs + "&api_key=sk_live_ABCD1234&"
            + String(repeating: "abcdefgh", count: (1_048_576 - pairs.utf8.count) / 8)
    }()

    static func register() {
        let configuration = Benchmark.Configuration(scalingFactor: .one, maxDuration: .seconds(2), maxIterations: 30)
        Benchmark("10 baseline: one pass over a 1 MB line's bytes", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(line.utf8.reduce(0) { $0 &+ Int($1) })
            }
        }
        Benchmark("10 a 1 MB log line redacted and cut", configuration: configuration) { benchmark in
            let delivered = LinkRelayLoggerProbe()
            let logger = LinkRelayLogger(sink: delivered.sink, secrets: ["sk_live_ABCD1234"])
            for _ in benchmark.scaledIterations {
                logger.warning(line)
            }
            // What was delivered: one bounded line per call, with no value left in it.
            precondition(delivered.lastLine.utf8.count < 4_200 && !delivered.lastLine.contains("token=v"), "not redacted")
        }
    }
}

/// Keeps the last line a logger delivered.
final class LinkRelayLoggerProbe: Sendable {
    private let last = Mutex("")

    var sink: LogSink { LogSink(minimumLevel: .debug) { [self] record in last.withLock { $0 = record.message } } }

    var lastLine: String { last.withLock { $0 } }
}
