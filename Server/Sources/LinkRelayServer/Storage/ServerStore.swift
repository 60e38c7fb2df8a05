import Foundation
import LinkRelayServerCore
import ServiceLifecycle

/// Where the server keeps everything (what the install's attribution reads and writes is
/// ``AttributionStore``, in the Core): one protocol, two engines (``SQLStore/sqlite(path:create:)``, embedded, the
/// default; PostgreSQL for production and for several server processes). The same suite of
/// storage tests runs against both.
package protocol ServerStore: AttributionStore, Service {
    /// Applies every ``Migration`` the database has not applied yet, in order, each in one
    /// transaction; returns the versions applied now (empty when the database was up to date).
    /// - Throws: ``StoreError/newerSchema(found:known:)`` for a database a newer server made.
    func migrate() async throws -> [Int]
    /// The versions the database has applied, in order.
    func appliedMigrations() async throws -> [Int]

    /// Creates a project.
    func createProject(name: String, at date: Date) async throws -> Project
    /// Every project, oldest first.
    func projects() async throws -> [Project]

    /// Where links made with an SDK key may send people (``DestinationHosts``).
    func destinationHosts(project: String) async throws -> DestinationHosts
    /// Replaces the project's mode and hosts.
    func setDestinationHosts(project: String, _ hosts: DestinationHosts) async throws
    /// Adds `hosts` (exact names) to the project's list when its mode is
    /// ``DestinationHosts/Mode/learned`` (an admin's link or template uses them).
    func learnDestinationHosts(project: String, hosts: [String]) async throws
    /// The hosts every link and template of each project uses, learned once per project (those
    /// stored before the modes existed, ``Migration`` 15, and a project made since, at the next
    /// start); how many projects learned at least one host.
    func learnStoredDestinationHosts() async throws -> Int
    /// The project's pasteboard landing page (off, without a name or icon, for an unknown project).
    func landingPage(project: String) async throws -> LandingPageSettings
    /// Sets the project's pasteboard landing page.
    func setLandingPage(project: String, _ settings: LandingPageSettings) async throws

    // MARK: Click tokens (the pasteboard landing page)

    /// Stores a token the landing page hands out, on disk before the page is answered.
    func insertClickToken(_ token: ClickTokenRecord) async throws
    /// Deletes the tokens that expired before `cutoff`; how many.
    func deleteClickTokens(expiredBefore cutoff: Date) async throws -> Int

    /// Stores a key's record (its secret only as a hash).
    func insertKey(_ key: APIKeyRecord) async throws
    /// The key whose public prefix is `prefix`, revoked or not.
    func key(prefix: String) async throws -> APIKeyRecord?
    /// The keys of `project`, oldest first.
    func keys(project: String) async throws -> [APIKeyRecord]
    /// Marks the key `id` revoked at `date`; false when there is no such key.
    func revokeKey(id: String, at date: Date) async throws -> Bool

    /// Stores a template.
    /// - Throws: ``StoreError/Kind/conflict`` when its slug is taken.
    func insertTemplate(_ template: TemplateRecord) async throws
    /// The template of `project` with `id`.
    func template(project: String, id: String) async throws -> TemplateRecord?
    /// The template of `project` with `slug`.
    func template(project: String, slug: String) async throws -> TemplateRecord?

    /// Stores a link.
    /// - Throws: ``StoreError/Kind/conflict`` when its template slug and code are taken.
    func insertLink(_ link: LinkRecord) async throws
    /// Stores `link`'s editable fields over the stored link with its id and project (its code,
    /// template, owner and creation stay); `false` when there is none. Once this returns, this
    /// process serves the link as changed; the other processes on the database within a second
    /// (PostgreSQL's notice), at most the link cache's time.
    func updateLink(_ link: LinkRecord) async throws -> Bool
    /// The link with `shortCode` (and `templateSlug`, when given; the link without a template
    /// first otherwise), of `project` when given, live or not.
    func link(project: String?, shortCode: String, templateSlug: String?) async throws -> LinkRecord?
    /// How long a link read by its code may be kept in this process (``TimedCache``): 60 s
    /// unless set, `0` for none. A store without a cache ignores it.
    func setLinkCacheTTL(_ ttl: Duration)
    /// Where the store reports its group commits (size, time, clicks and events stored) and its
    /// failed writes (``ServerMetrics``); nowhere unless set. A store without them ignores it.
    func report(to metrics: ServerMetrics)
    /// The link of `project` made by the same request before (``LinkRecord/dedupeKey``).
    func link(project: String, dedupeKey: String) async throws -> LinkRecord?
    /// The link with `id`, as stored now.
    func link(id: String) async throws -> LinkRecord?

    // MARK: The admin API

    /// `project`'s links that `filter` lets through, newest first, after `cursor` when given, at
    /// most `limit` (at most 1,000).
    func links(project: String, filter: LinkFilter, after cursor: LinkCursor?, limit: Int) async throws -> [LinkRecord]
    /// How many clicks each of `links` has had, bots left out: the daily counts' sum, so clicks
    /// the retention deleted still count (one read for all of them).
    func clickCounts(links: [String]) async throws -> [String: Int]
    /// Deletes `project`'s link `id` with its clicks and click tokens (installs and events keep
    /// the link's id); `false` when there is none. Once this returns, its code answers 404 on this
    /// process; on the others within a second.
    func deleteLink(project: String, id: String) async throws -> Bool
    /// What `project`'s clicks (`link`'s only, when given) from `from` up to and including `to` add up to.
    func clickSummary(project: String, link: String?, from: Date, to: Date) async throws -> ClickSummary
    /// `project`'s installs (those attributed to `link`, when given) from `from` up to `to`, by
    /// method (`none` for organic), `to` included.
    func installSummary(project: String, link: String?, from: Date, to: Date) async throws -> [NamedCount]

    /// How many links `project` has.
    func linkCount(project: String) async throws -> Int
    /// `project`'s newest installs (those attributed to `link`, when given), at most `limit`
    /// (at most 1,000).
    func installs(project: String, link: String?, limit: Int) async throws -> [InstallRecord]

    /// `project`'s events from `from` up to and including `to` (their own times), by name, UTC
    /// day and revenue currency, newest day first.
    func eventSummary(project: String, from: Date, to: Date) async throws -> [EventDay]

    /// `link`'s clicks in time order after `cursor`, at most `limit` (at most 10,000): an export
    /// reads them a page at a time.
    func clicks(link: String, after cursor: TimeCursor?, limit: Int) async throws -> [ClickRecord]
    /// `project`'s installs in time order after `cursor`, at most `limit` (at most 10,000).
    func installs(project: String, after cursor: TimeCursor?, limit: Int) async throws -> [InstallRecord]

    /// What `project`'s clicks (`link`'s only, when given) add up to over the UTC days
    /// `fromDay`…`toDay` (days since 1970), from the daily counts kept as clicks are written.
    func dailyClicks(project: String, link: String?, fromDay: Int, toDay: Int) async throws -> DailyClicks

    // MARK: The dashboard's sessions

    /// Stores a signed-in browser's session.
    func insertSession(_ session: DashboardSession) async throws
    /// The session whose token hashes to `hash`, if it has not expired at `now` and its key is
    /// not revoked.
    func session(hash: String, at now: Date) async throws -> DashboardSession?
    /// Ends the session whose token hashes to `hash` (signing out).
    func deleteSession(hash: String) async throws
    /// Deletes the sessions that expired before `cutoff`; how many.
    func deleteSessions(expiredBefore cutoff: Date) async throws -> Int

    /// Stores a click; it is on disk when this returns (writes of concurrent requests are
    /// committed together).
    func recordClick(_ click: ClickRecord) async throws
    /// The clicks on `link`, oldest first.
    func clicks(link: String) async throws -> [ClickRecord]
    /// Deletes up to `limit` clicks made before `date` (the oldest first); how many it deleted.
    func deleteClicks(before date: Date, limit: Int) async throws -> Int
    /// The engine's own upkeep of the click store before ``deleteClicks(before:limit:)``: on
    /// PostgreSQL the day partitions around `now` made and those wholly before `cutoff` dropped;
    /// how many clicks went with them.
    func maintainClickPartitions(now: Date, droppingBefore cutoff: Date?) async throws -> Int

    /// The newest install of `project` with `fingerprintHash`.
    func latestInstall(project: String, fingerprintHash: String) async throws -> InstallRecord?

    /// Stores an event once: an event with the same ``EventRecord/dedupeKey`` in the project is
    /// the one stored before, returned as it was. On disk when this returns.
    func recordEvent(_ event: EventRecord) async throws -> EventOutcome
    /// The events of `install`, in the order they were received.
    func events(install: String) async throws -> [EventRecord]

    /// Registers an app (for the association files).
    func insertApp(_ app: AppRecord) async throws
    /// Every registered app, oldest first.
    func apps() async throws -> [AppRecord]

    /// How many rows each table holds.
    func counts() async throws -> StoreCounts

    /// Why the database cannot take a write now, or `nil` when it can: a probe write (one row
    /// rewritten), the newest real write having failed since the last that succeeded (a full
    /// disk may still take the probe), an SQLite file deleted or replaced under the server.
    /// Never throws: a failure is the answer.
    func writeProblem(at date: Date) async -> String?

    /// Closes the connections; nothing may be called afterwards. (``run()`` closes them as it
    /// ends: a store that runs is not closed by hand.)
    func close() async throws

    /// Whether the database answers (with the store running).
    /// - Throws: ``StoreError`` (`unusableLocation`) saying why not.
    func checkConnection() async throws
}

extension ServerStore {
    /// Runs `body` with the store running (``run()``: PostgreSQL's pool) in a child task, the
    /// database checked first; the store is closed when `body` returns or throws. For what is
    /// not a service of the server's `ServiceGroup`: a command that runs and ends, a test, a
    /// benchmark.
    package func withRunning<T>(_ body: (Self) async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.run() }
            defer { group.cancelAll() }
            try await checkConnection()
            return try await body(self)
        }
    }
}

/// A project: the links, keys, installs and events of one app (or one family of apps).
package struct Project: Sendable, Hashable, Codable {
    /// A random identifier (`prj_…`).
    package var id: String
    /// The name it was created with.
    package var name: String
    /// When it was created.
    package var createdAt: Date

    /// A project; see each property.
    package init(id: String, name: String, createdAt: Date) {
        self.id = id
        self.name = name
        self.createdAt = createdAt.storedPrecision
    }
}

/// How many of each the database holds.
package struct StoreCounts: Sendable, Hashable, Codable {
    package var projects: Int
    package var links: Int
    package var clicks: Int
    package var installs: Int
    package var events: Int

    /// Counts; see each property.
    package init(projects: Int, links: Int, clicks: Int, installs: Int, events: Int) {
        self.projects = projects
        self.links = links
        self.clicks = clicks
        self.installs = installs
        self.events = events
    }
}

/// A storage failure, without the SQL or the values (they may hold secrets).
package struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    package enum Kind: Sendable, Hashable {
        /// The database was made by a newer server (its schema version is higher than this one knows).
        case newerSchema(found: Int, known: Int)
        /// A statement failed.
        case failed
        /// A unique value (a link's code, a key's prefix) is taken.
        case conflict
        /// The database location is not one this server can open.
        case unusableLocation
    }

    /// What kind of failure.
    package var kind: Kind
    /// A sentence for a log or an operator.
    package var message: String

    /// A failure of `kind`, described by `message`.
    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The database was made by a newer server.
    package static func newerSchema(found: Int, known: Int) -> StoreError {
        StoreError(
            .newerSchema(found: found, known: known),
            "The database is at schema version \(found); this server knows up to \(known). Run a newer server.")
    }

    package var description: String { message }
}

extension ServerStore {
    package func setLinkCacheTTL(_ ttl: Duration) {}
    package func report(to metrics: ServerMetrics) {}
}

extension ServerStore {
    /// Adds the hosts `link` sends people to to its project's learned destination hosts
    /// (``learnDestinationHosts(project:hosts:)``): after an admin's link is made or edited.
    func learnDestinations(of link: LinkRecord) async throws {
        try await learnDestinationHosts(project: link.projectID, hosts: DestinationHosts.hosts(of: link.destinationURLs))
    }

    /// The same for `template`'s fallbacks, after an admin makes it.
    func learnDestinations(of template: TemplateRecord) async throws {
        try await learnDestinationHosts(project: template.projectID, hosts: DestinationHosts.hosts(of: template.destinationURLs))
    }
}
