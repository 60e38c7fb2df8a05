import Foundation
import LinkRelayServerCore
import PostgresNIO
import ServiceLifecycle

/// Where the server keeps everything: the Core's stores, each of a few requirements by what it
/// serves (``AttributionStore``, ``ProjectStore``, ``KeyStore``, ``LinkStore``, ``ClickStore``,
/// ``InstallStore``, ``EventStore``, ``SessionStore``, ``AnalyticsStore``), and what only a
/// database has: its migrations, its health, its connections. Two engines implement it
/// (``SQLStore/sqlite(path:create:)``, embedded, the default; PostgreSQL for production and for
/// several server processes), and the same suite of storage tests runs against both.
package protocol ServerStore: AttributionStore, ProjectStore, KeyStore, LinkStore, ClickStore, InstallStore, EventStore,
    SessionStore, AnalyticsStore, Service
{
    /// Applies every ``Migration`` the database has not applied yet, in order, each in one
    /// transaction; returns the versions applied now (empty when the database was up to date).
    /// - Throws: ``StoreError/newerSchema(found:known:)`` for a database a newer server made.
    func migrate() async throws -> [Int]
    /// The versions the database has applied, in order.
    func appliedMigrations() async throws -> [Int]

    /// How long a link read by its code may be kept in this process (``TimedCache``): 60 s
    /// unless set, `0` for none. A store without a cache ignores it.
    func setLinkCacheTTL(_ ttl: Duration)
    /// Where the store reports its group commits (size, time, clicks and events stored), its
    /// failed writes and its retention passes (``StoreMetrics``); nowhere unless set. A store
    /// without them ignores it.
    func report(to metrics: any StoreMetrics)

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

/// Whether `error` came from the database (a statement, a connection), not from a request's
/// values: a store's failure (a taken value's conflict is the request's) or PostgreSQL's.
package func isDatabaseError(_ error: any Error) -> Bool {
    if let error = error as? StoreError { return error.kind != .conflict }
    return error is PSQLError
}

extension ServerStore {
    package func setLinkCacheTTL(_ ttl: Duration) {}
    package func report(to metrics: any StoreMetrics) {}
}
