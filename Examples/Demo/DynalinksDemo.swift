import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelaySimulator
import LinkRelayTesting

/// The Dynalinks story: a web click, a direct link that opens the app first (its attribution
/// fails), and the deferred check that still runs and reports the match.
enum DynalinksDemo {
    static func run() async throws {
        let simulator = ProviderSimulator()
        let server = simulator.addDynalinks(clientAPIKey: "dyn_demo_key", projectHost: "acme.dynalinks.app")
        server.createLink(
            path: "/product/shoes", shortenedPath: "Ab3xQ9", url: "https://acme.example/product/shoes?color=red",
            name: "Spring shoes", referrer: "utm_source=facebook&utm_campaign=spring")
        let phone = StaticDeviceInfo()

        var configuration = DemoOutput.configuration()
        configuration.transport = simulator
        configuration.store = InMemoryStore()
        configuration.deviceInfo = phone
        configuration.retryPolicy = .none
        let client = DeepLinkClient(
            backend: DynalinksBackend(try .init(apiKey: "dyn_demo_key", linkDomains: ["acme.dynalinks.app"])),
            configuration: configuration)

        print("\n\nLinkRelay demo: Dynalinks, over LinkRelay's simulator of Dynalinks' API")

        DemoOutput.step("Before installing, the user visits https://acme.dynalinks.app/product/shoes")
        try server.recordWebClick(url: URL(string: "https://acme.dynalinks.app/product/shoes")!, from: phone.info, ip: simulator.clientIP)
        print("   the page records screen, pixel ratio, OS version, time zone, language and calendar")

        DemoOutput.step("First launch, opened by a link while Dynalinks' API has a hiccup")
        simulator.setFault(.status(500, body: #"{"error":"Internal server error"}"#), path: "/api/v1/links/attribute")
        var events = client.linkEvents().makeAsyncIterator()
        client.handle(URL(string: "https://acme.dynalinks.app/product/shoes?ref=push")!)
        await client.start()
        var link: DeepLinkEvent?
        repeat {
            link = await events.next()
            DemoOutput.show(link)
        } while link?.link == nil && link != nil
        print("   the deferred check still ran (\(server.matchRequests.count) request; Dynalinks' SDK skips it after any link)")
        print("   and the match is reported, not delivered on top of the link that opened the app")

        DemoOutput.step("Later, another link, with the API back")
        simulator.clearFaults()
        client.handle(URL(string: "https://acme.dynalinks.app/Ab3xQ9")!)
        DemoOutput.show(await events.next())
        await client.shutdown()
    }
}
