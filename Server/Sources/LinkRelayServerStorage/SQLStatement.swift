import Foundation
import LinkRelay
import LinkRelayServerCore
import PostgresNIO

/// A statement with its values bound where they appear in the text:
///
/// ```swift
/// let statement: SQLStatement = "SELECT id FROM links WHERE short_code = \(code) AND project_id = \(project)"
/// ```
///
/// Every interpolated value is bound, never spliced into the text; the text renders each as
/// `?` for SQLite and `$1`, `$2`… for PostgreSQL (``text(for:)``), so nothing counts
/// placeholders by hand and nothing scans the text for them. Text that is not a value (a column
/// list the store keeps, a partition's name it made) goes in with `\(sql:)` or `\(trusted:)`.
struct SQLStatement: Sendable, ExpressibleByStringInterpolation {
    /// The text as SQLite reads it, a `?` for each value (built as the statement is written:
    /// no rendering step for the engine that runs most statements).
    private var sqliteText: String
    /// Where each value's `?` is in ``sqliteText`` (UTF-8 offsets), for PostgreSQL's `$n`.
    private var placeholders: [Int]
    /// The values, in the order they appear.
    private(set) var binds: [SQLValue]
    /// Each value's kind, known from its Swift type even when it is NULL (a prepared statement's
    /// parameter types on PostgreSQL).
    private(set) var kinds: [SQLValue.Kind]
    /// On PostgreSQL, the name under which the statement is kept prepared on each connection
    /// (``prepared(_:)``); `nil` for a statement parsed each time it runs.
    private(set) var preparedName: (any PreparedStatementName.Type)?

    init(stringLiteral value: String) {
        self.init(trusted: value)
    }

    /// Text the server itself wrote (a migration's step), with no values.
    init(trusted text: String) {
        sqliteText = text
        placeholders = []
        binds = []
        kinds = []
    }

    init(stringInterpolation: StringInterpolation) {
        sqliteText = stringInterpolation.text
        placeholders = stringInterpolation.placeholders
        binds = stringInterpolation.binds
        kinds = stringInterpolation.kinds
    }

    /// Whether `other` is the same statement but for its values: the same text and value kinds
    /// (compared as written, without rendering either).
    func hasSameForm(as other: SQLStatement) -> Bool {
        sqliteText == other.sqliteText && kinds == other.kinds
    }

    /// The text for `dialect`: `?` for each value on SQLite, `$n` on PostgreSQL.
    func text(for dialect: SQLDialect) -> String {
        guard dialect == .postgres, !placeholders.isEmpty else { return sqliteText }
        var text = ""
        text.reserveCapacity(sqliteText.utf8.count + placeholders.count * 3)
        let utf8 = Array(sqliteText.utf8)
        var start = 0
        for (index, offset) in placeholders.enumerated() {
            text += String(decoding: utf8[start..<offset], as: UTF8.self)
            text += "$\(index + 1)"
            start = offset + 1
        }
        return text + String(decoding: utf8[start...], as: UTF8.self)
    }

    /// The same statement, kept prepared on every PostgreSQL connection under `name` (the hot
    /// statements: the key, the link by code, the candidates, the crowd count, the writes). Its
    /// text must be the same every time it runs under that name; only the values change.
    /// SQLite keeps every statement prepared by its text, so it needs no name.
    func prepared(_ name: any PreparedStatementName.Type) -> SQLStatement {
        var statement = self
        statement.preparedName = name
        return statement
    }

    struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var text = ""
        fileprivate var placeholders: [Int] = []
        fileprivate var binds: [SQLValue] = []
        fileprivate var kinds: [SQLValue.Kind] = []

        init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount)
            placeholders.reserveCapacity(interpolationCount)
            binds.reserveCapacity(interpolationCount)
            kinds.reserveCapacity(interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        // Each bound type has its overload, so a value's kind is known from its type even when
        // it is NULL (a non-optional argument takes the optional overload).

        /// Text, or NULL.
        mutating func appendInterpolation(_ value: String?) {
            append(value.map(SQLValue.text) ?? .null, kind: .text)
        }

        /// An integer, or NULL.
        mutating func appendInterpolation(_ value: Int?) {
            append(value.map(SQLValue.integer) ?? .null, kind: .integer)
        }

        /// A flag, as 1 or 0 (both engines keep flags as integers), or NULL.
        mutating func appendInterpolation(_ value: Bool?) {
            append(value.map { .integer($0 ? 1 : 0) } ?? .null, kind: .integer)
        }

        /// A time, as whole milliseconds since 1970 (``SQLTime``), or NULL.
        mutating func appendInterpolation(_ value: Date?) {
            append(value.map { .integer(SQLTime.milliseconds($0)) } ?? .null, kind: .integer)
        }

        /// One of an enumeration's names, or NULL.
        mutating func appendInterpolation<Value: RawRepresentable<String>>(_ value: Value?) {
            append(value.map { .text($0.rawValue) } ?? .null, kind: .text)
        }

        /// A value kept as JSON text.
        mutating func appendInterpolation(_ value: SQLJSON) {
            append(.text(value.text), kind: .text)
        }

        /// Another statement's text and values, in place.
        mutating func appendInterpolation(sql: SQLStatement) {
            let base = text.utf8.count
            text += sql.sqliteText
            placeholders += sql.placeholders.map { $0 + base }
            binds += sql.binds
            kinds += sql.kinds
        }

        /// Text the server itself chose (a table it named, a constant), never a request's value.
        mutating func appendInterpolation(trusted text: String) {
            appendLiteral(text)
        }

        private mutating func append(_ value: SQLValue, kind: SQLValue.Kind) {
            placeholders.append(text.utf8.count)
            text += "?"
            binds.append(value)
            kinds.append(kind)
        }
    }
}

/// A statement kept prepared on every PostgreSQL connection: postgres-nio keeps one prepared
/// statement per Swift type, so each hot statement has a type of its own (``HotStatement``),
/// holding its statement built with placeholder values, and, as postgres-nio runs it, its
/// values. Its name, text and parameter types are worked out once per statement
/// (PostgresEngine.swift): postgres-nio reads all three on every execution.
protocol PreparedStatementName: PostgresPreparedStatement where Row == PostgresRow {
    /// The statement with placeholder values: its text and value kinds.
    static var template: SQLStatement { get }
    /// One execution's values.
    var bindings: PostgresBindings { get }
    init(bindings: PostgresBindings)
}

/// A value kept as JSON text (keys sorted), bound as text.
struct SQLJSON {
    let text: String

    init(_ value: some Encodable) {
        text = JSONText.encode(value)
    }

    /// `value` written compactly (``JSONText/compact(_:)``): for JSON only read back.
    init(compact value: JSONValue) {
        text = JSONText.compact(value)
    }
}

// MARK: Rows

/// The column names of a result, shared by its rows.
final class SQLColumns: Sendable {
    let names: [String]
    private let indexes: [String: Int]

    init(_ names: [String]) {
        self.names = names
        var indexes: [String: Int] = [:]
        for (index, name) in names.enumerated() where indexes[name] == nil { indexes[name] = index }
        self.indexes = indexes
    }

    func index(of name: String) -> Int? { indexes[name] }
}

/// One row of a result. Read by type, with errors that throw: a column that is missing, NULL
/// where the type has no NULL, or of another kind is a ``StoreError`` naming the column (never
/// its value), not a row that quietly disappears.
///
/// ```swift
/// let id: String = try row["id"]
/// let title: String? = try row["title"]
/// ```
struct SQLRow: Sendable {
    let columns: SQLColumns
    let values: [SQLValue]

    /// The raw value of `column`.
    /// - Throws: ``StoreError`` when the result has no such column.
    func value(_ column: String) throws -> SQLValue {
        guard let index = columns.index(of: column), index < values.count else {
            throw StoreError(.failed, "A database row has no column \(column).")
        }
        return values[index]
    }

    /// `column` read as `Value`.
    /// - Throws: ``StoreError`` when the column is missing, NULL for a non-optional type, or of
    ///   another kind.
    subscript<Value: SQLDecodable>(_ column: String) -> Value {
        get throws {
            do {
                return try Value(sqlValue: try value(column))
            } catch let problem as SQLDecodingProblem {
                throw StoreError(.failed, "A database row's column \(column) \(problem.reason).")
            }
        }
    }

    /// `column`'s JSON text decoded as `Value`; `empty` for NULL.
    /// - Throws: ``StoreError`` when the text is not `Value`'s JSON.
    func json<Value: Decodable>(_ column: String, as type: Value.Type, empty: Value) throws -> Value {
        let text: String? = try self[column]
        guard let text else { return empty }
        guard let value = JSONText.decode(type, text) else {
            throw StoreError(.failed, "A database row's column \(column) holds JSON of another shape.")
        }
        return value
    }
}

/// Why a value cannot be read as a type.
struct SQLDecodingProblem: Error {
    let reason: String

    static let null = SQLDecodingProblem(reason: "is NULL")
    static func kind(_ expected: String) -> SQLDecodingProblem { SQLDecodingProblem(reason: "is not \(expected)") }
}

/// A Swift type a column is read as.
protocol SQLDecodable {
    /// - Throws: ``SQLDecodingProblem``.
    init(sqlValue: SQLValue) throws
}

extension String: SQLDecodable {
    init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .text(let text): self = text
        case .null: throw SQLDecodingProblem.null
        case .integer: throw SQLDecodingProblem.kind("text")
        }
    }
}

extension Int: SQLDecodable {
    init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .integer(let integer): self = integer
        case .null: throw SQLDecodingProblem.null
        case .text: throw SQLDecodingProblem.kind("an integer")
        }
    }
}

extension Bool: SQLDecodable {
    /// 0 is `false`, 1 is `true`; any other integer is not a flag.
    init(sqlValue: SQLValue) throws {
        switch try Int(sqlValue: sqlValue) {
        case 0: self = false
        case 1: self = true
        default: throw SQLDecodingProblem.kind("0 or 1")
        }
    }
}

extension Date: SQLDecodable {
    init(sqlValue: SQLValue) throws {
        self = SQLTime.date(try Int(sqlValue: sqlValue))
    }
}

extension Optional: SQLDecodable where Wrapped: SQLDecodable {
    /// `nil` for NULL; any other value as `Wrapped`.
    init(sqlValue: SQLValue) throws {
        if case .null = sqlValue {
            self = nil
        } else {
            self = try Wrapped(sqlValue: sqlValue)
        }
    }
}

extension SQLDecodable where Self: RawRepresentable<String> {
    /// One of the type's names; any other text is a problem, not a default.
    init(sqlValue: SQLValue) throws {
        let text = try String(sqlValue: sqlValue)
        guard let value = Self(rawValue: text) else { throw SQLDecodingProblem.kind("one of \(Self.self)'s names") }
        self = value
    }
}

extension KeyScope: SQLDecodable {}
extension DevicePlatform: SQLDecodable {}
extension AttributionMethod: SQLDecodable {}
extension AppRecord.Platform: SQLDecodable {}

/// The statements kept prepared on every PostgreSQL connection: those each request runs. Each
/// type's template is its statement built with placeholder values: the text is the same
/// whatever the values, and postgres-nio reads a prepared statement's text from its type.
enum HotStatement {
    /// An API key by its prefix (every authenticated request, when not kept).
    struct Key: PreparedStatementName {
        let bindings: PostgresBindings
        static let template = SQLStore.key(prefix: "")
    }
    /// A link by its code (the redirect and the resolve, when not kept).
    struct LinkByCode: PreparedStatementName {
        let bindings: PostgresBindings
        static let template = SQLStore.linkByCode(project: nil, shortCode: "", templateSlug: nil)
    }
    /// A link by its id (a candidate's window, the deferred link, when not kept).
    struct LinkByID: PreparedStatementName {
        let bindings: PostgresBindings
        static let template = SQLStore.linkByID("")
    }
    /// The clicks from one address (every install).
    struct CandidatesByAddress: PreparedStatementName {
        let bindings: PostgresBindings
        static let template = SQLStore.candidates(project: "", address: "", since: Date(timeIntervalSince1970: 0), limit: 0)
    }
    /// The clicks from one network (an IPv6 install, or the /24 on request).
    struct CandidatesByNetwork: PreparedStatementName {
        let bindings: PostgresBindings
        static let template = SQLStore.candidates(project: "", networkPrefix: "", since: Date(timeIntervalSince1970: 0), limit: 0)
    }
    /// The devices seen on one network (an install whose network is scored).
    struct Crowd: PreparedStatementName {
        let bindings: PostgresBindings
        static let template = SQLStore.crowd(
            project: "", networkPrefix: "", at: Date(timeIntervalSince1970: 0), since: Date(timeIntervalSince1970: 0), limit: 0,
            dialect: .postgres)
    }
    /// A batch of clicks, as arrays (``SQLStore/insertClicks(_:on:dialect:)``).
    struct Clicks: PreparedStatementName {
        let bindings: PostgresBindings
        static let template = SQLStore.clickBatch([])
    }
    /// One install.
    struct Install: PreparedStatementName {
        let bindings: PostgresBindings
        static let template = SQLStore.installInsert(
            InstallRecord(
                projectID: "", linkID: nil, clickID: nil, confidence: 0, matchedFactors: [], method: .none,
                installedAt: Date(timeIntervalSince1970: 0), device: DeviceSignals(), platform: nil, platformVersion: nil, deviceID: nil,
                fingerprintHash: "", attributionWindowHours: nil, deepLinkData: [:]))
    }
    /// A batch of installs, as arrays (``SQLStore/insertInstalls(_:on:dialect:)``).
    struct Installs: PreparedStatementName {
        let bindings: PostgresBindings
        static let template = SQLStore.installBatch([])
    }
    /// One event.
    struct Event: PreparedStatementName {
        let bindings: PostgresBindings
        static let template = SQLStore.eventInsert(
            EventRecord(
                projectID: "", installID: "", name: "", properties: [:], occurredAt: Date(timeIntervalSince1970: 0),
                receivedAt: Date(timeIntervalSince1970: 0), dedupeKey: ""))
    }

    /// Whether `statement` is `Name`'s: the same text and value kinds as its template.
    /// - Throws: ``StoreError`` when it is not (a mistake in the store, refused rather than run
    ///   as another statement).
    static func check<Name: PreparedStatementName>(_ statement: SQLStatement, as name: Name.Type) throws {
        guard statement.hasSameForm(as: Name.template) else {
            throw StoreError(.failed, "The prepared statement \(Name.self) was given another text.")
        }
    }
}
