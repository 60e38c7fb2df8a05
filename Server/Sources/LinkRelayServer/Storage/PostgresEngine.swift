import Foundation
import Logging
import PostgresNIO

/// PostgreSQL: a pool of connections (postgres-nio's `PostgresClient`), for production and for
/// several server processes sharing one database. Statements are the store's, with their `?`
/// placeholders numbered (`$1`, `$2`…); values are always bound, never spliced into the SQL,
/// and bound values are never logged.
final class PostgresEngine: SQLEngine {
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let logger: Logger
    /// Finished when the runner is about to call `client.run()`, which the pool needs before its
    /// first lease.
    private let started: AsyncStream<Void>

    var dialect: SQLDialect { .postgres }

    private init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
        let (started, starting) = AsyncStream.makeStream(of: Void.self)
        self.started = started
        runner = Task {
            starting.finish()
            await client.run()
        }
    }

    /// Connects to the server `url` names: `postgres://user:password@host:port/database`, with
    /// `?sslmode=disable|prefer|require` (default: `disable` on a loopback host, `prefer`
    /// elsewhere). Checks the connection once before returning.
    static func connect(_ url: URL, logger: Logger) async throws -> PostgresEngine {
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
        let engine = PostgresEngine(client: PostgresClient(configuration: configuration, backgroundLogger: logger), logger: logger)
        for await _ in engine.started {}
        do {
            try await engine.run("SELECT 1")
        } catch {
            try? await engine.close()
            throw StoreError(
                .unusableLocation, "Cannot connect to PostgreSQL at \(host):\(url.port ?? 5432) (\((error as? StoreError)?.message ?? "\(type(of: error))")).")
        }
        return engine
    }

    func withConnection<T: Sendable>(_ body: (any SQLConnection) async throws -> T) async throws -> T {
        do {
            return try await client.withConnection { connection in try await body(Handle(connection: connection, logger: logger)) }
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

    func close() async throws {
        runner.cancel()
        await runner.value
    }

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

        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            var bindings = PostgresBindings(capacity: binds.count)
            for value in binds {
                switch value {
                case .text(let text): bindings.append(text)
                case .integer(let integer): bindings.append(integer)
                case .null: bindings.appendNull()
                }
            }
            do {
                let rows = try await connection.query(PostgresQuery(unsafeSQL: Self.numbered(sql), binds: bindings), logger: logger)
                var result: [SQLRow] = []
                for try await row in rows {
                    var values: [String: SQLValue] = [:]
                    for cell in row {
                        values[cell.columnName] = Self.value(cell)
                    }
                    result.append(SQLRow(values: values))
                }
                return result
            } catch {
                let conflict = (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
                throw StoreError(
                    conflict ? .conflict : .failed, "A database statement failed (\(statementVerb(sql))): \(PostgresEngine.reason(error)).")
            }
        }

        private static func value(_ cell: PostgresCell) -> SQLValue {
            guard cell.bytes != nil else { return .null }
            switch cell.dataType {
            case .int2, .int4, .int8: return (try? cell.decode(Int.self)).map(SQLValue.integer) ?? .null
            case .bool: return (try? cell.decode(Bool.self)).map { .integer($0 ? 1 : 0) } ?? .null
            default: return (try? cell.decode(String.self)).map(SQLValue.text) ?? .null
            }
        }

        /// `?` → `$1`, `$2`… outside quoted text.
        static func numbered(_ sql: String) -> String {
            var result = ""
            var index = 0
            var quoted = false
            for character in sql {
                if character == "'" { quoted.toggle() }
                if character == "?", !quoted {
                    index += 1
                    result += "$\(index)"
                } else {
                    result.append(character)
                }
            }
            return result
        }
    }
}
