import Foundation
import LinkRelay
import LinkRelayLimeLink
import LinkRelaySimulator
import LinkRelayTesting

/// The LimeLink story: a web click before install, the deferred link on first launch, and a
/// project link resolved to its in-app URI, with the stats event LimeLink counts opens by.
enum LimeLinkDemo {
    static func run() async throws {
        let simulator = ProviderSimulator()
        let server = simulator.addLimeLink(apiKey: "lk_live_demo")
        server.createLink(project: "abc123", suffix: "summer-sale", uri: "abc123app://promo/summer")
        server.createLink(project: "abc123", suffix: "prod-789", uri: "abc123app://product/789/reviews")
        let phone = StaticDeviceInfo()

        var configuration = DemoOutput.configuration()
        configuration.transport = simulator
        configuration.store = InMemoryStore()
        configuration.deviceInfo = phone
        let client = DeepLinkClient(
            backend: LimeLinkBackend(try .init(apiKey: "lk_live_demo", appSchemes: ["abc123app"])), configuration: configuration)

        print("\n\nLinkRelay demo: LimeLink, over LinkRelay's simulator of LimeLink's servers")

        DemoOutput.step("Before installing, the user taps https://abc123.limelink.org/link/summer-sale?utm_source=google")
        try server.recordWebClick(url: URL(string: "https://abc123.limelink.org/link/summer-sale?utm_source=google")!, from: phone.info)
        print("   LimeLink's page records the phone's screen (in points) and OS version")

        DemoOutput.step("First launch: the same app code as with LinkForty")
        var events = client.linkEvents().makeAsyncIterator()
        await client.start()
        DemoOutput.show(await events.next())
        DemoOutput.show(await events.next())
        print("   the server recorded the install (event_type=setup): \(server.setups.count)")

        DemoOutput.step("The user taps https://abc123.limelink.org/link/prod-789?ref=mail: resolved to the app's URI")
        client.handle(URL(string: "https://abc123.limelink.org/link/prod-789?ref=mail")!)
        DemoOutput.show(await events.next())
        await simulator.waitForRequests(path: "/api/v1/stats/event", count: 1)
        let stats = server.statsEvents.map { "\($0.eventType) suffix=\($0.suffix)\($0.handle.map { " handle=\($0)" } ?? "")" }
        print("   stats sent after delivery: \(stats.joined(separator: ", "))")

        DemoOutput.step("Events are not part of LimeLink's API")
        print("   client.capabilities: \(client.capabilities); track and trackRevenue would do nothing here")
        await client.shutdown()
    }
}
