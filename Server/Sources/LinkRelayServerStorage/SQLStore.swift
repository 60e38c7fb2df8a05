import Foundation
import LinkRelay
import LinkRelayServerCore
import Logging
import Synchronization

/// The store, on either engine: the statements are written once, in the SQL both SQLite and
/// PostgreSQL speak (`?` placeholders, which the PostgreSQL engine numbers), and the same
/// storage tests run against both.
package final class SQLStore: ServerStore {
    let engine: any SQLEngine
    let writes: GroupCommit<DurableWrite, DurableWritten>

    /// Which engine.
    package var dialect: SQLDialect { engine.dialect }

    /// The newest durable write's outcome, for ``writeProblem(at:)``.
    let lastWrite = WriteOutcomes()
    /// Links by code, for the redirect and the resolve: found ones 60 s (`setLinkCacheTTL`), a
    /// code not found 1 s.
    let linkCache = TimedCache<LinkRecord>(ttl: .seconds(60), missTTL: .seconds(1))
    /// Links by id, for the install's candidates (their windows) and its deferred link: kept as
    /// long as links by code.
    let linksByID = TimedCache<LinkRecord>(ttl: .seconds(60), missTTL: .seconds(1))
    /// Networks' crowds (``networkDevices(project:networkPrefix:at:since:limit:)``), each reused
    /// within a minute of the time it was counted at; off with the link cache.
    let crowds = TimedCache<KeptCrowd>(ttl: .seconds(60), missTTL: .zero)
    /// API keys by prefix, for every authenticated request: 1 s, so a key revoked by another
    /// process (`keys revoke`, a second server) is refused within a second; this process's own
    /// revocations and new keys at once.
    let keyCache = TimedCache<APIKeyRecord>(ttl: .seconds(1), missTTL: .seconds(1))
    /// Projects' landing page settings, for an iPhone's tap: kept as long as links (this
    /// process's changes forgotten at once, another process's through its notice).
    let landingPages = TimedCache<LandingPageSettings>(ttl: .seconds(60), missTTL: .seconds(1))
    /// Where group commits are reported (``report(to:)``).
    private let metrics: ReportedMetrics
    /// ``onForget``.
    private let forgetHook = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// How long a link read by its code is kept in this process (60 s unless set; 0 turns it off).
    package func setLinkCacheTTL(_ ttl: Duration) {
        linkCache.setTTL(ttl)
        linksByID.setTTL(ttl)
        landingPages.setTTL(ttl)
        crowds.setTTL(min(ttl, .seconds(60)))
    }

    init(engine: any SQLEngine) {
        self.engine = engine
        let outcomes = lastWrite
        let metrics = ReportedMetrics()
        self.metrics = metrics
        writes = GroupCommit { batch in
            let start = ContinuousClock.now
            // On a nearly full disk the journal is given back before each write, so it cannot
            // take the last of the space (or what the operator freed).
            await engine.reclaimSpaceIfLow()
            let results = await Self.commit(batch, engine: engine)
            let failures = outcomes.note(results)
            let reported = metrics.current
            if reported.isEnabled {
                var clicks = 0
                var events = 0
                for (write, result) in zip(batch, results) {
                    guard case .success = result else { continue }
                    switch write {
                    case .click: clicks += 1
                    case .event: events += 1
                    case .install: break
                    }
                }
                reported.groupCommit(
                    size: batch.count, duration: ContinuousClock.now - start, clicks: clicks, events: events, failures: failures)
            }
            return results
        }
    }

    package func report(to metrics: any StoreMetrics) {
        self.metrics.current = metrics
    }

    package func writeProblem(at date: Date) async -> String? {
        if let problem = engine.fileProblem() { return problem }
        await engine.reclaimSpaceIfLow()
        // While a real write's failure stands, only a probe larger than any real write clears
        // it (``WriteOutcomes``); otherwise the one-row write says the database takes writes.
        let standing = lastWrite.standing
        do {
            if let standing {
                let probe = Self.probeText()
                _ = try await engine.withConnection {
                    try await $0.run("UPDATE server_health SET checked_at = \(date), probe = \(probe) WHERE id = 1")
                }
                lastWrite.clear(unlessNewerThan: standing.failures)
            } else {
                _ = try await engine.withConnection {
                    try await $0.run("UPDATE server_health SET checked_at = \(date), probe = NULL WHERE id = 1")
                }
            }
        } catch {
            return standing?.problem ?? "the database refused a write: \(error)"
        }
        return lastWrite.problem
    }

    /// ``WriteOutcomes/probeBytes`` of random hexadecimal digits (which neither engine can
    /// compress into less).
    static func probeText() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: WriteOutcomes.probeBytes) { buffer in
            var index = 0
            while index < WriteOutcomes.probeBytes {
                var bits = generator.next()
                for _ in 0..<16 where index < WriteOutcomes.probeBytes {
                    buffer[index] = digits[Int(bits & 15)]
                    bits >>= 4
                    index += 1
                }
            }
            return index
        }
    }

    /// The embedded engine: the SQLite file at `path` (made when missing, unless `create` is
    /// `false`); `:memory:` for one that lives as long as the store.
    /// - Throws: ``StoreError`` (`unusableLocation`) saying why the file cannot be opened: its
    ///   folder missing or not writable, the file missing (without `create`), not a database.
    package static func sqlite(path: String, create: Bool = true) async throws -> SQLStore {
        SQLStore(engine: try await SQLiteEngine.open(path: path, create: create))
    }

    /// The PostgreSQL database `url` names (`postgres://user:password@host:port/database`): its
    /// pool runs in ``run()`` (a `ServiceGroup`'s service) or ``withRunning(_:)``.
    package static func postgres(_ url: URL, logger: Logger = Logger(label: "linkrelay.postgres")) throws -> SQLStore {
        SQLStore(engine: try PostgresEngine.connect(url, logger: logger))
    }

    /// Runs the engine (PostgreSQL's pool) until the task is cancelled or a graceful shutdown
    /// begins, then closes the store: the store as a service of the server's `ServiceGroup`,
    /// which shuts it down after the HTTP server and the retention job.
    package func run() async throws {
        await engine.run { [weak self] change in self?.forget(change) }
        try await engine.close()
    }

    /// What another process on the same database announces (PostgreSQL's `NOTIFY`), so this one
    /// forgets what it kept at once instead of at the cache's time limit.
    enum CacheChange {
        /// A link made or changed with this code.
        static func link(_ code: String) -> String { "link:" + code }
        /// The link with this id changed (links are kept by id too).
        static func link(id: String) -> String { "id:" + id }
        /// A key made with this prefix.
        static func key(_ prefix: String) -> String { "key:" + prefix }
        /// A project's landing page settings changed.
        static func landingPage(project: String) -> String { "landing:" + project }
        /// A key revoked.
        static let keys = "keys"
        /// Anything: the listener was away for a while.
        static let everything = "*"
    }

    /// Called with each change heard, after it is forgotten (a test's way to know it arrived).
    var onForget: (@Sendable (String) -> Void)? {
        get { forgetHook.withLock { $0 } }
        set { forgetHook.withLock { $0 = newValue } }
    }

    /// Forgets what `change` names (``CacheChange``).
    func forget(_ change: String) {
        defer { onForget?(change) }
        if change.hasPrefix("link:") {
            linkCache.forget(String(change.dropFirst(5)))
        } else if change.hasPrefix("id:") {
            linksByID.forget(String(change.dropFirst(3)))
        } else if change.hasPrefix("landing:") {
            landingPages.forget(String(change.dropFirst(8)))
        } else if change.hasPrefix("key:") {
            keyCache.forget(String(change.dropFirst(4)))
        } else if change == CacheChange.keys {
            keyCache.forgetAll()
        } else {
            linkCache.forgetAll()
            linksByID.forgetAll()
            keyCache.forgetAll()
            landingPages.forgetAll()
        }
    }

    /// Returns once this process hears the other processes' changes (PostgreSQL; at once on SQLite).
    package func listening() async {
        await engine.listening()
    }

    package func checkConnection() async throws {
        try await engine.checkConnection()
    }

    /// Runs one statement with nothing bound, on its own: administration (`CREATE DATABASE` for
    /// a test or a benchmark), and tests that write what another server version would have.
    package func execute(_ sql: String) async throws {
        try await engine.run(SQLStatement(trusted: sql))
    }

    package func counts() async throws -> StoreCounts {
        let row = try await engine.select(
            """
            SELECT (SELECT COUNT(*) FROM projects) AS projects, (SELECT COUNT(*) FROM links) AS links,
                (SELECT COUNT(*) FROM clicks) AS clicks, (SELECT COUNT(*) FROM installs) AS installs, (SELECT COUNT(*) FROM events) AS events
            """
        ).first
        guard let row else { throw StoreError(.failed, "The database counted nothing.") }
        return StoreCounts(
            projects: try row["projects"], links: try row["links"], clicks: try row["clicks"], installs: try row["installs"],
            events: try row["events"])
    }

    package func close() async throws {
        try await engine.close()
    }

    // MARK: Migrations

    package func migrate() async throws -> [Int] {
        try await migrate(upTo: Migration.latestVersion)
    }

    /// Applies the steps up to `version` (tests make a previous version's database with it).
    /// Several servers starting at once on one PostgreSQL database apply each step once: every
    /// step's transaction holds an advisory lock and checks again that the step is missing
    /// (on SQLite, `BEGIN IMMEDIATE` does the same).
    func migrate(upTo version: Int) async throws -> [Int] {
        let applied = Set(try await appliedMigrations())
        if let newest = applied.max(), newest > Migration.latestVersion {
            throw StoreError.newerSchema(found: newest, known: Migration.latestVersion)
        }
        var now: [Int] = []
        for migration in Migration.all where !applied.contains(migration.version) && migration.version <= version {
            let ran = try await engine.transaction { connection in
                if engine.dialect == .postgres { try await connection.run("SELECT pg_advisory_xact_lock(\(Self.migrationLock))") }
                guard try await connection.run("SELECT version FROM schema_migrations WHERE version = \(migration.version)").isEmpty
                else { return false }
                for statement in engine.dialect == .sqlite ? migration.sqlite : migration.postgres {
                    try await connection.run(SQLStatement(trusted: statement))
                }
                try await connection.run(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (\(migration.version), \(migration.name), \(Date()))")
                return true
            }
            if ran { now.append(migration.version) }
        }
        return now
    }

    /// The advisory lock migrations hold on PostgreSQL (any fixed number; "LRMG").
    static let migrationLock = 0x4C52_4D47

    package func appliedMigrations() async throws -> [Int] {
        try await engine.transaction { connection in
            if engine.dialect == .postgres { try await connection.run("SELECT pg_advisory_xact_lock(\(Self.migrationLock))") }
            try await connection.run(SQLStatement(trusted: Migration.bookkeeping(bigint: engine.dialect == .sqlite ? "INTEGER" : "BIGINT")))
            return try await connection.run("SELECT version FROM schema_migrations ORDER BY version").map { try $0["version"] }
        }
    }

    // MARK: Projects and keys

    package func createProject(name: String, at date: Date) async throws -> Project {
        let project = Project(id: "prj_" + APIKeys.randomString(16, alphabet: APIKeys.base62), name: name, createdAt: date)
        try await engine.run("INSERT INTO projects (id, name, created_at) VALUES (\(project.id), \(name), \(date))")
        return project
    }

    package func projects() async throws -> [Project] {
        try await engine.select("SELECT id, name, created_at FROM projects ORDER BY created_at, id").map { row in
            Project(id: try row["id"], name: try row["name"], createdAt: try row["created_at"])
        }
    }

    package func destinationHosts(project: String) async throws -> DestinationHosts {
        guard let row = try await engine.select("SELECT destination_mode, destination_hosts FROM projects WHERE id = \(project)").first
        else {
            return DestinationHosts(mode: .listed, hosts: [])
        }
        let mode: String = try row["destination_mode"]
        return DestinationHosts(
            mode: DestinationHosts.Mode(rawValue: mode) ?? .listed, hosts: try row.json("destination_hosts", as: [String].self, empty: []))
    }

    package func setDestinationHosts(project: String, _ hosts: DestinationHosts) async throws {
        try await engine.run(
            "UPDATE projects SET destination_mode = \(hosts.mode.rawValue), destination_hosts = \(SQLJSON(hosts.hosts)), hosts_learned = 1 WHERE id = \(project)"
        )
    }

    package func learnDestinationHosts(project: String, hosts: [String]) async throws {
        guard !hosts.isEmpty else { return }
        try await engine.transaction { connection in
            guard
                let row = try await connection.run("SELECT destination_mode, destination_hosts FROM projects WHERE id = \(project)").first,
                try row["destination_mode"] == DestinationHosts.Mode.learned.rawValue
            else { return }
            let known = try row.json("destination_hosts", as: [String].self, empty: [])
            let added = DestinationHosts.adding(hosts, to: known)
            guard added != known else { return }
            _ = try await connection.run("UPDATE projects SET destination_hosts = \(SQLJSON(added)) WHERE id = \(project)")
        }
    }

    package func learnStoredDestinationHosts() async throws -> Int {
        let pending: [String] = try await engine.select("SELECT id FROM projects WHERE hosts_learned = 0").map { try $0["id"] }
        var learned = 0
        for project in pending {
            var hosts: [String] = []
            var cursor: LinkCursor?
            repeat {
                let page = try await links(project: project, filter: LinkFilter(), after: cursor, limit: 1000)
                hosts = DestinationHosts.adding(page.flatMap { DestinationHosts.hosts(of: $0.destinationURLs) }, to: hosts)
                cursor = page.count == 1000 ? page.last.map(LinkCursor.init(after:)) : nil
            } while cursor != nil
            let fallbacks: [String?] = try await engine.select(
                "SELECT ios_app_store_url, android_app_store_url, web_fallback_url FROM templates WHERE project_id = \(project)"
            ).flatMap { row -> [String?] in
                [try row["ios_app_store_url"], try row["android_app_store_url"], try row["web_fallback_url"]]
            }
            hosts = DestinationHosts.adding(DestinationHosts.hosts(of: fallbacks), to: hosts)
            try await learnDestinationHosts(project: project, hosts: hosts)
            try await engine.run("UPDATE projects SET hosts_learned = 1 WHERE id = \(project)")
            if !hosts.isEmpty { learned += 1 }
        }
        return learned
    }

    package func insertKey(_ key: APIKeyRecord) async throws {
        keyCache.forget(key.prefix)
        defer { keyCache.forget(key.prefix) }
        try await engine.run(
            """
            INSERT INTO api_keys (id, project_id, prefix, secret_hash, scope, name, created_at, revoked_at)
            VALUES (\(key.id), \(key.projectID), \(key.prefix), \(key.secretHash), \(key.scope), \(key.name), \(key.createdAt),
                \(key.revokedAt))
            """)
        await engine.announce(CacheChange.key(key.prefix))
    }

    package func key(prefix: String) async throws -> APIKeyRecord? {
        try await keyCache.value(prefix) {
            try await engine.select(Self.key(prefix: prefix))
                .first.map(Self.key)
        }
    }

    package func keys(project: String) async throws -> [APIKeyRecord] {
        try await engine.select("\(sql: Self.keyColumns) WHERE project_id = \(project) ORDER BY created_at, id").map(Self.key)
    }

    package func revokeKey(id: String, at date: Date) async throws -> Bool {
        // Refused at once in this process: every kept key forgotten, before and after.
        keyCache.forgetAll()
        defer { keyCache.forgetAll() }
        let revoked = try await engine.transaction { connection in
            guard try await !connection.run("SELECT id FROM api_keys WHERE id = \(id)").isEmpty else { return false }
            try await connection.run("UPDATE api_keys SET revoked_at = \(date) WHERE id = \(id) AND revoked_at IS NULL")
            return true
        }
        // The other servers on the database refuse it at once too.
        if revoked { await engine.announce(CacheChange.keys) }
        return revoked
    }

    static func key(prefix: String) -> SQLStatement {
        ("\(sql: keyColumns) WHERE prefix = \(prefix)" as SQLStatement).prepared(HotStatement.Key.self)
    }

    static let keyColumns: SQLStatement = "SELECT id, project_id, prefix, secret_hash, scope, name, created_at, revoked_at FROM api_keys"

    static func key(_ row: SQLRow) throws -> APIKeyRecord {
        APIKeyRecord(
            id: try row["id"], projectID: try row["project_id"], prefix: try row["prefix"], secretHash: try row["secret_hash"],
            scope: try row["scope"], name: try row["name"], createdAt: try row["created_at"], revokedAt: try row["revoked_at"])
    }
}
