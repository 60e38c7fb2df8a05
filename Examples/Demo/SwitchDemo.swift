import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import ShopApp

/// The proof that app code does not change between providers: `ShopApp` (written once, against
/// `DeepLinkClient` only) runs against every provider in turn; only `ShopWorld`, the simulator's
/// setup, knows which provider it is.
enum SwitchDemo {
    struct Column {
        var provider: String
        var rows: [String]
    }

    static let rowTitles = [
        "deferred link after a web click", "universal link to product 42", "custom-scheme cart link", "wallet link",
        "after sign-in", "a purchase event",
    ]

    static func run(_ providers: [ShopWorld.Provider]) async throws {
        var columns: [Column] = []
        for provider in providers {
            let simulator = ProviderSimulator()
            let world = try ShopWorld(provider, simulator: simulator, phone: StaticDeviceInfo.iPhone)
            world.recordWebClick()
            var configuration = DeepLinkClient.Configuration()
            configuration.transport = simulator
            configuration.store = InMemoryStore()
            configuration.deviceInfo = StaticDeviceInfo()
            configuration.authenticationRequiredPaths = ["wallet"]
            configuration.retryPolicy = .none
            let client = DeepLinkClient(backend: world.backend, configuration: configuration)

            // The app code: the same lines for every provider.
            var app = ShopApp(client: client, appScheme: ShopWorld.appScheme)
            let launch = await app.launch()
            let rows = [
                launch.route.map { "shows \($0)" } ?? "no deferred link",
                "\(await app.open(world.productLink))",
                "\(await app.open(world.cartLink))",
                "\(await app.open(world.walletLink))",
                (await app.signedIn()).map { "shows \($0)" } ?? "nothing held",
                await app.purchase(amount: 29),
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
    }
}
