import Foundation
import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// `linkrelay-server links list|show|update|deactivate` and `stats --link`, as an operator runs
/// them against the database a server made.
@Suite("Managing links from the command line")
struct LinkCommandTests {
    /// A folder with a server's database (its project and first admin key), and `spring` and
    /// `summer` links, `spring` with two clicks (one a bot's) and an install.
    static func database() async throws -> Scratch {
        let folder = try Scratch()
        let setUp = try await Binary.start(["serve", "--port", "0"], in: folder.path)
        _ = try await setUp.port()
        #expect(await setUp.stop() == 0)
        try await SQLStore.sqlite(path: folder.path + "/linkrelay.sqlite", create: false).withRunning { store in
            let project = try #require(try await store.projects().first)
            let now = Date()
            for (code, age) in [("spring", 7200.0), ("summer", 3600)] {
                let link = LinkRecord(
                    projectID: project.id, shortCode: code, originalURL: "https://acme.example/\(code)", utmParameters: ["source": "mail"],
                    createdAt: now.addingTimeInterval(-age), title: code.capitalized)
                try await store.insertLink(link)
                guard code == "spring" else { continue }
                for bot in [false, true] {
                    try await store.recordClick(
                        ClickRecord(
                            linkID: link.id, projectID: project.id, clickedAt: now.addingTimeInterval(-60),
                            device: DeviceSignals(ip: "203.0.113.7"),
                            platform: .ios, isBot: bot, source: ClickSource(referrerHost: "news.example.com", utmSource: "mail")))
                }
                try await store.recordInstall(
                    InstallRecord(
                        projectID: project.id, linkID: link.id, clickID: nil, confidence: 80, matchedFactors: [], method: .fingerprint,
                        installedAt: now, device: DeviceSignals(), platform: .ios, platformVersion: "17.4", deviceID: nil,
                        fingerprintHash: "h",
                        attributionWindowHours: nil, deepLinkData: [:]))
            }
        }
        return folder
    }

    /// The value `links show` prints for `name`.
    static func field(_ name: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(name + "  ") }.map {
            $0.dropFirst(name.count).trimmingCharacters(in: .whitespaces)
        }
    }

    @Test("links list and show: a table with a header, newest first, clicks without bots; --json is the admin API's rows")
    func listAndShow() async throws {
        let folder = try await Self.database()
        let list = try await Binary.run(["links", "list"], in: folder.path)
        let lines = list.output.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(list.status == 0 && lines.count == 3)
        #expect(lines.first == ["CODE", "STATUS", "CLICKS", "CREATED", "TITLE", "DESTINATION"])
        #expect(lines.dropFirst().map { [$0[0], $0[1], $0[2]] } == [["summer", "active", "0"], ["spring", "active", "1"]])
        #expect(try await Binary.run(["links", "list", "--search", "SPR"], in: folder.path).output.contains("spring"))
        #expect(try await !Binary.run(["links", "list", "--inactive"], in: folder.path).output.contains("spring"))

        let json = try await Binary.run(["links", "list", "--json", "--limit", "1"], in: folder.path)
        let rows = try JSONDecoder().decode([[String: JSONValue]].self, from: Data(json.output.utf8))
        #expect(rows.count == 1 && rows.first?["short_code"] == "summer" && rows.first?["clickCount"] == 0)

        let show = try await Binary.run(["links", "show", "spring"], in: folder.path)
        let fields = show.output.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 1).count }
        #expect(show.status == 0 && fields.allSatisfy { $0 == 2 })
        #expect(Self.field("original URL", in: show.output) == "https://acme.example/spring")
        #expect(Self.field("clicks", in: show.output) == "1" && Self.field("UTM", in: show.output) == "source=mail")
        let byJSON = try await Binary.run(["links", "show", "spring", "--json"], in: folder.path)
        let row = try JSONDecoder().decode([String: JSONValue].self, from: Data(byJSON.output.utf8))
        guard case .string(let id) = row["id"] else { throw StartupError("no id in \(byJSON.output)") }
        #expect(try await Binary.run(["links", "show", id], in: folder.path).output.contains("spring"), "found by its id too")

        let missing = try await Binary.run(["links", "show", "nope"], in: folder.path)
        #expect(
            missing.status == 1
                && missing.errorLines == ["linkrelay-server: No link 'nope' in this project (`linkrelay-server links list` shows them)."])
        #expect(try await Binary.run(["links", "list", "--limit", "0"], in: folder.path).status != 0)
    }

    @Test(
        "links update checks each field as the admin API does; links deactivate makes the code answer 404; stats --link prints its numbers")
    func updateDeactivateStats() async throws {
        let folder = try await Self.database()
        let updated = try await Binary.run(
            ["links", "update", "spring", "--title", "Spring sale", "--fields", #"{"deepLinkPath": "/sale"}"#], in: folder.path)
        #expect(updated.status == 0 && Self.field("title", in: updated.output) == "Spring sale")
        #expect(Self.field("deep link path", in: updated.output) == "/sale")

        let refused = try await Binary.run(["links", "update", "spring", "--original-url", "javascript:alert(1)"], in: folder.path)
        #expect(refused.status == 1 && refused.error.contains("originalUrl"), "\(refused.error)")
        let fixed = try await Binary.run(["links", "update", "spring", "--fields", #"{"shortCode": "autumn"}"#], in: folder.path)
        #expect(fixed.status == 1 && fixed.error.contains("shortCode cannot be changed"), "\(fixed.error)")
        #expect(try await Binary.run(["links", "update", "spring"], in: folder.path).status != 0, "nothing to change")

        let off = try await Binary.run(["links", "deactivate", "spring"], in: folder.path)
        #expect(off.status == 0 && off.output == "Deactivated spring.\n")
        #expect(try await Binary.run(["links", "list", "--inactive"], in: folder.path).output.contains("spring"))

        let stats = try await Binary.run(["stats", "--link", "spring"], in: folder.path)
        #expect(stats.status == 0, "\(stats.error)")
        #expect(stats.output.hasPrefix("spring: 1 clicks from 1 addresses in the last 30 days (bots not counted)"))
        #expect(stats.output.contains("by platform: ios 1") && stats.output.contains("by referrer: news.example.com 1"))
        #expect(stats.output.contains("by country: unknown 1") && stats.output.contains("installs: fingerprint 1"))
        #expect(try await Binary.run(["stats", "--link", "spring", "--days", "0"], in: folder.path).status != 0)

        // A running server on this file serves the edits: its code answers 404 once deactivated.
        let server = try await Binary.start(["serve", "--port", "0", "--no-access-log"], in: folder.path)
        let port = try await server.port()
        #expect(RawHTTP.get("/spring", port: port).hasPrefix("HTTP/1.1 404"))
        #expect(await server.stop() == 0)
    }
}
