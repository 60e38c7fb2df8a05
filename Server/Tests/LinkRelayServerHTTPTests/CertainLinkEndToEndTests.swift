import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayLinkForty
import LinkRelayTesting
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The pasteboard end to end over loopback: the landing page copies the link with its token,
/// the app's first launch reads it through `LinkFortyBackend` unchanged, and the server
/// attributes the install to that click with certainty; the same link on another device is
/// attributed to it as certainly on both sides.
@Suite("End to end: the landing page's link through the pasteboard", .timeLimit(.minutes(1)))
struct CertainLinkEndToEndTests {
    /// The walkthrough's client, reading `pasteboard` on its first launch.
    static func client(port: Int, key: String, network: EndToEndTests.PhoneNetwork, pasteboard: InMemoryPasteboard) throws -> DeepLinkClient
    {
        try EndToEndTests.client(port: port, key: key, network: network) {
            $0.installMarker = nil
            $0.pasteboardCheck = PasteboardCheck(pasteboard: pasteboard)
        }
    }

    @Test(
        "landing page → token → LinkFortyBackend's install with it → attributed, pasteboard, 100, the right link; the token on another device: the same on both sides",
        arguments: TestEngine.available)
    func pasteboardStory(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.store.setLandingPage(project: world.project.id, LandingPageSettings(enabled: true, appName: "Acme Shop"))
            try await world.app().test(.live) { http in
                let port = try #require(http.port)
                try await LinkCreationTests.post(
                    http, "/api/links", key: world.adminKey,
                    [
                        "customCode": "p42", "originalUrl": "https://shop.example/product/42", "appScheme": "shopapp",
                        "deepLinkPath": "/product/42",
                        "iosAppStoreUrl": "https://apps.apple.com/app/id1", "deepLinkParameters": ["productId": "42"],
                    ]
                ) { response, _ in #expect(response.status == .created) }
                // Another link the same phone's network tapped: what a fingerprint would find.
                try await LinkCreationTests.post(
                    http, "/api/links", key: world.adminKey,
                    [
                        "customCode": "other", "originalUrl": "https://shop.example/other",
                        "iosAppStoreUrl": "https://apps.apple.com/app/id1",
                    ]
                ) { response, _ in #expect(response.status == .created) }
                var page = ""
                // Through the proxy, which names the link domain the page was asked on.
                try await RedirectTests.get(
                    http, "/p42?fp_tz=Europe/Berlin&fp_lang=de-DE&fp_sw=1179&fp_sh=2556", userAgent: HTTPTest.safari, ip: "203.0.113.7",
                    headers: [.init("X-Forwarded-Host")!: "127.0.0.1:\(port)"]
                ) { response in page = String(buffer: response.body) }
                let copied = try #require(LandingPageTests.copiedLink(page))
                world.clock.advance(hours: 0.05)
                try await RedirectTests.get(
                    http, "/other?fp_tz=Europe/Berlin&fp_lang=de-DE&fp_sw=1179&fp_sh=2556", userAgent: HTTPTest.safari, ip: "198.51.100.40"
                ) { #expect($0.status == .ok) }

                // The button copied the link; the app is installed and launched.
                let pasteboard = InMemoryPasteboard()
                pasteboard.copy(copied)
                let client = try Self.client(
                    port: port, key: world.sdkKey, network: .init(address: "198.51.100.40"), pasteboard: pasteboard)
                var links = client.deepLinks().makeAsyncIterator()
                await client.start()
                let deferred = try #require(await links.next())
                #expect(deferred.origin == .deferred && deferred.shortCode == "p42" && deferred.pathSegments == ["product", "42"])
                #expect(deferred.url.query == nil, "the token is not the app's: \(deferred.url)")
                guard case .attributed(let link, let attribution) = await client.installOutcome() else {
                    Issue.record("not attributed")
                    return
                }
                #expect(link.shortCode == "p42" && attribution.method == .pasteboard && attribution.confidence?.score == 100)
                let install = try #require(try await world.store.install(project: world.project.id, id: attribution.installID ?? ""))
                #expect(install.method == .pasteboard && install.confidence == 100)
                let p42 = try #require(try await world.store.link(project: world.project.id, shortCode: "p42", templateSlug: nil))
                #expect(install.linkID == p42.id)
                // The tap's click (the app's resolve of the link made one more, as every resolve does).
                let tap = try await world.store.clicks(link: p42.id).first { $0.device.userAgent == HTTPTest.safari }
                #expect(tap != nil && tap?.id == install.clickID)
                #expect(pasteboard.text == nil)
                await client.shutdown()

                // The same copied link on another device of the person's (the pasteboard syncs to
                // their iPad): the app there delivers it as certain, and the server says so too, to
                // the same tap, which had brought the first install. Before, the server stored
                // this install by fingerprint (another link, or organic) while the app said
                // pasteboard.
                let again = InMemoryPasteboard()
                again.copy(copied)
                var iPad = StaticDeviceInfo.iPhone
                iPad.screen = .init(width: 820, height: 1180, scale: 2)
                iPad.deviceModel = "iPad13,18"
                let second = try EndToEndTests.client(port: port, key: world.sdkKey, network: .init(address: "198.51.100.40")) {
                    $0.installMarker = nil
                    $0.pasteboardCheck = PasteboardCheck(pasteboard: again)
                    $0.deviceInfo = StaticDeviceInfo(iPad)
                }
                var secondLinks = second.deepLinks().makeAsyncIterator()
                await second.start()
                #expect(await secondLinks.next()?.shortCode == "p42")
                guard case .attributed(let secondLink, let secondAttribution) = await second.installOutcome() else {
                    Issue.record("the second device's install is not attributed")
                    return
                }
                #expect(secondLink.shortCode == "p42" && secondAttribution.method == .pasteboard)
                let secondID = try #require(secondAttribution.installID)
                #expect(secondID != attribution.installID)
                let stored = try #require(try await world.store.install(project: world.project.id, id: secondID))
                #expect(stored.method == .pasteboard && stored.linkID == p42.id && stored.clickID == tap?.id && stored.confidence == 100)
                #expect(stored.matchedFactors == ["click_token_used"])
                await second.shutdown()
            }
        }
    }
}
