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

/// `POST /api/sdk/v1/event`: stored once, on disk before the answer, in the caller's project.
@Suite("Events")
struct EventTests {
    /// An install of the world's project, made over HTTP; its id.
    static func install(_ client: some TestClientProtocol, _ world: ServerWorld, key: String? = nil) async throws -> String {
        var id = ""
        try await client.execute(
            uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: key ?? world.sdkKey, ip: "198.51.100.4", json: true),
            body: HTTPTest.body(HTTPTest.installBody)
        ) { response async throws in
            if case .string(let value)? = try HTTPTest.object(response.body)["installId"] { id = value }
        }
        return id
    }

    @Test("a retried event is stored once and answered with the first one's id; a different one is new", arguments: TestEngine.available)
    func once(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let installID = try await Self.install(client, world)
                let revenue: [String: JSONValue] = [
                    "installId": .string(installID), "eventName": "revenue",
                    "eventData": ["revenue": 29.99, "currency": "USD", "product_id": "123"], "timestamp": "2026-03-02T08:05:00Z",
                ]
                var ids: [JSONValue?] = []
                var duplicates: [JSONValue?] = []
                for body in [revenue, revenue, revenue.merging(["timestamp": "2026-03-02T08:05:01Z"]) { $1 }] {
                    try await client.execute(
                        uri: "/api/sdk/v1/event", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                        body: HTTPTest.body(body)
                    ) { response async throws in
                        #expect(response.status == .ok)
                        let answer = try HTTPTest.object(response.body)
                        #expect(answer["acknowledged"] == true && answer["success"] == true)
                        ids.append(answer["eventId"])
                        duplicates.append(answer["duplicate"])
                    }
                }
                #expect(ids[0] == ids[1] && ids[0] != ids[2])
                #expect(duplicates == [false, true, false])
                let stored = try await world.store.events(install: installID)
                #expect(stored.count == 2)
                let first = stored.first { .string($0.id) == ids[0] }
                #expect(first?.properties == ["revenue": 29.99, "currency": "USD", "product_id": "123"])
                #expect(first?.occurredAt == ServerHTTP.parseTimestamp("2026-03-02T08:05:00Z") && first?.name == "revenue")
                // The same instant with an offset, and with a fraction.
                #expect(ServerHTTP.parseTimestamp("2026-03-02T10:05:00+02:00") == first?.occurredAt)
                #expect(ServerHTTP.parseTimestamp("2026-03-02T08:05:00.000Z") == first?.occurredAt)
            }
        }
    }

    @Test("the same event sent by many connections at once is stored once", arguments: TestEngine.available)
    func concurrentRetries(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let installID = try await Self.install(client, world)
                let body: [String: JSONValue] = [
                    "installId": .string(installID), "eventName": "purchase", "eventData": [:], "timestamp": "2026-03-02T08:05:00Z",
                ]
                let ids = try await withThrowingTaskGroup(of: JSONValue?.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            try await client.execute(
                                uri: "/api/sdk/v1/event", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                                body: HTTPTest.body(body)
                            ) { try HTTPTest.object($0.body)["eventId"] }
                        }
                    }
                    return try await group.reduce(into: Set<JSONValue?>()) { $0.insert($1) }
                }
                #expect(ids.count == 1)
                #expect(try await world.store.events(install: installID).count == 1)
            }
        }
    }

    @Test("events without a timestamp cannot be told apart, so each is new", arguments: TestEngine.available)
    func withoutTimestamp(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let installID = try await Self.install(client, world)
                for _ in 0..<2 {
                    try await client.execute(
                        uri: "/api/sdk/v1/event", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                        body: HTTPTest.body(["installId": .string(installID), "eventName": "tap"])
                    ) { #expect($0.status == .ok) }
                }
                let stored = try await world.store.events(install: installID)
                #expect(stored.count == 2 && stored.allSatisfy { $0.occurredAt == world.clock.date.storedPrecision })
            }
        }
    }

    @Test(
        "moving an app: with adoptUnknownInstalls an existing user's install is adopted and its events kept; another project's install is not",
        arguments: TestEngine.available)
    func adoption(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var configuration = world.configuration()
            configuration.adoptUnknownInstalls = true
            try await world.app(configuration).test(.live) { client in
                let fromCore = "3f1c9a52-7d4e-4b8a-9e21-6c0d5b8f4a17"
                for name in ["open", "purchase"] {
                    try await client.execute(
                        uri: "/api/sdk/v1/event", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                        body: HTTPTest.body(["installId": .string(fromCore), "eventName": .string(name)])
                    ) { #expect($0.status == .ok) }
                }
                let adopted = try await world.store.install(project: world.project.id, id: fromCore)
                #expect(adopted?.method == .adopted && adopted?.linkID == nil && adopted?.confidence == 0)
                #expect(try await world.store.events(install: fromCore).map(\.name).sorted() == ["open", "purchase"])
                let foreign = try await Self.install(client, world, key: world.otherProjectKey)
                for installID in [foreign, "not-a-uuid"] {
                    try await client.execute(
                        uri: "/api/sdk/v1/event", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                        body: HTTPTest.body(["installId": .string(installID), "eventName": "tap"])
                    ) { #expect($0.status == .notFound, "\(installID)") }
                }
                #expect(try await world.store.events(install: foreign).isEmpty)
            }
        }
    }

    @Test("an unknown install, or another project's, is 404 Install event not found", arguments: TestEngine.available)
    func unknownInstall(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let foreign = try await Self.install(client, world, key: world.otherProjectKey)
                for installID in [foreign, "3f1c9a52-7d4e-4b8a-9e21-6c0d5b8f4a17"] {
                    try await client.execute(
                        uri: "/api/sdk/v1/event", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                        body: HTTPTest.body(["installId": .string(installID), "eventName": "tap"])
                    ) { response async throws in
                        #expect(response.status == .notFound)
                        #expect(try HTTPTest.object(response.body) == ["error": "Install event not found"])
                    }
                }
                #expect(try await world.store.events(install: foreign).isEmpty)
            }
        }
    }
}
