import Foundation
import LinkRelay
import Logging
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The click store stays bounded by the longest attribution window.
@Suite("Click retention")
struct RetentionTests {
    @Test(
        "a sweep deletes, batch by batch, every click past the retention and nothing younger; less than 90 days is raised to 90",
        arguments: TestEngine.available)
    func sweep(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("abc")
            let now = world.clock.date
            let ages: [Double] = [1, 24 * 30, 24 * 89, 24 * 91, 24 * 120, 24 * 365, 24 * 400, 24 * 500, 24 * 900]
            try await world.store.importClicks(
                ages.enumerated().map { index, hours in
                    ClickRecord(
                        id: "c\(index)", linkID: link.id, projectID: world.project.id, clickedAt: now.addingTimeInterval(-hours * 3600),
                        device: DeviceSignals(), platform: nil,
                        isBot: false)
                })
            let retention = ClickRetention(
                store: world.store, retention: 86_400, batch: 2, clock: world.clock, logger: Logger(label: "test"))
            #expect(try await retention.sweep() == 6, "past 90 days: 91, 120, 365, 400, 500, 900 (a day was raised to 90)")
            #expect(Set(try await world.store.clicks(link: link.id).map(\.id)) == ["c0", "c1", "c2"])
            #expect(try await retention.sweep() == 0)
        }
    }

    @Test(
        "PostgreSQL: a pass analyzes the click partitions that hold clicks but were never analyzed, so a network's clicks are read through its own index",
        arguments: TestEngine.available.filter { $0 == .postgres })
    func analyzesNewPartitions(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let store = world.store
            let now = world.clock.date
            _ = try await store.maintainClickPartitions(now: now, droppingBefore: nil)
            let today = ClickDay(containing: now).table
            // Autovacuum kept away from it, so the test sees the partition as its first minute does.
            try await store.execute("ALTER TABLE \(today) SET (autovacuum_enabled = false)")
            // A bulk import (as a restore or a seed makes): 4,000 clicks today from 400 networks.
            var links: [LinkRecord] = []
            for index in 0..<20 { links.append(try await world.link("l\(index)")) }
            let clicks = (0..<4_000).map { index in
                ClickRecord(
                    linkID: links[index % 20].id, projectID: world.project.id, clickedAt: now.addingTimeInterval(-Double(index)),
                    device: DeviceSignals(ip: "10.\(index % 400 / 200).\(index % 200).7", userAgent: "agent \(index % 3)"), platform: .ios,
                    isBot: false)
            }
            try await store.importClicks(clicks)
            // The crowd's query, as `linkrelay_network_devices` runs it: which index reads today's partition.
            func index() async throws -> String {
                let plan = try await store.engine.select(
                    """
                    EXPLAIN SELECT c.user_agent FROM clicks c JOIN links l ON l.id = c.link_id
                    WHERE c.project_id = \(world.project.id) AND c.network_prefix = '10.0.5' AND c.clicked_at >= \(now.addingTimeInterval(-86_400))
                        AND c.clicked_at <= \(now) AND c.is_bot = 0 AND c.clicked_at >= 0 - l.attribution_window_hours * CAST(3600000 AS BIGINT)
                    ORDER BY c.clicked_at DESC LIMIT 2000
                    """
                ).map { try $0["QUERY PLAN"] as String }
                return plan.first { $0.contains(" on \(today) ") }.map {
                    String($0.split(separator: " ").first { $0.hasSuffix("_idx") } ?? "")
                } ?? ""
            }
            let before = try await index()
            #expect(before == "\(today)_project_id_clicked_at_idx", "without statistics: the project's whole day, as the bench found")
            #expect(try await store.analyzeNewClickPartitions() == [today], "only the partition holding clicks")
            #expect(try await store.analyzeNewClickPartitions() == [], "analyzed once")
            let after = try await index()
            #expect(
                after == "\(today)_project_id_network_prefix_clicked_at_idx", "with statistics: the network's own index (before: \(before))"
            )
        }
    }

    @Test(
        "PostgreSQL: a pass makes the day partitions from yesterday to two days ahead, moves waiting clicks into them, and drops whole expired days",
        arguments: TestEngine.available)
    func partitions(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("abc")
            let now = world.clock.date  // 2026-05-28T20:26:40Z
            func click(_ id: String, daysAgo: Double) -> ClickRecord {
                ClickRecord(
                    id: id, linkID: link.id, projectID: world.project.id, clickedAt: now.addingTimeInterval(-daysAgo * 86_400),
                    device: DeviceSignals(networkPrefix: "203.0.113"),
                    platform: nil, isBot: false)
            }
            // Before any pass every click waits in the default partition.
            try await world.store.importClicks([
                click("today", daysAgo: 0), click("old", daysAgo: 95), click("older", daysAgo: 200), click("edge", daysAgo: 89.9),
            ])
            let store = world.store
            func partitions() async throws -> [String: Int] {
                let names = try await store.engine.select(
                    "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'clicks'::regclass"
                ).map { try $0["name"] as String }
                var rows: [String: Int] = [:]
                for name in names {
                    rows[name] = try await store.engine.select("SELECT COUNT(*) AS n FROM \(trusted: name)").first?["n"] ?? 0
                }
                return rows
            }
            guard engine == .postgres else {
                #expect(try await store.maintainClickPartitions(now: now, droppingBefore: now) == 0, "SQLite has no partitions")
                return
            }
            #expect(try await partitions() == ["clicks_default": 4])

            // Keeping clicks forever: the partitions are made, nothing dropped; today's click moves.
            #expect(try await store.maintainClickPartitions(now: now, droppingBefore: nil) == 0)
            #expect(
                try await partitions() == [
                    "clicks_default": 3, "clicks_p20260527": 0, "clicks_p20260528": 1, "clicks_p20260529": 0, "clicks_p20260530": 0,
                ])
            // A second pass changes nothing.
            #expect(try await store.maintainClickPartitions(now: now, droppingBefore: nil) == 0)

            // Day partitions for the old clicks (as migration 3 makes them for existing clicks), then a 90-day retention pass.
            for (days, table) in [(95.0, "clicks_p20260222"), (200, "clicks_p20251109"), (89.9, "clicks_p20260227")] {
                let day = ClickDay(containing: now.addingTimeInterval(-days * 86_400))
                #expect(day.table == table)
                try await store.execute("CREATE TABLE \(day.table) (LIKE clicks INCLUDING DEFAULTS)")
                try await store.execute(
                    "WITH moved AS (DELETE FROM clicks_default WHERE clicked_at >= \(day.start) AND clicked_at < \(day.end) RETURNING *) INSERT INTO \(day.table) SELECT * FROM moved"
                )
                try await store.execute("ALTER TABLE clicks ATTACH PARTITION \(day.table) FOR VALUES FROM (\(day.start)) TO (\(day.end))")
            }
            let retention = ClickRetention(store: store, retention: 90 * 86_400, clock: world.clock, logger: Logger(label: "test"))
            #expect(try await retention.sweep() == 2, "the two days wholly past 90 days, dropped with their partitions")
            let left = try await partitions()
            #expect(left["clicks_p20260222"] == nil && left["clicks_p20251109"] == nil)
            #expect(left["clicks_p20260227"] == 1, "a day partly inside the retention stays; its click is younger than 90 days")
            #expect(Set(try await store.clicks(link: link.id).map(\.id)) == ["today", "edge"])
            // A click of a day whose partition is not made yet waits in the default partition and is found there.
            try await store.recordClick(click("ahead", daysAgo: -10))
            #expect(try await partitions()["clicks_default"] == 1)
            #expect(
                try await store.matchCandidates(
                    project: world.project.id, networkPrefix: "203.0.113", since: now.addingTimeInterval(-86_400 * 100), limit: 10
                ).map(\.click.id) == ["ahead", "today", "edge"])
        }
    }

    @Test("ClickDay: UTC days, their bounds and names, before 1970 too")
    func clickDays() {
        let day = ClickDay(containing: Date(timeIntervalSince1970: 86_400 * 3 + 5))
        #expect(day.number == 3 && day.start == 3 * 86_400_000 && day.end == 4 * 86_400_000 && day.table == "clicks_p19700104")
        #expect(ClickDay(table: "clicks_p19700104")?.number == 3)
        let before = ClickDay(containing: Date(timeIntervalSince1970: -1))
        #expect(before.number == -1 && before.table == "clicks_p19691231" && ClickDay(table: before.table)?.number == -1)
        #expect(
            ClickDay(table: "clicks_default") == nil && ClickDay(table: "clicks_p2026") == nil && ClickDay(table: "clicks_pabcdefgh") == nil
        )
    }

    @Test("retentions: NaN is the default 90 days, infinity forever, zero or negative raised to 90 days")
    func clamped() async throws {
        #expect(ServerConfiguration(clickRetention: .nan).clickRetention == DeferredMatcher.lookback)
        #expect(ServerConfiguration(clickRetention: .infinity).clickRetention == nil)
        #expect(ServerConfiguration(clickRetention: 0).clickRetention == DeferredMatcher.lookback)
        #expect(ServerConfiguration(clickRetention: -5).clickRetention == DeferredMatcher.lookback)
        let twoHundredDays: TimeInterval = 200 * 86_400
        #expect(ServerConfiguration(clickRetention: twoHundredDays).clickRetention == twoHundredDays)
        #expect(ServerConfiguration(clickRetention: nil).clickRetention == nil)
    }
}
