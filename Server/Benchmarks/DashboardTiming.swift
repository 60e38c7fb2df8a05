import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import Synchronization

/// Issue 52, §5: the dashboard's overview and a link's page with `--clicks` clicks stored over 30
/// days (half of them on one link, the worst case for its page), on each engine. Each page is
/// asked `--requests` times through the router over HTTP on loopback with a signed-in session;
/// p50, p99 and the most, against 100 ms at p99. The admin API's per-link analytics (which count
/// the clicks themselves, exactly) is timed beside them for comparison.
///
///   linkrelay-server-bench dashboard [--clicks 1000000] [--links 100] [--requests 200] [--postgres URL]
enum DashboardTiming {
    struct Options {
        var clicks = 1_000_000
        var links = 100
        var requests = 200
        var postgres: URL?

        init(_ arguments: ArraySlice<String>) {
            let values = ModeArguments(arguments, names: ["--clicks", "--links", "--requests", "--postgres"])
            clicks = values.integer("--clicks", in: 1...10_000_000) ?? clicks
            links = values.integer("--links", in: 2...100_000) ?? links
            requests = values.integer("--requests", in: 1...100_000) ?? requests
            postgres = values.postgres
        }
    }

    /// The target: a page answered within 100 ms at p99.
    static let target: Duration = .milliseconds(100)

    /// Whether every page met the target on every engine.
    static func run(_ arguments: ArraySlice<String>) async throws -> Bool {
        let options = Options(arguments)
        say(
            "The dashboard's pages with \(options.clicks) clicks over 30 days on \(options.links) links, half on one; \(options.requests) requests each (\(Date()))"
        )
        say("| engine | clicks | page | p50 | p99 | most | p99 ≤ 100 ms |")
        say("|---|---|---|---|---|---|---|")
        let met = Mutex(true)
        for engine in ["sqlite"] + (options.postgres == nil ? [] : ["postgres"]) {
            try await ScratchStore.with(engine: engine, postgres: options.postgres, name: "dashboard") { scratch in
                let store = scratch.store
                _ = try await store.migrate()
                let project = try await store.createProject(name: "dashboard", at: Date())
                let admin = APIKeys.issue(project: project.id, scope: .admin, name: "bench", at: Date())
                try await store.insertKey(admin.record)
                let now = Date()
                let links = (0..<options.links).map { index in
                    LinkRecord(
                        projectID: project.id, shortCode: "l\(index)", originalURL: "https://acme.example/\(index)",
                        utmParameters: ["source": "mail"],
                        createdAt: now.addingTimeInterval(-40 * 86_400), title: "Link \(index)")
                }
                for link in links { try await store.insertLink(link) }
                for day in 0...31 {
                    _ = try await store.maintainClickPartitions(now: now.addingTimeInterval(-Double(day) * 86_400), droppingBefore: nil)
                }
                let started = ContinuousClock.now
                var batch: [ClickRecord] = []
                let platforms: [DevicePlatform] = [.ios, .android, .web]
                for index in 0..<options.clicks {
                    // Half on the first link; the rest spread over the others.
                    let link = index % 2 == 0 ? links[0] : links[1 + index % (options.links - 1)]
                    let date = now.addingTimeInterval(-Double(index % (30 * 86_400)) - Double(index % 7) * 0.001)
                    batch.append(
                        ClickRecord(
                            linkID: link.id, projectID: project.id, clickedAt: date,
                            device: DeviceSignals(ip: "198.51.\(index % 200).\(index % 250)", networkPrefix: "198.51.\(index % 200)"),
                            platform: platforms[index % 3], isBot: index % 50 == 0,
                            source: ClickSource(
                                referrerHost: "site\(index % 40).example", country: ["DE", "FR", "US", nil][index % 4],
                                utmSource: ["mail", "ads", nil][index % 3])))
                    if batch.count == 10_000 || index == options.clicks - 1 {
                        try await store.importClicks(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                say("<!-- \(engine): \(options.clicks) clicks stored in \(started.duration(to: .now)) -->")
                let configuration = ServerConfiguration(accessLog: false)
                let app = Application(
                    router: ServerApplication.router(store: store, configuration: configuration),
                    configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                try await app.test(.live) { client in
                    let cookie = try await signIn(client, key: admin.secret)
                    for (name, path) in [
                        ("overview", "/dashboard"), ("a link's page (\(options.clicks / 2) clicks)", "/dashboard/links/\(links[0].id)"),
                        ("API: that link's analytics (counts every click)", "/api/analytics/links/\(links[0].id)"),
                    ] {
                        var headers: HTTPFields = [.cookie: cookie]
                        if path.hasPrefix("/api") { headers[.authorization] = "Bearer \(admin.secret)" }
                        var times: [Duration] = []
                        let count = path.hasPrefix("/api") ? max(options.requests / 10, 5) : options.requests
                        for _ in 0..<count {
                            let start = ContinuousClock.now
                            let status = try await client.execute(uri: path, method: .get, headers: headers) { $0.status }
                            times.append(start.duration(to: .now))
                            guard status == .ok else { throw StoreError(.failed, "\(path) answered \(status)") }
                        }
                        times.sort()
                        let p99 = times[min(times.count - 1, Int((Double(times.count) * 0.99).rounded(.up)) - 1)]
                        let isPage = !path.hasPrefix("/api")
                        if isPage && p99 > target { met.withLock { $0 = false } }
                        say(
                            "| \(engine) | \(options.clicks) | \(name) | \(ms(times[times.count / 2])) | \(ms(p99)) | \(ms(times.last ?? .zero)) | \(isPage ? (p99 <= target ? "met" : "NOT met") : "–") |"
                        )
                    }
                }
            }
        }
        return met.withLock { $0 }
    }

    /// The session cookie of a sign-in with `key`.
    static func signIn(_ client: some TestClientProtocol, key: String) async throws -> String {
        let page = try await client.execute(uri: "/dashboard/sign-in", method: .get) { $0 }
        let html = String(buffer: page.body)
        guard let range = html.range(of: "name=\"csrf\" value=\""), let signInCookie = page.headers[.setCookie]?.split(separator: ";").first
        else {
            throw StoreError(.failed, "no sign-in form")
        }
        let csrf = String(html[range.upperBound...].prefix { $0 != "\"" })
        let body = "csrf=\(csrf)&key=\(key)"
        let answer = try await client.execute(
            uri: "/dashboard/sign-in", method: .post,
            headers: [.contentType: "application/x-www-form-urlencoded", .cookie: String(signInCookie)], body: ByteBuffer(string: body)
        ) { $0 }
        guard let session = answer.headers[values: .setCookie].first(where: { $0.hasPrefix("lr_session=") })?.split(separator: ";").first
        else {
            throw StoreError(.failed, "the sign-in failed: \(answer.status)")
        }
        return String(session)
    }

    static func ms(_ duration: Duration) -> String {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return String(format: "%.1f ms", milliseconds)
    }
}
