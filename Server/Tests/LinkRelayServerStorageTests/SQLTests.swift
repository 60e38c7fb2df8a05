import Foundation
import LinkRelay
import PostgresNIO
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// Statements written by interpolation, rows read by type, statements kept prepared.
@Suite("SQL statements and rows")
struct SQLTests {
    @Test("every interpolated value is bound, never spliced; placeholders are numbered per dialect")
    func interpolationBinds() {
        let code = "x'); DROP TABLE links; --"
        let title: String? = nil
        let statement: SQLStatement = "SELECT id FROM links WHERE short_code = \(code) AND title = \(title) AND window < \(168)"
        #expect(statement.text(for: .sqlite) == "SELECT id FROM links WHERE short_code = ? AND title = ? AND window < ?")
        #expect(statement.text(for: .postgres) == "SELECT id FROM links WHERE short_code = $1 AND title = $2 AND window < $3")
        #expect(statement.binds == [.text(code), .null, .integer(168)])
        #expect(statement.kinds == [.text, .text, .integer])
        // A fragment in a fragment: its values keep their order and the numbering goes on.
        let columns: SQLStatement = "SELECT \(1) AS one,"
        let nested: SQLStatement = "\(sql: columns) \(2) AS two WHERE x = \(true) AND at = \(Date(timeIntervalSince1970: 1.5))"
        #expect(nested.text(for: .postgres) == "SELECT $1 AS one, $2 AS two WHERE x = $3 AND at = $4")
        #expect(nested.binds == [.integer(1), .integer(2), .integer(1), .integer(1500)])
    }

    @Test("a question mark in quoted text stays text; values come back by type", arguments: TestEngine.available)
    func quotedQuestionMark(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, _ async throws in
            let row = try #require(try await store.engine.select("SELECT '?' AS mark, \(41) + 1 AS answer, \("it's") AS quoted").first)
            #expect(try row["mark"] as String == "?")
            #expect(try row["answer"] as Int == 42)
            #expect(try row["quoted"] as String == "it's")
        }
    }

    @Test("a row read by the wrong type throws, naming the column and never the value", arguments: TestEngine.available)
    func typedRowsThrow(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, _ async throws in
            let row = try #require(try await store.engine.select("SELECT NULL AS missing, \("secret-value") AS word, \(7) AS seven").first)
            #expect(try row["missing"] as String? == nil)
            #expect(try row["seven"] as Int? == 7)
            func problem(_ read: () throws -> Void) -> String {
                do {
                    try read()
                    return "no error"
                } catch let error as StoreError {
                    return error.message
                } catch {
                    return "\(error)"
                }
            }
            #expect(problem { _ = try row["missing"] as String } == "A database row's column missing is NULL.")
            #expect(problem { _ = try row["word"] as Int } == "A database row's column word is not an integer.")
            #expect(problem { _ = try row["seven"] as Bool } == "A database row's column seven is not 0 or 1.")
            #expect(problem { _ = try row["nowhere"] as Int } == "A database row has no column nowhere.")
            #expect(!problem { _ = try row["word"] as Int }.contains("secret"))
        }
    }

    @Test("a stored row the server cannot read is an error, not a row that quietly disappears", arguments: TestEngine.available)
    func unreadableRowThrows(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let store = world.store
            try await store.insertApp(
                AppRecord(projectID: world.project.id, platform: .ios, identifier: "ABCDE12345.com.acme.shop", createdAt: Date()))
            #expect(try await store.apps().count == 1)
            try await store.execute("UPDATE apps SET platform = 'symbian'")
            await #expect(throws: StoreError.self) { try await store.apps() }
            let attribution = try await AttributionService(store: store, matcher: DeferredMatcher()).attribute(
                InstallReport(signals: DeviceSignals(userAgent: "Acme/1"), platform: "iOS", platformVersion: "17.4.1"),
                project: world.project.id,
                at: Date())
            #expect(try await store.install(project: world.project.id, id: attribution.install.id)?.method == AttributionMethod.none)
            try await store.execute("UPDATE installs SET method = 'telepathy'")
            await #expect(throws: StoreError.self) { try await store.install(project: world.project.id, id: attribution.install.id) }
            let link = try await world.link("flag")
            try await store.execute("UPDATE links SET is_active = 7")
            await #expect(throws: StoreError.self) { try await store.link(id: link.id) }
        }
    }

    @Test("SQLite prepares a statement once and runs it again rebound")
    func sqliteKeepsStatementsPrepared() async throws {
        try await ServerWorld.with(.sqlite) { world in
            let store = world.store
            store.setLinkCacheTTL(.zero)
            let link = try await world.link("kept")
            let engine = try #require(store.engine as? SQLiteEngine)
            // Both readers read the link once, so both have prepared it.
            for _ in 0..<2 { #expect(try await store.link(project: nil, shortCode: "kept", templateSlug: nil)?.id == link.id) }
            let prepared = engine.statementsPrepared
            for code in ["kept", "other", "kept", "third"] {
                _ = try await store.link(project: world.project.id, shortCode: code, templateSlug: "")
            }
            #expect(engine.statementsPrepared == prepared)
            #expect(try await store.link(project: world.project.id, shortCode: "kept", templateSlug: "")?.id == link.id)
        }
    }

    @Test("PostgreSQL keeps the hot statements prepared on each connection", arguments: TestEngine.available.filter { $0 == .postgres })
    func postgresKeepsStatementsPrepared(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let store = world.store
            store.setLinkCacheTTL(.zero)
            let link = try await world.link("kept")
            let names = try await store.engine.withConnection { connection in
                for _ in 0..<3 {
                    let found = try await connection.run(
                        SQLStore.linkByCode(project: nil, shortCode: "kept", templateSlug: nil))
                    #expect(try found.first.map(SQLStore.link)?.id == link.id)
                }
                return try await connection.run("SELECT name FROM pg_prepared_statements").map { try $0["name"] as String }
            }
            #expect(names == ["lr_LinkByCode"])
        }
    }

    @Test("a prepared name given another text is refused, not run as the wrong statement")
    func preparedNameKeepsItsText() throws {
        struct Probe: PreparedStatementName {
            static let template: SQLStatement = "SELECT \(0)"
            static let name = "lr_Probe", sql = template.text(for: .postgres), bindingDataTypes = postgresTypes(template)
            let bindings: PostgresBindings
        }
        try HotStatement.check("SELECT \(1)", as: Probe.self)
        try HotStatement.check("SELECT \(7)", as: Probe.self)
        #expect(throws: StoreError.self) { try HotStatement.check("SELECT \(1) + 1", as: Probe.self) }
        #expect(throws: StoreError.self) { try HotStatement.check("SELECT \("1")", as: Probe.self) }
        // Every hot statement, built with other values, is its template.
        try HotStatement.check(SQLStore.key(prefix: "lr_sdk_1"), as: HotStatement.Key.self)
        try HotStatement.check(SQLStore.linkByCode(project: "p", shortCode: "c", templateSlug: "s"), as: HotStatement.LinkByCode.self)
        try HotStatement.check(SQLStore.clickBatch([]), as: HotStatement.Clicks.self)
        try HotStatement.check(SQLStore.installBatch([]), as: HotStatement.Installs.self)
    }

    @Test("clicks stored as a batch come back exactly, whatever their text", arguments: TestEngine.available)
    func clickBatchesRoundTrip(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("batch")
            let awkward: [String?] = [
                nil, "", "NULL", "a,b", "{x}", "say \"hi\"", "back\\slash", "tab\there", "日本語 🇯🇵", "'quoted'", "\\\"", " ",
            ]
            let start = Date(timeIntervalSince1970: 1_780_000_000)
            // 1,500: more than one statement's 1,000 on PostgreSQL.
            func text(_ index: Int) -> String? { awkward[index % awkward.count] }
            let clicks = (0..<1500).map { (index: Int) -> ClickRecord in
                let width: Int? = index % 3 == 0 ? nil : index
                let height: Int? = index % 5 == 0 ? nil : -index
                return ClickRecord(
                    id: String(format: "c%05d", index), linkID: link.id, projectID: world.project.id,
                    clickedAt: start.addingTimeInterval(Double(index)),
                    device: DeviceSignals(
                        ip: text(index), networkPrefix: text(index + 1), userAgent: text(index + 2), timezone: text(index + 3),
                        language: text(index + 4), screenWidth: width, screenHeight: height),
                    platform: [DevicePlatform.ios, .android, .web, nil][index % 4], isBot: index % 7 == 0)
            }
            try await world.store.importClicks(clicks)
            #expect(try await world.store.clicks(link: link.id) == clicks)
        }
    }

    @Test(
        "installs committed together come back exactly, whatever their text; on PostgreSQL a batch of them is one statement",
        arguments: TestEngine.available)
    func installBatchesRoundTrip(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("batch")
            let awkward: [String?] = [
                nil, "", "NULL", "a,b", "{x}", "say \"hi\"", "back\\slash", "tab\there", "日本語 🇯🇵", "'quoted'", "\\\"", " ",
            ]
            func text(_ index: Int) -> String? { awkward[index % awkward.count] }
            let start = Date(timeIntervalSince1970: 1_780_000_000)
            let installs = (0..<300).map { (index: Int) -> InstallRecord in
                InstallRecord(
                    projectID: world.project.id, linkID: index % 2 == 0 ? link.id : nil, clickID: text(index), confidence: index % 101,
                    matchedFactors: index % 3 == 0 ? [] : ["ip", text(index) ?? "x"],
                    method: [AttributionMethod.none, .fingerprint, .adopted][index % 3],
                    installedAt: start.addingTimeInterval(Double(index)),
                    device: DeviceSignals(
                        ip: text(index + 1), networkPrefix: text(index + 2), userAgent: text(index + 3), timezone: text(index + 4),
                        language: text(index + 5), screenWidth: index % 4 == 0 ? nil : index, screenHeight: index % 5 == 0 ? nil : -index),
                    platform: [DevicePlatform.ios, .android, .web, nil][index % 4], platformVersion: text(index + 6),
                    deviceID: text(index + 7),
                    fingerprintHash: "hash\(index)", attributionWindowHours: index % 2 == 0 ? nil : index,
                    deepLinkData: index % 2 == 0
                        ? [:] : ["path": .string(text(index) ?? ""), "n": .int(index), "nested": ["a": [1, 2.5, nil, true]]])
            }
            let before = (world.store.engine as? PostgresEngine)?.statementsSent ?? 0
            try await withThrowingTaskGroup(of: Void.self) { group in
                for install in installs { group.addTask { try await world.store.recordInstall(install) } }
                try await group.waitForAll()
            }
            let statements = ((world.store.engine as? PostgresEngine)?.statementsSent ?? 0) - before
            for install in installs {
                #expect(try await world.store.install(project: world.project.id, id: install.id) == install)
            }
            if engine == .postgres {
                // 300 installs submitted at once: a few batches, each one statement (not 300).
                #expect(statements < 100, "\(statements) statements for 300 installs")
            }
        }
    }

    @Test("the PostgreSQL array text quotes every value and leaves NULL bare")
    func arrayLiteral() {
        #expect(PostgresArrayLiteral.texts(["a", nil, "b\"c", "d\\e", "NULL", ""]) == #"{"a",NULL,"b\"c","d\\e","NULL",""}"#)
        #expect(PostgresArrayLiteral.integers([1, nil, -3]) == "{1,NULL,-3}")
        #expect(PostgresArrayLiteral.texts([]) == "{}")
    }
}

@Suite("Record identifiers")
struct RecordIDTests {
    @Test("ids are version 7 UUIDs that sort by their time; two made at once differ")
    func timeOrdered() throws {
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        // A millisecond apart (2 ms steps, so a step's rounding never lands two in one millisecond).
        let ids = (0..<1000).map { RecordID.timeOrdered(at: start.addingTimeInterval(Double($0) * 0.002)) }
        #expect(ids.sorted() == ids, "not in time order")
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(20) {
            let uuid = try #require(UUID(uuidString: id))
            #expect(uuid.uuidString.lowercased() == id)
            #expect(Array(id)[14] == "7")
            #expect("89ab".contains(Array(id)[19]))
        }
        #expect(RecordID.timeOrdered(at: start) != RecordID.timeOrdered(at: start))
        // The first 12 digits are the milliseconds.
        #expect(
            RecordID.timeOrdered(at: start).replacingOccurrences(of: "-", with: "").prefix(12)
                == String(1_780_000_000_000, radix: 16).leftPadded(12))
    }

    @Test("times outside the 48 bits are clamped, NaN is 1970")
    func clamped() {
        #expect(RecordID.timeOrdered(at: Date(timeIntervalSince1970: -5)).hasPrefix("00000000-0000-7"))
        #expect(RecordID.timeOrdered(at: Date(timeIntervalSince1970: .nan)).hasPrefix("00000000-0000-7"))
        #expect(RecordID.timeOrdered(at: Date(timeIntervalSince1970: .infinity)).hasPrefix("ffffffff-ffff-7"))
        #expect(RecordID.timeOrdered(at: Date(timeIntervalSince1970: 300_000_000_000)).hasPrefix("ffffffff-ffff-7"))
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(width - count, 0)) + self }
}

@Suite("The pool's start", .timeLimit(.minutes(1)))
struct GateTests {
    @Test("statements wait until the pool runs: every waiter goes on when the gate opens, and later ones at once")
    func gateOpens() async {
        let gate = Gate()
        let passed = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    await gate.wait()
                    passed.add()
                }
            }
            gate.open()
        }
        #expect(passed.value == 50)
        await gate.wait()
        gate.open()
        await gate.wait()
    }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// The JSON the server writes itself (an install's stored factors and deferred link, its answers).
@Suite("Compact JSON")
struct CompactJSONTests {
    @Test("written compactly, keys sorted, every string escaped; Foundation's decoder reads back the same value")
    func roundTrip() throws {
        let control = String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) })
        let values: [JSONValue] = [
            nil, true, false, 0, -42, .int(.max), .int(.min), 2.5, -0.001, 1e300, 1.7976931348623157e308, "",
            .string("say \"hi\" \\ / \(control) \u{7F} 日本語 🇯🇵 \u{2028}"), [], [:],
            ["b": 1, "a": [1, "x", nil, ["z": false]], "": "empty key", "é": 2, "A": 3],
            .array((0..<50).map { .int($0) }),
        ]
        for value in values {
            let text = JSONText.compact(value)
            let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(decoded == value, "\(text)")
        }
        #expect(JSONText.compact(["b": 1, "a": [1, nil], "c": "x\ny"]) == #"{"a":[1,null],"b":1,"c":"x\ny"}"#)
        #expect(JSONText.compact(.string("\u{1}\t")) == #""\u0001\t""#)
        #expect(JSONText.compact(.double(.infinity)) == "null" && JSONText.compact(.double(.nan)) == "null")
    }
}
