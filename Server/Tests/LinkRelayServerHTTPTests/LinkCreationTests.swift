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

/// `POST /api/sdk/v1/links` and `POST /api/links`, templates and apps.
@Suite("Link creation")
struct LinkCreationTests {
    static func post(
        _ client: some TestClientProtocol, _ path: String, key: String, _ body: [String: JSONValue],
        _ check: (TestResponse, [String: JSONValue]) async throws -> Void
    ) async throws {
        let response = try await client.execute(
            uri: path, method: .post, headers: HTTPTest.headers(key: key, json: true), body: HTTPTest.body(body)
        ) { (response: TestResponse) async throws in response }
        try await check(response, (try? HTTPTest.object(response.body)) ?? [:])
    }

    @Test(
        "an SDK key makes a share link: an 8-character code of LinkForty's alphabet, the URL on the request's origin, stored",
        arguments: TestEngine.available)
    func sdkLink(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                try await Self.post(
                    client, "/api/sdk/v1/links", key: world.sdkKey,
                    [
                        "deepLinkParameters": ["route": "VIDEO_VIEWER", "id": "vid123"], "title": "Check this out",
                        "deepLinkPath": "/videos/vid123",
                    ]
                ) { response, answer in
                    #expect(response.status == .ok)
                    guard case .string(let code)? = answer["shortCode"], case .string(let url)? = answer["url"],
                        case .string(let id)? = answer["linkId"]
                    else {
                        Issue.record("\(answer)")
                        return
                    }
                    #expect(code.count == 8 && code.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" })
                    #expect(url.hasPrefix("http://") && url.hasSuffix("/" + code), "\(url)")
                    #expect(answer["deduplicated"] == false)
                    let stored = try await world.store.link(id: id)
                    #expect(
                        stored?.deepLinkParameters == ["route": "VIDEO_VIEWER", "id": "vid123"] && stored?.deepLinkPath == "/videos/vid123")
                    #expect(stored?.projectID == world.project.id && stored?.title == "Check this out")
                }
            }
        }
    }

    @Test(
        "the share URL: the configured public URL, else the trusted proxy's X-Forwarded-Host and -Proto, else the request's Host",
        arguments: TestEngine.available)
    func shareURL(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let headers: HTTPFields = [
                .authorization: "Bearer \(world.sdkKey)", .contentType: "application/json", .init("X-Forwarded-Host")!: "go.acme.app",
                .init("X-Forwarded-Proto")!: "https",
            ]
            for (configuration, expected) in [
                (world.configuration(), "https://go.acme.app/"),
                (ServerConfiguration(trustProxy: false), "http://localhost/"),
                (ServerConfiguration(publicBaseURL: URL(string: "https://links.acme.example/s")!), "https://links.acme.example/s/"),
            ] {
                try await world.app(configuration).test(.live) { client in
                    try await client.execute(
                        uri: "/api/sdk/v1/links", method: .post, headers: headers,
                        body: HTTPTest.body(["customCode": .string("c\(expected.count)")])
                    ) {
                        response async throws in
                        #expect(try HTTPTest.object(response.body)["url"] == .string(expected + "c\(expected.count)"))
                    }
                }
            }
        }
    }

    @Test("a taken customCode is a 409 naming the field, not a silent random code (Core's bug)", arguments: TestEngine.available)
    func takenCode(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("spring")
            try await world.app().test(.live) { client in
                for key in [world.sdkKey, world.otherProjectKey] {
                    try await Self.post(client, "/api/sdk/v1/links", key: key, ["customCode": "spring"]) { response, answer in
                        #expect(response.status == .conflict)
                        #expect(answer["field"] == "customCode")
                    }
                }
                try await Self.post(client, "/api/sdk/v1/links", key: world.sdkKey, ["customCode": "summer"]) { response, answer in
                    #expect(response.status == .ok && answer["shortCode"] == "summer")
                }
            }
        }
    }

    @Test(
        "the same request of the same user gets the same link back, deduplicated; another user, or other content, a new one",
        arguments: TestEngine.available)
    func dedupe(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let body: [String: JSONValue] = [
                    "externalUserId": "user-1", "deepLinkParameters": ["id": "42"], "utmParameters": ["source": "app"],
                ]
                var ids: [JSONValue?] = []
                var flags: [JSONValue?] = []
                for request in [
                    body, body, body.merging(["externalUserId": "user-2"]) { $1 },
                    body.merging(["deepLinkParameters": ["id": "43"]]) { $1 },
                ] {
                    try await Self.post(client, "/api/sdk/v1/links", key: world.sdkKey, request) { response, answer in
                        #expect(response.status == .ok)
                        ids.append(answer["linkId"])
                        flags.append(answer["deduplicated"])
                    }
                }
                #expect(ids[0] == ids[1] && Set(ids).count == 3)
                #expect(flags == [false, true, false, false])
            }
        }
    }

    @Test(
        "templates: made by an admin (slug given or made), then named by id or slug; the link lives at /{slug}/{code}",
        arguments: TestEngine.available)
    func templates(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                var templateID = ""
                try await Self.post(
                    client, "/api/templates", key: world.adminKey,
                    ["name": "Promo", "slug": "promo", "webFallbackUrl": "https://acme.example/promo"]
                ) { response, answer in
                    #expect(response.status == .created && answer["slug"] == "promo")
                    templateID = answer["id"]?.stringValue ?? ""
                }
                try await Self.post(client, "/api/templates", key: world.adminKey, ["name": "Generated"]) { response, answer in
                    let slug = answer["slug"]?.stringValue ?? ""
                    #expect(response.status == .created && slug.count == 8 && slug.allSatisfy { $0.isLowercase || $0.isNumber })
                }
                try await Self.post(client, "/api/templates", key: world.adminKey, ["name": "Again", "slug": "promo"]) { response, answer in
                    #expect(response.status == .conflict && answer["field"] == "slug")
                }
                try await Self.post(client, "/api/templates", key: world.sdkKey, ["name": "Nope"]) { response, _ in
                    #expect(response.status == .forbidden, "templates are an admin's")
                }
                // LinkForty's SDKs post to /api/links with templateId and templateSlug, and read id and short_code.
                try await Self.post(
                    client, "/api/links", key: world.sdkKey,
                    ["templateId": .string(templateID), "templateSlug": "promo", "deepLinkParameters": ["a": "1"]]
                ) { response, answer in
                    #expect(response.status == .created)
                    let code = answer["short_code"]?.stringValue ?? ""
                    #expect(answer["id"] != nil && code.count == 8 && answer["template_id"] == .string(templateID))
                    #expect(answer["original_url"] == "https://acme.example/promo", "the template's web page when none is given")
                    #expect(answer["url"]?.stringValue?.hasSuffix("/promo/\(code)") == true && answer["clickCount"] == 0)
                }
                try await Self.post(client, "/api/sdk/v1/links", key: world.sdkKey, ["templateSlug": "promo"]) { response, answer in
                    #expect(answer["url"]?.stringValue?.contains("/promo/") == true)
                }
                for body: [String: JSONValue] in [
                    ["templateId": "5a1e7c3d-0b92-4f48-8e6a-c2d9f1a0b347"], ["templateSlug": "unknown"],
                    ["templateId": .string(templateID), "templateSlug": "other"],
                ] {
                    try await Self.post(client, "/api/links", key: world.sdkKey, body) { response, answer in
                        #expect([.notFound, .badRequest].contains(response.status) && answer["field"] != nil, "\(body)")
                    }
                }
                try await Self.post(client, "/api/links", key: world.otherProjectKey, ["templateId": .string(templateID)]) { response, _ in
                    #expect(response.status == .notFound, "another project's template is not found")
                }
            }
        }
    }

    @Test(
        "destinations, targeting and previews are an admin's: an SDK key's are refused, an admin's stored", arguments: TestEngine.available)
    func adminFields(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let body: [String: JSONValue] = [
                    "originalUrl": "https://acme.example/p/1", "iosAppStoreUrl": "https://apps.apple.com/app/id1", "appScheme": "acmeshop",
                    "deepLinkPath": "/p/1", "targetingRules": ["devices": ["ios"]], "ogTitle": "Spring", "appendClickId": true,
                    "attributionWindowHours": 24,
                ]
                try await Self.post(client, "/api/links", key: world.sdkKey, body) { response, answer in
                    #expect(response.status == .forbidden && answer["field"] != nil)
                }
                try await Self.post(client, "/api/links", key: world.adminKey, body) { response, answer in
                    #expect(response.status == .created)
                    let stored = try await world.store.link(id: answer["id"]?.stringValue ?? "")
                    #expect(
                        stored?.appScheme == "acmeshop" && stored?.targetingRules == ["devices": ["ios"]] && stored?.appendClickID == true)
                    #expect(stored?.ogTitle == "Spring" && stored?.attributionWindowHours == 24)
                }
            }
        }
    }
}
