import Foundation
import LinkRelayServerCore
import Logging
import PostgresNIO
import Synchronization

/// PostgreSQL: a pool of connections (postgres-nio's `PostgresClient`), for production and for
/// several server processes sharing one database. Statements are the store's
/// (``SQLStatement``, rendered with `$1`, `$2`…); values are always bound, never spliced into
/// the SQL, and bound values are never logged. The hot statements are kept prepared on each
/// connection (``SQLStatement/prepared(_:)``).
///
/// The pool runs in ``run()``, which its owner calls: the server's `ServiceGroup` (the store is
/// one of its services), or ``SQLStore/withRunning(_:)`` for a command, a test or a benchmark.
/// Nothing here starts a task of its own.
final class PostgresEngine: SQLEngine {
    private let client: PostgresClient
    private let logger: Logger
    /// Where the URL points, for an error that says so (never the password).
    private let place: String
    /// Open once ``run()`` has begun: a statement waits for it, as the pool serves no lease before
    /// (a service started beside the store, such as the server's set-up, may ask first).
    private let running = Gate()
    /// Open while the listener hears the channel ``changes`` (``listening()``).
    private let heard = Gate()
    /// Statements sent so far (what a batch saves is visible to a test).
    private let sent = Counter()
    /// The analytics lane: one long read at a time (``readAnalytics(_:)``).
    private let analyticsLane = AsyncLock()
    var statementsSent: Int { sent.value }

    final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add() { count.add(1, ordering: .relaxed) }
    }
    /// Who announces this process's changes (``announce(_:)``): its own are not heard again.
    private let origin = UUID().uuidString

    /// The channel the processes on one database announce their changes on.
    static let changes = "linkrelay_changes"

    var dialect: SQLDialect { .postgres }

    private init(client: PostgresClient, place: String, logger: Logger) {
        self.client = client
        self.place = place
        self.logger = logger
    }

    /// Connections a serving process keeps open however quiet it is (up to postgres-nio's 20
    /// under load): `linkrelay-server serve` asks for these; a command that runs a few
    /// statements and ends (and the tests, which open many databases at once) for none.
    static let servingConnections = 4

    /// Connects to the server `url` names: `postgres://user:password@host:port/database`, with
    /// `?sslmode=disable|prefer|require` (default: `disable` on a loopback host, `prefer`
    /// elsewhere). Connects nothing yet: the pool opens its connections when it runs
    /// (``run()``), and ``checkConnection()`` says whether the server answers.
    static func connect(_ url: URL, warmConnections: Int = 0, logger: Logger) throws -> PostgresEngine {
        guard let host = url.host, !host.isEmpty else { throw StoreError(.unusableLocation, "The PostgreSQL URL names no host.") }
        let database = String(url.path.drop { $0 == "/" })
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let loopback = ["localhost", "127.0.0.1", "::1"].contains(host)
        let tls: PostgresClient.Configuration.TLS
        switch query.first(where: { $0.name == "sslmode" })?.value ?? (loopback ? "disable" : "prefer") {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        default: throw StoreError(.unusableLocation, "sslmode takes disable, prefer or require.")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: url.user ?? "postgres", password: url.password?.removingPercentEncoding,
            database: database.isEmpty ? nil : database, tls: tls)
        configuration.options.connectTimeout = .seconds(10)
        // Connections kept warm, with their prepared statements: postgres-nio's defaults (none
        // kept, an idle one closed after 60 s) made a quiet server's next burst open connections
        // and prepare every statement again.
        configuration.options.minimumConnections = min(max(warmConnections, 0), configuration.options.maximumConnections)
        configuration.options.connectionIdleTimeout = .seconds(300)
        return PostgresEngine(
            client: PostgresClient(configuration: configuration, backgroundLogger: logger), place: "\(host):\(url.port ?? 5432)",
            logger: logger)
    }

    /// Runs the pool, and beside it the listener for the other processes' changes (each
    /// notification's payload given to `changed`), until cancelled or a graceful shutdown.
    func run(changed: @escaping @Sendable (String) -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Opened on the pool's own task, which goes straight on into `run()`: a statement
                // let through leases after the pool runs (before it, postgres-nio warns each time).
                self.running.open()
                await self.client.run()
            }
            group.addTask { await self.listen(changed) }
            // The pool ends first (a graceful shutdown, a cancellation): the listener with it.
            await group.next()
            group.cancelAll()
        }
    }

    /// Holds one connection listening on ``changes``; when it breaks, listens again a second
    /// later, and everything kept is forgotten (`*`), since changes may have passed meanwhile.
    private func listen(_ changed: @escaping @Sendable (String) -> Void) async {
        // Its connection too waits for the pool to run.
        await running.wait()
        var first = true
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: Self.changes) { notifications in
                        if !first { changed("*") }
                        first = false
                        heard.open()
                        for try await notification in notifications {
                            // The process's own changes were forgotten as it made them; heard
                            // again, they would only stop the reads under way being kept.
                            if let change = Self.change(in: notification.payload, from: origin) { changed(change) }
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("Not hearing other servers' changes (\(Self.reason(error))); listening again in a second.")
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    func announce(_ change: String) async {
        // After the change's commit: a process that reads in between keeps the old answer only
        // until this arrives. A failure leaves the others their caches' time limits.
        do {
            try await run("SELECT pg_notify(\(Self.changes), \(origin + " " + change))")
        } catch {
            logger.warning("Could not tell other servers of a change: \(error)")
        }
    }

    /// The change a notice's payload (`origin change`) names, `nil` when it is this process's
    /// own (`origin`). A payload without an origin (an older server) is a change as it stands.
    static func change(in payload: String, from origin: String) -> String? {
        guard let space = payload.firstIndex(of: " ") else { return payload }
        return payload[..<space] == origin ? nil : String(payload[payload.index(after: space)...])
    }

    func listening() async {
        await heard.wait()
    }

    /// Whether the server answers (`SELECT 1`, with the pool running).
    /// - Throws: ``StoreError`` (`unusableLocation`) naming the host and port and the reason.
    func checkConnection() async throws {
        do {
            try await run("SELECT 1")
        } catch {
            throw StoreError(
                .unusableLocation, "Cannot connect to PostgreSQL at \(place) (\((error as? StoreError)?.message ?? "\(type(of: error))")).")
        }
    }

    func withConnection<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T {
        await running.wait()
        do {
            return try await client.withConnection { connection in
                try await body(Handle(connection: connection, logger: logger, sent: sent))
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.failed, "The PostgreSQL connection failed: \(Self.reason(error)).")
        }
    }

    /// Any pooled connection reads.
    func read<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T {
        try await withConnection(body)
    }

    /// One at a time per process (``analyticsLane``), on one of the pool's connections: the
    /// others stay for taps and installs.
    func readAnalytics<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T {
        try await analyticsLane.withLock { try await withConnection(body) }
    }

    /// Nothing to do: the pool's connections close when ``run()`` returns.
    func close() async throws {}

    /// The server's own sentence (which names a constraint, never a value), or the error's type.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            return "\(error.code)"
        }
        return "\(type(of: error))"
    }

    private struct Handle: SQLConnection {
        let connection: PostgresConnection
        let logger: Logger
        let sent: Counter

        func query(_ statement: SQLStatement) async throws -> [SQLRow] {
            sent.add()
            var bindings = PostgresBindings(capacity: statement.binds.count)
            for value in statement.binds {
                switch value {
                case .text(let text): bindings.append(text)
                case .integer(let integer): bindings.append(integer)
                case .null: bindings.appendNull()
                }
            }
            do {
                if let name = statement.preparedName {
                    return try await prepared(name, statement: statement, bindings: bindings)
                }
                // The text is the store's own, its values bound: nothing from a request is in it.
                return try await Self.rows(
                    try await connection.query(PostgresQuery(unsafeSQL: statement.text(for: .postgres), binds: bindings), logger: logger))
            } catch let error as StoreError {
                throw error
            } catch {
                let conflict = (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
                throw StoreError(
                    conflict ? .conflict : .failed,
                    "A database statement failed (\(statementVerb(statement.text(for: .postgres)))): \(PostgresEngine.reason(error)).")
            }
        }

        /// Runs a hot statement through the connection's prepared copy (prepared on its first
        /// use on the connection, then only bound and executed).
        private func prepared<Name: PreparedStatementName>(
            _ name: Name.Type, statement: SQLStatement, bindings: PostgresBindings
        ) async throws -> [SQLRow] {
            try HotStatement.check(statement, as: Name.self)
            let rows = try await connection.execute(Name(bindings: bindings), logger: logger)
            var result: [SQLRow] = []
            var columns: SQLColumns?
            for try await row in rows { result.append(Self.row(row, columns: &columns)) }
            return result
        }

        /// A result's rows, its column names read once.
        static func rows(_ sequence: PostgresRowSequence) async throws -> [SQLRow] {
            var result: [SQLRow] = []
            var columns: SQLColumns?
            for try await row in sequence {
                result.append(Self.row(row, columns: &columns))
            }
            return result
        }

        static func row(_ row: PostgresRow, columns: inout SQLColumns?) -> SQLRow {
            var names: [String] = []
            var values: [SQLValue] = []
            for cell in row {
                if columns == nil { names.append(cell.columnName) }
                values.append(value(cell))
            }
            let shared = columns ?? SQLColumns(names)
            columns = shared
            return SQLRow(columns: shared, values: values)
        }

        private static func value(_ cell: PostgresCell) -> SQLValue {
            guard cell.bytes != nil else { return .null }
            switch cell.dataType {
            case .int2, .int4, .int8: return (try? cell.decode(Int.self)).map(SQLValue.integer) ?? .null
            case .bool: return (try? cell.decode(Bool.self)).map { .integer($0 ? 1 : 0) } ?? .null
            default: return (try? cell.decode(String.self)).map(SQLValue.text) ?? .null
            }
        }
    }
}

/// Each hot statement as postgres-nio prepares it: once per connection, under `lr_` and its
/// type's name (`pg_prepared_statements` lists them), with its template's text and its
/// parameters typed by their Swift types (text, `int8`; an integer column takes an `int8` by
/// assignment). postgres-nio reads the three on every execution, so each is kept, made once.
extension PreparedStatementName {
    func makeBindings() -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }

    /// The parameters' types of `template`.
    static func postgresTypes(_ template: SQLStatement) -> [PostgresDataType] {
        template.kinds.map { $0 == .text ? .text : .int8 }
    }
}

extension HotStatement.Key {
    static let name = "lr_Key", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
}

extension HotStatement.LinkByCode {
    static let name = "lr_LinkByCode", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
}

extension HotStatement.LinkByID {
    static let name = "lr_LinkByID", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
}

extension HotStatement.CandidatesByAddress {
    static let name = "lr_CandidatesByAddress", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
}

extension HotStatement.CandidatesByNetwork {
    static let name = "lr_CandidatesByNetwork", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
}

extension HotStatement.Crowd {
    static let name = "lr_Crowd", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
}

extension HotStatement.Clicks {
    static let name = "lr_Clicks", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
}

extension HotStatement.Install {
    static let name = "lr_Install", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
}

extension HotStatement.Installs {
    static let name = "lr_Installs", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
}

extension HotStatement.Event {
    static let name = "lr_Event", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
}

/// Closed until opened once; ``wait()`` returns at once when open, or when it opens.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func wait() async {
        if state.withLock({ $0.open }) { return }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.open { return true }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
