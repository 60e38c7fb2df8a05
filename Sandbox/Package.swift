// swift-tools-version: 6.0
import PackageDescription

// The Sandbox: LinkRelaySimulator's four provider emulations served over real HTTP on loopback
// (FlyingFox), for over-the-wire tests and for pointing a Debug build at. Its own package, so
// the root package keeps zero dependencies.
let package = Package(
    name: "LinkRelaySandbox",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LinkRelaySandbox", targets: ["LinkRelaySandbox"]),
        .executable(name: "linkrelay-sandbox", targets: ["SandboxTool"]),
    ],
    dependencies: [
        .package(name: "LinkRelay", path: ".."),
        .package(url: "https://github.com/swhitty/FlyingFox", exact: "0.27.1"),
    ],
    targets: [
        .target(
            name: "LinkRelaySandbox",
            dependencies: [
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "LinkRelaySimulator", package: "LinkRelay"),
                .product(name: "FlyingFox", package: "FlyingFox"),
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
