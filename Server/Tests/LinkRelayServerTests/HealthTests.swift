import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import LinkRelayServer

@Suite("HTTP")
struct HealthTests {
    @Test("GET /api/sdk/v1/health answers as LinkForty's server does, over a real socket", arguments: TestEngine.available)
    func health(_ engine: TestEngine) async throws {
        try await StorageTests.withStore(engine) { store, _ async throws in
            _ = try await store.migrate()
            let app = Application(router: ServerApplication.router(store: store), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { client in
                try await client.execute(uri: "/api/sdk/v1/health", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                    let health = try JSONDecoder().decode(Health.self, from: Data(String(buffer: response.body).utf8))
                    #expect(health.status == "healthy" && health.version == "v1")
                    let parser = ISO8601DateFormatter()
                    parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                    #expect(parser.date(from: health.timestamp) != nil, "\(health.timestamp)")
                }
            }
        }
    }

    @Test("the health path asked with another method is a JSON 404, as every unknown route")
    func healthErrorsAreJSON() async throws {
        try await StorageTests.withStore(.sqlite) { store, _ async throws in
            _ = try await store.migrate()
            let app = Application(router: ServerApplication.router(store: store), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.router) { client in
                try await client.execute(uri: "/api/sdk/v1/health", method: .post) { response in
                    #expect(response.status == .notFound)
                    #expect(String(buffer: response.body) == #"{"error":"Route POST:/api/sdk/v1/health not found"}"#)
                }
            }
        }
    }
}
