import Foundation
import Hummingbird
import HummingbirdTesting
@_spi(Backend) import LinkRelay
import Logging
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The metrics an operator's Prometheus scrapes from `--metrics-port`: what the server did,
/// counted by the server's own words only.
@Suite("Metrics")
struct MetricsTests {
    @Test(
        "a scrape counts requests by route and status, times them, and counts installs by method, clicks and events stored, batches and retention passes; never a key, an address or a code",
        arguments: TestEngine.available)
    func scrape(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("Xk9_2bQz")
            let metrics = ServerMetrics.prometheus()
            let app = Self.app(world, metrics: metrics)
            let methods = try await app.test(.live) { client in
                try await client.execute(
                    uri: "/api/sdk/v1/install", method: .post,
                    headers: HTTPTest.headers(key: "lr_sdk_0badbeef_" + String(repeating: "x", count: 32), json: true)
                ) {
                    #expect($0.status == .unauthorized)
                }
                try await client.execute(uri: "/no/such/route", method: .get) { #expect($0.status == .notFound) }
                try await RedirectTests.get(
                    client, "/Xk9_2bQz?fp_tz=America/New_York&fp_lang=en-US&fp_sw=1179&fp_sh=2556", userAgent: HTTPTest.safari
                ) {
                    #expect($0.status == .ok)
                }
                var methods: [String] = []
                for ip in ["203.0.113.7", "198.51.100.20"] {
                    let method = try await client.execute(
                        uri: "/api/sdk/v1/install", method: .post, headers: HTTPTest.headers(key: world.sdkKey, ip: ip, json: true),
                        body: HTTPTest.body(HTTPTest.installBody)
                    ) { response in
                        #expect(response.status == .ok)
                        let answer = try HTTPTest.object(response.body)
                        let event: [String: JSONValue] = ["installId": try #require(answer["installId"]), "eventName": "signup"]
                        try await client.execute(
                            uri: "/api/sdk/v1/event", method: .post, headers: HTTPTest.headers(key: world.sdkKey, json: true),
                            body: HTTPTest.body(event)
                        ) {
                            #expect($0.status == .ok)
                        }
                        return try #require(answer["attributionMethod"]?.stringValue)
                    }
                    methods.append(method)
                }
                return methods
            }
            await ClickRetention(store: world.store, clock: world.clock, logger: Logger(label: "test"), metrics: metrics).pass()

            let scraped = try await Self.scrape(metrics)
            let samples = Self.samples(scraped)
            #expect(samples[#"linkrelay_http_requests_total{method="POST",route="/api/sdk/v1/install",status="401"}"#] == 1)
            #expect(samples[#"linkrelay_http_requests_total{method="POST",route="/api/sdk/v1/install",status="200"}"#] == 2)
            #expect(samples[#"linkrelay_http_requests_total{method="GET",route="(unmatched)",status="404"}"#] == 1)
            #expect(samples[#"linkrelay_http_requests_total{method="GET",route="/{code}",status="200"}"#] == 1)
            #expect(samples[#"linkrelay_http_requests_total{method="POST",route="/api/sdk/v1/event",status="200"}"#] == 2)
            #expect(samples[#"linkrelay_http_request_duration_seconds_count{route="/{code}"}"#] == 1)
            #expect(samples[#"linkrelay_http_request_duration_seconds_count{route="/api/sdk/v1/install"}"#] == 3)
            #expect(samples[#"linkrelay_http_request_duration_seconds_bucket{route="/api/sdk/v1/install",le="+Inf"}"#] == 3)
            // Installs by the methods the answers named.
            for method in Set(methods) {
                #expect(
                    samples["linkrelay_installs_total{method=\"\(method)\"}"] == Double(methods.filter { $0 == method }.count), "\(method)")
            }
            #expect(methods.contains("none"), "the second address tapped nothing: organic")
            #expect(samples["linkrelay_clicks_stored_total"] == 1)
            #expect(samples["linkrelay_events_stored_total"] == 2)
            // A click, two installs, two events: five durable writes in at least one batch each.
            let batches = try #require(samples["linkrelay_group_commit_batch_size_count"])
            #expect(batches >= 1 && samples["linkrelay_group_commit_batch_size_sum"] == 5)
            #expect(samples["linkrelay_group_commit_duration_seconds_count"] == batches)
            #expect(samples[#"linkrelay_retention_passes_total{outcome="completed"}"#] == 1)
            #expect(samples["linkrelay_retention_clicks_deleted_total"] == 0)
            #expect(samples["linkrelay_build_info{version=\"\(LinkRelayVersion.string)\"}"] == 1, "which version answers")
            #expect(samples.keys.allSatisfy { !$0.contains("database_errors") }, "no database failed")
            for secret in [world.sdkKey, "lr_sdk_0badbeef", "203.0.113", "198.51.100", "Xk9_2bQz", "America/New_York"] {
                #expect(!scraped.contains(secret), "\(secret)")
            }
        }
    }

    @Test("a database that fails: the failed durable write and the failed request are counted as database errors")
    func databaseErrors() async throws {
        try await ServerWorld.with(.sqlite) { world in
            try await world.link("Xk9_2bQz")
            let metrics = ServerMetrics.prometheus()
            let app = Self.app(world, metrics: metrics)
            try await app.test(.live) { client in
                // The link is read (and kept) before the clicks' table goes away.
                try await RedirectTests.get(client, "/Xk9_2bQz?fp_tz=UTC&fp_lang=en&fp_sw=1&fp_sh=1", userAgent: HTTPTest.safari) {
                    #expect($0.status == .ok)
                }
                try await world.store.execute("ALTER TABLE clicks RENAME TO clicks_gone")
                try await RedirectTests.get(client, "/Xk9_2bQz?fp_tz=UTC&fp_lang=en&fp_sw=1&fp_sh=1", userAgent: HTTPTest.safari) {
                    #expect($0.status == .internalServerError)
                }
            }
            let samples = Self.samples(try await Self.scrape(metrics))
            #expect(samples[#"linkrelay_database_errors_total{operation="write"}"#] == 1)
            #expect(samples[#"linkrelay_database_errors_total{operation="request"}"#] == 1)
            #expect(samples["linkrelay_clicks_stored_total"] == 1)
        }
    }

    @Test("metrics off: nothing recorded, an empty scrape")
    func off() async throws {
        #expect(!ServerMetrics.off.isEnabled && ServerMetrics.off.exposition().isEmpty)
        ServerMetrics.off.request(method: "GET", route: "/{code}", status: 200, duration: .milliseconds(1))
        #expect(ServerMetrics.off.exposition().isEmpty)
    }

    /// The server's routes over `world`, recording into `metrics`, on a port of its own.
    static func app(_ world: ServerWorld, metrics: ServerMetrics) -> some ApplicationProtocol {
        var configuration = world.configuration()
        configuration.metrics = metrics
        return Application(
            router: ServerApplication.router(store: world.store, configuration: configuration, clock: world.clock),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    /// `GET /metrics` from the endpoint's own listener: Prometheus's content type, the text.
    static func scrape(_ metrics: ServerMetrics) async throws -> String {
        let endpoint = Application(
            router: MetricsEndpoint.router(metrics: metrics), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await endpoint.test(.live) { client in
            try await client.execute(uri: "/", method: .get) { #expect($0.status == .notFound) }
            return try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
                return String(buffer: response.body)
            }
        }
    }

    /// Each sample line's series (`name{label="value",…}`) and value; comments skipped.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }
}
