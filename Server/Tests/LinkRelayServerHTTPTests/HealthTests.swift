import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

@Suite("HTTP")
struct HealthTests {
    @Test("GET /api/sdk/v1/health answers as LinkForty's server does, over a real socket", arguments: TestEngine.available)
    func health(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, _ async throws in
            _ = try await store.migrate()
            let app = Application(
                router: ServerApplication.router(store: store), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
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

    @Test(
        "a known path asked with another method is a JSON 405 with Allow (a link's code too, and the dashboard's pages); an unknown path a JSON 404"
    )
    func methodNotAllowed() async throws {
        try await ScratchDatabase.with(.sqlite) { store, _ async throws in
            _ = try await store.migrate()
            let app = Application(
                router: ServerApplication.router(store: store), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.router) { client in
                for (method, path, allow) in [
                    (HTTPRequest.Method.post, "/api/sdk/v1/health", "GET"), (.delete, "/api/sdk/v1/install", "POST"),
                    (.init("TRACE")!, "/api/links", "GET, POST"),
                    (.post, "/api/links/abc", "DELETE, GET, PATCH, PUT"), (.put, "/spring", "GET"), (.options, "/promo/spring", "GET"),
                    (.delete, "/dashboard/links/abc", "GET"),
                ] {
                    try await client.execute(uri: path, method: method) { response in
                        #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                        #expect(response.headers[.allow] == allow, "\(method) \(path)")
                        #expect(
                            String(buffer: response.body)
                                == "{\"error\":\"\(method.rawValue) is not allowed on \(path) (allowed: \(allow)).\"}")
                    }
                }
                // As the router follows a path: `/api/apps` reaches the `POST` route, never the
                // redirect's `/{templateSlug}/{code}`; `/api/nothing` reaches no route.
                try await client.execute(uri: "/api/apps", method: .get) { response in
                    #expect(response.status == .methodNotAllowed && response.headers[.allow] == "POST")
                }
                for path in ["/no/such/route", "/api/nothing"] {
                    try await client.execute(uri: path, method: .post) { response in
                        #expect(response.status == .notFound)
                        #expect(String(buffer: response.body) == "{\"error\":\"Route POST:\(path) not found\"}")
                    }
                }
            }
        }
    }
}
