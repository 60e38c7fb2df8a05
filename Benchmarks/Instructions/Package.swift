// swift-tools-version: 6.0
import PackageDescription

// Scenarios for instruction counts under callgrind (../count-instructions). A package of its own,
// beside the benchmarks package, whose plugin would run every executable there as a benchmark.
let package = Package(
    name: "LinkRelayInstructions",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "LinkRelay", path: "../..")],
    targets: [
        .executableTarget(
            name: "linkrelay-instructions",
            dependencies: [
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "LinkRelayTesting", package: "LinkRelay"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
