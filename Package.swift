// swift-tools-version: 6.0
import PackageDescription

// The root package has no package dependencies, by design: an app that adds LinkRelay gets
// LinkRelay and nothing else. Packages that need more (Sandbox/, Benchmarks/) live in their own
// folders and depend on this one by path.

/// The providers, each one folder under Adapters/ (see CONTRIBUTING.md, "Adding a provider"):
/// `Adapter/` is the product `LinkRelay<Name>`, `Emulation/` its server simulated for tests and
/// the Sandbox (it never depends on its own adapter, so that it stays an independent oracle),
/// `Tests/` its tests. A fifth provider is one folder and one word here.
let providers = ["LinkForty", "LimeLink", "Dynalinks", "Paylisher"]

let adapters = providers.map { Target.Dependency.target(name: "LinkRelay\($0)") }
let emulations = providers.map { Target.Dependency.target(name: "LinkRelay\($0)Emulation") }

let package = Package(
    name: "LinkRelay",
    platforms: [
        .iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1),
    ],
    products: [
        .library(name: "LinkRelay", targets: ["LinkRelay"]),
        .library(name: "LinkRelayTesting", targets: ["LinkRelayTesting"]),
        .library(name: "LinkRelaySimulator", targets: ["LinkRelaySimulator"]),
        .library(name: "LinkRelayConformance", targets: ["LinkRelayConformance"]),
        // `linkrelay doctor`'s checks, for LinkRelay Server's dashboard to judge the files it serves.
        .library(name: "LinkRelayDoctor", targets: ["LinkRelayDoctor"]),
        .executable(name: "linkrelay-demo", targets: ["LinkRelayDemo"]),
        .executable(name: "linkrelay", targets: ["LinkRelayTool"]),
    ] + providerProducts,
    targets: [
        // What an app links: the client, the model, storage and transport.
        .target(name: "LinkRelay", resources: [.copy("PrivacyInfo.xcprivacy")]),
        // Package-internal (no product): the codecs, JSON helpers and request pipeline the
        // adapters and emulations share, so the core carries none of them.
        .target(name: "LinkRelayWire", dependencies: ["LinkRelay"]),
        .target(name: "LinkRelayTesting", dependencies: ["LinkRelay"]),
        // The in-process provider world the emulations plug into (no product of its own:
        // LinkRelaySimulator re-exports it).
        .target(name: "LinkRelaySimulatorCore", dependencies: ["LinkRelay", "LinkRelayWire"]),
        .target(name: "LinkRelaySimulator", dependencies: ["LinkRelay", "LinkRelaySimulatorCore"] + emulations),
        // The backend contract, runnable against anyone's `DeepLinkBackend`.
        .target(name: "LinkRelayConformance", dependencies: ["LinkRelay", "LinkRelayTesting", "LinkRelaySimulator"]),
        .target(
            name: "ShopApp",
            dependencies: ["LinkRelay", "LinkRelaySimulator"] + adapters,
            path: "Examples/ShopApp"
        ),
        .executableTarget(
            name: "LinkRelayDemo",
            dependencies: ["LinkRelay", "LinkRelayTesting", "LinkRelaySimulator", "ShopApp"] + adapters,
            path: "Examples/Demo"
        ),
        // `linkrelay doctor | resolve | parse`: the checks live in a library, so they are tested.
        .target(
            name: "LinkRelayDoctor",
            dependencies: ["LinkRelay"] + adapters,
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
            dependencies: ["LinkRelay", "LinkRelayWire", "LinkRelayTesting"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "ProviderSwitchTests",
            dependencies: ["ShopApp", "LinkRelay", "LinkRelayTesting", "LinkRelaySimulator"] + adapters
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
            dependencies: ["LinkRelaySimulator", "LinkRelaySimulatorCore", "LinkRelay", "LinkRelayTesting", "LinkRelayConformance"]
        ),
    ] + providerTargets,
    swiftLanguageModes: [.v6]
)

/// Each provider's three targets: its adapter, its emulation, its tests.
var providerTargets: [Target] {
    providers.flatMap { name -> [Target] in
        let adapter = Target.target(
            name: "LinkRelay\(name)", dependencies: ["LinkRelay", "LinkRelayWire"], path: "Adapters/\(name)/Adapter",
            resources: [.copy("PrivacyInfo.xcprivacy")])
        let emulation = Target.target(
            name: "LinkRelay\(name)Emulation", dependencies: ["LinkRelay", "LinkRelayWire", "LinkRelaySimulatorCore"],
            path: "Adapters/\(name)/Emulation")
        let testDependencies: [Target.Dependency] = [
            .target(name: "LinkRelay\(name)"), .target(name: "LinkRelay\(name)Emulation"), "LinkRelay", "LinkRelayWire", "LinkRelayTesting",
            "LinkRelaySimulator", "LinkRelaySimulatorCore", "LinkRelayConformance",
        ]
        let tests = Target.testTarget(name: "LinkRelay\(name)Tests", dependencies: testDependencies, path: "Adapters/\(name)/Tests")
        return [adapter, emulation, tests]
    }
}

var providerProducts: [Product] {
    providers.map { name in Product.library(name: "LinkRelay\(name)", targets: ["LinkRelay\(name)"]) }
}
