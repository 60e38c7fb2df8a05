import LinkRelayServerCore

/// The database schema, one numbered step at a time. A step never changes once released: a
/// database made by an older server is brought up to date by the steps it has not applied, in
/// order, each in its own transaction, and `schema_migrations` records each one.
///
/// Times are whole milliseconds since 1970 (`INTEGER`/`BIGINT`) in both engines; JSON is text.
package struct Migration: Sendable, Hashable {
    /// The step's number, from 1, without gaps.
    package let version: Int
    /// What the step does, in a few words.
    package let name: String
    /// The statements for SQLite.
    package let sqlite: [String]
    /// The statements for PostgreSQL.
    package let postgres: [String]

    /// Every step, in order.
    package static let all: [Migration] = [
        Migration(
            version: 1, name: "projects, keys, links, clicks, installs, events",
            sqlite: schemaV1(integer: "INTEGER", bigint: "INTEGER"),
            postgres: schemaV1(integer: "INTEGER", bigint: "BIGINT")),
        Migration(
            version: 2, name: "templates, apps, link options, install fingerprints, events once",
            sqlite: schemaV2(integer: "INTEGER", bigint: "INTEGER"),
            postgres: schemaV2(integer: "INTEGER", bigint: "BIGINT")),
        Migration(
            version: 3, name: "clicks partitioned by day (PostgreSQL)",
            // SQLite keeps one table: retention deletes there in batches.
            sqlite: [], postgres: clicksByDay),
        Migration(
            version: 4, name: "a row the health check writes",
            sqlite: [healthTable(bigint: "INTEGER"), "INSERT INTO server_health (id, checked_at) VALUES (1, 0)"],
            postgres: [healthTable(bigint: "BIGINT"), "INSERT INTO server_health (id, checked_at) VALUES (1, 0)"]),
        Migration(
            version: 5, name: "a project's destination hosts for SDK-key links",
            sqlite: ["ALTER TABLE projects ADD COLUMN destination_hosts TEXT NOT NULL DEFAULT '[]'"],
            postgres: ["ALTER TABLE projects ADD COLUMN destination_hosts TEXT NOT NULL DEFAULT '[]'"]),
        Migration(
            version: 6, name: "clicks by exact address",
            // An IPv4 install is matched against its own address's clicks alone: found without
            // reading the rest of its /24, however many clicks one network holds (issue 48, §4.4).
            sqlite: ["CREATE INDEX clicks_by_address ON clicks (project_id, ip, clicked_at)"],
            postgres: ["CREATE INDEX clicks_by_address ON clicks (project_id, ip, clicked_at)"]),
        Migration(
            version: 7, name: "an install's network, and its platform by name",
            // An install holds the same device signals as a click (its network was only worked
            // out, never kept; NULL for the installs stored before), and its platform is one of
            // the clicks' names (`ios`, `android`, `web`) instead of the text its SDK sent
            // (`iOS`); a name the server does not know becomes NULL. The fingerprint hash keeps
            // the text as sent.
            sqlite: installDevice, postgres: installDevice),
        Migration(
            version: 8, name: "a network's devices counted newest first (PostgreSQL)",
            // SQLite counts with the query it had (``SQLStore/crowd``): it reads its rows in
            // order and its DISTINCT costs little there.
            sqlite: [], postgres: [networkDevicesFunction]),
        Migration(
            version: 9, name: "the pasteboard landing page and its click tokens",
            // A link's landing page (NULL: as its project says), the project's (off by default)
            // with the app's name and icon; the tokens the page copies, by their hash (a token is
            // a bearer secret), each naming one click until an install uses it; and a click an
            // install claimed with its token, which no other install's fingerprint then matches.
            sqlite: landingPages(integer: "INTEGER", bigint: "INTEGER"), postgres: landingPages(integer: "INTEGER", bigint: "BIGINT")),
        Migration(
            version: 10, name: "an install's Apple Ads token",
            // Kept with the install for an exchange with Apple's attribution API (not made
            // here); NULL for an install whose report carried none.
            sqlite: ["ALTER TABLE installs ADD COLUMN apple_ads_token TEXT"],
            postgres: ["ALTER TABLE installs ADD COLUMN apple_ads_token TEXT"]),
        Migration(
            version: 11, name: "where a click came from, and a project's clicks by time",
            // For the analytics routes: the referring page's host, the country a proxy in front
            // reports, the tap's (or its link's) utm_source; NULL for the clicks stored before.
            // A project's clicks in a time range are read by the overview.
            sqlite: clickSources, postgres: clickSources),
        Migration(
            version: 12, name: "the dashboard's sessions",
            // A signed-in browser: its cookie's token by its hash (a bearer secret), the key it
            // signed in with (revoking the key ends the session), its form token, its expiry.
            sqlite: dashboardSessions(bigint: "INTEGER"), postgres: dashboardSessions(bigint: "BIGINT")),
        Migration(
            version: 13, name: "clicks counted per link, day and source",
            // Kept as clicks are written (``SQLStore/countClicks(_:on:dialect:)``), so the
            // dashboard's pages read a row per day and value instead of every click; the clicks
            // stored before are counted here. Bots are not counted.
            sqlite: clickDays(bigint: "INTEGER"), postgres: clickDays(bigint: "BIGINT")),
        Migration(
            version: 14, name: "the health check's probe",
            // While a real write's failure stands, the health check writes 256 KiB here (and
            // NULL once healthy): a probe the size of real writes, not one row's timestamp.
            sqlite: ["ALTER TABLE server_health ADD COLUMN probe TEXT"], postgres: ["ALTER TABLE server_health ADD COLUMN probe TEXT"]),
        Migration(
            version: 15, name: "where SDK-key links may go, by default the hosts in use",
            // An empty list allowed any host (an open redirect on the brand's domain, issue 63,
            // 7). Now a project's mode says: `learned` (the default: the hosts its links and
            // templates use, learned from those an admin makes, and from every link stored
            // before, once: `hosts_learned`), `listed` (only the list; where an admin had set
            // one) or `any` (said explicitly, and warned about in the dashboard).
            sqlite: destinationModes, postgres: destinationModes),
    ]

    private static let destinationModes = [
        "ALTER TABLE projects ADD COLUMN destination_mode TEXT NOT NULL DEFAULT 'learned'",
        "ALTER TABLE projects ADD COLUMN hosts_learned INTEGER NOT NULL DEFAULT 0",
        "UPDATE projects SET destination_mode = 'listed', hosts_learned = 1 WHERE destination_hosts <> '[]'",
    ]

    /// The dimensions the daily counts keep, with the click column each counts by (`nil`: every
    /// click, the day's total).
    static let countedDimensions: [(name: String, column: String?)] = [
        ("total", nil), ("platform", "COALESCE(platform, '')"), ("country", "COALESCE(country, '')"),
        ("referrer", "COALESCE(referrer_host, '')"), ("utm", "COALESCE(utm_source, '')"),
    ]

    /// The `SELECT` that counts `table`'s clicks (bots left out) per link, day and value of each
    /// dimension, as `click_days` rows.
    static func countingSelect(from table: String) -> String {
        countedDimensions.map { dimension in
            let value = dimension.column ?? "''"
            let grouped = dimension.column.map { ", \($0)" } ?? ""
            return """
                SELECT link_id, project_id, clicked_at / 86400000, '\(dimension.name)', \(value), COUNT(*) FROM \(table)
                WHERE is_bot = 0 GROUP BY link_id, project_id, clicked_at / 86400000\(grouped)
                """
        }.joined(separator: " UNION ALL ")
    }

    private static func clickDays(bigint: String) -> [String] {
        [
            """
            CREATE TABLE click_days (
                link_id TEXT NOT NULL, project_id TEXT NOT NULL, day \(bigint) NOT NULL, dimension TEXT NOT NULL, value TEXT NOT NULL,
                clicks \(bigint) NOT NULL, PRIMARY KEY (link_id, day, dimension, value))
            """,
            "CREATE INDEX click_days_by_project ON click_days (project_id, dimension, day)",
            // The overview's installs by time, and a link's installs.
            "CREATE INDEX installs_by_time ON installs (project_id, installed_at)",
            "CREATE INDEX installs_by_link ON installs (link_id, installed_at)",
        ]
            + ["INSERT INTO click_days (link_id, project_id, day, dimension, value, clicks) " + countingSelect(from: "clicks")]
    }

    private static func dashboardSessions(bigint: String) -> [String] {
        [
            """
            CREATE TABLE dashboard_sessions (
                token_hash TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), key_id TEXT NOT NULL REFERENCES api_keys(id),
                csrf_token TEXT NOT NULL, created_at \(bigint) NOT NULL, expires_at \(bigint) NOT NULL)
            """,
            "CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_at)",
        ]
    }

    private static let clickSources = [
        "ALTER TABLE clicks ADD COLUMN referrer_host TEXT", "ALTER TABLE clicks ADD COLUMN country TEXT",
        "ALTER TABLE clicks ADD COLUMN utm_source TEXT", "CREATE INDEX clicks_by_project ON clicks (project_id, clicked_at)",
    ]

    private static func landingPages(integer: String, bigint: String) -> [String] {
        [
            "ALTER TABLE links ADD COLUMN landing_page \(integer)",
            "ALTER TABLE projects ADD COLUMN landing_page \(integer) NOT NULL DEFAULT 0",
            "ALTER TABLE projects ADD COLUMN app_name TEXT",
            "ALTER TABLE projects ADD COLUMN app_icon_url TEXT",
            """
            CREATE TABLE click_tokens (
                token_hash TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), link_id TEXT NOT NULL,
                click_id TEXT NOT NULL, clicked_at \(bigint) NOT NULL, expires_at \(bigint) NOT NULL, used_at \(bigint), install_id TEXT)
            """,
            "CREATE INDEX click_tokens_by_expiry ON click_tokens (expires_at)",
            "ALTER TABLE clicks ADD COLUMN claimed \(integer) NOT NULL DEFAULT 0",
        ]
    }

    /// The distinct devices (DeferredMatcher.deviceSignature's: agent, time zone, a language's
    /// first two letters lower-cased, screen) among a network's newest `rows` clicks that are
    /// not bots, from `since` to `now` and within their links' windows at `now`, counted up to
    /// `limit`: the clicks read newest first (a merge of each day's index, no sort:
    /// `enable_sort` off for its plan alone; the days after `now` left out), stopping at the
    /// `limit`th device. Times in milliseconds.
    private static let networkDevicesFunction = """
        CREATE FUNCTION linkrelay_network_devices(project text, prefix text, since bigint, now bigint, rows_read bigint, devices_limit bigint)
        RETURNS bigint LANGUAGE plpgsql STABLE SET enable_sort = off AS $$
        DECLARE
            seen text[] := '{}';
            click record;
            signature text;
        BEGIN
            IF devices_limit <= 0 THEN RETURN 0; END IF;
            FOR click IN
                SELECT c.user_agent, c.timezone, lower(substr(c.language, 1, 2)) AS language_code, c.screen_width, c.screen_height
                FROM clicks c JOIN links l ON l.id = c.link_id
                WHERE c.project_id = project AND c.network_prefix = prefix AND c.clicked_at >= since AND c.clicked_at <= now AND c.is_bot = 0
                    AND c.clicked_at >= now - l.attribution_window_hours * CAST(3600000 AS BIGINT)
                ORDER BY c.clicked_at DESC LIMIT rows_read
            LOOP
                -- Each value quoted, NULL unquoted: two devices share a signature only when
                -- every value is the same (NULLs alike, as DISTINCT has them).
                signature := concat_ws('|', quote_nullable(click.user_agent), quote_nullable(click.timezone),
                    quote_nullable(click.language_code), quote_nullable(click.screen_width), quote_nullable(click.screen_height));
                IF NOT (signature = ANY (seen)) THEN
                    seen := seen || signature;
                    IF cardinality(seen) >= devices_limit THEN RETURN devices_limit; END IF;
                END IF;
            END LOOP;
            RETURN cardinality(seen);
        END
        $$
        """

    private static let installDevice = [
        "ALTER TABLE installs ADD COLUMN network_prefix TEXT",
        """
        UPDATE installs SET platform = CASE lower(platform) WHEN 'ios' THEN 'ios' WHEN 'ipados' THEN 'ios' WHEN 'iphone os' THEN 'ios'
            WHEN 'android' THEN 'android' WHEN 'web' THEN 'web' ELSE NULL END
        WHERE platform IS NOT NULL
        """,
    ]

    /// One row, rewritten by every health check (``ServerStore/writeProblem(at:)``): a check that
    /// the database takes a write, not only that it answers.
    private static func healthTable(bigint: String) -> String {
        "CREATE TABLE server_health (id INTEGER PRIMARY KEY, checked_at \(bigint) NOT NULL)"
    }

    /// The newest version this server knows.
    package static let latestVersion: Int = all.last?.version ?? 0

    /// The table every engine keeps its applied steps in.
    static func bookkeeping(bigint: String) -> String {
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at \(bigint) NOT NULL)"
    }

    private static func schemaV1(integer: String, bigint: String) -> [String] {
        [
            """
            CREATE TABLE projects (
                id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at \(bigint) NOT NULL)
            """,
            """
            CREATE TABLE api_keys (
                id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id),
                prefix TEXT NOT NULL UNIQUE, secret_hash TEXT NOT NULL, scope TEXT NOT NULL, name TEXT NOT NULL,
                created_at \(bigint) NOT NULL, revoked_at \(bigint))
            """,
            """
            CREATE TABLE links (
                id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id),
                template_slug TEXT NOT NULL DEFAULT '', short_code TEXT NOT NULL, original_url TEXT NOT NULL,
                deep_link_path TEXT, app_scheme TEXT, ios_app_store_url TEXT, android_app_store_url TEXT,
                web_fallback_url TEXT, utm_parameters TEXT NOT NULL DEFAULT '{}',
                deep_link_parameters TEXT NOT NULL DEFAULT '{}', targeting_rules TEXT NOT NULL DEFAULT '{}',
                attribution_window_hours \(integer) NOT NULL DEFAULT 168, is_active \(integer) NOT NULL DEFAULT 1,
                expires_at \(bigint), created_at \(bigint) NOT NULL,
                UNIQUE (template_slug, short_code))
            """,
            """
            CREATE TABLE clicks (
                id TEXT PRIMARY KEY, link_id TEXT NOT NULL REFERENCES links(id), project_id TEXT NOT NULL,
                clicked_at \(bigint) NOT NULL, ip TEXT, network_prefix TEXT, user_agent TEXT, timezone TEXT,
                language TEXT, screen_width \(integer), screen_height \(integer), platform TEXT,
                is_bot \(integer) NOT NULL DEFAULT 0)
            """,
            // The deferred match looks clicks up by network and time, never by scanning the newest.
            "CREATE INDEX clicks_by_network ON clicks (project_id, network_prefix, clicked_at)",
            """
            CREATE TABLE installs (
                id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), link_id TEXT, click_id TEXT,
                confidence \(integer) NOT NULL, matched_factors TEXT NOT NULL DEFAULT '[]', method TEXT NOT NULL,
                installed_at \(bigint) NOT NULL, ip TEXT, user_agent TEXT, timezone TEXT, language TEXT,
                screen_width \(integer), screen_height \(integer), platform TEXT, platform_version TEXT,
                device_id TEXT, deep_link_data TEXT NOT NULL DEFAULT '{}')
            """,
            """
            CREATE TABLE events (
                id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id),
                install_id TEXT NOT NULL REFERENCES installs(id), name TEXT NOT NULL,
                properties TEXT NOT NULL DEFAULT '{}', occurred_at \(bigint) NOT NULL, received_at \(bigint) NOT NULL)
            """,
        ]
    }

    /// PostgreSQL's clicks as a table partitioned by `clicked_at`, one partition per UTC day
    /// (`clicks_pYYYYMMDD`), so the retention drops a whole day at once instead of deleting its
    /// rows; `clicks_default` takes a click no day partition is made for yet (a clock far ahead,
    /// an import of old clicks). The existing clicks move into day partitions made for them. The
    /// key is `(id, clicked_at)`: PostgreSQL wants the partition column in it.
    private static let clicksByDay: [String] = [
        "ALTER TABLE clicks RENAME TO clicks_unpartitioned",
        "ALTER INDEX clicks_pkey RENAME TO clicks_unpartitioned_pkey",
        "ALTER INDEX clicks_by_network RENAME TO clicks_unpartitioned_by_network",
        "ALTER INDEX clicks_by_link RENAME TO clicks_unpartitioned_by_link",
        """
        CREATE TABLE clicks (
            id TEXT NOT NULL, link_id TEXT NOT NULL REFERENCES links(id), project_id TEXT NOT NULL,
            clicked_at BIGINT NOT NULL, ip TEXT, network_prefix TEXT, user_agent TEXT, timezone TEXT,
            language TEXT, screen_width INTEGER, screen_height INTEGER, platform TEXT,
            is_bot INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (id, clicked_at)) PARTITION BY RANGE (clicked_at)
        """,
        "CREATE INDEX clicks_by_network ON clicks (project_id, network_prefix, clicked_at)",
        "CREATE INDEX clicks_by_link ON clicks (link_id, clicked_at)",
        "CREATE TABLE clicks_default PARTITION OF clicks DEFAULT",
        """
        DO $$
        DECLARE day BIGINT;
        BEGIN
            FOR day IN SELECT DISTINCT floor(clicked_at / 86400000.0)::BIGINT FROM clicks_unpartitioned LOOP
                EXECUTE format('CREATE TABLE %I PARTITION OF clicks FOR VALUES FROM (%s) TO (%s)',
                    'clicks_p' || to_char(to_timestamp(day * 86400) AT TIME ZONE 'UTC', 'YYYYMMDD'), day * 86400000, (day + 1) * 86400000);
            END LOOP;
        END $$
        """,
        "INSERT INTO clicks SELECT * FROM clicks_unpartitioned",
        "DROP TABLE clicks_unpartitioned",
    ]

    private static func schemaV2(integer: String, bigint: String) -> [String] {
        let linkColumns = [
            "template_id TEXT", "title TEXT", "description TEXT", "ios_universal_link TEXT", "android_app_link TEXT", "og_title TEXT",
            "og_description TEXT", "og_image_url TEXT", "append_click_id \(integer) NOT NULL DEFAULT 0", "external_user_id TEXT",
            "dedupe_key TEXT",
        ]
        let eventColumns = [
            "dedupe_key TEXT", "attributed_link_id TEXT", "attributed_click_id TEXT", "link_opened_at \(bigint)", "session_id TEXT",
            "sdk TEXT",
        ]
        return linkColumns.map { "ALTER TABLE links ADD COLUMN \($0)" }
            + eventColumns.map { "ALTER TABLE events ADD COLUMN \($0)" }
            + [
                "ALTER TABLE installs ADD COLUMN fingerprint_hash TEXT",
                "ALTER TABLE installs ADD COLUMN attribution_window_hours \(integer)",
                // Events made before version 2 each count as their own.
                "UPDATE events SET dedupe_key = id WHERE dedupe_key IS NULL",
                "CREATE UNIQUE INDEX events_once ON events (project_id, dedupe_key)",
                "CREATE INDEX events_by_install ON events (install_id, received_at)",
                "CREATE INDEX installs_by_fingerprint ON installs (project_id, fingerprint_hash, installed_at)",
                "CREATE INDEX links_by_dedupe ON links (project_id, dedupe_key)",
                "CREATE INDEX clicks_by_link ON clicks (link_id, clicked_at)",
                """
                CREATE TABLE templates (
                    id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), slug TEXT NOT NULL UNIQUE,
                    name TEXT NOT NULL, ios_app_store_url TEXT, android_app_store_url TEXT, web_fallback_url TEXT,
                    created_at \(bigint) NOT NULL)
                """,
                """
                CREATE TABLE apps (
                    id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), platform TEXT NOT NULL,
                    identifier TEXT NOT NULL, paths TEXT NOT NULL DEFAULT '[]', certificate_fingerprints TEXT NOT NULL DEFAULT '[]',
                    created_at \(bigint) NOT NULL, UNIQUE (platform, identifier))
                """,
            ]
    }
}
