import Foundation
import LinkRelayServerCore
import Logging
import NIOPosix
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value bound to a statement or read from a row: the three kinds the schema uses (times are
/// whole milliseconds, flags 0 or 1, JSON text), the same in both engines.
package enum SQLValue: Sendable, Hashable {
    case text(String)
    case integer(Int)
    case null

    /// What a value binds as, NULL included.
    enum Kind: Sendable {
        case text
        case integer
    }

    /// `text`, or `nil`.
    package var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// `integer`, or `nil`.
    package var int: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// A text value, or `null` for `nil`.
    static func text(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }
    /// An integer value, or `null` for `nil`.
    static func integer(_ value: Int?) -> SQLValue { value.map(SQLValue.integer) ?? .null }
    /// A time as whole milliseconds, or `null` for `nil`.
    static func time(_ date: Date?) -> SQLValue { date.map { .integer(SQLTime.milliseconds($0)) } ?? .null }
}

/// Which SQL the statements are written in where the engines differ.
package enum SQLDialect: Sendable {
    case sqlite
    case postgres
}

/// One connection, held for a sequence of statements (nothing else runs on it meanwhile).
protocol SQLConnection {
    /// Runs one statement, its values bound, and reads all of its rows.
    /// - Throws: ``StoreError`` naming the kind of statement and the database's reason, never a value.
    func query(_ statement: SQLStatement) async throws -> [SQLRow]
    /// Runs each statement in turn, their rows not read (a batch's inserts: on SQLite, one trip
    /// to the connection's thread for all of them, each statement prepared once).
    func runEach(_ statements: [SQLStatement]) async throws
}

extension SQLConnection {
    func runEach(_ statements: [SQLStatement]) async throws {
        for statement in statements { _ = try await query(statement) }
    }

    @discardableResult
    func run(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await query(statement)
    }
}

/// An engine: where connections come from.
protocol SQLEngine: Sendable {
    var dialect: SQLDialect { get }
    /// Runs `body` on a connection of its own.
    func withConnection<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T
    /// Runs `body`, which only reads, on a connection of its own: one that need not wait for
    /// writes (SQLite's WAL lets readers run beside the writer).
    func read<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T
    /// Runs `body`, which only reads and may read for long (an analytics scan of a link's
    /// half-million clicks took seconds), on a lane of its own: one such read at a time per
    /// process, never on the connections the taps and installs read on. Sixteen concurrent
    /// analytics calls used to hold both of SQLite's readers (and PostgreSQL's pool) for
    /// seconds each, and installs timed out behind them (issue 63, 8).
    func readAnalytics<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T
    /// Runs what the engine needs running (PostgreSQL's pool, and its listener for other
    /// processes' changes, each given to `changed`) until the task is cancelled or a graceful
    /// shutdown begins. SQLite needs nothing (one process per file): it waits.
    func run(changed: @escaping @Sendable (String) -> Void) async
    /// Tells the other processes on the database that what `change` names has changed
    /// (``SQLStore/CacheChange``); SQLite has no others.
    func announce(_ change: String) async
    /// Returns once this process hears the others' changes (at once where there are none).
    func listening() async
    /// Whether the database answers; SQLite's was checked when opened.
    func checkConnection() async throws
    /// Closes every connection.
    func close() async throws
    /// Why the database's file is not the one opened (deleted, replaced), or `nil`.
    func fileProblem() -> String?
    /// Before a write: gives back the journal's space when the disk is nearly full, so the
    /// journal cannot take the last of it (SQLite: ``SQLiteEngine/lowSpace``).
    func reclaimSpaceIfLow() async
}

extension SQLEngine {
    func run(changed: @escaping @Sendable (String) -> Void) async {
        // Until cancelled or a graceful shutdown begins: either ends the wait.
        try? await gracefulShutdown()
    }

    func announce(_ change: String) async {}

    func listening() async {}

    func checkConnection() async throws {}

    func fileProblem() -> String? { nil }
    func reclaimSpaceIfLow() async {}
}

extension SQLEngine {
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T {
        try await withConnection { connection in
            try await connection.run(dialect == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN")
            do {
                let result = try await body(connection)
                try await connection.run("COMMIT")
                return result
            } catch {
                _ = try? await connection.run("ROLLBACK")
                throw error
            }
        }
    }

    /// Runs one statement on a connection of its own.
    @discardableResult
    func run(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await withConnection { try await $0.run(statement) }
    }

    /// Runs one statement that only reads, on a reading connection.
    func select(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await read { try await $0.run(statement) }
    }

    /// Runs one statement that only reads and may read for long, on the analytics lane
    /// (``readAnalytics(_:)``).
    func selectAnalytics(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await readAnalytics { try await $0.run(statement) }
    }
}

/// Times as the database keeps them.
enum SQLTime {
    /// Whole milliseconds since 1970, bounded (a `Date` far outside ±10,000 years, an infinity
    /// too, is clamped; NaN is 0).
    static func milliseconds(_ date: Date) -> Int {
        EpochMilliseconds.of(date)
    }

    static func date(_ milliseconds: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }
}

/// The words a failed statement's error may show: its first two words (`INSERT INTO`), never
/// its values.
func statementVerb(_ sql: String) -> String {
    sql.trimmingCharacters(in: .whitespacesAndNewlines).split(whereSeparator: \.isWhitespace).prefix(2).joined(separator: " ")
}

// MARK: SQLite

/// SQLite: one file (WAL journal, `synchronous=FULL`, so a committed write survives a crash or a
/// power cut); one connection writes, statement sequences one at a time, and two more read
/// beside it (WAL lets readers see the last commit while a write runs), so a request's lookups
/// never wait behind another request's commit.
///
/// The connections are the server's own thin wrapper over the system's SQLite
/// (``SQLiteDatabase``): each keeps its statements prepared and reads a result's rows where it
/// ran. SQLite's calls block, so the writer has a thread of its own and the readers theirs: on
/// one shared pool a commit's statements queued behind every request's lookups, and under load
/// the writer, not the disk, set the pace.
final class SQLiteEngine: SQLEngine {
    private let writer: Connection
    private let readers: [Connection]
    /// The analytics lane's own connection and thread (``readAnalytics(_:)``); `nil` in memory.
    private let analytics: Connection?
    /// Every connection but the writer's: the readers and the analytics lane's.
    private var readOnly: [Connection] { readers + (analytics.map { [$0] } ?? []) }
    private let nextReader = Atomic<Int>(0)
    private let pools: [NIOThreadPool]
    private let closed = Atomic<Bool>(false)

    var dialect: SQLDialect { .sqlite }

    /// The file's path and identity (device, inode) when opened; `nil` in memory.
    private let file: (path: String, identity: [UInt64])?

    /// A connection, the lock that holds it for a sequence of statements, and its thread(s).
    private struct Connection {
        let database: SQLiteDatabase
        let lock = AsyncLock()
        let pool: NIOThreadPool
    }

    private init(writer: Connection, readers: [Connection], analytics: Connection?, pools: [NIOThreadPool], path: String?) {
        self.file = path.map { ($0, Self.identity(of: $0) ?? []) }
        self.writer = writer
        self.readers = readers
        self.analytics = analytics
        self.pools = pools
    }

    /// Opens the file at `path` (made when missing and `create` is set). Every connection it
    /// opened is closed again when a later step fails, so a failed start ends cleanly.
    static func open(path: String, create: Bool = true) async throws -> SQLiteEngine {
        let memory = path == ":memory:"
        if !memory { try DatabaseLocation.checkSQLitePath(path, create: create) }
        let writerPool = NIOThreadPool(numberOfThreads: 1)
        let readerPool = NIOThreadPool(numberOfThreads: 2)
        let analyticsPool = NIOThreadPool(numberOfThreads: 1)
        writerPool.start()
        readerPool.start()
        analyticsPool.start()
        var opened: [SQLiteDatabase] = []
        do {
            func connect(on pool: NIOThreadPool, pragmas: [String]) async throws -> Connection {
                let database = try await pool.runIfActive { try SQLiteDatabase.open(path: path, create: create) }
                opened.append(database)
                let connection = Connection(database: database, pool: pool)
                do {
                    for pragma in pragmas { _ = try await pool.runIfActive { try database.query(pragma, []) } }
                } catch let error as StoreError {
                    throw StoreError(.unusableLocation, "Cannot open the SQLite database at \(path): \(error.message)")
                }
                return connection
            }
            let writer = try await connect(
                on: writerPool,
                pragmas: (memory ? [] : ["PRAGMA journal_mode=WAL"]) + [
                    "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON", "PRAGMA busy_timeout=5000",
                ])
            // An in-memory database is the connection's own: it reads where it writes.
            var readers: [Connection] = []
            var analytics: Connection?
            if !memory {
                for _ in 0..<2 {
                    readers.append(try await connect(on: readerPool, pragmas: ["PRAGMA query_only=ON", "PRAGMA busy_timeout=5000"]))
                }
                analytics = try await connect(on: analyticsPool, pragmas: ["PRAGMA query_only=ON", "PRAGMA busy_timeout=5000"])
            }
            if memory {
                try? await readerPool.shutdownGracefully()
                try? await analyticsPool.shutdownGracefully()
            }
            return SQLiteEngine(
                writer: writer, readers: readers, analytics: analytics,
                pools: memory ? [writerPool] : [writerPool, readerPool, analyticsPool],
                path: memory ? nil : path)
        } catch {
            for database in opened { database.close() }
            try? await writerPool.shutdownGracefully()
            try? await readerPool.shutdownGracefully()
            try? await analyticsPool.shutdownGracefully()
            throw error
        }
    }

    func withConnection<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T {
        try await writer.lock.withLock { try await body(Handle(connection: writer)) }
    }

    func read<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T {
        guard !readers.isEmpty else { return try await withConnection(body) }
        let reader = readers[nextReader.add(1, ordering: .relaxed).oldValue % readers.count]
        return try await reader.lock.withLock { try await body(Handle(connection: reader)) }
    }

    func readAnalytics<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T {
        guard let analytics else { return try await read(body) }
        return try await analytics.lock.withLock { try await body(Handle(connection: analytics)) }
    }

    /// Runs `body` on the writer's own thread, the writer held: a sequence of statements with
    /// no trip between them (the group commit's batch: `BEGIN`, every write, `COMMIT` in one
    /// trip instead of one there and back per statement).
    func onWriterThread<T: Sendable>(_ body: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T {
        let database = writer.database
        return try await writer.lock.withLock { try await writer.pool.runIfActive { try body(database) } }
    }

    /// Statements prepared by every connection so far (each distinct text once per connection
    /// while kept): what the statement cache saves is visible to a test.
    var statementsPrepared: Int {
        ([writer] + readOnly).reduce(0) { $0 + $1.database.statementsPrepared }
    }

    /// The device and inode of the file at `path`, or `nil` when there is none.
    static func identity(of path: String) -> [UInt64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
    }

    func fileProblem() -> String? {
        guard let file else { return nil }
        guard let now = Self.identity(of: file.path) else {
            return
                "the database file \(file.path) was deleted while the server runs (its writes go to a file no one can open again; restore it and restart)"
        }
        return now == file.identity ? nil : "the database file \(file.path) was replaced while the server runs (restart to use the new one)"
    }

    /// The WAL checkpointed into the database and truncated to nothing; whether it completed.
    /// SQLite checkpoints by itself at about 4 MiB of WAL; on a disk that fills first (a small
    /// volume, or a nearly full one) the WAL kept every page version since the last checkpoint
    /// (about 24 KiB per click committed alone), the checkpoint then had no room to write the
    /// database, and freeing space bought only a few more commits before the WAL took that too
    /// (issue 48, §4.11: 84 clicks filled 2 MiB, and 46 more the freed megabyte).
    @discardableResult
    func reclaimSpace() async -> Bool {
        guard file != nil else { return true }
        do {
            let row = try await withConnection { try await $0.run("PRAGMA wal_checkpoint(TRUNCATE)") }.first
            return try row.map { row -> Int in try row["busy"] } == 0
        } catch {
            return false
        }
    }

    /// Below this many free bytes on the database's volume, the WAL is checkpointed and
    /// truncated before each write (``reclaimSpaceIfLow()``): 16 MiB, four times what SQLite lets
    /// the WAL reach before it checkpoints by itself. Writes are slower then (a checkpoint each),
    /// and the disk's last bytes hold data rather than old page versions.
    static let lowSpace: UInt64 = 16 << 20

    func reclaimSpaceIfLow() async {
        guard let file, let free = Self.freeBytes(near: file.path), free < Self.lowSpace else { return }
        await reclaimSpace()
    }

    /// The bytes an unprivileged writer may still use on the volume holding `path`.
    static func freeBytes(near path: String) -> UInt64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return UInt64(info.f_bavail) &* UInt64(info.f_frsize)
    }

    /// Closes the connections and stops their threads; a second call does nothing.
    func close() async throws {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        for connection in readOnly + [writer] {
            let database = connection.database
            try await connection.lock.withLock { try await connection.pool.runIfActive { database.close() } }
        }
        for pool in pools { try await pool.shutdownGracefully() }
    }

    private struct Handle: SQLConnection {
        let connection: Connection

        func query(_ statement: SQLStatement) async throws -> [SQLRow] {
            let database = connection.database
            let text = statement.text(for: .sqlite)
            let binds = statement.binds
            return try await connection.pool.runIfActive { try database.query(text, binds) }
        }

        func runEach(_ statements: [SQLStatement]) async throws {
            // Consecutive statements of one text run as one prepared statement, rebound.
            var groups: [(text: String, binds: [[SQLValue]])] = []
            for statement in statements {
                let text = statement.text(for: .sqlite)
                if groups.last?.text == text {
                    groups[groups.count - 1].binds.append(statement.binds)
                } else {
                    groups.append((text, [statement.binds]))
                }
            }
            let database = connection.database
            try await connection.pool.runIfActive { [groups] in
                for group in groups { try database.runEach(group.text, group.binds) }
            }
        }
    }
}
