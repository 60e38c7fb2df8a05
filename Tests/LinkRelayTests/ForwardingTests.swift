import Foundation
import LinkRelay
import LinkRelayTesting
import Testing

/// The rules behind the SwiftUI modifier and the UIKit delegate helpers, which only translate
/// UIKit's types into `IncomingLink`.
@Suite("Forwarding what the system hands the app", .timeLimit(.minutes(1)))
struct ForwardingTests {
    private func client() -> DeepLinkClient {
        makeClient(LocalBackend(.init(schemes: ["acme"], hosts: ["go.acme.app"])))
    }

    @Test("only a web-browsing activity with a URL carries a link")
    func activities() {
        #expect(
            IncomingLink.activity(type: "NSUserActivityTypeBrowsingWeb", webpageURL: url("https://go.acme.app/p/1")).link
                == url("https://go.acme.app/p/1"))
        #expect(IncomingLink.activity(type: "NSUserActivityTypeBrowsingWeb", webpageURL: nil).link == nil)
        #expect(IncomingLink.activity(type: "com.acme.viewing-product", webpageURL: url("https://go.acme.app/p/1")).link == nil)
        #expect(IncomingLink.url(url("acme://cart")).link == url("acme://cart"))
    }

    @Test("a claimed URL or activity is delivered; others are left for the next handler")
    func claims() async throws {
        let client = client()
        let links = client.deepLinks()
        #expect(client.forward(.activity(type: IncomingLink.browsingWebActivityType, webpageURL: url("https://go.acme.app/p/1"))))
        #expect(!client.forward(.url(url("https://other.example/x"))))
        #expect(!client.forward(.activity(type: "com.acme.handoff", webpageURL: url("https://go.acme.app/p/2"))))
        #expect(client.forward(.url(url("acme://cart"))))
        let delivered = await links.prefixArray(2)
        #expect(delivered.map(\.url) == [url("https://go.acme.app/p/1"), url("acme://cart")])
        await client.shutdown()
    }

    @Test("a cold start's URL contexts and activities: each claim reported in order, all claimed ones delivered in order")
    func coldStart() async throws {
        let client = client()
        let claimed = client.forward([
            .url(url("acme://orders/7")), .url(url("other://x")),
            .activity(type: IncomingLink.browsingWebActivityType, webpageURL: url("https://go.acme.app/p/3")),
            .activity(type: "com.acme.handoff", webpageURL: nil),
        ])
        #expect(claimed == [true, false, true, false])
        // Delivered although nobody listened yet: held for the first subscriber.
        let delivered = await client.deepLinks().prefixArray(2)
        #expect(delivered.map(\.pathSegments) == [["orders", "7"], ["p", "3"]])
        await client.shutdown()
    }
}
