import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import Testing

/// The four emulations record a browser tap the same way (`recordWebClick(url:from:ip:at:)`),
/// and none of them takes a click on a link it does not have in silence.
@Suite("Web clicks read alike on every emulation")
struct WebClickTests {
    let simulator = ProviderSimulator(clock: ManualClock())
    let device = StaticDeviceInfo.iPhone

    /// Each emulation that finds its link from the URL, with one link, the link's URL, and a URL
    /// of the same shape it does not have (Paylisher's own test is below).
    func emulations() -> [(name: String, emulation: any WebClickRecording, known: URL, unknown: URL)] {
        let linkForty = simulator.addLinkForty(host: "go.acme.app")
        linkForty.createLink(shortCode: "spring", deepLinkPath: "/products/42")
        let limeLink = simulator.addLimeLink(apiKey: "lk_test")
        limeLink.createLink(project: "abc123", suffix: "summer-sale", uri: "abc123app://promo/summer")
        let dynalinks = simulator.addDynalinks(clientAPIKey: "dyn_test", projectHost: "acme.dynalinks.app")
        dynalinks.createLink(path: "/product/shoes", shortenedPath: "x7Gq2", url: "https://acme.example/product/shoes")
        return [
            ("LinkForty", linkForty, URL(string: "https://go.acme.app/spring")!, URL(string: "https://go.acme.app/sprung")!),
            (
                "LimeLink", limeLink, URL(string: "https://abc123.limelink.org/link/summer-sale")!,
                URL(string: "https://abc123.limelink.org/link/winter-sale")!
            ),
            (
                "Dynalinks", dynalinks, URL(string: "https://acme.dynalinks.app/x7Gq2")!,
                URL(string: "https://acme.dynalinks.app/product/boots")!
            ),
        ]
    }

    @Test("a click on a link the emulation has is recorded; on one it does not have, a typed error names both")
    func knownAndUnknown() throws {
        for (name, emulation, known, unknown) in emulations() {
            try emulation.recordWebClick(url: known, from: device)
            let error = #expect(throws: UnknownLinkError.self) { try emulation.recordWebClick(url: unknown, from: device) }
            #expect(error == UnknownLinkError(provider: name, url: unknown))
            #expect(error?.description == "The \(name) emulation has no link for \(unknown.absoluteString).")
        }
    }

    @Test("the address and time given are the click's; by default the simulator's client address")
    func addressAndTime() throws {
        let linkForty = simulator.addLinkForty(host: "go.acme.app")
        linkForty.createLink(shortCode: "spring")
        let limeLink = simulator.addLimeLink(apiKey: "lk_test")
        limeLink.createLink(project: "abc123", suffix: "summer-sale", uri: "abc123app://promo/summer")
        let date = Date(timeIntervalSince1970: 1_800_000_000)

        try linkForty.recordWebClick(url: URL(string: "https://go.acme.app/spring")!, from: device, ip: "198.51.100.23", at: date)
        try linkForty.recordWebClick(url: URL(string: "https://go.acme.app/spring")!, from: device)
        #expect(linkForty.clicks.map(\.fingerprint.ip) == ["198.51.100.23", simulator.clientIP])
        #expect(linkForty.clicks.first?.clickedAt == date)

        try limeLink.recordWebClick(
            url: URL(string: "https://abc123.limelink.org/link/summer-sale")!, from: device, ip: "198.51.100.23", at: date)
        #expect(limeLink.clicks.map(\.ip) == ["198.51.100.23"])
        #expect(limeLink.clicks.map(\.clickedAt) == [date])
    }

    @Test("Paylisher: any app URL without a campaign; a campaign key it does not have is refused")
    func paylisherCampaigns() throws {
        let paylisher = simulator.addPaylisher(apiKey: "phc_test")
        paylisher.createCampaign(keyName: "SUMMER", scheme: "diyetim://products/42")
        let appURL = URL(string: "diyetim://products/42?color=red")!
        try paylisher.recordWebClick(url: appURL, from: device)
        try paylisher.recordWebClick(url: appURL, campaignKey: "SUMMER", from: device)
        let error = #expect(throws: UnknownLinkError.self) {
            try paylisher.recordWebClick(url: appURL, campaignKey: "WINTER", from: device)
        }
        #expect(error?.provider == "Paylisher")
    }
}
