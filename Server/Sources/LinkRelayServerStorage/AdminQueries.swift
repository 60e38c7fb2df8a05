import Foundation
import LinkRelayServerCore

extension LinkFilter {
    /// `search` as a `LIKE` pattern: lowercased, its `%`, `_` and `\` escaped, in `%…%`.
    var likePattern: String? {
        search.map { text in
            var pattern = "%"
            for character in text.lowercased() {
                if character == "%" || character == "_" || character == "\\" { pattern.append("\\") }
                pattern.append(character)
            }
            return pattern + "%"
        }
    }
}

extension SQLStore {
    package func links(project: String, filter: LinkFilter, after cursor: LinkCursor?, limit: Int) async throws -> [LinkRecord] {
        let pattern = filter.likePattern
        let searched: SQLStatement =
            pattern.map { pattern in
                """
                AND (lower(short_code) LIKE \(pattern) ESCAPE '\\' OR lower(COALESCE(title, '')) LIKE \(pattern) ESCAPE '\\'
                    OR lower(original_url) LIKE \(pattern) ESCAPE '\\')
                """
            } ?? ""
        let active: SQLStatement = filter.active.map { "AND is_active = \($0)" } ?? ""
        let template: SQLStatement = filter.templateSlug.map { "AND template_slug = \($0)" } ?? ""
        let after: SQLStatement =
            // The first bound gives the index its range; the second only settles ties.
            cursor.map { "AND created_at <= \($0.createdAt) AND (created_at < \($0.createdAt) OR id < \($0.id))" } ?? ""
        return try await engine.select(
            """
            \(sql: Self.linkColumns) WHERE project_id = \(project) \(sql: searched) \(sql: active) \(sql: template) \(sql: after)
            ORDER BY created_at DESC, id DESC LIMIT \(min(max(limit, 0), 1000))
            """
        ).map(Self.link)
    }

    package func clickCounts(links: [String]) async throws -> [String: Int] {
        guard !links.isEmpty else { return [:] }
        // One read of the daily totals for the page's links (a count of each link's clicks read
        // every click of it: 500,000 index entries for a busy link, per link, per page).
        var list: SQLStatement = "\(links[0])"
        for id in links.dropFirst() { list = "\(sql: list), \(id)" }
        var counts = Dictionary(uniqueKeysWithValues: links.map { ($0, 0) })
        for row in try await engine.select(
            "SELECT link_id, CAST(SUM(clicks) AS BIGINT) AS clicks FROM click_days WHERE dimension = 'total' AND link_id IN (\(sql: list)) GROUP BY link_id"
        ) {
            counts[try row["link_id"]] = try row["clicks"]
        }
        return counts
    }

    package func deleteLink(project: String, id: String) async throws -> Bool {
        guard let link = try await link(id: id), link.projectID == project else { return false }
        linkCache.forget(link.shortCode)
        linksByID.forget(link.id)
        defer {
            linkCache.forget(link.shortCode)
            linksByID.forget(link.id)
        }
        let deleted = try await engine.transaction { connection in
            _ = try await connection.run("DELETE FROM click_tokens WHERE link_id = \(id)")
            _ = try await connection.run("DELETE FROM clicks WHERE link_id = \(id)")
            _ = try await connection.run("DELETE FROM click_days WHERE link_id = \(id)")
            return try await connection.run("DELETE FROM links WHERE id = \(id) AND project_id = \(project) RETURNING id")
        }
        guard !deleted.isEmpty else { return false }
        await engine.announce(CacheChange.link(link.shortCode))
        await engine.announce(CacheChange.link(id: link.id))
        return true
    }

    /// The whole UTC days inside the range are read from the daily counts (a row per day and
    /// value, kept as clicks are written), the partial days at its two ends and the distinct
    /// addresses from the clicks themselves; on the analytics lane (``SQLEngine/readAnalytics(_:)``).
    /// Counting every click of the range took 3.5–8 s at 500,000 clicks of one link (issue 63, 8).
    package func clickSummary(project: String, link: String?, from: Date, to: Date) async throws -> ClickSummary {
        let day = 86_400_000
        let start = SQLTime.milliseconds(from)
        let end = SQLTime.milliseconds(to)
        guard start <= end else {
            return ClickSummary(
                total: 0, unique: 0, byDay: [], byPlatform: [], byCountry: [], byReferrer: [], byUTMSource: [], topLinks: [])
        }
        // Days `firstDay`…`lastDay` lie wholly inside [start, end] (none when firstDay > lastDay).
        let firstDay = start >= 0 ? (start + day - 1) / day : start / day
        let lastDay = (end + 1 >= 0 ? (end + 1) / day : (end + 1 - day + 1) / day) - 1
        let linkScope: SQLStatement = link.map { "AND link_id = \($0)" } ?? ""
        let whole = firstDay <= lastDay
        // The clicks read one by one: the ends outside the whole days (all of it without any).
        let edges: SQLStatement =
            whole
            ? "((clicked_at >= \(start) AND clicked_at < \(firstDay * day)) OR (clicked_at >= \((lastDay + 1) * day) AND clicked_at <= \(end)))"
            : "(clicked_at >= \(start) AND clicked_at <= \(end))"
        let edgeScope: SQLStatement = "FROM clicks WHERE project_id = \(project) \(sql: linkScope) AND \(sql: edges) AND is_bot = 0"
        let rangeScope: SQLStatement =
            "FROM clicks WHERE project_id = \(project) \(sql: linkScope) AND clicked_at >= \(start) AND clicked_at <= \(end) AND is_bot = 0"
        let dayScope: SQLStatement =
            "FROM click_days WHERE project_id = \(project) \(sql: linkScope) AND day >= \(firstDay) AND day <= \(lastDay)"

        var byDay: [Int: Int] = [:]
        var values: [String: [String?: Int]] = [:]
        var perLink: [String: Int] = [:]
        if whole {
            for row in try await engine.selectAnalytics(
                "SELECT dimension, value, day, CAST(SUM(clicks) AS BIGINT) AS clicks \(sql: dayScope) GROUP BY dimension, value, day")
            {
                let dimension: String = try row["dimension"]
                let value: String = try row["value"]
                let clicks: Int = try row["clicks"]
                if dimension == "total" {
                    byDay[try row["day"], default: 0] += clicks
                } else {
                    values[dimension, default: [:]][value.isEmpty ? nil : value, default: 0] += clicks
                }
            }
            if link == nil {
                for row in try await engine.selectAnalytics(
                    "SELECT link_id, CAST(SUM(clicks) AS BIGINT) AS clicks \(sql: dayScope) AND dimension = 'total' GROUP BY link_id")
                {
                    perLink[try row["link_id"], default: 0] += try row["clicks"] as Int
                }
            }
        }
        for row in try await engine.selectAnalytics(
            "SELECT clicked_at / 86400000 AS day, COUNT(*) AS clicks \(sql: edgeScope) GROUP BY clicked_at / 86400000")
        {
            byDay[try row["day"], default: 0] += try row["clicks"] as Int
        }
        for (dimension, column) in Self.summaryColumns {
            for row in try await engine.selectAnalytics(
                "SELECT \(trusted: column) AS name, COUNT(*) AS clicks \(sql: edgeScope) GROUP BY \(trusted: column)")
            {
                let name: String? = try row["name"]
                values[dimension, default: [:]][name, default: 0] += try row["clicks"] as Int
            }
        }
        if link == nil {
            for row in try await engine.selectAnalytics("SELECT link_id, COUNT(*) AS clicks \(sql: edgeScope) GROUP BY link_id") {
                perLink[try row["link_id"], default: 0] += try row["clicks"] as Int
            }
        }
        // Only distinct addresses need the clicks of the whole range.
        let unique: Int =
            try await engine.selectAnalytics("SELECT COUNT(DISTINCT COALESCE(ip, id)) AS addresses \(sql: rangeScope)").first?["addresses"]
            ?? 0
        let topIDs = perLink.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(10)
        var uniqueByLink: [String: Int] = [:]
        if let firstID = topIDs.first?.key {
            var list: SQLStatement = "\(firstID)"
            for (id, _) in topIDs.dropFirst() { list = "\(sql: list), \(id)" }
            for row in try await engine.selectAnalytics(
                "SELECT link_id, COUNT(DISTINCT COALESCE(ip, id)) AS addresses \(sql: rangeScope) AND link_id IN (\(sql: list)) GROUP BY link_id"
            ) {
                uniqueByLink[try row["link_id"]] = try row["addresses"]
            }
        }
        func top(_ dimension: String) -> [NamedCount] {
            (values[dimension] ?? [:]).filter { $0.value > 0 }
                .sorted { ($0.value, $1.key ?? "") > ($1.value, $0.key ?? "") }
                .prefix(ClickSummary.topValues).map { NamedCount(name: $0.key, count: $0.value) }
        }
        let days = byDay.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        return ClickSummary(
            total: days.reduce(0) { $0 + $1.value }, unique: unique, byDay: days.map { (day: $0.key, clicks: $0.value) },
            byPlatform: top("platform"), byCountry: top("country"), byReferrer: top("referrer"), byUTMSource: top("utm"),
            topLinks: topIDs.map { LinkClicks(linkID: $0.key, clicks: $0.value, uniqueClicks: uniqueByLink[$0.key] ?? 0) })
    }

    /// The dimensions of ``clickSummary(project:link:from:to:)`` and their click columns, named as
    /// the daily counts name them (``Migration/countedDimensions``).
    private static let summaryColumns = [
        ("platform", "platform"), ("country", "country"), ("referrer", "referrer_host"), ("utm", "utm_source"),
    ]

    package func installSummary(project: String, link: String?, from: Date, to: Date) async throws -> [NamedCount] {
        try await engine.selectAnalytics(
            """
            SELECT method AS name, COUNT(*) AS installs FROM installs WHERE project_id = \(project)
                \(sql: link.map { "AND link_id = \($0)" } ?? "") AND installed_at >= \(from) AND installed_at <= \(to)
            GROUP BY method ORDER BY installs DESC, method
            """
        ).map { NamedCount(name: try $0["name"], count: try $0["installs"]) }
    }
}

extension SQLStore {
    package func insertSession(_ session: DashboardSession) async throws {
        try await engine.run(
            """
            INSERT INTO dashboard_sessions (token_hash, project_id, key_id, csrf_token, created_at, expires_at)
            VALUES (\(session.tokenHash), \(session.projectID), \(session.keyID), \(session.csrfToken), \(session.createdAt), \(session.expiresAt))
            """)
    }

    package func session(hash: String, at now: Date) async throws -> DashboardSession? {
        try await engine.select(
            """
            SELECT s.token_hash, s.project_id, s.key_id, s.csrf_token, s.created_at, s.expires_at FROM dashboard_sessions s
            JOIN api_keys k ON k.id = s.key_id WHERE s.token_hash = \(hash) AND s.expires_at > \(now) AND k.revoked_at IS NULL
            """
        ).first.map { row in
            DashboardSession(
                tokenHash: try row["token_hash"], projectID: try row["project_id"], keyID: try row["key_id"],
                csrfToken: try row["csrf_token"],
                createdAt: try row["created_at"], expiresAt: try row["expires_at"])
        }
    }

    package func deleteSession(hash: String) async throws {
        try await engine.run("DELETE FROM dashboard_sessions WHERE token_hash = \(hash)")
    }

    package func deleteSessions(expiredBefore cutoff: Date) async throws -> Int {
        try await engine.run("DELETE FROM dashboard_sessions WHERE expires_at < \(cutoff) RETURNING token_hash").count
    }
}

extension SQLStore {
    package func linkCount(project: String) async throws -> Int {
        try await engine.select("SELECT COUNT(*) AS links FROM links WHERE project_id = \(project)").first?["links"] ?? 0
    }

    package func installs(project: String, link: String?, limit: Int) async throws -> [InstallRecord] {
        try await engine.select(
            """
            \(sql: Self.installColumns) WHERE project_id = \(project) \(sql: link.map { "AND link_id = \($0)" } ?? "")
            ORDER BY installed_at DESC, id DESC LIMIT \(min(max(limit, 0), 1000))
            """
        ).map(Self.install)
    }
}

extension SQLStore {
    package func eventSummary(project: String, from: Date, to: Date) async throws -> [EventDay] {
        // The revenue and currency the SDKs put in an event's properties (LinkForty's
        // `eventData.revenue` and `.currency`), read where they are a number and a string.
        let revenue: SQLStatement
        let currency: SQLStatement
        switch engine.dialect {
        // Summed in thousandths as whole numbers: the store's values are text and integers, and
        // a sum of floating-point amounts is not an amount.
        case .sqlite:
            revenue =
                "CASE WHEN json_type(properties, '$.revenue') IN ('integer', 'real') THEN CAST(ROUND(json_extract(properties, '$.revenue') * 1000) AS INTEGER) END"
            currency = "CASE WHEN json_type(properties, '$.currency') = 'text' THEN json_extract(properties, '$.currency') END"
        case .postgres:
            revenue =
                "CASE WHEN jsonb_typeof(properties::jsonb -> 'revenue') = 'number' THEN ROUND((properties::jsonb ->> 'revenue')::numeric * 1000) END"
            currency = "CASE WHEN jsonb_typeof(properties::jsonb -> 'currency') = 'string' THEN properties::jsonb ->> 'currency' END"
        }
        return try await engine.select(
            """
            SELECT name, occurred_at / 86400000 AS day, \(sql: currency) AS currency, COUNT(*) AS events, CAST(COALESCE(SUM(\(sql: revenue)), 0) AS TEXT) AS revenue
            FROM events WHERE project_id = \(project) AND occurred_at >= \(from) AND occurred_at <= \(to)
            GROUP BY name, occurred_at / 86400000, \(sql: currency) ORDER BY day DESC, name, currency
            """
        ).map { row in
            EventDay(
                name: try row["name"], day: try row["day"], currency: try row["currency"], count: try row["events"],
                revenue: (Decimal(string: try row["revenue"] as String) ?? 0) / 1000)
        }
    }
}

extension SQLStore {
    package func clicks(link: String, after cursor: TimeCursor?, limit: Int) async throws -> [ClickRecord] {
        // The first bound gives the index its range (an OR alone made each page read from the start).
        let after: SQLStatement = cursor.map { "AND clicked_at >= \($0.date) AND (clicked_at > \($0.date) OR id > \($0.id))" } ?? ""
        return try await engine.select(
            "\(sql: Self.clickColumns) WHERE link_id = \(link) \(sql: after) ORDER BY clicked_at, id LIMIT \(min(max(limit, 0), 10_000))"
        ).map(Self.click)
    }

    package func installs(project: String, after cursor: TimeCursor?, limit: Int) async throws -> [InstallRecord] {
        let after: SQLStatement = cursor.map { "AND installed_at >= \($0.date) AND (installed_at > \($0.date) OR id > \($0.id))" } ?? ""
        return try await engine.select(
            "\(sql: Self.installColumns) WHERE project_id = \(project) \(sql: after) ORDER BY installed_at, id LIMIT \(min(max(limit, 0), 10_000))"
        ).map(Self.install)
    }
}

extension SQLStore {
    package func dailyClicks(project: String, link: String?, fromDay: Int, toDay: Int) async throws -> DailyClicks {
        let scope: SQLStatement = """
            FROM click_days WHERE project_id = \(project) \(sql: link.map { "AND link_id = \($0)" } ?? "") AND day >= \(fromDay) AND day <= \(toDay)
            """
        let days = try await engine.select(
            "SELECT day, CAST(SUM(clicks) AS BIGINT) AS clicks \(sql: scope) AND dimension = 'total' GROUP BY day ORDER BY day")
        let byDay = try days.map { NamedCount(name: String(try $0["day"] as Int), count: try $0["clicks"]) }
        func breakdown(_ dimension: String) async throws -> [NamedCount] {
            try await engine.select(
                """
                SELECT value, CAST(SUM(clicks) AS BIGINT) AS clicks \(sql: scope) AND dimension = \(dimension) GROUP BY value
                ORDER BY clicks DESC, value LIMIT \(ClickSummary.topValues)
                """
            ).map { row in
                let value: String = try row["value"]
                return NamedCount(name: value.isEmpty ? nil : value, count: try row["clicks"])
            }
        }
        var top: [NamedCount] = []
        if link == nil {
            top = try await engine.select(
                "SELECT link_id, CAST(SUM(clicks) AS BIGINT) AS clicks \(sql: scope) AND dimension = 'total' GROUP BY link_id ORDER BY clicks DESC, link_id LIMIT 10"
            ).map { NamedCount(name: try $0["link_id"], count: try $0["clicks"]) }
        }
        return DailyClicks(
            total: byDay.reduce(0) { $0 + $1.count }, byDay: byDay, byPlatform: try await breakdown("platform"),
            byCountry: try await breakdown("country"), byReferrer: try await breakdown("referrer"), byUTMSource: try await breakdown("utm"),
            topLinks: top)
    }
}
