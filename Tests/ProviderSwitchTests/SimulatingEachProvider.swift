// swift-format-ignore-file
// (this file is the article "Testing in Detail" word for word, its comments aligned as the article shows them)
// The "Simulating each provider" examples of Testing in Detail, exactly as the article shows
// them (DocumentationExampleTests checks that this file and the article agree), so the article's
// tests run here as well as compile in .ci/snippets.

import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelaySimulator
import LinkRelayTesting
import Testing

/// The first launch's client: the adapter, the simulator as its network, a fresh install.
func firstLaunch(_ backend: some DeepLinkBackend, on simulator: ProviderSimulator) -> DeepLinkClient {
    var configuration = DeepLinkClient.Configuration(store: InMemoryStore(), clock: simulator.clock, transport: simulator)
    configuration.deviceInfo = StaticDeviceInfo(StaticDeviceInfo.iPhone)
    return DeepLinkClient(backend: backend, configuration: configuration)
}

@Test func linkFortyDeferredLink() async throws {
    let simulator = ProviderSimulator(clock: ManualClock())
    let linkForty = simulator.addLinkForty(host: "go.acme.app")
    linkForty.createLink(shortCode: "spring", deepLinkPath: "/products/42", deepLinkParameters: ["discount": 20])
    try linkForty.recordWebClick(url: URL(string: "https://go.acme.app/spring")!, from: StaticDeviceInfo.iPhone)

    let client = firstLaunch(LinkFortyBackend(try .init(baseURL: URL(string: "https://go.acme.app")!)), on: simulator)
    await client.start()
    guard case .attributed(let link, _) = await client.installOutcome() else { Issue.record("not attributed"); return }
    #expect(link.pathSegments == ["products", "42"])       // the link's route, as its universal link gives it
    #expect(link.parameters["discount"] == "20")
    #expect(linkForty.installs.count == 1)                  // what LinkForty received
}

@Test func limeLinkDeferredLink() async throws {
    let simulator = ProviderSimulator(clock: ManualClock())
    let limeLink = simulator.addLimeLink(apiKey: "lk_test")
    limeLink.createLink(project: "abc123", suffix: "summer-sale", uri: "abc123app://promo/summer")
    try limeLink.recordWebClick(
        url: URL(string: "https://abc123.limelink.org/link/summer-sale?utm_source=google")!, from: StaticDeviceInfo.iPhone)

    let client = firstLaunch(LimeLinkBackend(try .init(apiKey: "lk_test", appSchemes: ["abc123app"])), on: simulator)
    await client.start()
    guard case .attributed(let link, _) = await client.installOutcome() else { Issue.record("not attributed"); return }
    #expect(link.shortCode == "summer-sale")
    #expect(link.parameters["utm_source"] == "google")
    #expect(limeLink.clicks.allSatisfy { $0.consumed })      // each click matches once
}

@Test func dynalinksDeferredLink() async throws {
    let simulator = ProviderSimulator(clock: ManualClock())
    let dynalinks = simulator.addDynalinks(clientAPIKey: "dyn_test", projectHost: "acme.dynalinks.app")
    dynalinks.createLink(path: "/product/shoes", url: "https://acme.example/product/shoes?color=red")
    try dynalinks.recordWebClick(url: URL(string: "https://acme.dynalinks.app/product/shoes")!, from: StaticDeviceInfo.iPhone)

    let client = firstLaunch(DynalinksBackend(try .init(apiKey: "dyn_test", linkDomains: ["acme.dynalinks.app"])), on: simulator)
    await client.start()
    guard case .attributed(let link, _) = await client.installOutcome() else { Issue.record("not attributed"); return }
    #expect(link.pathSegments == ["product", "shoes"])
    #expect(link.parameters["color"] == "red")
    #expect(dynalinks.matchRequests.count == 1)             // the fingerprint the adapter sent
}

@Test func paylisherDeferredLink() async throws {
    let simulator = ProviderSimulator(clock: ManualClock())
    let paylisher = simulator.addPaylisher(apiKey: "phc_test")
    paylisher.createCampaign(keyName: "SUMMER", title: "Summer Sale", scheme: "diyetim://products/42")
    try paylisher.recordWebClick(
        url: URL(string: "diyetim://products/42?color=red")!, campaignKey: "SUMMER", from: StaticDeviceInfo.iPhone)

    let client = firstLaunch(PaylisherBackend(try .init(apiKey: "phc_test", appSchemes: ["diyetim"])), on: simulator)
    await client.start()
    guard case .attributed(let link, _) = await client.installOutcome() else { Issue.record("not attributed"); return }
    #expect(link.pathSegments == ["products", "42"])
    #expect(link.campaign?.key == "SUMMER")
    try await client.track("signup", properties: ["plan": "pro"])
    await client.flushEvents()
    #expect(paylisher.events.contains { $0.event == "signup" })   // what Paylisher's /batch received
}
