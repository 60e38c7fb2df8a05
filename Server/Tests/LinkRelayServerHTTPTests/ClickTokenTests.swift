import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import Logging
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The landing page's click tokens: an install reporting one is attributed to its click with
/// certainty; a used one still names its link; a refused one says why.
@Suite("Click tokens")
struct ClickTokenTests {
    /// The link `spring` with the landing page on, and `summer` beside it (no scheme).
    static func springWithPage(_ world: ServerWorld, window: Int = 168) async throws -> LinkRecord {
        var spring = try await world.link("spring", window: window)
        spring.landingPage = true
        #expect(try await world.store.updateLink(spring))
        try await world.link("summer", scheme: nil)
        return spring
    }

    /// A Safari tap on `spring` (its page's token returned), then, from the install's own
    /// address, one on `summer`: the fingerprint's pick; the clock 0.2 hours on.
    static func tapSpringThenSummer(_ client: some TestClientProtocol, _ world: ServerWorld) async throws -> String {
        var page = ""
        try await RedirectTests.get(client, "/spring" + LandingPageTests.tap, userAgent: HTTPTest.safari, ip: "203.0.113.50") {
            page = String(buffer: $0.body)
        }
        let token = try #require(LandingPageTests.token(page))
        world.clock.advance(hours: 0.1)
        try await RedirectTests.get(client, "/summer" + LandingPageTests.tap, userAgent: HTTPTest.safari, ip: "198.51.100.99") {
            #expect($0.status == .found)
        }
        world.clock.advance(hours: 0.1)
        return token
    }

    @Test("an install with the token: attributed to that click at 100, method pasteboard, the right link", arguments: TestEngine.available)
    func tokenAttribution(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let spring = try await Self.springWithPage(world)
            try await world.app().test(.live) { client in
                let token = try await Self.tapSpringThenSummer(client, world)

                let first = try await LandingPageTests.install(client, key: world.sdkKey, token: token)
                #expect(first["attributed"] == true && first["attributionMethod"] == "pasteboard" && first["confidenceScore"] == 100)
                #expect(first["clickToken"] == "accepted" && first["matchedFactors"] == ["click_token"])
                guard case .object(let data)? = first["deepLinkData"] else { Issue.record("no deepLinkData"); return }
                #expect(data["shortCode"] == "spring" && data["linkId"] == .string(spring.id) && data["deepLinkPath"] == "/product/42")
                let clicks = try await world.store.clicks(link: spring.id)
                #expect(data["clickId"] == clicks.first.map { .string($0.id) })
                let stored = try await world.store.install(project: world.project.id, id: first["installId"]?.stringValue ?? "")
                #expect(stored?.method == .pasteboard && stored?.clickID == clicks.first?.id && stored?.confidence == 100)
            }
        }
    }

    @Test(
        "a used token: the same install reporting again gets its install back, nothing stored; another device holding the link is attributed to it too, and past the window it is not",
        arguments: TestEngine.available)
    func usedToken(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let spring = try await Self.springWithPage(world, window: 24)
            try await world.app().test(.live) { client in
                let token = try await Self.tapSpringThenSummer(client, world)
                let click = try #require(try await world.store.clicks(link: spring.id).first)
                let first = try await LandingPageTests.install(client, key: world.sdkKey, token: token)
                #expect(first["clickToken"] == "accepted")
                let installs = { try await world.store.installs(project: world.project.id, link: nil, limit: 100) }
                #expect(try await installs().count == 1)

                // Its answer was lost; the app sends the same report on its next launch, from
                // another network. Before, that was a second install, matched by fingerprint
                // to summer, while the app delivered spring as certain and kept the second id.
                world.clock.advance(hours: 1)
                let again = try await LandingPageTests.install(client, key: world.sdkKey, token: token, ip: "192.0.2.44")
                #expect(again["installId"] == first["installId"] && again["clickToken"] == "accepted")
                #expect(again["attributionMethod"] == "pasteboard" && again["deepLinkData"] == first["deepLinkData"])
                #expect(try await installs().count == 1)

                // The link reached another device too (the pasteboard syncs across a person's
                // devices): the app there holds it and delivers it as certain, and so does the
                // server now, to the same link and click, saying the tap was counted before.
                let other = try await LandingPageTests.install(client, key: world.sdkKey, token: token, screenWidth: 820)
                #expect(other["installId"] != first["installId"] && other["clickToken"] == "used")
                #expect(other["attributed"] == true && other["attributionMethod"] == "pasteboard" && other["confidenceScore"] == 100)
                #expect(other["matchedFactors"] == ["click_token_used"])
                guard case .object(let data)? = other["deepLinkData"] else { Issue.record("no deepLinkData"); return }
                #expect(data["shortCode"] == "spring" && data["clickId"] == .string(click.id))
                let stored = try await world.store.install(project: world.project.id, id: other["installId"]?.stringValue ?? "")
                #expect(stored?.linkID == spring.id && stored?.clickID == click.id && stored?.method == .pasteboard)
                #expect(try await installs().count == 2)
                let why = Dashboard.whyItMatched(stored?.matchedFactors ?? [])
                #expect(why.contains("had brought an earlier install"))

                // Past the link's window the token decides nothing for another device; the same
                // install still gets its own back.
                world.clock.advance(hours: 24)
                let late = try await LandingPageTests.install(client, key: world.sdkKey, token: token, screenWidth: 744)
                #expect(late["clickToken"] == "expired" && late["attributionMethod"] != "pasteboard")
                let lateAgain = try await LandingPageTests.install(client, key: world.sdkKey, token: token)
                #expect(lateAgain["installId"] == first["installId"])
            }
        }
    }

    @Test(
        "a token of another project, a made-up or malformed one, an expired one: never attributed by token, each answered why",
        arguments: TestEngine.available)
    func refusedTokens(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var spring = try await world.link("spring", window: 1)
            spring.landingPage = true
            #expect(try await world.store.updateLink(spring))
            try await world.app().test(.live) { client in
                var tokens: [String] = []
                for _ in 0..<2 {
                    try await RedirectTests.get(client, "/spring" + LandingPageTests.tap, userAgent: HTTPTest.safari) {
                        tokens.append(LandingPageTests.token(String(buffer: $0.body)) ?? "")
                    }
                }
                let other = try await LandingPageTests.install(client, key: world.otherProjectKey, token: tokens[0])
                #expect(other["clickToken"] == "unknown" && other["attributed"] == false)
                for made in [ClickTokens.make(), "short", String(repeating: "é", count: 32), String(repeating: "a", count: 256)] {
                    let answer = try await LandingPageTests.install(client, key: world.sdkKey, token: made)
                    #expect(answer["clickToken"] == "unknown" && answer["attributionMethod"] != "pasteboard")
                }
                // The other project's try did not use it up.
                #expect(try await LandingPageTests.install(client, key: world.sdkKey, token: tokens[0])["clickToken"] == "accepted")
                world.clock.advance(hours: 1.01)
                #expect(try await LandingPageTests.install(client, key: world.sdkKey, token: tokens[1])["clickToken"] == "expired")
                // Past 256 characters the body is refused as it is for every field.
                var body = HTTPTest.installBody
                body["clickToken"] = .string(String(repeating: "a", count: 257))
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                    body: HTTPTest.body(body)
                ) { #expect($0.status == .badRequest) }
            }
        }
    }

    @Test("installs at once with one token from eight devices: exactly one claims its click", arguments: TestEngine.available)
    func oneUse(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var spring = try await world.link("spring")
            spring.landingPage = true
            #expect(try await world.store.updateLink(spring))
            try await world.app().test(.live) { client in
                var page = ""
                try await RedirectTests.get(client, "/spring" + LandingPageTests.tap, userAgent: HTTPTest.safari) {
                    page = String(buffer: $0.body)
                }
                let token = try #require(LandingPageTests.token(page))
                let answers = try await withThrowingTaskGroup(of: JSONValue?.self) { group in
                    for index in 0..<8 {
                        group.addTask {
                            try await LandingPageTests.install(
                                client, key: world.sdkKey, token: token, ip: "192.0.2.\(index + 1)", screenWidth: 700 + index)["clickToken"]
                        }
                    }
                    return try await group.reduce(into: [JSONValue?]()) { $0.append($1) }
                }
                // Eight devices: one claims the click, seven are told it was claimed.
                #expect(answers.filter { $0 == "accepted" }.count == 1 && answers.filter { $0 == "used" }.count == 7)
            }
        }
    }

    @Test(
        "a click claimed by its token's install attributes no other install; given back, it is a candidate again",
        arguments: TestEngine.available)
    func claimedClick(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var spring = try await world.link("spring")
            spring.landingPage = true
            #expect(try await world.store.updateLink(spring))
            let linkID = spring.id
            try await world.app().test(.live) { client in
                var page = ""
                try await RedirectTests.get(client, "/spring" + LandingPageTests.tap, userAgent: HTTPTest.safari, ip: "198.51.100.99") {
                    page = String(buffer: $0.body)
                }
                let token = try #require(LandingPageTests.token(page))
                world.clock.advance(hours: 0.1)
                // Before any install, a report from that household would match the tap.
                let candidates = try await world.store.matchCandidates(
                    project: world.project.id, address: "198.51.100.99", since: world.clock.date.addingTimeInterval(-86_400), limit: 10)
                #expect(candidates.map(\.click.linkID) == [linkID])
                #expect(try await LandingPageTests.install(client, key: world.sdkKey, token: token)["clickToken"] == "accepted")
                // Another phone of the household, no token: the tap is the first phone's.
                let other = try await LandingPageTests.install(client, key: world.sdkKey, token: nil)
                #expect(other["attributed"] == false, "\(other)")
            }
            // A token given back (its install not stored) gives its click back too.
            let click = try #require(try await world.store.clicks(link: linkID).first)
            let hash = "given-back"
            try await world.store.insertClickToken(
                ClickTokenRecord(
                    tokenHash: hash, projectID: world.project.id, linkID: linkID, clickID: click.id, clickedAt: click.clickedAt,
                    expiresAt: world.clock.date.addingTimeInterval(3600)))
            try await world.store.releaseClickToken(hash: "no-such", installID: "none")
            let since = world.clock.date.addingTimeInterval(-86_400)
            #expect(
                try await world.store.matchCandidates(project: world.project.id, address: "198.51.100.99", since: since, limit: 10).isEmpty)
            _ = try await world.store.useClickToken(hash: hash, project: world.project.id, installID: "i-2", at: world.clock.date)
            try await world.store.releaseClickToken(hash: hash, installID: "i-2")
            #expect(
                try await world.store.matchCandidates(project: world.project.id, address: "198.51.100.99", since: since, limit: 10).count
                    == 1)
        }
    }

    @Test("retention deletes tokens that expired before its cutoff", arguments: TestEngine.available)
    func retention(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            let now = world.clock.date
            for (index, expiry) in [now.addingTimeInterval(-100 * 86_400), now.addingTimeInterval(3600)].enumerated() {
                try await world.store.insertClickToken(
                    ClickTokenRecord(
                        tokenHash: "h\(index)", projectID: world.project.id, linkID: link.id, clickID: "c\(index)",
                        clickedAt: now.addingTimeInterval(-101 * 86_400), expiresAt: expiry))
            }
            _ = try await ClickRetention(
                store: world.store, retention: 90 * 86_400, clock: world.clock, logger: Logger(label: "test")
            ).sweep()
            let left: [String] = try await world.store.engine.select("SELECT token_hash FROM click_tokens").map { try $0["token_hash"] }
            #expect(left == ["h1"])
        }
    }
}
