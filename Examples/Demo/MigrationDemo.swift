import Foundation
import LinkRelay
import LinkRelayLinkForty
import LinkRelaySimulator
import LinkRelayTesting
import ShopApp

/// Users who already have the app: a LinkForty SDK user updates to the build with LinkRelay and
/// the Paylisher backend. The LinkForty SDK's keys are seeded as that SDK writes them, in a
/// `UserDefaults` suite of the demo's own; an old click on the same device class waits at
/// Paylisher, which a deferred match would take for this user's.
enum MigrationDemo {
    static func run() async throws {
        print("\n\nLinkRelay demo: an existing LinkForty SDK user updates to LinkRelay with Paylisher")
        let suite = "linkrelay-demo-migration-\(UUID().uuidString)"
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        let defaults = UserDefaults(suiteName: suite)
        defaults?.set("c3b1e5a0-7f1d-4e8e-9a51-2f4be2a1d001", forKey: LinkFortySDKImporter.installIDKey)
        defaults?.set(true, forKey: LinkFortySDKImporter.launchedKey)
        DemoOutput.step("On the device: what LinkForty's SDK left in UserDefaults")
        print("   \(LinkFortySDKImporter.installIDKey) = c3b1e5a0-7f1d-4e8e-9a51-2f4be2a1d001")
        print("   \(LinkFortySDKImporter.launchedKey) = true")

        for policy in [ExistingUserPolicy.skipInstallMatch, .treatAsNew] {
            let sandbox = Sandbox(settings: ShopWorld.settings)
            let world = try await ShopWorld(.paylisher, sandbox: sandbox, phone: StaticDeviceInfo.iPhone)
            try await world.recordWebClick()  // somebody else's click, weeks ago, on the same kind of phone
            var configuration = DemoOutput.configuration()
            configuration.transport = sandbox.simulator
            configuration.store = InMemoryStore()
            configuration.deviceInfo = StaticDeviceInfo()
            configuration.retryPolicy = .none
            configuration.previousSDKs = [LinkFortySDKImporter()]
            configuration.previousSDKStorage = PreviousSDKStorage(
                defaultsSuiteName: suite, applicationSupport: FileManager.default.temporaryDirectory)
            configuration.existingUsers = policy
            let client = DeepLinkClient(backend: world.backend, configuration: configuration)
            var app = ShopApp(client: client)

            DemoOutput.step(
                policy == .skipInstallMatch
                    ? "The update's first launch (existingUsers: .skipInstallMatch, the default)"
                    : "The same, with existingUsers: .treatAsNew")
            let launched = await app.launch()
            let kind = await client.launch().kind
            print("   launch: \(kind)")
            if case .existingUser(let previous) = kind {
                print(
                    "   identity kept from LinkForty's SDK: installId \(previous.installID ?? "none") (AppLaunch.Kind.existingUser; LinkForty's id, for a LinkForty backend: Paylisher names installs by its own)"
                )
            }
            print("   install outcome: \(DemoOutput.describe(launched.outcome))")
            let matches = sandbox.simulator.requests.filter { $0.url.path.hasSuffix("/v1/deferred-deeplink") }.count
            print("   deferred-match requests to Paylisher: \(matches)")
            print("   deferred link: \(launched.route.map { "shows \($0), from a click that was not this user's" } ?? "none")")
            await client.shutdown()
        }
    }
}
