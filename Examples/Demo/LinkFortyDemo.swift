import Foundation
import LinkRelay
import LinkRelayLinkForty
import LinkRelaySimulator
import LinkRelayTesting

/// The LinkForty story: a web click before install, the first launch with its deferred link,
/// links while the app runs, an event through an outage, a share link, and a second launch.
/// LinkForty's server is `LinkRelaySimulator`'s emulation of LinkForty Core; the phone is a
/// `StaticDeviceInfo` iPhone, since this machine has no screen to fingerprint.
enum LinkFortyDemo {
    static func run() async throws {
        let simulator = ProviderSimulator()
        let server = simulator.addLinkForty(host: "go.acme.app")
        server.createLink(
            shortCode: "spring", originalURL: "https://acme.example/sale", deepLinkPath: "/sale/spring", appScheme: "acmeshop",
            utmParameters: ["source": "instagram", "campaign": "spring_sale"], deepLinkParameters: ["route": "sale", "discount": 20])
        server.createLink(
            shortCode: "Xk9_2bQz", templateSlug: "k3m9x2qa", originalURL: "https://acme.example/products/42",
            deepLinkPath: "/product/42", appScheme: "acmeshop")
        let phone = StaticDeviceInfo()
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("linkrelay-demo-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        func launch() throws -> DeepLinkClient {
            var configuration = DemoOutput.configuration()
            configuration.transport = simulator
            configuration.store = FileStore(directory: folder)
            configuration.deviceInfo = phone
            configuration.retryPolicy = RetryPolicy(maximumAttempts: 2, initialBackoff: 0.05)
            let backend = LinkFortyBackend(
                try .init(
                    baseURL: URL(string: "https://go.acme.app")!, apiKey: "lf_live_demo_key", appSchemes: ["acmeshop"],
                    appName: "Acme Shop"))
            return DeepLinkClient(backend: backend, configuration: configuration)
        }

        print("LinkRelay demo: LinkForty, over LinkRelay's simulator of LinkForty Core at https://go.acme.app")

        DemoOutput.step("Before installing, the user taps https://go.acme.app/spring in Instagram")
        try server.recordWebClick(url: URL(string: "https://go.acme.app/spring")!, from: phone.info, ip: "198.51.100.23")
        print("   the server records the click with the phone's time zone, language, screen and IP")

        DemoOutput.step("First launch: start() reports the install once; the deferred link arrives through for await")
        simulator.clientIP = "198.51.100.77"
        let first = try launch()
        var events = first.linkEvents().makeAsyncIterator()
        await first.start()
        DemoOutput.show(await events.next())
        DemoOutput.show(await events.next())

        DemoOutput.step("A universal link, resolved by the server to the in-app route")
        first.handle(URL(string: "https://go.acme.app/k3m9x2qa/Xk9_2bQz?utm_source=newsletter")!)
        DemoOutput.show(await events.next())

        DemoOutput.step("A custom-scheme link: already the route, no request")
        first.handle(URL(string: "acmeshop://cart?coupon=SPRING")!)
        DemoOutput.show(await events.next())

        DemoOutput.step("A link LinkForty does not know: still delivered, parsed on the device")
        first.handle(URL(string: "https://go.acme.app/nope1234?ref=friend")!)
        DemoOutput.show(await events.next())

        DemoOutput.step("A purchase while the server is unreachable")
        simulator.isReachable = false
        do {
            try await first.trackRevenue(amount: Decimal(string: "29.99")!, currency: "USD", properties: ["sku": "A-1"])
        } catch {
            print("   track failed: \(error)")
        }
        await first.flushEvents()
        print("   queued: \(await first.queuedEventCount); received by the server: \(server.events.count)")
        simulator.isReachable = true
        await first.flushEvents()
        let received = server.events.map { "\($0.name) \(DemoOutput.describe($0.data))" }.joined(separator: ", ")
        print("   server back: queued \(await first.queuedEventCount); received: \(received)")

        DemoOutput.step("The user shares a product")
        await first.setExternalUserID("user-7")
        do {
            let created = try await first.createLink(LinkRequest(deepLinkPath: "/product/42", parameters: ["ref": "user-7"]))
            print("   share link: \(created.url.absoluteString)")
        } catch {
            print("   link creation failed: \(error)")
        }
        await first.shutdown()

        DemoOutput.step("Second launch, on the same files")
        let second = try launch()
        await second.start()
        print("   outcome restored: \(DemoOutput.describe(await second.installOutcome()))")
        print("   install reports the server received in both launches: \(server.installs.count)")
        await second.shutdown()
    }
}
