// swift-tools-version: 6.0
import PackageDescription

// The Sandbox: LinkRelaySimulator's four provider emulations served over real HTTP on loopback
// (SwiftNIO's HTTP/1.1 server), for over-the-wire tests and for pointing a Debug build at. Its own
// package, so the root package keeps zero dependencies.
//
// NIO directly rather than Hummingbird 2 (which is built on it): what the Sandbox needs is NIO's
// parser, its header limits and a deadline per connection. Hummingbird 2.28.1's connection loop
// answers every parser error 400 (a header over the limit gets no 431) and reads the rest of a
// body after the answer (an endless chunked body would be read forever); the Sandbox answers
// 413/431/408 itself and closes. (It was FlyingFox 0.27.1, which read a long header line in
// quadratic time and kept idle connections for an hour: RELIABILITY.md.)
let package = Package(
    name: "LinkRelaySandbox",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LinkRelaySandbox", targets: ["LinkRelaySandbox"]),
        .executable(name: "linkrelay-sandbox", targets: ["SandboxTool"]),
    ],
    dependencies: [
        .package(name: "LinkRelay", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
    ],
    targets: [
        .target(
            name: "LinkRelaySandbox",
            dependencies: [
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "LinkRelaySimulator", package: "LinkRelay"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(name: "SandboxTool", dependencies: ["LinkRelaySandbox"]),
        .testTarget(
            name: "LinkRelaySandboxTests",
            dependencies: [
                "LinkRelaySandbox",
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "LinkRelaySimulator", package: "LinkRelay"),
                .product(name: "LinkRelayTesting", package: "LinkRelay"),
                .product(name: "LinkRelayLinkForty", package: "LinkRelay"),
                .product(name: "LinkRelayLimeLink", package: "LinkRelay"),
                .product(name: "LinkRelayDynalinks", package: "LinkRelay"),
                .product(name: "LinkRelayPaylisher", package: "LinkRelay"),
            ]
        ),
    ]
)
