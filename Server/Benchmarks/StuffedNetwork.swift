import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage

/// Issue 48, §4.4: one network stuffed with clicks, and what that does to its installs and to
/// everyone else's. A /24 gets `--clicks` clicks within the fingerprint's day from its other
/// addresses (distinct fingerprints, as a red-team script sends them); a quiet /24 has one tap.
/// Installs from each go through the install endpoint over HTTP, one at a time, with the
/// server's default matcher and with Core's /24 comparison (`--ipv4-network-match`); for each,
/// the candidates the store reads and the request's p50 / p99, and whether the phone's own tap
/// (from its address, inside the stuffed /24) was still attributed.
///
///   linkrelay-server-bench stuffed [--clicks 10000] [--installs 200] [--postgres URL]
enum StuffedNetwork {
    struct Options {
        var clicks = 10_000
        var installs = 200
        var postgres: URL?

        init(_ arguments: ArraySlice<String>) {
            let values = ModeArguments(arguments, names: ["--clicks", "--installs", "--postgres"])
            clicks = values.integer("--clicks", in: 1...1_000_000) ?? clicks
            installs = values.integer("--installs", in: 1...100_000) ?? installs
            postgres = values.postgres
        }
    }

    /// Whether, on every engine, the default matcher read no more candidates on the stuffed
    /// network than on the quiet one and still attributed the phone's own tap there.
    static func run(_ arguments: ArraySlice<String>) async throws -> Bool {
        let options = Options(arguments)
        say("One /24 stuffed with \(options.clicks) clicks in a day; \(options.installs) installs from it and from a quiet /24 (\(Date()))")
        var met = true
        for engine in ["sqlite"] + (options.postgres == nil ? [] : ["postgres"]) {
            say("\nengine: \(engine)")
            say("| matcher | install from | candidates read | attributed to its own tap | install p50 / p99 |")
            say("|---|---|---|---|---|")
            try await ScratchStore.with(engine: engine, postgres: options.postgres, name: "stuffed") { scratch in
                let store = scratch.store
                _ = try await store.migrate()
                let project = try await store.createProject(name: "stuffed", at: Date())
                let key = APIKeys.issue(project: project.id, scope: .sdk, name: "stuffed", at: Date())
                try await store.insertKey(key.record)
                let link = LinkRecord(projectID: project.id, shortCode: "s", originalURL: "https://acme.example/s", createdAt: Date())
                try await store.insertLink(link)
                let now = Date(timeIntervalSince1970: 1_780_012_800)
                _ = try await store.maintainClickPartitions(now: now, droppingBefore: nil)
                _ = try await store.maintainClickPartitions(now: now.addingTimeInterval(-86_400), droppingBefore: nil)
                func click(_ id: String, secondsAgo: Double, address: String, width: Int) -> ClickRecord {
                    ClickRecord(
                        id: id, linkID: link.id, projectID: project.id, clickedAt: now.addingTimeInterval(-secondsAgo),
                        device: DeviceSignals(
                            ip: address,
                            networkPrefix: ClientAddress.networkPrefix(of: address), userAgent: safari, timezone: "America/New_York",
                            language: "en-US", screenWidth: width, screenHeight: 2556), platform: .ios, isBot: false)
                }
                // The stuffing: distinct fingerprints from the /24's other addresses over the last 20 hours.
                var clicks = (0..<options.clicks).map { index in
                    click(
                        "x\(index)", secondsAgo: 72_000 * Double(index) / Double(options.clicks), address: "198.51.100.\(10 + index % 240)",
                        width: 500 + index % 400)
                }
                // The phones that tapped: one in the stuffed /24 (its own address), one in a quiet /24.
                clicks.append(click("stuffed-own", secondsAgo: 3_600, address: "198.51.100.7", width: 1179))
                clicks.append(click("quiet-own", secondsAgo: 3_600, address: "203.0.113.7", width: 1179))
                try await store.importClicks(clicks)

                for (name, matcher) in [
                    ("default", DeferredMatcher()), ("--ipv4-network-match", DeferredMatcher(scoresIPv4Networks: true)),
                ] {
                    let app = Application(
                        router: ServerApplication.router(
                            store: store, configuration: ServerConfiguration(trustProxy: true, matcher: matcher, accessLog: false),
                            clock: BenchClock(now)),
                        configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                    let delivered = try await app.test(.live) { client in
                        var delivered = true
                        for (network, address, own) in [
                            ("the stuffed /24", "198.51.100.7", "stuffed-own"), ("a quiet /24", "203.0.113.7", "quiet-own"),
                        ] {
                            let signals = DeviceSignals(
                                ip: address, networkPrefix: ClientAddress.networkPrefix(of: address),
                                userAgent: "Acme Shop/2.3.0 iOS/17.4.1",
                                timezone: "America/New_York", language: "en_US", screenWidth: 1179, screenHeight: 2556)
                            let read = try await store.matchCandidates(for: signals, project: project.id, matcher: matcher, at: now).count
                            var latencies: [Double] = []
                            var attributed = 0
                            for _ in 0..<options.installs {
                                var headers: HTTPFields = [.authorization: "Bearer \(key.secret)", .contentType: "application/json"]
                                headers[.init("X-Forwarded-For")!] = address
                                let body: [String: JSONValue] = [
                                    "userAgent": "Acme Shop/2.3.0 iOS/17.4.1", "timezone": "America/New_York", "language": "en_US",
                                    "screenWidth": 1179, "screenHeight": 2556, "platform": "iOS",
                                ]
                                let sent = ContinuousClock.now
                                let answer = try await client.execute(
                                    uri: "/api/sdk/v1/install", method: .post, headers: headers,
                                    body: ByteBuffer(data: try JSONEncoder().encode(body))
                                ) { response in try JSONDecoder().decode([String: JSONValue].self, from: Data(buffer: response.body)) }
                                let elapsed = ContinuousClock.now - sent
                                latencies.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
                                if case .object(let data)? = answer["deepLinkData"], data["clickId"] == .string(own) { attributed += 1 }
                            }
                            latencies.sort()
                            let p50 = latencies[latencies.count / 2]
                            let p99 = latencies[min(latencies.count - 1, Int((Double(latencies.count) * 0.99).rounded(.up)) - 1)]
                            say(
                                "| \(name) | \(network) | \(read) | \(attributed) of \(options.installs) | \(String(format: "%.2f / %.2f ms", p50, p99)) |"
                            )
                            if name == "default", (network == "the stuffed /24" && read > 1) || attributed != options.installs {
                                delivered = false
                            }
                        }
                        return delivered
                    }
                    if !delivered { met = false }
                }
            }
        }
        say(
            "\n\(met ? "met" : "MISSED"): the default matcher reads only the install's own address on a stuffed /24 and attributes the phone's own tap there"
        )
        return met
    }

    static let safari =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
}
