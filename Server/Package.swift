// swift-tools-version: 6.0
import PackageDescription

// LinkRelay Server: the self-hostable backend that speaks LinkForty's SDK protocol. A package of
// its own, like Sandbox/: the root package keeps zero dependencies.
/// What each of the server's test targets (above the Core) depends on.
let serverTestDependencies: [Target.Dependency] = [
    "LinkRelayServer",
    "LinkRelayServerCore",
    "LinkRelayServerStorage",
    "LinkRelayServerHTTP",
    "LinkRelayServerDashboard",
    "LinkRelayServerTestSupport",
    .product(name: "HummingbirdTesting", package: "hummingbird"),
    .product(name: "LinkRelay", package: "LinkRelay"),
    .product(name: "LinkRelayLinkForty", package: "LinkRelay"),
    .product(name: "LinkRelayTesting", package: "LinkRelay"),
    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
]

let package = Package(
    name: "LinkRelayServer",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "linkrelay-server", targets: ["linkrelay-server"]),
        .executable(name: "linkrelay-server-bench", targets: ["linkrelay-server-bench"]),
    ],
    dependencies: [
        .package(name: "LinkRelay", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        // The system's SQLite, through a thin wrapper of the server's own (LinkRelayServerStorage/SQLiteDatabase.swift):
        // statements kept prepared, rows read on the connection's thread. Debian and Ubuntu:
        // `apt-get install libsqlite3-dev`; macOS: the SDK has it.
        .systemLibrary(
            name: "CSQLite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // The server's domain, below everything else: records, the deferred match, the rules
        // on addresses, user agents and text. No Hummingbird, no NIO, no SQL (`.ci/run` checks
        // its imports); its tests need no database and no server.
        .target(
            name: "LinkRelayServerCore",
            dependencies: [
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The stores on SQL: the two engines (SQLite, PostgreSQL), the migrations, the queries,
        // the group commit and the retention. It implements the Core's store protocols; nothing
        // of HTTP (`.ci/server-layers` checks its imports).
        .target(
            name: "LinkRelayServerStorage",
            dependencies: [
                "LinkRelayServerCore",
                "CSQLite3",
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The HTTP API: thin controllers (a request decoded, the Core called, the answer
        // encoded), the middlewares, the API key check, the operations (access log, metrics,
        // the OpenAPI description). Nothing of the dashboard (`.ci/server-layers` checks it).
        .target(
            name: "LinkRelayServerHTTP",
            dependencies: [
                "LinkRelayServerCore",
                "LinkRelayServerStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            // The HTTP API's OpenAPI description, served at /openapi.json; the redirect's pages.
            resources: [.copy("Operations/openapi.json"), .copy("Links/Pages")]
        ),
        // The web dashboard: server-rendered pages over the same stores, behind a session.
        .target(
            name: "LinkRelayServerDashboard",
            dependencies: [
                "LinkRelayServerCore",
                "LinkRelayServerStorage",
                "LinkRelayServerHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "LinkRelayDoctor", package: "LinkRelay"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            // Each page's template beside its code (one folder per page), the shared chrome,
            // the stylesheet and the script; read at start. Each template is copied to the
            // resources' top, where `DashboardPages` reads every `*.mustache`.
            resources: [
                .copy("Static"), .copy("Shared/head.mustache"), .copy("Shared/foot.mustache"), .copy("Shared/error.mustache"),
                .copy("SignIn/sign_in.mustache"), .copy("Overview/overview.mustache"), .copy("Links/links.mustache"),
                .copy("Links/link.mustache"), .copy("Links/link_form.mustache"), .copy("Installs/installs.mustache"),
                .copy("Events/events.mustache"), .copy("Apps/apps.mustache"), .copy("Keys/keys.mustache"),
            ]
        ),
        // The server assembled: the API and the dashboard on one router, with the services that
        // run beside them. The executable, the bench and the tests start the server through it.
        .target(
            name: "LinkRelayServer",
            dependencies: [
                .product(name: "LinkRelay", package: "LinkRelay"),
                "LinkRelayServerCore",
                "LinkRelayServerStorage",
                "LinkRelayServerHTTP",
                "LinkRelayServerDashboard",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "linkrelay-server",
            dependencies: [
                "LinkRelayServer",
                "LinkRelayServerCore",
                "LinkRelayServerStorage",
                "LinkRelayServerHTTP",
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // linkrelay-server-bench: match quality against LinkForty Core's algorithm (see Benchmarks/).
        .executableTarget(
            name: "linkrelay-server-bench",
            dependencies: [
                "LinkRelayServer",
                "LinkRelayServerCore",
                "LinkRelayServerStorage",
                "LinkRelayServerHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "LinkRelay", package: "LinkRelay"),
                // Core's matcher as the root package reproduces it, for the replay.
                .product(name: "LinkRelaySimulator", package: "LinkRelay"),
            ],
            path: "Benchmarks",
            exclude: ["RESULTS.md"]
        ),
        .testTarget(
            name: "LinkRelayServerCoreTests",
            dependencies: ["LinkRelayServerCore", .product(name: "LinkRelayTesting", package: "LinkRelay")]
        ),
        // What the server's tests share: a store and a server over it on either engine
        // (`ServerWorld`), a clock moved by hand, the binary started as a child process. A
        // library of its own (test targets cannot depend on each other); it reaches the server
        // through `package` declarations only, so it builds in a release build too.
        .target(
            name: "LinkRelayServerTestSupport",
            dependencies: [
                "LinkRelayServer",
                "LinkRelayServerCore",
                "LinkRelayServerStorage",
                "LinkRelayServerHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "LinkRelay", package: "LinkRelay"),
                .product(name: "LinkRelayTesting", package: "LinkRelay"),
            ],
            path: "Tests/LinkRelayServerTestSupport"
        ),
        // The tests of each layer above the Core, beside its own.
        .testTarget(
            name: "LinkRelayServerStorageTests",
            dependencies: serverTestDependencies
        ),
        .testTarget(
            name: "LinkRelayServerHTTPTests",
            dependencies: serverTestDependencies
        ),
        .testTarget(
            name: "LinkRelayServerDashboardTests",
            dependencies: serverTestDependencies
        ),
    ],
    swiftLanguageModes: [.v6]
)
