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

/// Bad input: every body size-limited, every field checked with a 400 naming it, unknown routes
/// a JSON 404, no detail of the server in any answer.
@Suite("Validation")
struct ValidationTests {
    /// (endpoint, body, the field the 400 names)
    static let badBodies: [(String, String, String?)] = [
        ("/api/sdk/v1/install", #"{}"#, "userAgent"),
        ("/api/sdk/v1/install", #"{"userAgent": 42}"#, "userAgent"),
        ("/api/sdk/v1/install", #"{"userAgent": ""}"#, "userAgent"),
        ("/api/sdk/v1/install", #"{"userAgent": "A/1 iOS/17", "screenWidth": "1179"}"#, "screenWidth"),
        ("/api/sdk/v1/install", #"{"userAgent": "A/1 iOS/17", "screenWidth": 11.5}"#, "screenWidth"),
        ("/api/sdk/v1/install", #"{"userAgent": "A/1 iOS/17", "screenHeight": -1}"#, "screenHeight"),
        ("/api/sdk/v1/install", #"{"userAgent": "A/1 iOS/17", "screenHeight": 1e300}"#, "screenHeight"),
        ("/api/sdk/v1/install", #"{"userAgent": "A/1 iOS/17", "attributionWindowHours": 0}"#, "attributionWindowHours"),
        ("/api/sdk/v1/install", #"{"userAgent": "A/1 iOS/17", "attributionWindowHours": 2161}"#, "attributionWindowHours"),
        ("/api/sdk/v1/install", #"{"userAgent": "A/1 iOS/17", "timezone": ["UTC"]}"#, "timezone"),
        ("/api/sdk/v1/install", #"{"userAgent": "A/1 iOS/17", "sdkName": "\#(String(repeating: "x", count: 51))"}"#, "sdkName"),
        ("/api/sdk/v1/install", #"{"userAgent": "\#(String(repeating: "u", count: 513))"}"#, "userAgent"),
        ("/api/sdk/v1/install", #"[1, 2]"#, nil),
        ("/api/sdk/v1/install", #"{"userAgent": "A/1 iOS/17""#, nil),
        ("/api/sdk/v1/install", "", nil),
        ("/api/sdk/v1/event", #"{"eventName": "tap"}"#, "installId"),
        ("/api/sdk/v1/event", #"{"installId": "x"}"#, "eventName"),
        ("/api/sdk/v1/event", #"{"installId": "x", "eventName": "tap", "eventData": [1]}"#, "eventData"),
        ("/api/sdk/v1/event", #"{"installId": "x", "eventName": "tap", "timestamp": "yesterday"}"#, "timestamp"),
        ("/api/sdk/v1/event", #"{"installId": "x", "eventName": "tap", "linkOpenedAt": 5}"#, "linkOpenedAt"),
        ("/api/sdk/v1/links", #"{"customCode": "has space"}"#, "customCode"),
        ("/api/sdk/v1/links", #"{"customCode": "api"}"#, "customCode"),
        ("/api/sdk/v1/links", #"{"customCode": "\#(String(repeating: "c", count: 21))"}"#, "customCode"),
        ("/api/sdk/v1/links", #"{"originalUrl": "javascript:alert(1)"}"#, "originalUrl"),
        ("/api/sdk/v1/links", #"{"originalUrl": "/relative"}"#, "originalUrl"),
        ("/api/sdk/v1/links", #"{"deepLinkPath": "no-slash"}"#, "deepLinkPath"),
        ("/api/sdk/v1/links", #"{"utmParameters": {"source": 1}}"#, "utmParameters"),
        ("/api/sdk/v1/links", #"{"utmParameters": {"sauce": "x"}}"#, "utmParameters"),
        ("/api/sdk/v1/links", #"{"deepLinkParameters": "id=1"}"#, "deepLinkParameters"),
        ("/api/sdk/v1/links", #"{"attributionWindowHours": 0}"#, "attributionWindowHours"),
        ("/api/links", #"{"appScheme": "Acme Shop"}"#, "appScheme"),
        ("/api/links", #"{"targetingRules": {"planets": ["mars"]}}"#, "targetingRules"),
        ("/api/links", #"{"targetingRules": {"devices": ["toaster"]}}"#, "targetingRules"),
        ("/api/links", #"{"expiresAt": "soon"}"#, "expiresAt"),
        ("/api/links", #"{"isActive": "yes"}"#, "isActive"),
        ("/api/templates", #"{"slug": "x"}"#, "name"),
        ("/api/templates", #"{"name": "n", "slug": "Upper"}"#, "slug"),
    ]

    @Test(
        "a table of bad bodies: each a 400 naming its field, nothing stored, nothing of the server in the answer",
        arguments: TestEngine.available)
    func badBodies(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                for (path, body, field) in Self.badBodies {
                    try await client.execute(
                        uri: path, method: .post, headers: HTTPTest.headers(key: world.adminKey, json: true), body: ByteBuffer(string: body)
                    ) { response async throws in
                        #expect(response.status == .badRequest, "\(path) \(body.prefix(80))")
                        let answer = try HTTPTest.object(response.body)
                        #expect(answer["field"] == field.map(JSONValue.string), "\(path) \(body.prefix(80)): \(answer)")
                        let text = String(buffer: response.body)
                        #expect(
                            !text.contains("SELECT") && !text.contains("INSERT") && !text.contains(world.adminKey)
                                && !text.contains(".swift"))
                    }
                }
            }
            #expect(try await world.store.link(project: world.project.id, shortCode: "api", templateSlug: nil) == nil)
        }
    }

    @Test("null is an absent value, not an error (Core answers it with a 500, which the SDKs retry)", arguments: TestEngine.available)
    func nullIsAbsent(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                    body: ByteBuffer(string: #"{"userAgent": "Acme Shop/2.3.0 iOS/17.4.1", "deviceId": null, "screenWidth": 1179.0}"#)
                ) { #expect($0.status == .ok) }
            }
        }
    }

    @Test("a body over 64 KiB is a 413, JSON", arguments: TestEngine.available)
    func bodyLimit(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let padding = String(repeating: "x", count: 70_000)
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                    body: ByteBuffer(string: #"{"userAgent": "A/1 iOS/17", "pad": "\#(padding)"}"#)
                ) { response async throws in
                    #expect(response.status == .contentTooLarge)
                    #expect(try HTTPTest.object(response.body)["error"] != nil)
                }
            }
        }
    }

    @Test(
        "unknown routes: a JSON 404 naming the route, as Core words it; a known path with another method: a JSON 405 with Allow",
        arguments: TestEngine.available)
    func unknownRoutes(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                for (path, method) in [("/api/sdk/v1/nothing", HTTPRequest.Method.post), ("/a/b/c", .get)] {
                    try await client.execute(uri: path, method: method, headers: HTTPTest.headers(key: world.sdkKey)) {
                        response async throws in
                        #expect(response.status == .notFound, "\(method) \(path)")
                        #expect(try HTTPTest.object(response.body) == ["error": .string("Route \(method.rawValue):\(path) not found")])
                    }
                }
                for (path, method, allow) in [("/api/sdk/v1/install", HTTPRequest.Method.get, "POST"), ("/spring", .post, "GET")] {
                    try await client.execute(uri: path, method: method, headers: HTTPTest.headers(key: world.sdkKey)) {
                        response async throws in
                        #expect(response.status == .methodNotAllowed && response.headers[.allow] == allow, "\(method) \(path)")
                        #expect(
                            try HTTPTest.object(response.body) == [
                                "error": .string("\(method.rawValue) is not allowed on \(path) (allowed: \(allow)).")
                            ])
                    }
                }
            }
        }
    }

    @Test(
        "every SDK and admin endpoint wants a key, the router's whole list of them (a route added later included): without one, 401 JSON",
        arguments: TestEngine.available)
    func everyEndpointWantsAKey(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            // Every /api/ route the router holds but health, its captures filled in.
            let endpoints = ServerApplication.router(store: world.store).routes.compactMap { route -> (String, HTTPRequest.Method)? in
                let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") || $0.hasPrefix("{") ? "x" : String($0) }
                    .joined(separator: "/")
                guard path.hasPrefix("api/") || path.hasPrefix("/api/"), !path.hasSuffix("health") else { return nil }
                return (path.hasPrefix("/") ? path : "/" + path, route.method)
            }
            #expect(endpoints.count >= 10, "\(endpoints)")
            try await world.app().test(.live) { client in
                for (path, method) in endpoints {
                    try await client.execute(uri: path, method: method, body: ByteBuffer(string: "{}")) { response async throws in
                        #expect(response.status == .unauthorized, "\(path)")
                        #expect(try HTTPTest.object(response.body)["error"] != nil)
                    }
                }
            }
        }
    }
}
