import Foundation
import LinkRelay

/// Part one of linkrelay-demo: a short scripted session with LocalBackend, the backend that
/// needs no provider. Every step hands the client a URL as an app's entry points would, then
/// prints the events it delivers, in step with the script.
enum LocalDemo {
    static func run() async {
        let backend = LocalBackend(.init(schemes: ["acme"], hosts: ["go.acme.app"]))
        var configuration = DemoOutput.configuration()
        configuration.authenticationRequiredPaths = ["wallet"]
        let client = DeepLinkClient(backend: backend, configuration: configuration)

        print("LinkRelay demo (--local): LocalBackend claiming acme:// and https://go.acme.app")

        DemoOutput.step("Cold start: the system hands over a link before anybody listens")
        client.handle(URL(string: "acme://products/42?utm_source=newsletter")!)
        print("   handle() returned at once; nobody is subscribed yet")

        DemoOutput.step("The app subscribes: the held link arrives first")
        var events = client.linkEvents().makeAsyncIterator()
        DemoOutput.show(await events.next())

        DemoOutput.step("A universal link")
        client.handle(URL(string: "https://go.acme.app/products/7?color=red&utm_campaign=spring")!)
        DemoOutput.show(await events.next())

        DemoOutput.step("The same launch URL from the AppDelegate and the SceneDelegate")
        let launch = URL(string: "acme://cart")!
        client.handle(launch)
        client.handle(launch)
        DemoOutput.show(await events.next())
        print("   (the second hand-over is the same link: no second event follows)")

        DemoOutput.step("A link behind sign-in (wallet is configured as gated)")
        client.handle(URL(string: "acme://wallet/cards")!)
        DemoOutput.show(await events.next())
        print("   … the user signs in …")
        await client.completePendingLink()
        DemoOutput.show(await events.next())

        DemoOutput.step("A link whose destination would run script")
        client.handle(URL(string: "https://go.acme.app/promo?link=javascript:alert(1)")!)
        DemoOutput.show(await events.next())

        DemoOutput.step("A link with an allowed destination")
        client.handle(URL(string: "https://go.acme.app/promo?link=https%3A%2F%2Fshop.acme.app%2Fspring")!)
        DemoOutput.show(await events.next())

        DemoOutput.step("Not our link: handle() says so, so another handler can take it")
        print("   handle(https://example.com/x) = \(client.handle(URL(string: "https://example.com/x")!))")

        await client.shutdown()
        DemoOutput.step("Shut down")
        DemoOutput.show(await events.next())
    }
}
