import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// `PUT`/`PATCH /api/links/:id`: what the admin API changes is what the next tap gets, on this
/// server at once (the link kept in its cache is forgotten), on another server on the same
/// PostgreSQL as soon as its notice arrives.
@Suite("Editing a link")
struct LinkEditTests {
    static let desktop =
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15"

    static func edit(
        _ client: some TestClientProtocol, _ id: String, key: String, method: HTTPRequest.Method = .put, _ body: [String: JSONValue]
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/api/links/\(id)", method: method, headers: HTTPTest.headers(key: key, json: true), body: HTTPTest.body(body)
        ) {
            (response: TestResponse) async throws in response
        }
    }

    /// Where a desktop's tap on `code` goes: the `Location` of its 302 without its query (the
    /// link's `utm_*`), or `nil`, with the status.
    static func tap(_ client: some TestClientProtocol, _ code: String) async throws -> (HTTPResponse.Status, String?) {
        var answer: (HTTPResponse.Status, String?) = (.ok, nil)
        try await RedirectTests.get(client, "/\(code)", userAgent: desktop) { response in
            answer = (response.status, response.headers[.location].map { String($0.prefix { $0 != "?" }) })
        }
        return answer
    }

    @Test(
        "an edit is served by the next tap of the same server though the link was kept; deactivated or expired it answers 404 at once; active again, it is served",
        arguments: TestEngine.available)
    func servedAtOnce(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            try await world.app().test(.live) { client in
                // Kept in the cache by this tap.
                #expect(try await Self.tap(client, "spring") == (.found, "https://acme.example/p/42"))
                let edited = try await Self.edit(
                    client, link.id, key: world.adminKey,
                    ["originalUrl": "https://acme.example/spring", "webFallbackUrl": "https://acme.example/spring", "title": "Spring sale"])
                #expect(edited.status == .ok)
                let row = try HTTPTest.object(edited.body)
                #expect(
                    row["id"] == .string(link.id) && row["short_code"] == "spring" && row["original_url"] == "https://acme.example/spring")
                #expect(row["title"] == "Spring sale" && row["is_active"] == true && row["clickCount"] == nil)
                #expect(row["deep_link_path"] == "/product/42", "a field the body does not name is kept")
                #expect(try await Self.tap(client, "spring") == (.found, "https://acme.example/spring"))

                let off = try await Self.edit(client, link.id, key: world.adminKey, method: .patch, ["isActive": false])
                #expect(try off.status == .ok && HTTPTest.object(off.body)["is_active"] == false)
                #expect(try await Self.tap(client, "spring").0 == .notFound, "never served from the cache once the edit was answered")

                let back = try await Self.edit(
                    client, link.id, key: world.adminKey, ["isActive": true, "title": nil, "expiresAt": "2020-01-01T00:00:00Z"])
                #expect(try back.status == .ok && HTTPTest.object(back.body)["title"] == .null)
                #expect(try await Self.tap(client, "spring").0 == .notFound, "expired")
                #expect(try await Self.edit(client, link.id, key: world.adminKey, ["expiresAt": nil]).status == .ok)
                #expect(try await Self.tap(client, "spring") == (.found, "https://acme.example/spring"))

                let stored = try #require(try await world.store.link(id: link.id))
                #expect(
                    stored.originalURL == "https://acme.example/spring" && stored.isActive && stored.expiresAt == nil && stored.title == nil
                )
                #expect(stored.shortCode == "spring" && stored.createdAt == link.createdAt && stored.utmParameters == ["source": "mail"])
            }
        }
    }

    @Test("landingPage can be edited: true, false, and null for the project's setting", arguments: TestEngine.available)
    func landingPage(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            try await world.app().test(.live) { client in
                for value in [JSONValue.bool(true), .bool(false), .null] {
                    let edited = try await Self.edit(client, link.id, key: world.adminKey, method: .patch, ["landingPage": value])
                    #expect(try edited.status == .ok && HTTPTest.object(edited.body)["landing_page"] == value, "\(value)")
                }
            }
            #expect(try await world.store.link(id: link.id)?.landingPage == nil)
        }
    }

    @Test("an edit of the attribution window is the window the next install's match uses", arguments: TestEngine.available)
    func windowChanges(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring", window: 168)
            // Read once, so the store keeps the window by the link's id.
            #expect(try await world.store.linkWindow(link.id) == 168)
            try await world.app().test(.live) { client in
                let edited = try await Self.edit(client, link.id, key: world.adminKey, ["attributionWindowHours": 1])
                #expect(edited.status == .ok)
            }
            #expect(try await world.store.linkWindow(link.id) == 1)
        }
    }

    @Test(
        "what an edit refuses, changing nothing: an SDK key (403), another project's link or an unknown id (404), an unknown or fixed field, null where a value is needed, a bad value, an empty body (400 naming the field)",
        arguments: TestEngine.available)
    func refusals(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            let foreign = LinkRecord(
                projectID: world.otherProject.id, shortCode: "theirs", originalURL: "https://other.example", createdAt: Date())
            try await world.store.insertLink(foreign)
            try await world.app().test(.live) { client in
                #expect(try await Self.edit(client, link.id, key: world.sdkKey, ["isActive": false]).status == .forbidden)
                #expect(try await Self.edit(client, link.id, key: "lr_admin_nothing", ["isActive": false]).status == .unauthorized)
                #expect(try await Self.edit(client, foreign.id, key: world.adminKey, ["isActive": false]).status == .notFound)
                #expect(try await Self.edit(client, "no-such-id", key: world.adminKey, ["isActive": false]).status == .notFound)
                let cases: [([String: JSONValue], String)] = [
                    (["colour": "red"], "colour"), (["customCode": "other"], "customCode"), (["templateSlug": "promo"], "templateSlug"),
                    (["originalUrl": nil], "originalUrl"), (["isActive": nil], "isActive"),
                    (["attributionWindowHours": nil], "attributionWindowHours"),
                    (["originalUrl": "javascript:alert(1)"], "originalUrl"), (["attributionWindowHours": 0], "attributionWindowHours"),
                    (["attributionWindowHours": 2161], "attributionWindowHours"), (["appScheme": "https"], "appScheme"),
                    (["deepLinkPath": "product/42"], "deepLinkPath"), (["targetingRules": ["planets": ["mars"]]], "targetingRules"),
                    (["utmParameters": ["source": 7]], "utmParameters"), (["isActive": "no"], "isActive"),
                    (["expiresAt": "tomorrow"], "expiresAt"),
                    (["title": nil, "isActive": false, "colour": "red"], "colour"),
                ]
                for (body, field) in cases {
                    let response = try await Self.edit(client, link.id, key: world.adminKey, body)
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(try HTTPTest.object(response.body)["field"] == .string(field), "\(body)")
                }
                let empty = try await Self.edit(client, link.id, key: world.adminKey, [:])
                #expect(empty.status == .badRequest)
                #expect(try await world.store.link(id: link.id) == link, "nothing changed")
                #expect(try await world.store.link(id: foreign.id) == foreign)
            }
        }
    }

    @Test(
        "two servers on one PostgreSQL: a link kept by the second, edited and then deactivated through the first, is served as changed by the second as soon as the notice arrives (well within a second)",
        arguments: TestEngine.available.filter { $0 == .postgres })
    func otherServer(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            guard let url = TestEngine.postgresURL else { return }
            let name = try #require(
                try await world.store.engine.select("SELECT current_database() AS name").first.map { try $0["name"] as String })
            var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            components.path = "/" + name
            try await SQLStore.postgres(try #require(components.url)).withRunning { second in
                await second.listening()
                await world.store.listening()
                let secondApp = Application(
                    router: ServerApplication.router(store: second, configuration: world.configuration(), clock: world.clock),
                    configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                let heard = AsyncStream.makeStream(of: String.self)
                second.onForget = { heard.continuation.yield($0) }
                try await secondApp.test(.live) { secondClient in
                    try await world.app().test(.live) { firstClient in
                        var changes = heard.stream.makeAsyncIterator()
                        // The second keeps the link (for a minute, unless told).
                        #expect(try await Self.tap(secondClient, "spring") == (.found, "https://acme.example/p/42"))
                        let edited = try await Self.edit(
                            firstClient, link.id, key: world.adminKey,
                            ["originalUrl": "https://acme.example/spring", "webFallbackUrl": nil])
                        #expect(edited.status == .ok)
                        let answered = ContinuousClock.now
                        #expect(await changes.next() == SQLStore.CacheChange.link("spring"))
                        #expect(await changes.next() == SQLStore.CacheChange.link(id: link.id))
                        #expect(ContinuousClock.now - answered < .seconds(1), "the issue's bound; the notice takes milliseconds")
                        #expect(try await Self.tap(secondClient, "spring") == (.found, "https://acme.example/spring"))

                        #expect(try await Self.edit(firstClient, link.id, key: world.adminKey, ["isActive": false]).status == .ok)
                        #expect(await changes.next() == SQLStore.CacheChange.link("spring"))
                        #expect(try await Self.tap(secondClient, "spring").0 == .notFound)
                    }
                }
            }
        }
    }
}
