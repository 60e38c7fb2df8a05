import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

@Suite("Output reads like Swift")
struct DescriptionTests {
    static let link = DeepLink(
        url: URL(string: "https://go.acme.app/p42")!, origin: .universalLink, provider: "linkforty", resolution: .server,
        destination: URL(string: "acme://products/42")!, pathSegments: ["p42"])

    @Test("a link prints as its URL, provider and resolution; the full dump stays in debugDescription")
    func link() {
        #expect("\(Self.link)" == "https://go.acme.app/p42 (linkforty, resolved by the server)")
        var local = Self.link
        local.resolution = .local(.timedOut)
        local.origin = .deferred
        #expect("\(local)" == "https://go.acme.app/p42 (linkforty, deferred, parsed on the device: the provider timed out)")
        local.resolution = .local(.failed(DeepLinkError(.server(status: 401), "no", status: 401)))
        #expect("\(local)" == "https://go.acme.app/p42 (linkforty, deferred, parsed on the device: the provider failed with server(401))")
        local.resolution = .local(.onDevice)
        #expect("\(local)".hasSuffix("parsed on the device by design)"))
        let debug = String(reflecting: Self.link)
        #expect(debug.hasPrefix("DeepLink(id: "))
        #expect(debug.contains("destination: Optional(acme://products/42)"))
        #expect("\(Self.link)".count < 80)
    }

    @Test("a routed link prints as its route and its link's short description")
    func routedLink() {
        enum Route: Sendable { case product(id: Int) }
        let matched = RoutedLink<Route>.matched(.product(id: 42), Self.link)
        #expect("\(matched)" == "product(id: 42) ← https://go.acme.app/p42 (linkforty, resolved by the server)")
        #expect("\(RoutedLink<Route>.unmatched(Self.link))" == "unmatched: https://go.acme.app/p42 (linkforty, resolved by the server)")
        #expect(!"\(matched)".contains("pathSegments"))
    }

    @Test("an outcome prints as its case and what matters")
    func outcomes() {
        let attribution = InstallAttribution(
            installID: "inst-1", isAttributed: true, confidence: .init(score: 90), matchedFactors: ["ip"], method: .fingerprint)
        #expect(
            "\(InstallOutcome.attributed(Self.link, attribution))"
                == "attributed to https://go.acme.app/p42 (linkforty, resolved by the server); fingerprint match, confidence 90 (high), install id inst-1"
        )
        #expect("\(InstallOutcome.organic(.organic(installID: "i")))" == "organic; install id i")
        #expect("\(InstallOutcome.organic(nil))" == "organic")
        #expect("\(InstallOutcome.timedOut)" == "timed out")
        #expect("\(InstallOutcome.existingUser(nil))" == "existing user, no install match")
        #expect("\(InstallOutcome.failed(DeepLinkError(.network, "offline")))" == "failed: DeepLinkError.network: offline")
        var withoutLink = attribution
        withoutLink.linkID = "l-9"
        #expect("\(InstallOutcome.attributedWithoutLink(withoutLink))".hasPrefix("attributed to link l-9, with nothing to open;"))
        #expect(String(reflecting: InstallOutcome.timedOut) == "InstallOutcome.timedOut")
    }

    @Test("events print as what happened")
    func events() {
        #expect("\(DeepLinkEvent.link(Self.link))" == "link https://go.acme.app/p42 (linkforty, resolved by the server)")
        #expect("\(DeepLinkEvent.install(.timedOut))" == "install timed out")
        #expect("\(DeepLinkEvent.authenticationRequired(Self.link))".hasPrefix("sign-in required for https://go.acme.app/p42"))
        #expect("\(DeepLinkEvent.failure(DeepLinkError(.network, "offline")))" == "failure DeepLinkError.network: offline")
    }
}
