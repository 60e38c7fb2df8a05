import Foundation
import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The daily counts the dashboard reads (`click_days`): kept as clicks are written, through every
/// path a click is stored by, equal to counting the clicks themselves; the clicks a database held
/// before are counted when it is brought to version 13.
@Suite("Clicks counted per link, day and source")
struct DailyClicksTests {
    static let day = 20_500

    /// Clicks over four days, of two links, from every source, some of them bots'.
    static func clicks(_ spring: LinkRecord, _ summer: LinkRecord) -> [ClickRecord] {
        var clicks: [ClickRecord] = []
        let platforms: [DevicePlatform?] = [.ios, .android, .web, nil]
        for index in 0..<400 {
            let link = index % 3 == 0 ? summer : spring
            let date = Date(timeIntervalSince1970: Double(day - index % 4) * 86_400 + Double(index * 97 % 86_400))
            clicks.append(
                ClickRecord(
                    linkID: link.id, projectID: link.projectID, clickedAt: date, device: DeviceSignals(ip: "203.0.113.\(index % 50)"),
                    platform: platforms[index % 4], isBot: index % 11 == 0,
                    source: ClickSource(
                        referrerHost: index % 5 == 0 ? nil : "site\(index % 3).example", country: index % 2 == 0 ? "DE" : nil,
                        utmSource: ["mail", "ads", nil][index % 3])))
        }
        return clicks
    }

    /// `daily` and `raw` agree: totals, days, and every breakdown.
    static func agree(_ daily: DailyClicks, _ raw: ClickSummary) {
        #expect(daily.total == raw.total)
        #expect(daily.byDay.map { Int($0.name ?? "") ?? -1 } == raw.byDay.map(\.day) && daily.byDay.map(\.count) == raw.byDay.map(\.clicks))
        #expect(Set(daily.byPlatform) == Set(raw.byPlatform) && Set(daily.byCountry) == Set(raw.byCountry))
        #expect(Set(daily.byReferrer) == Set(raw.byReferrer) && Set(daily.byUTMSource) == Set(raw.byUTMSource))
    }

    @Test(
        "written one by one, in batches and by an import, the daily counts are what counting the clicks gives; a deleted link's go with it",
        arguments: TestEngine.available)
    func equalToCounting(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let spring = try await world.link("spring")
            let summer = try await world.link("summer")
            let clicks = Self.clicks(spring, summer)
            // A third through the group commit one at a time, the rest imported in one batch.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for click in clicks.prefix(130) { group.addTask { try await world.store.recordClick(click) } }
                try await group.waitForAll()
            }
            try await world.store.importClicks(Array(clicks.dropFirst(130)))
            let from = Date(timeIntervalSince1970: Double(Self.day - 3) * 86_400)
            let to = Date(timeIntervalSince1970: Double(Self.day + 1) * 86_400 - 0.001)
            for link in [spring.id, summer.id, nil] as [String?] {
                let daily = try await world.store.dailyClicks(project: world.project.id, link: link, fromDay: Self.day - 3, toDay: Self.day)
                let raw = try await world.store.clickSummary(project: world.project.id, link: link, from: from, to: to)
                Self.agree(daily, raw)
                if link == nil {
                    #expect(
                        daily.topLinks.map(\.name) == raw.topLinks.map(\.linkID)
                            && daily.topLinks.map(\.count) == raw.topLinks.map(\.clicks))
                }
            }
            // Two days only.
            let recent = try await world.store.dailyClicks(project: world.project.id, link: nil, fromDay: Self.day - 1, toDay: Self.day)
            #expect(
                recent.total
                    == clicks.filter { !$0.isBot && $0.clickedAt >= Date(timeIntervalSince1970: Double(Self.day - 1) * 86_400) }.count)
            // Another project sees none of them.
            #expect(
                try await world.store.dailyClicks(project: world.otherProject.id, link: nil, fromDay: 0, toDay: Self.day + 1).total == 0)
            #expect(try await world.store.deleteLink(project: world.project.id, id: summer.id))
            let after = try await world.store.dailyClicks(project: world.project.id, link: nil, fromDay: 0, toDay: Self.day + 1)
            #expect(after.topLinks.map(\.name) == [spring.id])
        }
    }

    /// What counting `clicks` themselves gives, as the analytics answer it.
    static func counted(_ clicks: [ClickRecord], link: String?, from: Date, to: Date) -> ClickSummary {
        let kept = clicks.filter { !$0.isBot && (link == nil || $0.linkID == link) && $0.clickedAt >= from && $0.clickedAt <= to }
        func top(_ value: (ClickRecord) -> String?) -> [NamedCount] {
            Dictionary(grouping: kept, by: value).map { NamedCount(name: $0.key, count: $0.value.count) }
                .sorted { ($0.count, $1.name ?? "") > ($1.count, $0.name ?? "") }.prefix(ClickSummary.topValues).map { $0 }
        }
        let days = Dictionary(grouping: kept) { Int(($0.clickedAt.timeIntervalSince1970 / 86_400).rounded(.down)) }.sorted {
            $0.key < $1.key
        }
        let byLink = Dictionary(grouping: kept, by: \.linkID).sorted { ($0.value.count, $1.key) > ($1.value.count, $0.key) }.prefix(10)
        func unique(_ clicks: [ClickRecord]) -> Int { Set(clicks.map { $0.device.ip ?? $0.id }).count }
        return ClickSummary(
            total: kept.count, unique: unique(kept), byDay: days.map { (day: $0.key, clicks: $0.value.count) },
            byPlatform: top { $0.platform?.rawValue }, byCountry: top(\.source.country), byReferrer: top(\.source.referrerHost),
            byUTMSource: top(\.source.utmSource),
            topLinks: link != nil ? [] : byLink.map { LinkClicks(linkID: $0.key, clicks: $0.value.count, uniqueClicks: unique($0.value)) })
    }

    @Test(
        "issue 63, 8: the analytics' summary, read from the daily counts for whole days and from the clicks at its ends, is what counting the clicks gives over any range",
        arguments: TestEngine.available)
    func summaryOverRanges(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let spring = try await world.link("spring")
            let summer = try await world.link("summer")
            let clicks = Self.clicks(spring, summer)
            try await world.store.importClicks(clicks)
            func at(_ day: Int, _ seconds: Double = 0) -> Date { Date(timeIntervalSince1970: Double(day) * 86_400 + seconds) }
            let ranges: [(Date, Date)] = [
                (at(Self.day - 3), at(Self.day + 1, -0.001)),  // four whole days
                (at(Self.day - 3, 3600.5), at(Self.day, 7200)),  // partial days at both ends
                (at(Self.day - 1, 100), at(Self.day - 1, 50_000)),  // within one day
                (at(Self.day - 2), at(Self.day - 2, 86_399.999)),  // exactly one day
                (at(Self.day - 2, 10), at(Self.day - 1, 5)),  // no whole day
                (at(Self.day), at(Self.day - 1)),  // backwards: nothing
                (at(0), at(Self.day + 400)),  // far wider than the clicks
            ]
            for (from, to) in ranges {
                for link in [nil, spring.id] as [String?] {
                    let summary = try await world.store.clickSummary(project: world.project.id, link: link, from: from, to: to)
                    #expect(summary == Self.counted(clicks, link: link, from: from, to: to), "\(from)…\(to), \(link ?? "project")")
                }
            }
        }
    }

    @Test("a version-12 database's clicks are counted when it is brought to version 13", arguments: TestEngine.available)
    func backfilled(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, reopen async throws in
            #expect(try await store.migrate(upTo: 12) == Array(1...12))
            let project = try await store.createProject(name: "acme", at: Date())
            let spring = LinkRecord(projectID: project.id, shortCode: "spring", originalURL: "https://acme.example", createdAt: Date())
            let summer = LinkRecord(projectID: project.id, shortCode: "summer", originalURL: "https://acme.example", createdAt: Date())
            try await store.insertLink(spring)
            try await store.insertLink(summer)
            let clicks = Self.clicks(spring, summer)
            // As version 12 stored them: the clicks alone.
            try await store.engine.transaction { connection in try await connection.runEach(clicks.map(SQLStore.clickInsert)) }
            try await store.close()
            try await reopen { reopened async throws in
                #expect(try await reopened.migrate() == Array(13...Migration.latestVersion))
                let daily = try await reopened.dailyClicks(project: project.id, link: nil, fromDay: Self.day - 3, toDay: Self.day)
                let raw = try await reopened.clickSummary(
                    project: project.id, link: nil, from: Date(timeIntervalSince1970: Double(Self.day - 3) * 86_400),
                    to: Date(timeIntervalSince1970: Double(Self.day + 1) * 86_400 - 0.001))
                Self.agree(daily, raw)
            }
        }
    }

    @Test(
        "two servers on one PostgreSQL storing batches of clicks at once never deadlock on the daily counts (each batch adds to its rows in one order)",
        arguments: TestEngine.available.filter { $0 == .postgres })
    func noDeadlocks(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            guard let url = TestEngine.postgresURL else { return }
            var links: [LinkRecord] = []
            for index in 0..<40 { links.append(try await world.link("l\(index)")) }
            let name = try #require(
                try await world.store.engine.select("SELECT current_database() AS name").first.map { try $0["name"] as String })
            // A deadlock is found after `deadlock_timeout` (a second by default): 10 ms here, so
            // a cycle costs the test little and each is counted.
            try await world.store.execute("ALTER DATABASE \(name) SET deadlock_timeout = '10ms'")
            let deadlocks: SQLStatement = "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
            let before = try #require(try await world.store.engine.select(deadlocks).first.map { try $0["deadlocks"] as Int })
            var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            components.path = "/" + name
            let database = try #require(components.url)
            // Batches of varied sizes over varied links, so the rows each adds to differ and a
            // count's hash table gives them out in orders of its own.
            func batch(_ seed: Int) -> [ClickRecord] {
                let platforms: [DevicePlatform] = [.ios, .android, .web]
                let countries: [String?] = ["DE", "FR", nil]
                let campaigns: [String?] = ["mail", "ads", nil]
                let count: Int = 20 + seed % 7 * 30
                return (0..<count).map { index -> ClickRecord in
                    let stride: Int = seed % 5 + 1
                    let link: LinkRecord = links[(index * stride + seed) % links.count]
                    let source = ClickSource(
                        referrerHost: "site\((index + seed) % 4).example", country: countries[index % 3],
                        utmSource: campaigns[(index * seed) % 3])
                    return ClickRecord(
                        linkID: link.id, projectID: link.projectID, clickedAt: world.clock.date,
                        device: DeviceSignals(ip: "203.0.113.\(index % 50)"), platform: platforms[(index + seed) % 3], isBot: false,
                        source: source)
                }
            }
            var stored = 0
            try await SQLStore.postgres(database).withRunning { first in
                try await SQLStore.postgres(database).withRunning { second in
                    stored = try await withThrowingTaskGroup(of: Int.self) { group in
                        for seed in 0..<48 {
                            let clicks = batch(seed)
                            group.addTask {
                                try await (seed % 2 == 0 ? first : second).importClicks(clicks)
                                return clicks.count
                            }
                        }
                        return try await group.reduce(0, +)
                    }
                }
            }
            let after = try #require(try await world.store.engine.select(deadlocks).first.map { try $0["deadlocks"] as Int })
            #expect(after - before == 0, "transactions ended by a deadlock")
            let counted = try await world.store.dailyClicks(
                project: world.project.id, link: nil, fromDay: EpochMilliseconds.of(world.clock.date) / 86_400_000 - 1,
                toDay: EpochMilliseconds.of(world.clock.date) / 86_400_000 + 1)
            #expect(counted.total == stored)
        }
    }
}
