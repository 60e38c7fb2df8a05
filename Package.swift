// swift-tools-version: 6.0
import PackageDescription

// The root package has no package dependencies, by design: an app that adds LinkRelay gets
// LinkRelay and nothing else. Packages that need more (Sandbox/, Benchmarks/) live in their own
// folders and depend on this one by path.
let package = Package(
    name: "LinkRelay",
    platforms: [
        .iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1),
    ],
    products: [
        .library(name: "LinkRelay", targets: ["LinkRelay"]),
        .library(name: "LinkRelayTesting", targets: ["LinkRelayTesting"]),
        .library(name: "LinkRelayLinkForty", targets: ["LinkRelayLinkForty"]),
        .library(name: "LinkRelayLimeLink", targets: ["LinkRelayLimeLink"]),
        .library(name: "LinkRelayDynalinks", targets: ["LinkRelayDynalinks"]),
        .library(name: "LinkRelayPaylisher", targets: ["LinkRelayPaylisher"]),
        .library(name: "LinkRelaySimulator", targets: ["LinkRelaySimulator"]),
        .executable(name: "linkrelay-demo", targets: ["LinkRelayDemo"]),
        .executable(name: "linkrelay", targets: ["LinkRelayTool"]),
    ],
    targets: [
        .target(name: "LinkRelay", resources: [.copy("PrivacyInfo.xcprivacy")]),
        .target(name: "LinkRelayTesting", dependencies: ["LinkRelay"]),
        .target(name: "LinkRelayLinkForty", dependencies: ["LinkRelay"], path: "Adapters/LinkForty", resources: [.copy("PrivacyInfo.xcprivacy")]),
        .target(name: "LinkRelayLimeLink", dependencies: ["LinkRelay"], path: "Adapters/LimeLink", resources: [.copy("PrivacyInfo.xcprivacy")]),
        .target(name: "LinkRelayDynalinks", dependencies: ["LinkRelay"], path: "Adapters/Dynalinks", resources: [.copy("PrivacyInfo.xcprivacy")]),
        .target(name: "LinkRelayPaylisher", dependencies: ["LinkRelay"], path: "Adapters/Paylisher", resources: [.copy("PrivacyInfo.xcprivacy")]),
        .target(name: "LinkRelaySimulator", dependencies: ["LinkRelay"]),
        .target(
            name: "ShopApp",
            dependencies: [
                "LinkRelay", "LinkRelayLinkForty", "LinkRelayLimeLink", "LinkRelayDynalinks", "LinkRelayPaylisher", "LinkRelaySimulator",
            ],
            path: "Examples/ShopApp"
        ),
        .executableTarget(
            name: "LinkRelayDemo",
            dependencies: [
                "LinkRelay", "LinkRelayTesting", "LinkRelayLinkForty", "LinkRelayLimeLink", "LinkRelayDynalinks", "LinkRelaySimulator",
                "ShopApp",
            ],
            path: "Examples/Demo"
        ),
        // `linkrelay doctor | resolve | parse`: the checks live in a library, so they are tested.
        .target(
            name: "LinkRelayDoctor",
            dependencies: ["LinkRelay", "LinkRelayLinkForty", "LinkRelayLimeLink", "LinkRelayDynalinks", "LinkRelayPaylisher"],
            path: "Tools/LinkRelayDoctor"
        ),
        .executableTarget(
            name: "LinkRelayTool",
            dependencies: ["LinkRelayDoctor", "LinkRelay", "LinkRelaySimulator"],
            path: "Tools/linkrelay"
        ),
        .testTarget(
            name: "LinkRelayDoctorTests",
            dependencies: ["LinkRelayDoctor", "LinkRelay", "LinkRelayTool"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "LinkRelayTests",
            dependencies: ["LinkRelay", "LinkRelayTesting"],
            exclude: ["Fixtures"]
        ),
        .target(
            name: "LinkRelayConformance",
            dependencies: ["LinkRelay", "LinkRelayTesting", "LinkRelaySimulator"],
            path: "Tests/LinkRelayConformance"
        ),
        .testTarget(
            name: "LinkRelayLinkFortyTests",
            dependencies: ["LinkRelayLinkForty", "LinkRelay", "LinkRelayTesting", "LinkRelaySimulator", "LinkRelayConformance"]
        ),
        .testTarget(
            name: "LinkRelayLimeLinkTests",
            dependencies: ["LinkRelayLimeLink", "LinkRelay", "LinkRelayTesting", "LinkRelaySimulator", "LinkRelayConformance"]
        ),
        .testTarget(
            name: "LinkRelayDynalinksTests",
            dependencies: ["LinkRelayDynalinks", "LinkRelay", "LinkRelayTesting", "LinkRelaySimulator", "LinkRelayConformance"]
        ),
        .testTarget(
            name: "LinkRelayPaylisherTests",
            dependencies: ["LinkRelayPaylisher", "LinkRelay", "LinkRelayTesting", "LinkRelaySimulator", "LinkRelayConformance"]
        ),
        .testTarget(
            name: "ProviderSwitchTests",
            dependencies: [
                "ShopApp", "LinkRelay", "LinkRelayTesting", "LinkRelaySimulator", "LinkRelayLinkForty", "LinkRelayLimeLink",
                "LinkRelayDynalinks", "LinkRelayPaylisher",
            ]
        ),
        // Used only by CrashSafetyTests: a process that tracks events until it is killed.
        .executableTarget(
            name: "CrashHelper",
            dependencies: ["LinkRelay", "LinkRelayPaylisher"],
            path: "Tests/CrashHelper"
        ),
        .testTarget(
            name: "CrashSafetyTests",
            dependencies: ["CrashHelper", "LinkRelay", "LinkRelayPaylisher", "LinkRelaySimulator", "LinkRelayTesting"]
        ),
        .testTarget(
            name: "LinkRelaySimulatorTests",
            dependencies: ["LinkRelaySimulator", "LinkRelay", "LinkRelayTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
