import Foundation
import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The deferred match's reads from the store, on each engine: the candidates of a network or of
/// one address, a stuffed network's bounds, and the crowd counted in the database.
@Suite("Deferred match: the store's reads")
struct MatchStoreTests {
    /// The installing phone (as the matcher's tests have it).
    static let phone = DeviceSignals(
        ip: "203.0.113.7", networkPrefix: "203.0.113", userAgent: "Acme Shop/2.3.0 iOS/17.4.1", timezone: "America/New_York",
        language: "en_US", screenWidth: 1179, screenHeight: 2556)

    @Test(
        "the candidate query: the project's clicks of the install's network, newest first, bots and clicks beyond 90 days left out",
        arguments: TestEngine.available)
    func candidates(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("abc", window: 2160)
            let foreignLink = LinkRecord(
                projectID: world.otherProject.id, shortCode: "abc2", originalURL: "https://x.example", createdAt: Date())
            try await world.store.insertLink(foreignLink)
            let now = world.clock.date
            func click(
                _ id: String, hoursAgo: Double, prefix: String = "203.0.113", bot: Bool = false, link: LinkRecord = link
            ) -> ClickRecord {
                ClickRecord(
                    id: id, linkID: link.id, projectID: link.projectID, clickedAt: now.addingTimeInterval(-hoursAgo * 3600),
                    device: DeviceSignals(networkPrefix: prefix), platform: nil,
                    isBot: bot)
            }
            for record in [
                click("old", hoursAgo: 2161), click("edge", hoursAgo: 2159), click("new", hoursAgo: 1), click("mid", hoursAgo: 10),
                click("bot", hoursAgo: 2, bot: true), click("elsewhere", hoursAgo: 1, prefix: "198.51.100"),
                click("foreign", hoursAgo: 1, link: foreignLink),
            ] { try await world.store.recordClick(record) }
            let found = try await world.store.matchCandidates(
                project: world.project.id, networkPrefix: "203.0.113", since: now.addingTimeInterval(-DeferredMatcher.lookback), limit: 100)
            #expect(found.map(\.click.id) == ["new", "mid", "edge"])
            #expect(found.allSatisfy { $0.windowHours == 2160 })
            let limited = try await world.store.matchCandidates(
                project: world.project.id, networkPrefix: "203.0.113", since: now.addingTimeInterval(-DeferredMatcher.lookback), limit: 2)
            #expect(limited.map(\.click.id) == ["new", "mid"])
        }
    }

    @Test(
        "a network stuffed with clicks: an IPv4 install reads its own address's clicks alone, and the crowd is counted among the network's newest 2,000",
        arguments: TestEngine.available)
    func stuffedNetwork(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("stuffed")
            let now = world.clock.date
            func click(_ id: String, minutesAgo: Double, address: String, width: Int = 1179) -> ClickRecord {
                ClickRecord(
                    id: id, linkID: link.id, projectID: link.projectID, clickedAt: now.addingTimeInterval(-minutesAgo * 60),
                    device: DeviceSignals(
                        ip: address,
                        networkPrefix: "203.0.113", userAgent: HTTPTest.safari, timezone: "America/New_York", language: "en-US",
                        screenWidth: width,
                        screenHeight: 2556), platform: .ios, isBot: false)
            }
            // Five devices of the network an hour ago, then 2,500 clicks of one more, spread
            // over the /24's other addresses, newer; the phone's own tap among them.
            var records = (0..<5).map { click("early\($0)", minutesAgo: 70, address: "203.0.113.\(50 + $0)", width: 700 + $0) }
            records += (0..<2_500).map {
                click("stuffed\($0)", minutesAgo: 60 - Double($0) / 50, address: "203.0.113.\(100 + $0 % 100)", width: 600)
            }
            records.append(click("mine", minutesAgo: 30, address: "203.0.113.7"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for record in records { group.addTask { try await world.store.recordClick(record) } }
                try await group.waitForAll()
            }
            let matcher = DeferredMatcher()
            let read = try await world.store.matchCandidates(for: Self.phone, project: world.project.id, matcher: matcher, at: now)
            #expect(read.map(\.click.id) == ["mine"], "the address's clicks, not the network's 2,506")
            let report = InstallReport(signals: Self.phone, platform: "iOS", platformVersion: "17.4.1")
            let attribution = try await AttributionService(store: world.store, matcher: matcher).attribute(
                report, project: world.project.id, at: now)
            #expect(attribution.install.clickID == "mine" && attribution.install.matchedFactors.contains("address"))
            #expect(attribution.timings.candidates == 1)
            #expect(try await world.store.install(project: world.project.id, id: attribution.install.id) == attribution.install, "stored")
            // With Core's /24 on request, the network's clicks are read (up to the candidate limit).
            let network = try await world.store.matchCandidates(
                for: Self.phone, project: world.project.id, matcher: DeferredMatcher(candidateLimit: 1_000, scoresIPv4Networks: true),
                at: now)
            #expect(network.count == 1_000)
            // The crowd among the newest 2,000 clicks: the stuffed device and the phone, not the five before them.
            let crowd = try await world.store.networkDevices(
                project: world.project.id, networkPrefix: "203.0.113", at: now, since: now.addingTimeInterval(-DeferredMatcher.crowdWindow),
                limit: 20)
            #expect(crowd == 2)
        }
    }

    @Test(
        "the crowd counted in the database is the matcher's own count: distinct devices within their links' windows, bots, other networks and later clicks left out, up to the limit",
        arguments: TestEngine.available)
    func networkDevices(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let week = try await world.link("week", window: 168)
            let day = try await world.link("day", window: 24)
            let now = world.clock.date
            var records: [ClickRecord] = []
            func click(
                _ id: String, hoursAgo: Double, link: LinkRecord, agent: String = HTTPTest.safari, language: String? = "en-US",
                width: Int? = 1179, bot: Bool = false, prefix: String = "203.0.113"
            ) {
                records.append(
                    ClickRecord(
                        id: id, linkID: link.id, projectID: link.projectID, clickedAt: now.addingTimeInterval(-hoursAgo * 3600),
                        device: DeviceSignals(
                            ip: prefix + ".9",
                            networkPrefix: prefix, userAgent: agent, timezone: "America/New_York", language: language, screenWidth: width,
                            screenHeight: width.map { _ in 2556 }), platform: .ios, isBot: bot))
            }
            click("a", hoursAgo: 1, link: week)
            click("a-again", hoursAgo: 30, link: week)  // the same phone: one device
            click("a-gb", hoursAgo: 2, link: week, language: "EN-gb")  // the same language's first two letters: one device
            click("b", hoursAgo: 100, link: week, width: 828)  // another screen, inside its week
            click("c", hoursAgo: 30, link: day, width: 1290)  // another screen, outside its link's day
            click("d", hoursAgo: 3, link: day, agent: "Mozilla/5.0 (Linux; Android 14) Chrome/124.0")
            click("e", hoursAgo: 5, link: week, language: nil, width: nil)  // no fingerprint: a device of its own
            click("bot", hoursAgo: 1, link: week, agent: "Slackbot-LinkExpanding 1.0", bot: true)
            click("elsewhere", hoursAgo: 1, link: week, width: 750, prefix: "198.51.100")
            click("later", hoursAgo: -1, link: week, width: 640)  // after the install's time: not yet a device of the network
            // A 90-day window: hours × 3,600,000 passes 32 bits (PostgreSQL's INTEGER arithmetic).
            let quarter = try await world.link("quarter", window: 2160)
            click("f", hoursAgo: 2000, link: quarter, width: 1125)
            for record in records { try await world.store.recordClick(record) }

            let since = now.addingTimeInterval(-DeferredMatcher.lookback)
            #expect(
                try await world.store.networkDevices(
                    project: world.project.id, networkPrefix: "203.0.113", at: now, since: since, limit: 20) == 5, "a, b, d, e, f")
            // The install endpoint counts the last week's.
            let lastWeek = now.addingTimeInterval(-DeferredMatcher.crowdWindow)
            let counted = try await world.store.networkDevices(
                project: world.project.id, networkPrefix: "203.0.113", at: now, since: lastWeek, limit: 20)
            #expect(counted == 4, "a, b, d, e")
            let candidates = try await world.store.matchCandidates(
                project: world.project.id, networkPrefix: "203.0.113", since: since, limit: 100)
            let phone = Self.phone
            // The matcher counting among the candidates decides as it does with the database's count.
            for threshold in 2...7 {
                let matcher = DeferredMatcher(sharedNetworkDevices: threshold, fingerprintWindowHours: 2160)
                #expect(
                    matcher.best(for: phone, among: candidates, at: now)?.sharedNetwork
                        == matcher.best(for: phone, among: candidates, networkDevices: counted, at: now)?.sharedNetwork)
                // The install endpoint asks for the crowd only when a quiet network would match:
                // a crowd lowers every candidate alike, so nothing matches there that did not before.
                var stranger = phone
                stranger.timezone = "Asia/Tokyo"
                stranger.screenWidth = 750
                #expect(matcher.best(for: stranger, among: candidates, networkDevices: 0, at: now) == nil)
                for crowd in [0, counted, 1000] {
                    #expect(matcher.best(for: stranger, among: candidates, networkDevices: crowd, at: now) == nil)
                }
            }
            #expect(
                try await world.store.networkDevices(project: world.project.id, networkPrefix: "203.0.113", at: now, since: since, limit: 2)
                    == 2)
            #expect(
                try await world.store.networkDevices(project: world.project.id, networkPrefix: "203.0.113", at: now, since: since, limit: 4)
                    == 4)
            #expect(
                try await world.store.networkDevices(
                    project: world.project.id, networkPrefix: "203.0.113", at: now, since: now.addingTimeInterval(-4 * 3600), limit: 20)
                    == 2, "a and d")
            #expect(
                try await world.store.networkDevices(
                    project: world.otherProject.id, networkPrefix: "203.0.113", at: now, since: since, limit: 20) == 0)
        }
    }

    @Test(
        "PostgreSQL counts a crowded network's devices newest first and stops at the limit: 25 devices' newest taps above 1,000 older ones, 20 counted from the rows up to the 20th (fewer than 100 read)",
        arguments: TestEngine.available.filter { $0 == .postgres })
    func crowdStopsAtTheLimit(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("carrier")
            let now = world.clock.date
            func click(_ id: String, minutesAgo: Double, width: Int) -> ClickRecord {
                ClickRecord(
                    id: id, linkID: link.id, projectID: link.projectID, clickedAt: now.addingTimeInterval(-minutesAgo * 60),
                    device: DeviceSignals(
                        ip: "203.0.113.\(width % 200)", networkPrefix: "203.0.113", userAgent: HTTPTest.safari, timezone: "Europe/Berlin",
                        language: "de-DE", screenWidth: width, screenHeight: 2556),
                    platform: .ios, isBot: false)
            }
            let older = (0..<1_000).map { click("old\($0)", minutesAgo: 600 + Double($0), width: 500 + $0 % 3) }
            let newest = (0..<25).map { click("new\($0)", minutesAgo: Double($0), width: 1000 + $0) }
            try await world.store.importClicks(older + newest)
            let since = now.addingTimeInterval(-DeferredMatcher.crowdWindow)
            let statement = SQLStore.crowd(
                project: world.project.id, networkPrefix: "203.0.113", at: now, since: since, limit: 20, dialect: .postgres)
            let (devices, fetched) = try await world.store.engine.transaction { connection -> (Int, Int) in
                let devices: Int = try await connection.run(statement).first?["devices"] ?? -1
                // This transaction's own reads of the clicks' day tables (the function's query).
                let fetched: Int =
                    try await connection.run(
                        "SELECT CAST(COALESCE(SUM(idx_tup_fetch), 0) AS BIGINT) AS fetched FROM pg_stat_xact_user_tables WHERE relname LIKE 'clicks%'"
                    ).first?["fetched"] ?? -1
                return (devices, fetched)
            }
            #expect(devices == 20)
            // 60 here: the function's loop fetches ten rows at a time, and each day's index gives its newest first.
            #expect(fetched <= 100, "read \(fetched) clicks of 1,025 for 20 devices")
            // All 28 devices when the limit allows.
            #expect(
                try await world.store.networkDevices(
                    project: world.project.id, networkPrefix: "203.0.113", at: now, since: since, limit: 100) == 28)
        }
    }

    @Test(
        "a network's crowd is counted once a minute of the install's time: a device new within the minute counts from the next count; with the link cache off, every time",
        arguments: TestEngine.available)
    func crowdKeptAMinute(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("carrier")
            let now = world.clock.date
            func click(_ id: String, at date: Date, width: Int) async throws {
                try await world.store.recordClick(
                    ClickRecord(
                        id: id, linkID: link.id, projectID: link.projectID, clickedAt: date,
                        device: DeviceSignals(
                            ip: "203.0.113.9", networkPrefix: "203.0.113", userAgent: HTTPTest.safari, timezone: "Europe/Berlin",
                            language: "de-DE",
                            screenWidth: width, screenHeight: 2556),
                        platform: .ios, isBot: false))
            }
            func count(at date: Date) async throws -> Int {
                try await world.store.networkDevices(
                    project: world.project.id, networkPrefix: "203.0.113", at: date,
                    since: date.addingTimeInterval(-DeferredMatcher.crowdWindow), limit: 20)
            }
            for index in 0..<3 { try await click("c\(index)", at: now.addingTimeInterval(-600), width: 700 + index) }
            #expect(try await count(at: now) == 3)
            try await click("new", at: now.addingTimeInterval(10), width: 900)
            #expect(try await count(at: now.addingTimeInterval(30)) == 3, "the count of 30 s before")
            #expect(try await count(at: now.addingTimeInterval(61)) == 4, "a minute on: counted again")
            world.store.setLinkCacheTTL(.zero)
            try await click("newer", at: now.addingTimeInterval(62), width: 901)
            #expect(try await count(at: now.addingTimeInterval(63)) == 5)
        }
    }
}
