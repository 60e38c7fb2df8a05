import Benchmark

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 30)
    DeliveryBenchmarks.register()
    ParsingBenchmarks.register()
    AdapterBenchmarks.register()
    ClientBenchmarks.register()
    LoopbackBenchmarks.register()
    RoutingBenchmarks.register()
    SubscribingBenchmarks.register()
    RedactionBenchmarks.register()
    DeadlineBenchmarks.register()
}
