// swift-tools-version: 6.1
import PackageDescription

// LinkRelay's benchmarks (ordo-one/benchmark): each figure is reported next to a baseline
// measured in the same run. Its own package, so the root package keeps zero dependencies.
// `traits: ["MallocInterposer"]`: the benchmark package's other default trait needs a package
// that is not available here (see ../README.md, Performance).
let package = Package(
    name: "LinkRelayBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "LinkRelay", path: ".."),
        .package(name: "LinkRelaySandbox", path: "../Sandbox"),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "LinkRelayBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "LinkRelayTesting", package: "LinkRelay"),
                .product(name: "LinkRelaySimulator", package: "LinkRelay"),
                .product(name: "LinkRelayLinkForty", package: "LinkRelay"),
                .product(name: "LinkRelayLimeLink", package: "LinkRelay"),
                .product(name: "LinkRelayDynalinks", package: "LinkRelay"),
                .product(name: "LinkRelayPaylisher", package: "LinkRelay"),
                .product(name: "LinkRelaySandbox", package: "LinkRelaySandbox"),
            ],
            path: "Benchmarks/LinkRelayBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
