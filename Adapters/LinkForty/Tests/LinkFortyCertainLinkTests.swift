import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import Testing

@testable import LinkRelayLinkForty

/// A certain link (here, the pasteboard's) with LinkForty: the adapter sends its click token in
/// the install body, and LinkForty Core, whose schema strips unknown keys, answers as it
/// always does; the app gets the tapped link, not Core's fingerprint guess.
@Suite("LinkForty and a certain deferred link", .timeLimit(.minutes(1)))
struct LinkFortyCertainLinkTests {
    @Test("the click token goes in the install body; Core ignores it and names the install; the tapped link is delivered, not Core's match")
    func clickTokenAgainstCore() async throws {
        let clock = ManualClock()
        let simulator = ProviderSimulator(clock: clock)
        let server = simulator.addLinkForty(host: "go.acme.app")
        server.createLink(
            shortCode: "spring", originalURL: "https://acme.example/spring", deepLinkPath: "/sale/spring", appScheme: "acmeshop")
        server.createLink(
            shortCode: "summer", originalURL: "https://acme.example/summer", deepLinkPath: "/sale/summer", appScheme: "acmeshop")
        // The phone's browser opened "summer" earlier: Core's fingerprint would pick it.
        try server.recordWebClick(url: url("https://go.acme.app/summer"), from: newYorkPhone, ip: "198.51.100.23", at: clock.currentDate)
        clock.advance(by: 60)
        simulator.clientIP = "198.51.100.23"
        // The user then tapped "spring"'s landing page button, which copied the link.
        let pasteboard = InMemoryPasteboard()
        pasteboard.copy("https://go.acme.app/spring?lr_click=k7Qp2xVb9mT4wZ8rLc3nHs6dYf1gJa5e")

        var configuration = simulatorConfiguration(simulator, clock: clock)
        configuration.pasteboardCheck = PasteboardCheck(pasteboard: pasteboard)
        let client = DeepLinkClient(
            backend: LinkFortyBackend(try .init(baseURL: url("https://go.acme.app"), apiKey: "lf_live_key", appSchemes: ["acmeshop"])),
            configuration: configuration)
        let links = client.deepLinks()
        var iterator = links.makeAsyncIterator()
        await client.start()

        let deferred = try #require(await iterator.next())
        #expect(deferred.origin == .deferred && deferred.shortCode == "spring")
        #expect(deferred.url == url("https://go.acme.app/spring"))
        guard case .attributed(let link, let attribution) = await client.installOutcome() else {
            Issue.record("expected an attributed install")
            return
        }
        #expect(link.shortCode == "spring" && attribution.method == .pasteboard && attribution.confidence?.score == 100)
        // Core took the body (no 500 from its schema) and named the install, which events use.
        let install = try #require(server.installs.first)
        #expect(server.installs.count == 1 && attribution.installID == install.id)
        // Core matched its own guess, "summer", and the app did not get it.
        #expect(install.match != nil)
        let body = try #require(simulator.requests.first { $0.url.path == "/api/sdk/v1/install" }?.body)
        let sent = try JSONDecoder().decode([String: JSONValue].self, from: body)
        #expect(sent["clickToken"] == .string("k7Qp2xVb9mT4wZ8rLc3nHs6dYf1gJa5e"))
        #expect(pasteboard.text == nil)
    }
}
