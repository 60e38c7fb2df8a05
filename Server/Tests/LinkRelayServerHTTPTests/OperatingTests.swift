import Foundation
@_spi(Backend) import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The `linkrelay-server` binary as an operator runs it in production: its version, its logs
/// as JSON lines, and its metrics on a listener of their own.
@Suite("Operating the server")
struct OperatingTests {
    @Test("--version prints the version the SDK reports to providers: one source for both")
    func version() async throws {
        let folder = try Scratch()
        let result = try await Binary.run(["--version"], in: folder.path)
        #expect(result.status == 0)
        #expect(result.output == LinkRelayVersion.string + "\n")
        #expect(try folder.files() == [], "no database made")
    }

    @Test(
        "--log-format json: every line on standard error is one JSON object, access lines with the route's pattern; --metrics-port serves /metrics apart from the API, whose port has none"
    )
    func jsonLogsAndMetrics() async throws {
        let folder = try Scratch()
        let server = try await Binary.start(["serve", "--port", "0", "--metrics-port", "0", "--log-format", "json"], in: folder.path)
        let port = try await server.port()
        let metricsPort = try await server.printed { _, error -> Int? in
            guard let range = error.range(of: "Metrics at http://127.0.0.1:") else { return nil }
            return Int(error[range.upperBound...].prefix(while: \.isNumber))
        }
        #expect(metricsPort != port)
        #expect(RawHTTP.get("/api/sdk/v1/health", port: port).hasPrefix("HTTP/1.1 200"))
        #expect(RawHTTP.get("/spring?fp_tz=Europe/Berlin", port: port).hasPrefix("HTTP/1.1 404"))
        // The API's port answers /metrics as it answers any unknown code: no metrics there.
        let onAPI = RawHTTP.get("/metrics", port: port)
        #expect(onAPI.hasPrefix("HTTP/1.1 404") && !onAPI.contains("linkrelay_"))
        let scraped = RawHTTP.get("/metrics", port: metricsPort)
        #expect(scraped.hasPrefix("HTTP/1.1 200"))
        #expect(scraped.lowercased().contains("content-type: text/plain; version=0.0.4; charset=utf-8"))
        #expect(scraped.contains(#"linkrelay_http_requests_total{method="GET",route="/api/sdk/v1/health",status="200"} 1"#))
        #expect(scraped.contains(#"linkrelay_http_requests_total{method="GET",route="/{code}",status="404"} 2"#))
        #expect(!scraped.contains("spring") && !scraped.contains("127.0.0.1") && !scraped.contains("Europe"))
        #expect(await server.stop() == 0)

        let lines = server.error.split(separator: "\n")
        let objects = try lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
        }
        #expect(objects.allSatisfy { $0["time"] is String && ["log", "access"].contains($0["type"] as? String) })
        let access = objects.filter { $0["type"] as? String == "access" }
        #expect(access.map { $0["route"] as? String } == ["/api/sdk/v1/health", "/{code}", "/{code}"])
        #expect(access.allSatisfy { $0["client"] as? String == "127.0.0.1" && $0["key"] is NSNull })
        #expect(!server.error.contains("spring") && !server.error.contains("Europe"))
    }

    @Test(
        "a setting from the environment (LINKRELAY_ and its name) is taken and checked as its flag is; a value out of range is refused naming the variable, before anything is made; the flag wins"
    )
    func settingsFromEnvironment() async throws {
        let folder = try Scratch()
        let refused = try await Binary.run(["serve", "--port", "0"], environment: ["LINKRELAY_KEEP_CLICKS_DAYS": "30"], in: folder.path)
        #expect(refused.status != 0)
        #expect(refused.error.contains("LINKRELAY_KEEP_CLICKS_DAYS takes 0 or 90…36500, not 30."), "\(refused.error)")
        #expect(try folder.files() == [], "no database made")

        // LINKRELAY_DATABASE and LINKRELAY_LOG_FORMAT taken; --keep-clicks-days given wins over its variable.
        let server = try await Binary.start(
            ["serve", "--port", "0", "--keep-clicks-days", "90"],
            environment: [
                "LINKRELAY_KEEP_CLICKS_DAYS": "30", "LINKRELAY_DATABASE": "sqlite:from-environment.sqlite", "LINKRELAY_LOG_FORMAT": "json",
            ],
            in: folder.path)
        let port = try await server.port()
        #expect(RawHTTP.get("/api/sdk/v1/health", port: port).hasPrefix("HTTP/1.1 200"))
        #expect(await server.stop() == 0)
        #expect(try folder.files().contains("from-environment.sqlite"))
        let lines = server.error.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("{") }, "JSON log lines")
    }

    @Test(
        "LINKRELAY_ADMIN_KEY_FILE (a systemd credential, a container secret): the key read from the file, its last newline dropped; a file that cannot be read, or both variables, is one line and exit 1"
    )
    func adminKeyFile() async throws {
        let folder = try Scratch()
        let key = try await Binary.run(["keys", "generate"], in: folder.path).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let file = folder.path + "/admin-key"
        try (key + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let server = try await Binary.start(["serve", "--port", "0"], environment: ["LINKRELAY_ADMIN_KEY_FILE": file], in: folder.path)
        let port = try await server.port()
        #expect(server.output.contains("with the admin key from LINKRELAY_ADMIN_KEY_FILE (\(try #require(APIKeys.prefix(of: key)))…)"))
        let answer = RawHTTP.get("/api/destination-hosts", port: port, authorization: "Bearer \(key)")
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
        #expect(await server.stop() == 0)
        #expect(!server.output.contains(key) && !server.error.contains(key))

        let fresh = try Scratch()
        let missing = try await Binary.run(
            ["serve", "--port", "0"], environment: ["LINKRELAY_ADMIN_KEY_FILE": fresh.path + "/nowhere"], in: fresh.path)
        #expect(missing.status == 1)
        #expect(missing.errorLines == ["linkrelay-server: LINKRELAY_ADMIN_KEY_FILE names \(fresh.path)/nowhere, which cannot be read."])
        let both = try await Binary.run(
            ["serve", "--port", "0"], environment: ["LINKRELAY_ADMIN_KEY_FILE": file, "LINKRELAY_ADMIN_KEY": key], in: fresh.path)
        #expect(both.status == 1)
        #expect(both.errorLines == ["linkrelay-server: LINKRELAY_ADMIN_KEY and LINKRELAY_ADMIN_KEY_FILE are both set: set one."])
        try "mysecret123\n".write(toFile: fresh.path + "/wrong", atomically: true, encoding: .utf8)
        let wrong = try await Binary.run(
            ["serve", "--port", "0"], environment: ["LINKRELAY_ADMIN_KEY_FILE": fresh.path + "/wrong"], in: fresh.path)
        #expect(wrong.status == 1 && !wrong.error.contains("mysecret123"))
        #expect(
            wrong.errorLines == [
                "linkrelay-server: The key in the file LINKRELAY_ADMIN_KEY_FILE names is not an admin key: it must look like lr_admin_<8 hex>_<32 letters or digits> (make one with `linkrelay-server keys generate`)."
            ])
        try FileManager.default.removeItem(atPath: fresh.path + "/wrong")
        #expect(try fresh.files() == [], "no database made")
    }

    /// The repository's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(
        "the version in the source is the CHANGELOG's newest release; the README's installation line and the getting-started article name it"
    )
    func versionsAgree() throws {
        let changelog = try String(contentsOf: Self.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let releases = changelog.split(separator: "\n").filter { $0.hasPrefix("## [") && !$0.hasPrefix("## [Unreleased]") }
        let newest = try #require(releases.first)
        #expect(newest.hasPrefix("## [\(LinkRelayVersion.string)] - 20"), "\(newest)")
        #expect(
            changelog.contains("## [Unreleased]")
                && changelog.range(of: "## [Unreleased]")!.lowerBound < changelog.range(of: String(newest))!.lowerBound)
        for file in ["README.md", "Sources/LinkRelay/LinkRelay.docc/GettingStarted.md"] {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            #expect(text.contains(#"from: "\#(LinkRelayVersion.string)")"#), "\(file)")
        }
    }

    @Test("every schema step has its upgrade note, once, in the release that brought it, newest releases first")
    func upgradeNotes() throws {
        let changelog = try String(contentsOf: Self.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        // Each release's section, and the schema steps its "Upgrading" part names ("- **Schema 11**").
        var steps: [(release: String, step: Int)] = []
        var release = ""
        for line in changelog.split(separator: "\n") {
            if line.hasPrefix("## [") { release = String(line) }
            if line.hasPrefix("- **Schema "), let number = Int(line.dropFirst("- **Schema ".count).prefix(while: \.isNumber)) {
                steps.append((release, number))
            }
        }
        #expect(steps.map(\.step).sorted() == Array(1...Migration.latestVersion), "each step once")
        // Newest release first, so its steps are above those of every release after it.
        #expect(Self.descendingByRelease(steps))
    }

    /// Whether releases come newest first: every step of a release is above every step of the
    /// releases after it in the file.
    static func descendingByRelease(_ steps: [(release: String, step: Int)]) -> Bool {
        var releases: [String] = []
        for step in steps where releases.last != step.release { releases.append(step.release) }
        let highest = releases.map { release in steps.filter { $0.release == release }.map(\.step).max() ?? 0 }
        let lowest = releases.map { release in steps.filter { $0.release == release }.map(\.step).min() ?? 0 }
        return zip(lowest, highest.dropFirst()).allSatisfy { $0 > $1 }
    }
}
