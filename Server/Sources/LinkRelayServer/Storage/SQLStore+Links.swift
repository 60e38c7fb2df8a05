import Foundation
import LinkRelay

/// Templates, apps, links and clicks.
extension SQLStore {
    // MARK: Templates and apps

    package func insertTemplate(_ template: TemplateRecord) async throws {
        try await engine.run(
            """
            INSERT INTO templates (id, project_id, slug, name, ios_app_store_url, android_app_store_url, web_fallback_url, created_at)
            VALUES (\(template.id), \(template.projectID), \(template.slug), \(template.name), \(template.iosAppStoreURL),
                \(template.androidAppStoreURL), \(template.webFallbackURL), \(template.createdAt))
            """)
    }

    package func template(project: String, id: String) async throws -> TemplateRecord? {
        try await engine.select("\(sql: Self.templateColumns) WHERE project_id = \(project) AND id = \(id)").first.map(Self.template)
    }

    package func template(project: String, slug: String) async throws -> TemplateRecord? {
        try await engine.select("\(sql: Self.templateColumns) WHERE project_id = \(project) AND slug = \(slug)").first.map(Self.template)
    }

    static let templateColumns: SQLStatement =
        "SELECT id, project_id, slug, name, ios_app_store_url, android_app_store_url, web_fallback_url, created_at FROM templates"

    static func template(_ row: SQLRow) throws -> TemplateRecord {
        TemplateRecord(
            id: try row["id"], projectID: try row["project_id"], slug: try row["slug"], name: try row["name"],
            iosAppStoreURL: try row["ios_app_store_url"], androidAppStoreURL: try row["android_app_store_url"],
            webFallbackURL: try row["web_fallback_url"], createdAt: try row["created_at"])
    }

    package func insertApp(_ app: AppRecord) async throws {
        try await engine.run(
            """
            INSERT INTO apps (id, project_id, platform, identifier, paths, certificate_fingerprints, created_at)
            VALUES (\(app.id), \(app.projectID), \(app.platform), \(app.identifier), \(SQLJSON(app.paths)),
                \(SQLJSON(app.certificateFingerprints)), \(app.createdAt))
            """)
    }

    package func apps() async throws -> [AppRecord] {
        try await engine.select(
            "SELECT id, project_id, platform, identifier, paths, certificate_fingerprints, created_at FROM apps ORDER BY created_at, id"
        ).map { row in
            AppRecord(
                id: try row["id"], projectID: try row["project_id"], platform: try row["platform"], identifier: try row["identifier"],
                paths: try row.json("paths", as: [String].self, empty: []),
                certificateFingerprints: try row.json("certificate_fingerprints", as: [String].self, empty: []), createdAt: try row["created_at"])
        }
    }

    // MARK: Links

    package func insertLink(_ link: LinkRecord) async throws {
        // Forgotten before and after: a lookup between the two cannot keep "no such code".
        linkCache.forget(link.shortCode)
        defer { linkCache.forget(link.shortCode) }
        try await engine.run(
            """
            INSERT INTO links (id, project_id, template_slug, short_code, original_url, deep_link_path, app_scheme,
                ios_app_store_url, android_app_store_url, web_fallback_url, utm_parameters, deep_link_parameters, targeting_rules,
                attribution_window_hours, is_active, expires_at, created_at, template_id, title, description, ios_universal_link,
                android_app_link, og_title, og_description, og_image_url, append_click_id, external_user_id, dedupe_key, landing_page)
            VALUES (\(link.id), \(link.projectID), \(link.templateSlug), \(link.shortCode), \(link.originalURL), \(link.deepLinkPath),
                \(link.appScheme), \(link.iosAppStoreURL), \(link.androidAppStoreURL), \(link.webFallbackURL), \(SQLJSON(link.utmParameters)),
                \(SQLJSON(link.deepLinkParameters)), \(SQLJSON(link.targetingRules)), \(link.attributionWindowHours), \(link.isActive),
                \(link.expiresAt), \(link.createdAt), \(link.templateID), \(link.title), \(link.description), \(link.iosUniversalLink),
                \(link.androidAppLink), \(link.ogTitle), \(link.ogDescription), \(link.ogImageURL), \(link.appendClickID),
                \(link.externalUserID), \(link.dedupeKey), \(link.landingPage))
            """)
        // The other servers on the database forget a "no such code" they kept for it.
        await engine.announce(CacheChange.link(link.shortCode))
    }

    package func updateLink(_ link: LinkRecord) async throws -> Bool {
        // As for a new link: forgotten before and after, and a read under way is not kept.
        linkCache.forget(link.shortCode)
        linksByID.forget(link.id)
        defer {
            linkCache.forget(link.shortCode)
            linksByID.forget(link.id)
        }
        let updated = try await engine.run(
            """
            UPDATE links SET original_url = \(link.originalURL), deep_link_path = \(link.deepLinkPath), app_scheme = \(link.appScheme),
                ios_app_store_url = \(link.iosAppStoreURL), android_app_store_url = \(link.androidAppStoreURL),
                web_fallback_url = \(link.webFallbackURL), utm_parameters = \(SQLJSON(link.utmParameters)),
                deep_link_parameters = \(SQLJSON(link.deepLinkParameters)), targeting_rules = \(SQLJSON(link.targetingRules)),
                attribution_window_hours = \(link.attributionWindowHours), is_active = \(link.isActive), expires_at = \(link.expiresAt),
                title = \(link.title), description = \(link.description), ios_universal_link = \(link.iosUniversalLink),
                android_app_link = \(link.androidAppLink), og_title = \(link.ogTitle), og_description = \(link.ogDescription),
                og_image_url = \(link.ogImageURL), append_click_id = \(link.appendClickID), landing_page = \(link.landingPage)
            WHERE id = \(link.id) AND project_id = \(link.projectID) RETURNING id
            """)
        guard !updated.isEmpty else { return false }
        await engine.announce(CacheChange.link(link.shortCode))
        await engine.announce(CacheChange.link(id: link.id))
        return true
    }

    package func link(project: String?, shortCode: String, templateSlug: String?) async throws -> LinkRecord? {
        try await linkCache.value(shortCode, "\(project ?? "*")|\(templateSlug ?? "*")") {
            try await readLink(project: project, shortCode: shortCode, templateSlug: templateSlug)
        }
    }

    private func readLink(project: String?, shortCode: String, templateSlug: String?) async throws -> LinkRecord? {
        try await engine.select(Self.linkByCode(project: project, shortCode: shortCode, templateSlug: templateSlug)).first.map(Self.link)
    }

    /// The link with `shortCode` (of `project`, under `templateSlug`, where given): one text
    /// whatever is given (a condition left out compares NULL), so it stays prepared.
    static func linkByCode(project: String?, shortCode: String, templateSlug: String?) -> SQLStatement {
        let statement: SQLStatement = """
            \(sql: linkColumns) WHERE short_code = \(shortCode) AND (\(project) IS NULL OR project_id = \(project))
                AND (\(templateSlug) IS NULL OR template_slug = \(templateSlug))
            ORDER BY template_slug, created_at LIMIT 1
            """
        return statement.prepared(HotStatement.LinkByCode.self)
    }

    package func link(project: String, dedupeKey: String) async throws -> LinkRecord? {
        try await engine.select("\(sql: Self.linkColumns) WHERE project_id = \(project) AND dedupe_key = \(dedupeKey) ORDER BY created_at LIMIT 1")
            .first.map(Self.link)
    }

    package func link(id: String) async throws -> LinkRecord? {
        try await engine.select(Self.linkByID(id)).first.map(Self.link)
    }

    static let linkColumns: SQLStatement = """
        SELECT id, project_id, template_slug, short_code, original_url, deep_link_path, app_scheme, ios_app_store_url,
            android_app_store_url, web_fallback_url, utm_parameters, deep_link_parameters, targeting_rules, attribution_window_hours,
            is_active, expires_at, created_at, template_id, title, description, ios_universal_link, android_app_link, og_title,
            og_description, og_image_url, append_click_id, external_user_id, dedupe_key, landing_page FROM links
        """

    static func link(_ row: SQLRow) throws -> LinkRecord {
        LinkRecord(
            id: try row["id"], projectID: try row["project_id"], templateSlug: try row["template_slug"], shortCode: try row["short_code"],
            originalURL: try row["original_url"], deepLinkPath: try row["deep_link_path"], appScheme: try row["app_scheme"],
            iosAppStoreURL: try row["ios_app_store_url"], androidAppStoreURL: try row["android_app_store_url"],
            webFallbackURL: try row["web_fallback_url"], utmParameters: try row.json("utm_parameters", as: [String: String].self, empty: [:]),
            deepLinkParameters: try row.json("deep_link_parameters", as: [String: JSONValue].self, empty: [:]),
            attributionWindowHours: try row["attribution_window_hours"], isActive: try row["is_active"], expiresAt: try row["expires_at"],
            createdAt: try row["created_at"], templateID: try row["template_id"], title: try row["title"], description: try row["description"],
            iosUniversalLink: try row["ios_universal_link"], androidAppLink: try row["android_app_link"],
            targetingRules: try row.json("targeting_rules", as: [String: JSONValue].self, empty: [:]), ogTitle: try row["og_title"],
            ogDescription: try row["og_description"], ogImageURL: try row["og_image_url"], appendClickID: try row["append_click_id"],
            externalUserID: try row["external_user_id"], dedupeKey: try row["dedupe_key"], landingPage: try row["landing_page"])
    }

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
        try await insertRows(clicks, on: connection, dialect: dialect, each: clickInsert, batch: clickBatch, perStatement: clicksPerStatement)
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
                counts[ClickDayKey(linkID: click.linkID, projectID: click.projectID, day: day, dimension: dimension, value: value), default: 0] += 1
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
        // The clicks and their daily counts in one statement: atomic alone, one round trip.
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
            INSERT INTO click_days (link_id, project_id, day, dimension, value, clicks) \(trusted: counted)
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
        try await candidates(try await engine.select(Self.candidates(project: project, networkPrefix: networkPrefix, since: since, limit: limit)))
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
        let statement = Self.crowd(project: project, networkPrefix: networkPrefix, at: now, since: since, limit: limit, dialect: engine.dialect)
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

/// PostgreSQL's array input (`{"a",NULL,"b\"c"}`), for a column of values bound as one text
/// and cast (`$1::text[]`): a value is quoted and its `\` and `"` escaped, so any text is
/// itself; NULL is unquoted.
enum PostgresArrayLiteral {
    static func texts(_ values: [String?]) -> String {
        // Byte by byte: `\` and `"` are single bytes in UTF-8 and never part of another character.
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(values.count * 24)
        for (index, value) in values.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard let value else {
                literal.append(contentsOf: "NULL".utf8)
                continue
            }
            literal.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { literal.append(UInt8(ascii: "\\")) }
                literal.append(byte)
            }
            literal.append(UInt8(ascii: "\""))
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }

    static func integers(_ values: [Int?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }
}

extension DeviceSignals {
    /// The signals in a row read with ``SQLStore/deviceColumns``.
    init(_ row: SQLRow) throws {
        self.init(
            ip: try row["ip"], networkPrefix: try row["network_prefix"], userAgent: try row["user_agent"], timezone: try row["timezone"],
            language: try row["language"], screenWidth: try row["screen_width"], screenHeight: try row["screen_height"])
    }
}
