import Foundation
import LinkRelay
import LinkRelayServerCore

/// Clicks: storing them (with their daily counts), reading them, and the deferred match's candidates.
extension SQLStore {
    // MARK: Clicks

    package func recordClick(_ click: ClickRecord) async throws {
        _ = try await writes.submit(.click(click))
    }

    /// Stores many clicks in one transaction (an import, a benchmark's population): up to 1,000
    /// rows per statement.
    package func importClicks(_ clicks: [ClickRecord]) async throws {
        guard !clicks.isEmpty else { return }
        let dialect = engine.dialect
        try await engine.transaction { connection in try await Self.insertClicks(clicks, on: connection, dialect: dialect) }
    }

    /// `clicks` stored on `connection`, in its transaction. SQLite: one prepared `INSERT` run
    /// once per click, all of them in one trip to the writer's thread. PostgreSQL: one prepared
    /// statement per 1,000 clicks, each column bound as one array and the rows made by
    /// `unnest` (the same text whatever the count, so it stays prepared).
    static func insertClicks(_ clicks: [ClickRecord], on connection: any SQLConnection, dialect: SQLDialect) async throws {
        try await insertRows(
            clicks, on: connection, dialect: dialect, each: clickInsert, batch: clickBatch, perStatement: clicksPerStatement)
        // PostgreSQL's statement counted them itself (``clickBatch(_:)``).
        if dialect == .sqlite { try await connection.runEach(clickDayUpserts(clicks)) }
    }

    /// A day's count of clicks of one link with one value of one dimension (``Migration/countedDimensions``).
    struct ClickDayKey: Hashable, Comparable {
        var linkID: String
        var projectID: String
        var day: Int
        var dimension: String
        var value: String

        static func < (a: Self, b: Self) -> Bool {
            (a.linkID, a.day, a.dimension, a.value) < (b.linkID, b.day, b.dimension, b.value)
        }
    }

    /// SQLite's statements adding `clicks` (bots left out) to `click_days`, to run in the
    /// transaction that stores them: one per link, day, dimension and value the clicks hold.
    static func clickDayUpserts(_ clicks: [ClickRecord]) -> [SQLStatement] {
        var counts: [ClickDayKey: Int] = [:]
        for click in clicks where !click.isBot {
            let day = Int((click.clickedAt.timeIntervalSince1970 / 86_400).rounded(.down))
            let values = [
                ("total", ""), ("platform", click.platform?.rawValue ?? ""), ("country", click.source.country ?? ""),
                ("referrer", click.source.referrerHost ?? ""), ("utm", click.source.utmSource ?? ""),
            ]
            for (dimension, value) in values {
                counts[
                    ClickDayKey(linkID: click.linkID, projectID: click.projectID, day: day, dimension: dimension, value: value), default: 0] +=
                    1
            }
        }
        return counts.sorted { $0.key < $1.key }.map { key, count in
            """
            INSERT INTO click_days (link_id, project_id, day, dimension, value, clicks)
            VALUES (\(key.linkID), \(key.projectID), \(key.day), \(key.dimension), \(key.value), \(count))
            ON CONFLICT (link_id, day, dimension, value) DO UPDATE SET clicks = click_days.clicks + excluded.clicks
            """
        }
    }

    /// `rows` stored on `connection`: SQLite, `each` row's statement, all in one trip; PostgreSQL,
    /// `batch`'s statement for every `perStatement` rows.
    static func insertRows<Row>(
        _ rows: [Row], on connection: any SQLConnection, dialect: SQLDialect, each: (Row) -> SQLStatement,
        batch: (ArraySlice<Row>) -> SQLStatement, perStatement: Int
    ) async throws {
        guard !rows.isEmpty else { return }
        switch dialect {
        case .sqlite:
            try await connection.runEach(rows.map(each))
        case .postgres:
            var start = 0
            while start < rows.count {
                let chunk = rows[start..<min(start + perStatement, rows.count)]
                try await connection.run(batch(chunk))
                start += chunk.count
            }
        }
    }

    /// `clicks` as one PostgreSQL statement: each column bound as one array and the rows made
    /// by `unnest` (the same text whatever the count, so it stays prepared).
    static func clickBatch(_ clicks: ArraySlice<ClickRecord>) -> SQLStatement {
        func texts(_ value: (ClickRecord) -> String?) -> String { PostgresArrayLiteral.texts(clicks.map(value)) }
        func integers(_ value: (ClickRecord) -> Int?) -> String { PostgresArrayLiteral.integers(clicks.map(value)) }
        // The clicks and their daily counts in one statement: atomic alone, one round trip. The
        // counts go in ordered by their key (link, day, dimension, value), so two processes'
        // batches lock the rows they share in the same order: in the count's own order (its
        // hash table's) a viral link's rows were locked in opposite orders and PostgreSQL ended
        // one batch as a deadlock after a second, whose clicks were then stored one at a time.
        let counted = Migration.countingSelect(from: "inserted")
        let statement: SQLStatement = """
            WITH inserted AS (
            INSERT INTO clicks (id, link_id, project_id, clicked_at, \(sql: deviceColumns), platform, is_bot, referrer_host, country, utm_source)
            SELECT * FROM unnest(\(texts { $0.id })::text[], \(texts { $0.linkID })::text[], \(texts { $0.projectID })::text[],
                \(integers { SQLTime.milliseconds($0.clickedAt) })::bigint[], \(texts(\.device.ip))::text[],
                \(texts(\.device.networkPrefix))::text[], \(texts(\.device.userAgent))::text[], \(texts(\.device.timezone))::text[],
                \(texts(\.device.language))::text[], \(integers(\.device.screenWidth))::integer[],
                \(integers(\.device.screenHeight))::integer[], \(texts { $0.platform?.rawValue })::text[],
                \(integers { $0.isBot ? 1 : 0 })::integer[], \(texts(\.source.referrerHost))::text[], \(texts(\.source.country))::text[],
                \(texts(\.source.utmSource))::text[])
            RETURNING link_id, project_id, clicked_at, platform, is_bot, referrer_host, country, utm_source)
            INSERT INTO click_days (link_id, project_id, day, dimension, value, clicks)
            SELECT * FROM (\(trusted: counted)) AS counted ORDER BY 1, 3, 4, 5
            ON CONFLICT (link_id, day, dimension, value) DO UPDATE SET clicks = click_days.clicks + excluded.clicks
            """
        return statement.prepared(HotStatement.Clicks.self)
    }

    /// The most clicks one PostgreSQL statement stores.
    static let clicksPerStatement = 1000

    /// One click's row (SQLite stores a batch as this, run once per click).
    static func clickInsert(_ click: ClickRecord) -> SQLStatement {
        """
        INSERT INTO clicks (id, link_id, project_id, clicked_at, \(sql: deviceColumns), platform, is_bot, referrer_host, country, utm_source)
        VALUES (\(click.id), \(click.linkID), \(click.projectID), \(click.clickedAt), \(sql: deviceValues(click.device)), \(click.platform),
            \(click.isBot), \(click.source.referrerHost), \(click.source.country), \(click.source.utmSource))
        """
    }

    package func clicks(link: String) async throws -> [ClickRecord] {
        try await engine.select("\(sql: Self.clickColumns) WHERE link_id = \(link) ORDER BY clicked_at, id").map(Self.click)
    }

    package func deleteClicks(before date: Date, limit: Int) async throws -> Int {
        try await engine.run(
            "DELETE FROM clicks WHERE id IN (SELECT id FROM clicks WHERE clicked_at < \(date) ORDER BY clicked_at LIMIT \(max(limit, 0))) RETURNING id"
        ).count
    }

    package func matchCandidates(project: String, networkPrefix: String, since: Date, limit: Int) async throws -> [MatchCandidate] {
        try await candidates(
            try await engine.select(Self.candidates(project: project, networkPrefix: networkPrefix, since: since, limit: limit)))
    }

    /// The project's clicks from one network: the index (project_id, network_prefix,
    /// clicked_at) finds them; nothing else is read.
    static func candidates(project: String, networkPrefix: String, since: Date, limit: Int) -> SQLStatement {
        let statement: SQLStatement = """
            \(sql: candidateColumns) WHERE c.project_id = \(project) AND c.network_prefix = \(networkPrefix) AND c.clicked_at >= \(since)
                AND c.is_bot = 0 AND c.claimed = 0 ORDER BY c.clicked_at DESC, c.id DESC LIMIT \(max(limit, 0))
            """
        return statement.prepared(HotStatement.CandidatesByNetwork.self)
    }

    package func matchCandidates(project: String, address: String, since: Date, limit: Int) async throws -> [MatchCandidate] {
        try await candidates(try await engine.select(Self.candidates(project: project, address: address, since: since, limit: limit)))
    }

    /// The project's clicks from one address: the index (project_id, ip, clicked_at) finds them;
    /// the rest of the network is not read.
    static func candidates(project: String, address: String, since: Date, limit: Int) -> SQLStatement {
        let statement: SQLStatement = """
            \(sql: candidateColumns) WHERE c.project_id = \(project) AND c.ip = \(address) AND c.clicked_at >= \(since)
                AND c.is_bot = 0 AND c.claimed = 0 ORDER BY c.clicked_at DESC, c.id DESC LIMIT \(max(limit, 0))
            """
        return statement.prepared(HotStatement.CandidatesByAddress.self)
    }

    /// A candidate's columns: the click alone. Its link's window comes from ``linksByID``
    /// rather than a join: PostgreSQL planned the join over every day partition on each install
    /// (0.23–0.30 ms of planning against 0.14 ms without it, with the query prepared).
    static let candidateColumns: SQLStatement = "\(sql: clickColumns) c"

    /// The clicks of `rows` with their links' windows (a click whose link is gone is left out,
    /// as the join left it out).
    private func candidates(_ rows: [SQLRow]) async throws -> [MatchCandidate] {
        var windows: [String: Int?] = [:]
        var result: [MatchCandidate] = []
        result.reserveCapacity(rows.count)
        for row in rows {
            let click = try Self.click(row)
            if windows[click.linkID] == nil { windows[click.linkID] = .some(try await linkWindow(click.linkID)) }
            guard let window = windows[click.linkID] ?? nil else { continue }
            result.append(MatchCandidate(click: click, windowHours: window))
        }
        return result
    }

    /// A link's attribution window in hours (``cachedLink(id:)``); `nil` when there is no such link.
    func linkWindow(_ id: String) async throws -> Int? {
        try await cachedLink(id: id)?.attributionWindowHours
    }

    package func cachedLink(id: String) async throws -> LinkRecord? {
        try await linksByID.value(id) { try await engine.select(Self.linkByID(id)).first.map(Self.link) }
    }

    static func linkByID(_ id: String) -> SQLStatement {
        ("\(sql: linkColumns) WHERE id = \(id)" as SQLStatement).prepared(HotStatement.LinkByID.self)
    }

    /// Counted at most once a minute of the install's time per network (``crowds``): a week's
    /// devices change little in a minute, and on a carrier's network, where installs come many a
    /// second, the count was the most of the database's work per install.
    package func networkDevices(project: String, networkPrefix: String, at now: Date, since: Date, limit: Int) async throws -> Int {
        let group = project + "|" + networkPrefix
        let lookup = String(limit)
        if case let kept?? = crowds.cached(group, lookup), abs(kept.at.timeIntervalSince(now)) <= Self.crowdReuse,
            abs(kept.since.timeIntervalSince(since)) <= Self.crowdReuse
        {
            return kept.devices
        }
        let statement = Self.crowd(
            project: project, networkPrefix: networkPrefix, at: now, since: since, limit: limit, dialect: engine.dialect)
        let devices: Int = try await engine.select(statement).first?["devices"] ?? 0
        crowds.keep(KeptCrowd(devices: devices, at: now, since: since), group, lookup)
        return devices
    }

    /// A network's crowd as counted at a time (``networkDevices(project:networkPrefix:at:since:limit:)``).
    struct KeptCrowd: Sendable {
        let devices: Int
        let at: Date
        let since: Date
    }

    /// How far apart (in the install's time) two counts of a network's crowd may be one count.
    static let crowdReuse: TimeInterval = 60

    /// The distinct devices on a network, counted in the database, which stops at `limit`: a
    /// carrier's network holds hundreds of clicks a day, and none of them needs to reach the
    /// server's memory. The signature is DeferredMatcher.deviceSignature's (a language's first
    /// two letters, lower-cased); a click counts from its time (none after `now`) while within
    /// its link's window. Among the
    /// network's newest DeferredMatcher.crowdRows such clicks: a network stuffed with clicks of
    /// one signature costs that many rows, not all of them.
    ///
    /// PostgreSQL counts in `linkrelay_network_devices` (schema 8), which reads the same clicks
    /// newest first and stops at the `limit`th device: a crowded network (the case that asks)
    /// costs the rows up to its 20th device instead of all 2,000 sorted, 0.3 ms instead of 2.3
    /// on the benchmark's carriers, where the count took most of PostgreSQL's time per install.
    static func crowd(project: String, networkPrefix: String, at now: Date, since: Date, limit: Int, dialect: SQLDialect) -> SQLStatement {
        if dialect == .postgres {
            let statement: SQLStatement = """
                SELECT linkrelay_network_devices(\(project), \(networkPrefix), \(since), \(now), \(DeferredMatcher.crowdRows), \(max(limit, 0))) AS devices
                """
            return statement.prepared(HotStatement.Crowd.self)
        }
        return """
            SELECT COUNT(*) AS devices FROM (
                SELECT DISTINCT user_agent, timezone, language_code, screen_width, screen_height FROM (
                    SELECT c.user_agent, c.timezone, lower(substr(c.language, 1, 2)) AS language_code, c.screen_width, c.screen_height
                    FROM clicks c JOIN links l ON l.id = c.link_id
                    WHERE c.project_id = \(project) AND c.network_prefix = \(networkPrefix) AND c.clicked_at >= \(since)
                        AND c.clicked_at <= \(now) AND c.is_bot = 0
                        AND c.clicked_at >= \(now) - l.attribution_window_hours * CAST(3600000 AS BIGINT)
                    ORDER BY c.clicked_at DESC LIMIT \(DeferredMatcher.crowdRows)) AS newest
                LIMIT \(max(limit, 0))) AS seen
            """
    }

    static let clickColumns: SQLStatement =
        "SELECT id, link_id, project_id, clicked_at, \(sql: deviceColumns), platform, is_bot, referrer_host, country, utm_source FROM clicks"

    static func click(_ row: SQLRow) throws -> ClickRecord {
        ClickRecord(
            id: try row["id"], linkID: try row["link_id"], projectID: try row["project_id"], clickedAt: try row["clicked_at"],
            device: try DeviceSignals(row), platform: try row["platform"], isBot: try row["is_bot"],
            source: ClickSource(referrerHost: try row["referrer_host"], country: try row["country"], utmSource: try row["utm_source"]))
    }

    /// The columns that hold a device's signals (``DeviceSignals``), the same in `clicks` and
    /// `installs`.
    static let deviceColumns: SQLStatement = "ip, network_prefix, user_agent, timezone, language, screen_width, screen_height"

    /// `device`'s values, in ``deviceColumns``' order.
    static func deviceValues(_ device: DeviceSignals) -> SQLStatement {
        "\(device.ip), \(device.networkPrefix), \(device.userAgent), \(device.timezone), \(device.language), \(device.screenWidth), \(device.screenHeight)"
    }
}
