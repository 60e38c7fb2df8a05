import CSQLite3
import Foundation
import LinkRelayServerCore
import Synchronization

/// One connection to an SQLite file through the system's library, with every statement kept
/// prepared by its text: a statement that runs again is reset and bound again, not parsed and
/// planned again (`SQLITE_PREPARE_PERSISTENT`). Rows are read into ``SQLRow``s where the
/// statement ran, on the caller's thread (the engine calls it from its connection's thread),
/// all of a result at once.
///
/// Its calls block; one runs at a time (the state sits behind a mutex, which the engine's own
/// lock never lets two callers contend for).
final class SQLiteDatabase: Sendable {
    private struct State: ~Copyable {
        var handle: OpaquePointer?
        /// Prepared statements by their text.
        var statements: [String: OpaquePointer] = [:]
        /// Statements prepared so far (a test's way to see the cache work).
        var prepared = 0

        deinit {
            for statement in statements.values { sqlite3_finalize(statement) }
            sqlite3_close_v2(handle)
        }
    }

    private let state: Mutex<State>

    /// At most this many statements are kept prepared; past it the cache starts again (the
    /// store's statements are a few dozen texts; a long run of one-off texts, such as a
    /// migration's, cannot grow it without bound).
    static let cacheLimit = 256

    private init(handle: sending OpaquePointer) {
        state = Mutex(State(handle: handle))
    }

    /// Opens (or, with `create`, makes) the file at `path`; `:memory:` for a database of the
    /// connection's own.
    /// - Throws: ``StoreError`` (`unusableLocation`) with SQLite's reason.
    static func open(path: String, create: Bool) throws -> SQLiteDatabase {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw StoreError(.unusableLocation, "Cannot open the SQLite database at \(path): \(reason).")
        }
        sqlite3_extended_result_codes(handle, 1)
        return SQLiteDatabase(handle: handle)
    }

    /// How many statements this connection has prepared (each distinct text once, while kept).
    var statementsPrepared: Int { state.withLock { $0.prepared } }

    /// Runs `text` with `binds`, all of its rows read.
    /// - Throws: ``StoreError``: `conflict` for a unique or primary key, `failed` otherwise,
    ///   with SQLite's reason (which names a constraint, never a value).
    func query(_ text: String, _ binds: [SQLValue]) throws -> [SQLRow] {
        try state.withLock { state in
            let statement = try Self.statement(text, in: &state)
            defer { Self.finish(statement) }
            return try Self.run(statement, binds, handle: state.handle, verb: text)
        }
    }

    /// Runs `text` once for each list of values, one after the other (rows not read): a
    /// batch's inserts, the statement prepared once.
    func runEach(_ text: String, _ bindLists: [[SQLValue]]) throws {
        try state.withLock { state in
            let statement = try Self.statement(text, in: &state)
            defer { Self.finish(statement) }
            for binds in bindLists {
                _ = try Self.run(statement, binds, handle: state.handle, verb: text, readRows: false)
                sqlite3_reset(statement)
            }
        }
    }

    /// Runs `statement`, all of its rows read.
    @discardableResult
    func run(_ statement: SQLStatement) throws -> [SQLRow] {
        try query(statement.text(for: .sqlite), statement.binds)
    }

    /// Runs `body` in one transaction (`BEGIN IMMEDIATE`): committed when it returns, rolled
    /// back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            _ = try? run("ROLLBACK")
            throw error
        }
    }

    /// Closes the connection (its statements finalized first); a second call does nothing.
    func close() {
        state.withLock { state in
            for statement in state.statements.values { sqlite3_finalize(statement) }
            state.statements = [:]
            sqlite3_close_v2(state.handle)
            state.handle = nil
        }
    }

    // MARK: Statements

    private static func statement(_ text: String, in state: inout State) throws -> OpaquePointer {
        if let statement = state.statements[text] { return statement }
        guard let handle = state.handle else { throw StoreError(.failed, "A database statement ran on a closed connection.") }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw failure(code, handle: handle, verb: text)
        }
        if state.statements.count >= cacheLimit {
            for kept in state.statements.values { sqlite3_finalize(kept) }
            state.statements = [:]
        }
        state.statements[text] = statement
        state.prepared += 1
        return statement
    }

    /// The statement made ready for its next run: reset, its values let go.
    private static func finish(_ statement: OpaquePointer) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    /// `SQLITE_TRANSIENT`: SQLite copies a bound text before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private static func run(
        _ statement: OpaquePointer, _ binds: [SQLValue], handle: OpaquePointer?, verb text: String, readRows: Bool = true
    ) throws -> [SQLRow] {
        guard Int(sqlite3_bind_parameter_count(statement)) == binds.count else {
            throw StoreError(
                .failed,
                "A database statement (\(statementVerb(text))) takes \(sqlite3_bind_parameter_count(statement)) values, not \(binds.count)."
            )
        }
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .integer(let integer):
                code = sqlite3_bind_int64(statement, index, Int64(integer))
            case .null:
                code = sqlite3_bind_null(statement, index)
            case .text(var string):
                code = string.withUTF8 { bytes in
                    // SQLite's own limit on a value is 1 GB; a longer text is refused there.
                    guard bytes.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
                    return sqlite3_bind_text(statement, index, bytes.baseAddress, Int32(bytes.count), transient)
                }
            }
            guard code == SQLITE_OK else { throw failure(code, handle: handle, verb: text) }
        }
        var rows: [SQLRow] = []
        var columns: SQLColumns?
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return rows }
            guard code == SQLITE_ROW else { throw failure(code, handle: handle, verb: text) }
            guard readRows else { continue }
            let count = Int(sqlite3_column_count(statement))
            let names = columns ?? SQLColumns((0..<count).map { String(cString: sqlite3_column_name(statement, Int32($0))) })
            columns = names
            var values: [SQLValue] = []
            values.reserveCapacity(count)
            for column in 0..<Int32(count) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER:
                    values.append(.integer(Int(sqlite3_column_int64(statement, column))))
                case SQLITE_TEXT:
                    let bytes = Int(sqlite3_column_bytes(statement, column))
                    if let pointer = sqlite3_column_text(statement, column) {
                        values.append(.text(String(decoding: UnsafeBufferPointer(start: pointer, count: bytes), as: UTF8.self)))
                    } else {
                        values.append(.text(""))
                    }
                case SQLITE_FLOAT:
                    // The schema keeps no fractions; an aggregate may still answer one.
                    let double = sqlite3_column_double(statement, column)
                    values.append(double.isFinite ? .integer(Int(max(min(double, 9e18), -9e18))) : .null)
                default:
                    values.append(.null)
                }
            }
            rows.append(SQLRow(columns: names, values: values))
        }
    }

    /// A failed call as the store's error: SQLite's sentence, which names a constraint or a
    /// reason and never a bound value.
    private static func failure(_ code: Int32, handle: OpaquePointer?, verb text: String) -> StoreError {
        let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        let extended = handle.map { sqlite3_extended_errcode($0) } ?? code
        // SQLITE_CONSTRAINT_UNIQUE and SQLITE_CONSTRAINT_PRIMARYKEY (macros Swift does not import).
        let conflict = extended == SQLITE_CONSTRAINT | (8 << 8) || extended == SQLITE_CONSTRAINT | (6 << 8)
        return StoreError(conflict ? .conflict : .failed, "A database statement failed (\(statementVerb(text))): \(reason).")
    }
}
