import Benchmark
import Foundation
import LinkRelay
import LinkRelayTesting

/// 9. `linkEvents()` with many live subscribers: subscribing and unsubscribing must cost the same
/// at 1,000 and 40,000 subscribers (O(1)). Each iteration subscribes 1,000 times and drops each
/// stream (an unsubscribe); the figures are per call. Instruction counts, which decide the
/// ratio, come from `Benchmarks/count-instructions`.
enum SubscribingBenchmarks {
    static func register() {
        let configuration = Benchmark.Configuration(scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 20)
        for live in [1_000, 40_000] {
            Benchmark("9 linkEvents() and drop, \(live.formatted()) live subscribers", configuration: configuration) {
                (benchmark: Benchmark, state: (DeepLinkClient, [AsyncStream<DeepLinkEvent>])) in
                let client = state.0
                for _ in benchmark.scaledIterations {
                    let stream = client.linkEvents()
                    blackHole(stream)
                }
            } setup: {
                var store = DeepLinkClient.Configuration(store: InMemoryStore())
                store.deviceInfo = StaticDeviceInfo()
                let client = DeepLinkClient(backend: LocalBackend(.init(hosts: ["go.acme.app"])), configuration: store)
                return (client, (0..<live).map { _ in client.linkEvents() })
            }
        }
    }
}
