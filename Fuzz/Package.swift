// swift-tools-version: 6.0
import PackageDescription

// libFuzzer targets for LinkRelay's parser and for each adapter's response decoding and
// mapping. Its own package, so the root package stays free of sanitizer builds.
//
// Fuzz (see ./run):
//   swift build -c release --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING --product Fuzzer
//   LINKRELAY_FUZZ_TARGET=linkforty .build/release/Fuzzer Corpus/linkforty -max_total_time=600
// A plain build makes the same executable replay the files given as arguments, and
// `swift test` replays the committed corpus and every crash found so far.
let package = Package(
    name: "LinkRelayFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "LinkRelay", path: "..")
    ],
    targets: [
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "LinkRelayTesting", package: "LinkRelay"),
                .product(name: "LinkRelayLinkForty", package: "LinkRelay"),
                .product(name: "LinkRelayLimeLink", package: "LinkRelay"),
                .product(name: "LinkRelayDynalinks", package: "LinkRelay"),
                .product(name: "LinkRelayPaylisher", package: "LinkRelay"),
            ]
        ),
        .executableTarget(name: "Fuzzer", dependencies: ["FuzzSupport"]),
        .testTarget(name: "CorpusTests", dependencies: ["FuzzSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
