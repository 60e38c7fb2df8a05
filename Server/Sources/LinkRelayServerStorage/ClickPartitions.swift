import Foundation
import LinkRelayServerCore

extension SQLStore {
    /// On PostgreSQL, the click table's day partitions (see migration 3): the partitions from
    /// yesterday to two days ahead of `now` are made (a click of a day that has none yet waits in
    /// `clicks_default`, and moves into its day's partition when that is made), and, with a
    /// `cutoff`, every partition whose whole day is before it is dropped at once. How many clicks
    /// went with the dropped partitions. Servers sharing the database take turns (an advisory
    /// lock). On SQLite, nothing: 0.
    package func maintainClickPartitions(now: Date, droppingBefore cutoff: Date?) async throws -> Int {
        guard engine.dialect == .postgres else { return 0 }
        let today = ClickDay(containing: now)
        let dropped = try await engine.transaction { connection in
            try await connection.run("SELECT pg_advisory_xact_lock(\(Self.partitionLock))")
            for day in (today.number - 1)...(today.number + 2) {
                let day = ClickDay(number: day)
                guard let row = try await connection.run("SELECT to_regclass(\(day.table)) IS NULL AS missing").first,
                    try row["missing"] as Bool
                else { continue }
                // The table's name and the bounds are the server's own (a day's number), not input.
                let range = "FROM (\(day.start)) TO (\(day.end))"
                let waiting = try await connection.run(
                    "SELECT 1 AS found FROM clicks_default WHERE clicked_at >= \(day.start) AND clicked_at < \(day.end) LIMIT 1")
                if waiting.isEmpty {
                    try await connection.run("CREATE TABLE \(trusted: day.table) PARTITION OF clicks FOR VALUES \(trusted: range)")
                } else {
                    // The default partition holds clicks of this day: they move into the new one.
                    try await connection.run("CREATE TABLE \(trusted: day.table) (LIKE clicks INCLUDING DEFAULTS)")
                    try await connection.run(
                        "INSERT INTO \(trusted: day.table) SELECT * FROM clicks_default WHERE clicked_at >= \(day.start) AND clicked_at < \(day.end)"
                    )
                    try await connection.run("DELETE FROM clicks_default WHERE clicked_at >= \(day.start) AND clicked_at < \(day.end)")
                    try await connection.run("ALTER TABLE clicks ATTACH PARTITION \(trusted: day.table) FOR VALUES \(trusted: range)")
                }
            }
            guard let cutoff else { return 0 }
            let limit = SQLTime.milliseconds(cutoff)
            var dropped = 0
            let partitions = try await connection.run(
                "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'clicks'::regclass")
            for name in try partitions.map({ try $0["name"] as String }) {
                guard let day = ClickDay(table: name), day.end <= limit else { continue }
                if let row = try await connection.run("SELECT COUNT(*) AS clicks FROM \(trusted: day.table)").first {
                    dropped += try row["clicks"] as Int
                }
                try await connection.run("DROP TABLE \(trusted: day.table)")
            }
            return dropped
        }
        return dropped
    }

    /// Analyzes the click partitions that hold clicks but were never analyzed; their names. The
    /// retention's hourly pass (and its first, at start) calls it after the partitions' upkeep.
    ///
    /// Autovacuum never analyzes a partitioned table as a whole, and it analyzes a partition only
    /// on its next round (a minute apart, none with autovacuum off). Until then a partition has
    /// no statistics. That happens after a restore, a bulk import, or clicks moved out of the
    /// default partition. On such a partition the planner read a network's clicks for the
    /// crowd's count through the (project, time) index: every click of the project's week, 70 ms
    /// a count against 0.3 ms. Under load the install endpoint fell from 3,600 to 970 installs a
    /// second (RESULTS §2).
    @discardableResult
    package func analyzeNewClickPartitions() async throws -> [String] {
        guard engine.dialect == .postgres else { return [] }
        return try await engine.transaction { connection in
            // One process at a time, and never while another makes or drops a partition (the
            // lock ``maintainClickPartitions(now:droppingBefore:)`` holds): the other skips.
            guard try await connection.run("SELECT pg_try_advisory_xact_lock(\(Self.partitionLock)) AS locked").first?["locked"] == true
            else { return [] }
            let never = try await connection.run(
                """
                SELECT s.relname AS name FROM pg_stat_user_tables s JOIN pg_inherits i ON i.inhrelid = s.relid
                WHERE i.inhparent = 'clicks'::regclass AND s.last_analyze IS NULL AND s.last_autoanalyze IS NULL ORDER BY s.relname
                """)
            var analyzed: [String] = []
            for name in try never.map({ try $0["name"] as String }) {
                // Only the server's own names go into the statement (a day's table or the default).
                guard let table = ClickDay(table: name)?.table ?? (name == "clicks_default" ? name : nil), table == name else { continue }
                guard try await !connection.run("SELECT 1 AS found FROM \(trusted: table) LIMIT 1").isEmpty else { continue }
                try await connection.run("ANALYZE \(trusted: table)")
                analyzed.append(table)
            }
            return analyzed
        }
    }

    /// The bytes the click store takes: on PostgreSQL every click partition with its indexes
    /// and TOAST; on SQLite, which keeps one file, the pages in use of the whole database.
    package func clickBytes() async throws -> Int {
        if engine.dialect == .postgres {
            let row = try await engine.select(
                "SELECT COALESCE(SUM(pg_total_relation_size(relid)), 0)::BIGINT AS bytes FROM pg_partition_tree('clicks')"
            ).first
            return try row?["bytes"] ?? 0
        }
        let row = try await engine.select(
            "SELECT page_count * page_size - freelist_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size(), pragma_freelist_count()"
        ).first
        return try row?["bytes"] ?? 0
    }

    /// The advisory lock partition upkeep holds on PostgreSQL ("LRPT").
    static let partitionLock = 0x4C52_5054
}

/// A UTC day of clicks, as its partition knows it.
struct ClickDay {
    /// Days since 1970-01-01.
    let number: Int

    init(number: Int) {
        self.number = number
    }

    init(containing date: Date) {
        let milliseconds = SQLTime.milliseconds(date)
        number = milliseconds >= 0 ? milliseconds / 86_400_000 : -((-milliseconds + 86_399_999) / 86_400_000)
    }

    /// `clicks_pYYYYMMDD`; `nil` for any other name (the default partition).
    init?(table: String) {
        guard table.hasPrefix("clicks_p"), table.count == 16, let stamp = Int(table.dropFirst(8)) else { return nil }
        var components = DateComponents()
        components.year = stamp / 10_000
        components.month = stamp / 100 % 100
        components.day = stamp % 100
        guard let date = Self.calendar.date(from: components) else { return nil }
        self.init(containing: date)
    }

    /// The first millisecond of the day.
    var start: Int { number * 86_400_000 }
    /// The first millisecond of the next day.
    var end: Int { start + 86_400_000 }

    var table: String {
        let parts = Self.calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(number) * 86_400))
        return "clicks_p" + String(format: "%04d%02d%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()
}
