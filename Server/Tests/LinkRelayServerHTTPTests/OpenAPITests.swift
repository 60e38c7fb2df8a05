import Foundation
import Hummingbird
import HummingbirdTesting
@_spi(Backend) import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The OpenAPI description is the API: every route the router has is described, nothing more,
/// with the method the router answers.
@Suite("OpenAPI description")
struct OpenAPITests {
    /// `GET /api/links/{}`: a route with its parameters' names left out (the router needs one
    /// name per first segment, `/{first}` for both `/{code}` and `/{templateSlug}/{code}`).
    static func shape(_ method: String, _ path: String) -> String {
        let segments = path.split(separator: "/").map { segment in
            segment.hasPrefix("{") || segment.hasPrefix(":") ? "{}" : String(segment)
        }
        return "\(method.uppercased()) /" + segments.joined(separator: "/")
    }

    static func document() throws -> [String: Any] {
        let bytes = try APIDescription.shipped.get()
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test(
        "every route of the router, the dashboard's pages aside, is an operation of the description, and every operation a route",
        arguments: [true, false])
    func routesMatch(dashboard: Bool) async throws {
        try await ServerWorld.with(.sqlite) { world in
            var configuration = world.configuration()
            configuration.dashboard = dashboard
            let router = ServerApplication.router(store: world.store, configuration: configuration)
            let routed = Set(
                router.routes.filter { !"\($0.path)".hasPrefix("/dashboard") }.map { Self.shape($0.method.rawValue, "\($0.path)") })
            let paths = try #require(try Self.document()["paths"] as? [String: [String: Any]])
            let described = Set(
                paths.flatMap { path, operations in
                    operations.keys.filter { ["get", "put", "post", "patch", "delete"].contains($0) }.map { Self.shape($0, path) }
                })
            #expect(routed.subtracting(described).sorted() == [], "routes the description lacks")
            #expect(described.subtracting(routed).sorted() == [], "operations no route answers")
            #expect(routed.count >= 30)
        }
    }

    @Test(
        "GET /openapi.json serves the description without a key: OpenAPI 3.1, this server's version, each operation with an id, a summary and its key's scheme"
    )
    func served() async throws {
        let shipped = try APIDescription.shipped.get()
        try await ServerWorld.with(.sqlite) { world in
            let app = Application(router: ServerApplication.router(store: world.store, configuration: world.configuration()))
            try await app.test(.router) { client in
                try await client.execute(uri: "/openapi.json", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                    #expect(Array(response.body.readableBytesView) == shipped)
                }
            }
        }
        let document = try Self.document()
        #expect(document["openapi"] as? String == "3.1.0")
        #expect((document["info"] as? [String: Any])?["version"] as? String == LinkRelayVersion.string)
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        var ids: [String] = []
        for (path, operations) in paths {
            for (method, operation) in operations {
                ids.append(try #require(operation["operationId"] as? String, "\(method) \(path)"))
                #expect(operation["summary"] is String, "\(method) \(path)")
                let security = try #require(operation["security"] as? [[String: [String]]], "\(method) \(path)")
                // The SDK's routes take either key; the admin's only an admin key; the rest none.
                let schemes = Set(security.flatMap(\.keys))
                if path.hasPrefix("/api/sdk/v1/") && path != "/api/sdk/v1/health" || path == "/api/links" && method == "post" {
                    #expect(schemes == ["sdkKey", "adminKey"], "\(method) \(path)")
                } else if path.hasPrefix("/api/") && path != "/api/sdk/v1/health" {
                    #expect(schemes == ["adminKey"], "\(method) \(path)")
                } else {
                    #expect(schemes.isEmpty, "\(method) \(path)")
                }
            }
        }
        #expect(Set(ids).count == ids.count, "operation ids are unique")
    }
}

/// What the API's fuzzer (schemathesis, in `.ci/run`) found where the server and its
/// description disagreed, each fixed on the server's side.
@Suite("The API's contract")
struct APIContractTests {
    @Test("a date with any RFC 3339 offset (hours 0…23) is read; an offset of 24 hours or more is not")
    func offsets() throws {
        let utc = try #require(ServerHTTP.parseTimestamp("1870-03-08T11:39:25Z"))
        #expect(ServerHTTP.parseTimestamp("1870-03-08T11:39:25+20:24") == utc.addingTimeInterval(-(20 * 3600 + 24 * 60)))
        #expect(ServerHTTP.parseTimestamp("1870-03-08T11:39:25-23:59") == utc.addingTimeInterval(23 * 3600 + 59 * 60))
        #expect(
            ServerHTTP.parseTimestamp("2026-03-02T08:05:00.250-05:30")
                == ServerHTTP.parseTimestamp("2026-03-02T13:35:00.250Z"))
        #expect(ServerHTTP.parseTimestamp("2026-03-02T08:05:00+05:30") == ServerHTTP.parseTimestamp("2026-03-02T02:35:00Z"))
        for refused in ["1870-03-08T11:39:25+24:00", "1870-03-08T11:39:25+20:60", "1870-03-08T11:39:25+2024", "2026-03-02", "+05:30", ""] {
            #expect(ServerHTTP.parseTimestamp(refused) == nil, "\(refused)")
        }
    }

    @Test(
        "a URL field takes a URI (RFC 3986's characters): a raw non-ASCII host or a space is refused, naming the field; percent-encoding is kept"
    )
    func uris() async throws {
        try await ServerWorld.with(.sqlite) { world in
            let app = Application(router: ServerApplication.router(store: world.store, configuration: world.configuration()))
            try await app.test(.router) { client in
                for url in ["https://Ï", "https://acme.example/é", "https://acme.example/a b", "https://acme.example/<script>"] {
                    try await LinkCreationTests.post(
                        client, "/api/links", key: world.adminKey, ["originalUrl": "https://acme.example/", "ogImageUrl": .string(url)]
                    ) {
                        response, answer in
                        #expect(response.status == .badRequest, "\(url)")
                        #expect(answer["field"]?.stringValue == "ogImageUrl", "\(url)")
                    }
                }
                let kept = "https://xn--4ca.example/a%20b?q=1&r=%C3%A9#top"
                try await LinkCreationTests.post(client, "/api/links", key: world.adminKey, ["originalUrl": .string(kept)]) {
                    response, answer in
                    #expect(response.status == .created && answer["original_url"]?.stringValue == kept)
                }
            }
        }
    }

    @Test("an admin query's number or flag that is present but empty is a 400 naming it; text counts characters as JSON Schema does")
    func emptyQueryValues() async throws {
        try await ServerWorld.with(.sqlite) { world in
            let app = Application(router: ServerApplication.router(store: world.store, configuration: world.configuration()))
            try await app.test(.router) { client in
                for (path, field) in [
                    ("/api/analytics/overview?days=", "days"), ("/api/links?active=", "active"), ("/api/links?limit=", "limit"),
                ] {
                    try await client.execute(uri: path, method: .get, headers: HTTPTest.headers(key: world.adminKey)) { response in
                        #expect(response.status == .badRequest, "\(path)")
                        #expect((try? HTTPTest.object(response.body))?["field"]?.stringValue == field, "\(path)")
                    }
                }
                // 200 scalars (an "o" and a combining mark, 100 times): within the limit; one more is not.
                let marked = String(repeating: "o\u{0301}", count: 100)
                for (search, status) in [(marked, HTTPResponse.Status.ok), (marked + "o", .badRequest)] {
                    let query = search.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                    try await client.execute(
                        uri: "/api/links?search=\(query)", method: .get, headers: HTTPTest.headers(key: world.adminKey)
                    ) {
                        #expect($0.status == status)
                    }
                }
            }
        }
    }

    @Test("templateId and templateSlug that name two templates (or none) are a 404: no one template is both")
    func templateMismatch() async throws {
        try await ServerWorld.with(.sqlite) { world in
            let app = Application(router: ServerApplication.router(store: world.store, configuration: world.configuration()))
            try await app.test(.router) { client in
                var templateID = ""
                try await LinkCreationTests.post(client, "/api/templates", key: world.adminKey, ["name": "Promo", "slug": "promo"]) {
                    response, answer in
                    #expect(response.status == .created)
                    templateID = answer["id"]?.stringValue ?? ""
                }
                for slug in ["other", ""] {
                    try await LinkCreationTests.post(
                        client, "/api/sdk/v1/links", key: world.sdkKey, ["templateId": .string(templateID), "templateSlug": .string(slug)]
                    ) {
                        response, answer in
                        #expect(response.status == .notFound && answer["field"]?.stringValue == "templateSlug", "\(slug)")
                    }
                }
                try await LinkCreationTests.post(
                    client, "/api/sdk/v1/links", key: world.sdkKey, ["templateId": .string(templateID), "templateSlug": "promo"]
                ) {
                    response, _ in #expect(response.status == .ok)
                }
            }
        }
    }

    @Test(
        "PUT /api/destination-hosts reads a null field as an absent one, as its description says (schemathesis found `\"hosts\": null` accepted while the description allowed only a list)"
    )
    func nullDestinationHosts() async throws {
        try await ServerWorld.with(.sqlite) { world in
            let app = Application(router: ServerApplication.router(store: world.store, configuration: world.configuration()))
            try await app.test(.router) { client in
                for (body, status) in [
                    (["hosts": .null, "mode": "any"], HTTPResponse.Status.ok), (["hosts": ["acme.example"], "mode": .null], .ok),
                    (["hosts": .null], .badRequest), (["hosts": [], "mode": .null], .badRequest),
                ] as [([String: JSONValue], HTTPResponse.Status)] {
                    try await client.execute(
                        uri: "/api/destination-hosts", method: .put, headers: HTTPTest.headers(key: world.adminKey, json: true),
                        body: HTTPTest.body(body)
                    ) { #expect($0.status == status, "\(body)") }
                }
            }
        }
        let schemas = try #require((try OpenAPITests.document()["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]])
        let change = try #require(schemas["DestinationHostsChange"])
        let properties = try #require(change["properties"] as? [String: [String: Any]])
        for field in ["hosts", "mode"] {
            #expect(Self.allowsNull(try #require(properties[field])), "\(field)")
        }
        // Each way to be valid names a field that is not null: `{"hosts": null}` alone is refused.
        let branches = try #require(change["anyOf"] as? [[String: Any]])
        for branch in branches {
            let named = try #require(branch["properties"] as? [String: [String: Any]])
            #expect(named.values.allSatisfy { $0["type"] is String && !Self.allowsNull($0) })
        }
    }

    @Test(
        "every optional field of a JSON request body is described as nullable, the server reading null as absent, but those the server refuses as null"
    )
    func nullableRequestFields() throws {
        let document = try OpenAPITests.document()
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        // A link's replacement and changes: null there is refused (a link cannot have no URL,
        // window, state or flag); the landing page's `enabled` likewise.
        let refusingNull: Set<String> = [
            "put /api/links/{id} originalUrl", "put /api/links/{id} attributionWindowHours", "put /api/links/{id} isActive",
            "put /api/links/{id} appendClickId", "patch /api/links/{id} originalUrl", "patch /api/links/{id} attributionWindowHours",
            "patch /api/links/{id} isActive", "patch /api/links/{id} appendClickId", "put /api/landing-page enabled",
        ]
        var notNullable: [String] = []
        var checked = 0
        for (path, operations) in paths {
            for (method, operation) in operations {
                guard let body = (operation as? [String: Any])?["requestBody"] as? [String: Any],
                    let json = (body["content"] as? [String: Any])?["application/json"] as? [String: Any],
                    var schema = json["schema"] as? [String: Any]
                else { continue }
                if let reference = schema["$ref"] as? String {
                    schema = try #require(schemas[String(reference.split(separator: "/").last ?? "")])
                }
                let required = Set(schema["required"] as? [String] ?? [])
                for (name, property) in schema["properties"] as? [String: [String: Any]] ?? [:] where !required.contains(name) {
                    checked += 1
                    if !Self.allowsNull(property) { notNullable.append("\(method) \(path) \(name)") }
                }
            }
        }
        #expect(checked > 50)
        #expect(Set(notNullable) == refusingNull)
    }

    /// Whether a property's schema takes `null` (its type, or one of its `anyOf`).
    static func allowsNull(_ schema: [String: Any]) -> Bool {
        if schema["type"] as? String == "null" || (schema["type"] as? [String])?.contains("null") == true { return true }
        return (schema["anyOf"] as? [[String: Any]] ?? []).contains(where: allowsNull)
    }
}
