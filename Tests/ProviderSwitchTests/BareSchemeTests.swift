import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelaySimulator
import LinkRelayTesting
import Testing

/// `acme:` and `acme://` are what a QR code or another app opens to launch the app with nothing
/// more: a link to the app's start, delivered like any other, on every backend.
@Suite("A bare app-scheme URL is a link", .timeLimit(.minutes(1)))
struct BareSchemeTests {
    static func backends() throws -> [any DeepLinkBackend] {
        [
            LocalBackend(.init(schemes: ["acme"])),
            LinkFortyBackend(try .init(baseURL: URL(string: "https://go.acme.app")!, appSchemes: ["acme"])),
            LimeLinkBackend(try .init(apiKey: "lk", appSchemes: ["acme"])),
            DynalinksBackend(try .init(apiKey: "dyn", linkDomains: ["acme.dynalinks.app"], appSchemes: ["acme"])),
            PaylisherBackend(try .init(apiKey: "phc", appSchemes: ["acme"], linkDomains: ["acme.example"])),
        ]
    }

    @Test("acme:, acme://, acme:/ and ACME: are delivered, with no path segments", arguments: ["acme:", "acme://", "acme:/", "ACME:"])
    func bare(_ text: String) async throws {
        for backend in try Self.backends() {
            let simulator = ProviderSimulator(clock: ManualClock())
            var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: simulator.clock, transport: simulator)
            configuration.retryPolicy = .none
            let client = DeepLinkClient(backend: backend, configuration: configuration)
            var events = client.linkEvents().makeAsyncIterator()
            guard client.handle(try #require(URL(string: text))) else {
                Issue.record("\(text) is not taken by \(backend.id)")
                await client.shutdown()
                continue
            }
            let event = await events.next()
            guard case .link(let link)? = event else {
                Issue.record("\(text) on \(backend.id): \(String(describing: event))")
                await client.shutdown()
                continue
            }
            #expect(link.pathSegments == [], "\(backend.id)")
            #expect(link.origin == .customScheme, "\(backend.id)")
            await client.shutdown()
        }
    }
}
