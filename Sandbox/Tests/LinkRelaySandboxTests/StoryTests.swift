import Foundation
import LinkRelay
import LinkRelayLinkForty
import LinkRelaySandbox
import LinkRelaySimulator
import LinkRelayTesting
import Testing

/// Each adapter's whole story over a real socket and URLSession: scripted through the admin API,
/// a web click before install, the first launch with its deferred link, a universal link, the
/// provider's events, and the requests checked on the server side against ../shared/protocols.
@Suite("The four stories over HTTP", .timeLimit(.minutes(1)))
struct StoryTests {
    /// What the first launch and a universal link give, the same for every provider.
    private func firstLaunchAndUniversalLink(
        _ fixture: ProviderFixture, _ harness: SandboxHarness
    ) async throws -> (DeepLinkClient, deferred: DeepLink, universal: DeepLink) {
        try await fixture.script(harness.admin)
        try await harness.admin.recordWebClick(fixture.webClick, on: fixture.provider)
        let client = try harness.client(fixture)
        var links = client.deepLinks().makeAsyncIterator()
        await client.start()
        // The outcome is known once start() returns; only an attributed one brings a link.
        let outcome = await client.installOutcome()
        guard case .attributed(let attributed, _) = outcome else {
            await harness.stop()
            throw DeepLinkError(.notFound, "expected an attributed install, got \(outcome)")
        }
        let deferred = try #require(await links.next())
        #expect(deferred.origin == .deferred)
        #expect(attributed.url == deferred.url)

        client.handle(fixture.universalLink)
        let universal = try #require(await links.next())
        #expect(universal.origin == .universalLink)
        #expect(universal.resolution == .server)
        #expect(universal.destination == fixture.destination)
        #expect(universal.url == fixture.universalLink)
        return (client, deferred, universal)
    }

    @Test("LinkForty: install with the fingerprint, deferred link, resolve with fp_ query, event, link creation")
    func linkForty() async throws {
        let harness = try await SandboxHarness()
        let (client, deferred, universal) = try await firstLaunchAndUniversalLink(.linkForty, harness)
        #expect(deferred.shortCode == "p42")
        #expect(deferred.parameters["productId"] == "42")
        // Core's install answer has no route; the adapter fetched it, so the deferred link
        // routes as the tap on the same link does.
        #expect(deferred.path == universal.path)
        #expect(deferred.destination == universal.destination)
        #expect(deferred.path == "/product/42")
        // The link's own UTM, as the server sent it; the clicked URL's utm_source=newsletter is
        // not taken (linkforty.md §12.3).
        #expect(universal.utm.source == "instagram")

        try await client.track("purchase", properties: ["sku": "A-1", "quantity": 2])
        await client.flushEvents()
        await client.setExternalUserID("user-7")
        let created = try await client.createLink(LinkRequest(deepLinkPath: "/product/42", parameters: ["ref": "user-7"]))
        #expect(created.url.host == "go.sandbox.test")

        let install = try #require(harness.requests("/api/sdk/v1/install").first)
        #expect(install.method == .post)
        #expect(install.headers["Content-Type"] == "application/json")
        #expect(install.headers["Authorization"] == "Bearer lf_sandbox_key")
        let body = try jsonObject(install)
        #expect(body["platform"] == "iOS")
        #expect(body["platformVersion"] == "17.4.1")
        #expect(body["timezone"] == "Europe/Berlin")
        #expect(body["screenWidth"] == 1179)
        #expect(body["screenHeight"] == 2556)
        #expect(body["attributionWindowHours"] == 168)
        #expect(body["userAgent"]?.stringValue?.hasSuffix("iOS/17.4.1") == true)

        // The deferred link's resolve (no fingerprint: it is not a tap), then the tap's.
        let resolves = harness.requests("/api/sdk/v1/resolve/p42")
        #expect(resolves.count == 2)
        #expect(resolves.first?.url.query == nil)
        let resolve = try #require(resolves.last)
        #expect(resolve.method == .get)
        #expect(resolve.url.query == "fp_tz=Europe/Berlin&fp_lang=de_DE&fp_sw=1179&fp_sh=2556&fp_platform=iOS&fp_pv=17.4.1")
        #expect(resolve.headers["Content-Type"] == "application/json")

        let event = try #require(harness.requests("/api/sdk/v1/event").first)
        let eventBody = try jsonObject(event)
        #expect(eventBody["eventName"] == "purchase")
        #expect(eventBody["eventData"] == ["sku": "A-1", "quantity": 2])
        #expect(eventBody["installId"]?.stringValue == harness.sandbox.linkForty.installs.first?.id)
        let received = try await harness.admin.receivedEvents(.linkForty)
        #expect(received == [SandboxAPI.ReceivedEvent(name: "purchase", properties: ["sku": "A-1", "quantity": 2])])

        let creation = try #require(harness.requests("/api/sdk/v1/links").first)
        #expect(creation.method == .post)
        #expect(creation.headers["Authorization"] == "Bearer lf_sandbox_key")
        #expect(try jsonObject(creation)["deepLinkPath"] == "/product/42")
        #expect(harness.sandbox.simulator.requests.allSatisfy { $0.url.host == "go.sandbox.test" })
        await client.shutdown()
        await harness.stop()
    }

    @Test("LimeLink: deferred match by screen and OS, HEAD on the project host, full_request_url byte for byte, stats after delivery")
    func limeLink() async throws {
        let harness = try await SandboxHarness()
        let (client, deferred, universal) = try await firstLaunchAndUniversalLink(.limeLink, harness)
        #expect(deferred.url == ProviderFixture.limeLink.webClick.url)
        #expect(deferred.parameters["ref"] == "a+b")  // a plus stays a plus, as URLComponents reads it
        #expect(universal.shortCode == "p42")
        // Stats go out after delivery, once per resolved link.
        await harness.sandbox.simulator.waitForRequests(path: "/api/v1/stats/event", count: 1)

        let deferredCall = try #require(harness.requests("/api/v1/deferred-deep-link").first)
        #expect(
            deferredCall.url.absoluteString == "https://limelink.org/api/v1/deferred-deep-link?width=393&height=852&user_agent=iOS%2017_4_1"
        )
        let setup = try #require(harness.requests("/api/v1/app/dynamic_link/p42").first)
        #expect(queryItem(setup, "event_type") == "setup")
        #expect(queryItem(setup, "full_request_url") == ProviderFixture.limeLink.webClick.url.absoluteString)

        let head = try #require(harness.sandbox.simulator.requests.first { $0.method == .head })
        #expect(head.url.absoluteString == "https://shop.limelink.org/")
        let resolve = try #require(harness.requests("/api/v1/app/dynamic_link/p42").last)
        #expect(resolve.url.host == "limelink.org")
        #expect(queryItem(resolve, "full_request_url") == ProviderFixture.limeLink.universalLink.absoluteString)
        #expect(resolve.url.absoluteString.contains("ref%3Da%2Bb"))
        // The HEAD's answer is forwarded: the edge saw the request come from the client's IP.
        #expect(resolve.headers["X-Forwarded-For"] == harness.sandbox.simulator.clientIP)
        #expect(resolve.headers["X-Request-ID"] != nil)

        let stats = try await harness.admin.receivedEvents(.limeLink)
        // LimeLink's SDK reads suffix and handle from the uri's path (shopapp://product/42 → "42").
        #expect(stats == [SandboxAPI.ReceivedEvent(name: "first_run", properties: ["suffix": "42", "operating_system": "ios"])])
        let statsCall = try #require(harness.requests("/api/v1/stats/event").first)
        #expect(statsCall.headers["Authorization"] == nil)
        #expect(try jsonObject(statsCall)["private_key"] == "lk_sandbox_key")
        await client.shutdown()
        await harness.stop()
    }

    @Test("Dynalinks: fingerprint match with points, three-part OS and Intl calendar; attribution of the universal link")
    func dynalinks() async throws {
        let harness = try await SandboxHarness()
        let (client, deferred, universal) = try await firstLaunchAndUniversalLink(.dynalinks, harness)
        #expect(deferred.pathSegments == ["product", "42"])
        #expect(universal.pathSegments == ["product", "42"])

        let match = try #require(harness.requests("/api/v1/fingerprints/match").first)
        #expect(match.method == .post)
        #expect(match.url.host == "dynalinks.app")
        #expect(match.headers["Authorization"] == "Bearer dyn_sandbox_key")
        #expect(match.headers["Content-Type"] == "application/json")
        #expect(match.headers["User-Agent"]?.hasPrefix("DynalinksSDK-") == true)
        let body = try jsonObject(match)
        #expect(body["platform"] == "ios")
        guard case .object(let fingerprint)? = body["fingerprint"] else { throw DeepLinkError(.decoding, "no fingerprint object") }
        #expect(fingerprint["screen_width"] == 393)
        #expect(fingerprint["screen_height"] == 852)
        #expect(fingerprint["os_version"] == "17.4.1")
        #expect(fingerprint["calendar"] == "gregory")
        #expect(fingerprint["language"] == "de-DE")
        #expect(fingerprint["device_pixel_ratio"] == 3)
        #expect(fingerprint["simulator"] == false)

        let attribute = try #require(harness.requests("/api/v1/links/attribute").first)
        #expect(attribute.method == .post)
        #expect(try jsonObject(attribute)["url"] == .string(ProviderFixture.dynalinks.universalLink.absoluteString))
        #expect(try await harness.admin.receivedEvents(.dynalinks).isEmpty)
        await client.shutdown()
        await harness.stop()
    }

    @Test(
        "Paylisher: fingerprint match with a bearer key, short link resolved on its own host, lifecycle and tracked events gzipped to /batch"
    )
    func paylisher() async throws {
        let harness = try await SandboxHarness()
        // Batched as Paylisher's SDK batches, at 4 waiting here and never on a timer: the match,
        // two "Deep Link Opened" (the deferred link, the universal link) and the purchase go in
        // one request, whatever order the lifecycle events are queued in.
        let fixture = ProviderFixture.paylisher(batching: EventBatching(flushAt: 4, flushInterval: .infinity))
        let (client, deferred, _) = try await firstLaunchAndUniversalLink(fixture, harness)
        // Paylisher's SDK adds the campaign key to the matched link.
        #expect(deferred.parameters == ["color": "red", "keyName": "p42"])
        try await client.track("purchase", properties: ["sku": "A-1"])
        await harness.sandbox.simulator.waitForRequests(path: "/batch", count: 1)
        await client.flushEvents()

        let match = try #require(harness.requests("/v1/deferred-deeplink").first)
        #expect(match.url.host == "link.paylisher.com")
        #expect(match.headers["Authorization"] == "Bearer phc_sandbox_key")
        #expect(match.headers["X-Device-Platform"] == "ios")
        #expect(queryItem(match, "fingerprint")?.count == 64)
        let resolve = try #require(harness.requests("/resolve/p42").first)
        #expect(resolve.method == .get)
        #expect(resolve.url.host == "link.paylisher.com")

        let batches = harness.requests("/batch")
        #expect(batches.count == 1)
        #expect(
            batches.allSatisfy {
                $0.url.host == "us.i.paylisher.com" && $0.headers["Content-Encoding"] == "gzip" && $0.body?.prefix(2) == Data([0x1f, 0x8b])
            })
        let names = try await harness.admin.receivedEvents(.paylisher).map(\.name)
        #expect(names.contains("Deferred Deep Link Match"))
        #expect(names.contains("Deep Link Opened"))
        #expect(names.filter { $0 == "purchase" }.count == 1)
        #expect(names.count == 4)
        await client.shutdown()
        await harness.stop()
    }

    private func jsonObject(_ request: HTTPRequest) throws -> [String: JSONValue] {
        let value = try JSONDecoder().decode(JSONValue.self, from: try #require(request.body))
        guard case .object(let object) = value else { throw DeepLinkError(.decoding, "not a JSON object") }
        return object
    }

    private func queryItem(_ request: HTTPRequest, _ name: String) -> String? {
        URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }
}
