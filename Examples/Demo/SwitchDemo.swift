import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import LinkRelayWire
import ShopApp

/// The proof that app code does not change between providers: `ShopApp` (written once, against
/// `DeepLinkClient` only) runs against every provider in turn; only `ShopWorld`, the sandbox's
/// setup, knows which provider it is. The sandbox is in process, or a running
/// `linkrelay-sandbox` reached over the network (`--sandbox URL`).
enum SwitchDemo {
    struct Column {
        var provider: String
        var rows: [String]
    }

    static let rowTitles = [
        "deferred link after a web click", "universal link to product 42", "custom-scheme cart link", "wallet link",
        "after sign-in", "a purchase event", "a share link",
    ]

    static func run(_ providers: [ShopWorld.Provider], sandboxURL: URL? = nil) async throws {
        var columns: [Column] = []
        var remote: SandboxAdminClient?
        if let sandboxURL {
            let admin = SandboxAdminClient(baseURL: sandboxURL)
            let description = try await admin.describe()
            print("LinkRelay demo against the LinkRelay Sandbox at \(description.baseURL.absoluteString), over HTTP")
            remote = admin
        }
        for provider in providers {
            // Where the provider runs: a running sandbox over the network, or one in process.
            let sandbox: any SandboxControl
            let transport: any HTTPTransport
            if let remote {
                sandbox = remote
                transport = ShopWorld.transport(to: try await remote.describe())
            } else {
                let local = Sandbox(settings: ShopWorld.settings)
                sandbox = local
                transport = local.simulator
            }
            let world = try await ShopWorld(provider, sandbox: sandbox, phone: StaticDeviceInfo.iPhone)
            try await world.recordWebClick()
            var configuration = DemoOutput.configuration()
            configuration.transport = transport
            configuration.store = InMemoryStore()
            configuration.deviceInfo = StaticDeviceInfo()
            configuration.authenticationRule = { ShopRoutes.router.requiresAuthentication($0) }
            configuration.retryPolicy = .none
            let client = DeepLinkClient(backend: world.backend, configuration: configuration)

            // The app code: the same lines for every provider.
            var app = ShopApp(client: client)
            let launch = await app.launch()
            let rows = [
                launch.route.map { "shows \($0)" } ?? "no deferred link",
                "\(await app.open(world.productLink))",
                "\(await app.open(world.cartLink))",
                "\(await app.open(world.walletLink))",
                (await app.signedIn()).map { "shows \($0)" } ?? "nothing held",
                await app.purchase(amount: 29),
                await app.shareProduct(),
            ]
            await client.shutdown()
            columns.append(Column(provider: provider.rawValue, rows: rows))
        }
        print("\n\nThe same app code against \(columns.map(\.provider).joined(separator: ", ")):\n")
        let firstWidth = rowTitles.map(\.count).max() ?? 0
        let widths = columns.map { column in max(column.provider.count, column.rows.map(\.count).max() ?? 0) }
        func line(_ first: String, _ cells: [String]) -> String {
            ([first.padding(toLength: firstWidth, withPad: " ", startingAt: 0)]
                + zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) })
                .joined(separator: " │ ")
        }
        print(line("", columns.map(\.provider)))
        print(line(String(repeating: "─", count: firstWidth), widths.map { String(repeating: "─", count: $0) }))
        for (index, title) in rowTitles.enumerated() {
            print(line(title, columns.map { $0.rows[index] }))
        }
        print("\nEach link became a screen through one DeepLinkRouter, tried most specific first:")
        print("   " + ShopRoutes.router.patterns.joined(separator: "   "))
        if let remote {
            let hosts = Dictionary(grouping: try await remote.receivedRequests(), by: { $0.url.host ?? "" })
            print("\nThe sandbox has received, by provider host:")
            for (host, requests) in hosts.sorted(by: { $0.key < $1.key }) {
                print("   \(host): \(requests.count) request\(requests.count == 1 ? "" : "s")")
            }
        }
    }
}
