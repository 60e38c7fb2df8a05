import Foundation
import LinkRelay
import LinkRelayServerCore

/// Installs, events, and the writes committed together.
extension SQLStore {
    // MARK: Installs and events

    package func recordInstall(_ install: InstallRecord) async throws {
        _ = try await writes.submit(.install(install))
    }

    package func install(project: String, id: String) async throws -> InstallRecord? {
        try await engine.select("\(sql: Self.installColumns) WHERE project_id = \(project) AND id = \(id)").first.map(Self.install)
    }

    package func addAppleAdsToken(_ token: String, install id: String, project: String) async throws -> Bool {
        try await !engine.run(
            """
            UPDATE installs SET apple_ads_token = COALESCE(apple_ads_token, \(token))
            WHERE project_id = \(project) AND id = \(id) RETURNING id
            """
        ).isEmpty
    }

    package func latestInstall(project: String, fingerprintHash: String) async throws -> InstallRecord? {
        try await engine.select(
            "\(sql: Self.installColumns) WHERE project_id = \(project) AND fingerprint_hash = \(fingerprintHash) ORDER BY installed_at DESC, id DESC LIMIT 1"
        ).first.map(Self.install)
    }

    static let installColumns: SQLStatement = """
        SELECT id, project_id, link_id, click_id, confidence, matched_factors, method, installed_at, \(sql: deviceColumns),
            platform, platform_version, device_id, deep_link_data, fingerprint_hash, attribution_window_hours, apple_ads_token FROM installs
        """

    static func install(_ row: SQLRow) throws -> InstallRecord {
        InstallRecord(
            id: try row["id"], projectID: try row["project_id"], linkID: try row["link_id"], clickID: try row["click_id"],
            confidence: try row["confidence"], matchedFactors: try row.json("matched_factors", as: [String].self, empty: []),
            method: try row["method"], installedAt: try row["installed_at"], device: try DeviceSignals(row), platform: try row["platform"],
            platformVersion: try row["platform_version"], deviceID: try row["device_id"],
            // NULL for an install stored before schema 2 kept fingerprints.
            fingerprintHash: try row["fingerprint_hash"] as String? ?? "", attributionWindowHours: try row["attribution_window_hours"],
            deepLinkData: try row.json("deep_link_data", as: [String: JSONValue].self, empty: [:]),
            appleAdsToken: try row["apple_ads_token"])
    }

    package func recordEvent(_ event: EventRecord) async throws -> EventOutcome {
        guard case .event(let outcome) = try await writes.submit(.event(event)) else {
            throw StoreError(.failed, "An event's write answered something else.")
        }
        return outcome
    }

    package func events(install: String) async throws -> [EventRecord] {
        try await engine.select("\(sql: Self.eventColumns) WHERE install_id = \(install) ORDER BY received_at, id").map(Self.event)
    }

    static let eventColumns: SQLStatement = """
        SELECT id, project_id, install_id, name, properties, occurred_at, received_at, dedupe_key, attributed_link_id,
            attributed_click_id, link_opened_at, session_id, sdk FROM events
        """

    static func event(_ row: SQLRow) throws -> EventRecord {
        EventRecord(
            id: try row["id"], projectID: try row["project_id"], installID: try row["install_id"], name: try row["name"],
            properties: try row.json("properties", as: [String: JSONValue].self, empty: [:]), occurredAt: try row["occurred_at"],
            receivedAt: try row["received_at"], dedupeKey: try row["dedupe_key"], attributedLinkID: try row["attributed_link_id"],
            attributedClickID: try row["attributed_click_id"], linkOpenedAt: try row["link_opened_at"], sessionID: try row["session_id"],
            sdk: try row["sdk"])
    }

    // MARK: Durable writes, committed together

    enum DurableWrite: Sendable {
        case click(ClickRecord)
        case install(InstallRecord)
        case event(EventRecord)
    }

    enum DurableWritten: Sendable {
        case done
        case event(EventOutcome)
    }

    /// One transaction for the whole batch; when it fails (one write breaks a constraint), each
    /// write again in a transaction of its own, so one bad write fails alone. A batch of one
    /// write is its statement alone, committed as it runs (no `BEGIN` and `COMMIT` round trips:
    /// on PostgreSQL three become one; an event's lookup of its earlier twin only reads).
    ///
    /// SQLite runs the whole batch on its writer's thread in one trip (``commit(_:on:)``);
    /// PostgreSQL sends each statement, a batch's clicks as one `unnest` statement.
    static func commit(_ batch: [DurableWrite], engine: any SQLEngine) async -> [Result<DurableWritten, any Error>] {
        // An SQLite file deleted (or replaced) under the server takes writes into a file no one
        // can open again: the write is refused instead (issue 63, 13), and the tap, the install
        // or the event says so, as on a full disk. One stat per batch.
        if let problem = engine.fileProblem() {
            let error = StoreError(.failed, "The write was not stored: \(problem).")
            return batch.map { _ in .failure(error) }
        }
        if let sqlite = engine as? SQLiteEngine {
            do {
                return try await sqlite.onWriterThread { commit(batch, on: $0) }
            } catch {
                return batch.map { _ in .failure(error) }
            }
        }
        let dialect = engine.dialect
        if batch.count == 1 {
            do {
                return [.success(try await engine.withConnection { try await perform(batch[0], on: $0, dialect: dialect) })]
            } catch {
                return [.failure(error)]
            }
        }
        // Clicks alone (the redirect under load), or installs alone (the install endpoint under
        // load), are one statement, atomic by itself: no `BEGIN` and `COMMIT` around it, one
        // round trip instead of one per write and two more.
        let clicks = batch.compactMap { write -> ClickRecord? in
            if case .click(let click) = write { return click }
            return nil
        }
        let installs = batch.compactMap { write -> InstallRecord? in
            if case .install(let install) = write { return install }
            return nil
        }
        if (clicks.count == batch.count && clicks.count <= clicksPerStatement)
            || (installs.count == batch.count && installs.count <= installsPerStatement)
        {
            do {
                try await engine.withConnection { connection in
                    try await insertClicks(clicks, on: connection, dialect: dialect)
                    try await insertInstalls(installs, on: connection, dialect: dialect)
                }
                return batch.map { _ in .success(.done) }
            } catch {
                return await commitEachAlone(batch, engine: engine)
            }
        }
        do {
            return try await engine.transaction { connection in
                var results = [Result<DurableWritten, any Error>](repeating: .success(.done), count: batch.count)
                // The batch's installs go in as one statement (an event waits for them: it may
                // name one), and its clicks as one statement, last: under load most of a batch
                // is one or the other, and a statement per write kept the writer busy for each
                // of them. One click statement per transaction, whose daily counts go in key
                // order (``clickBatch(_:)``), so two processes lock shared counts in one order.
                var clicks: [ClickRecord] = []
                var installs: [InstallRecord] = []
                for (index, write) in batch.enumerated() {
                    switch write {
                    case .click(let click): clicks.append(click)
                    case .install(let install): installs.append(install)
                    case .event:
                        try await insertInstalls(installs, on: connection, dialect: dialect)
                        installs.removeAll()
                        results[index] = .success(try await perform(write, on: connection, dialect: dialect))
                    }
                }
                try await insertInstalls(installs, on: connection, dialect: dialect)
                try await insertClicks(clicks, on: connection, dialect: dialect)
                return results
            }
        } catch {
            return await commitEachAlone(batch, engine: engine)
        }
    }

    /// Each write in a transaction of its own, so one bad write fails alone.
    private static func commitEachAlone(_ batch: [DurableWrite], engine: any SQLEngine) async -> [Result<DurableWritten, any Error>] {
        let dialect = engine.dialect
        var results: [Result<DurableWritten, any Error>] = []
        for write in batch {
            do {
                results.append(.success(try await engine.transaction { try await perform(write, on: $0, dialect: dialect) }))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// The same on SQLite's writer thread, every statement prepared once and run in turn.
    static func commit(_ batch: [DurableWrite], on database: SQLiteDatabase) -> [Result<DurableWritten, any Error>] {
        func perform(_ write: DurableWrite) throws -> DurableWritten {
            switch write {
            case .click(let click):
                try database.run(clickInsert(click))
                return .done
            case .install(let install):
                try database.run(installInsert(install))
                return .done
            case .event(let event):
                return try eventOutcome(event, inserted: try database.run(eventInsert(event))) { try database.run(earlierEvent(event)) }
            }
        }
        // A click's daily counts go in with it, in its transaction.
        func counts(_ writes: [DurableWrite]) throws {
            let clicks = writes.compactMap { write -> ClickRecord? in
                if case .click(let click) = write { return click }
                return nil
            }
            for statement in clickDayUpserts(clicks) { try database.run(statement) }
        }
        // One install or event is one statement, atomic alone; a click is more, with its counts.
        var clickInBatch = false
        for write in batch { if case .click = write { clickInBatch = true } }
        if batch.count == 1, !clickInBatch { return [Result { try perform(batch[0]) }] }
        do {
            return try database.transaction {
                let results = try batch.map { Result<DurableWritten, any Error>.success(try perform($0)) }
                try counts(batch)
                return results
            }
        } catch {
            return batch.map { write in
                Result {
                    try database.transaction {
                        let written = try perform(write)
                        try counts([write])
                        return written
                    }
                }
            }
        }
    }

    static func perform(_ write: DurableWrite, on connection: any SQLConnection, dialect: SQLDialect) async throws -> DurableWritten {
        switch write {
        case .click(let click):
            try await insertClicks([click], on: connection, dialect: dialect)
            return .done
        case .install(let install):
            try await connection.run(installInsert(install))
            return .done
        case .event(let event):
            let inserted = try await connection.run(eventInsert(event))
            if !inserted.isEmpty { return .event(.stored(event)) }
            let earlier = try await connection.run(earlierEvent(event))
            return try eventOutcome(event, inserted: inserted) { earlier }
        }
    }

    /// An event stored (its insert answered its id), or the earlier event with its key.
    private static func eventOutcome(_ event: EventRecord, inserted: [SQLRow], earlier: () throws -> [SQLRow]) throws -> DurableWritten {
        if !inserted.isEmpty { return .event(.stored(event)) }
        guard let earlier = try earlier().first.map(Self.event) else { throw StoreError(.failed, "An event was neither stored nor found.") }
        return .event(.duplicate(of: earlier))
    }

    // MARK: The writes' statements, the same on both engines

    static func installInsert(_ install: InstallRecord) -> SQLStatement {
        let statement: SQLStatement = """
            INSERT INTO installs (id, project_id, link_id, click_id, confidence, matched_factors, method, installed_at,
                \(sql: deviceColumns), platform, platform_version, device_id, deep_link_data, fingerprint_hash, attribution_window_hours,
                apple_ads_token)
            VALUES (\(install.id), \(install.projectID), \(install.linkID), \(install.clickID), \(install.confidence),
                \(SQLJSON(compact: factors(install))), \(install.method), \(install.installedAt),
                \(sql: deviceValues(install.device)), \(install.platform), \(install.platformVersion), \(install.deviceID),
                \(SQLJSON(compact: deepLinkData(install))),
                \(install.fingerprintHash), \(install.attributionWindowHours), \(install.appleAdsToken))
            """
        return statement.prepared(HotStatement.Install.self)
    }

    /// `installs` stored on `connection`: SQLite, one prepared `INSERT` each; PostgreSQL, one
    /// statement per 1,000, each column bound as one array (as ``insertClicks(_:on:dialect:)``).
    static func insertInstalls(_ installs: [InstallRecord], on connection: any SQLConnection, dialect: SQLDialect) async throws {
        try await insertRows(
            installs, on: connection, dialect: dialect, each: installInsert, batch: installBatch, perStatement: installsPerStatement)
    }

    /// An install's factors and deferred link as they are stored (JSON text, ``JSONText/compact(_:)``).
    private static func factors(_ install: InstallRecord) -> JSONValue { .array(install.matchedFactors.map(JSONValue.string)) }
    private static func deepLinkData(_ install: InstallRecord) -> JSONValue { .object(install.deepLinkData) }

    /// The most installs one PostgreSQL statement stores.
    static let installsPerStatement = 1000

    /// `installs` as one PostgreSQL statement, the rows made by `unnest` from one array per column.
    static func installBatch(_ installs: ArraySlice<InstallRecord>) -> SQLStatement {
        func texts(_ value: (InstallRecord) -> String?) -> String { PostgresArrayLiteral.texts(installs.map(value)) }
        func integers(_ value: (InstallRecord) -> Int?) -> String { PostgresArrayLiteral.integers(installs.map(value)) }
        let statement: SQLStatement = """
            INSERT INTO installs (id, project_id, link_id, click_id, confidence, matched_factors, method, installed_at,
                \(sql: deviceColumns), platform, platform_version, device_id, deep_link_data, fingerprint_hash, attribution_window_hours,
                apple_ads_token)
            SELECT * FROM unnest(\(texts { $0.id })::text[], \(texts { $0.projectID })::text[], \(texts(\.linkID))::text[],
                \(texts(\.clickID))::text[], \(integers { $0.confidence })::integer[], \(texts { JSONText.compact(factors($0)) })::text[],
                \(texts { $0.method.rawValue })::text[], \(integers { SQLTime.milliseconds($0.installedAt) })::bigint[],
                \(texts(\.device.ip))::text[], \(texts(\.device.networkPrefix))::text[], \(texts(\.device.userAgent))::text[],
                \(texts(\.device.timezone))::text[], \(texts(\.device.language))::text[], \(integers(\.device.screenWidth))::integer[],
                \(integers(\.device.screenHeight))::integer[], \(texts { $0.platform?.rawValue })::text[], \(texts(\.platformVersion))::text[],
                \(texts(\.deviceID))::text[], \(texts { JSONText.compact(deepLinkData($0)) })::text[], \(texts { $0.fingerprintHash })::text[],
                \(integers(\.attributionWindowHours))::integer[], \(texts(\.appleAdsToken))::text[])
            """
        return statement.prepared(HotStatement.Installs.self)
    }

    /// Inserts the event unless one with its key is stored; answers its id when inserted.
    static func eventInsert(_ event: EventRecord) -> SQLStatement {
        let statement: SQLStatement = """
            INSERT INTO events (id, project_id, install_id, name, properties, occurred_at, received_at, dedupe_key,
                attributed_link_id, attributed_click_id, link_opened_at, session_id, sdk)
            VALUES (\(event.id), \(event.projectID), \(event.installID), \(event.name), \(SQLJSON(event.properties)), \(event.occurredAt),
                \(event.receivedAt), \(event.dedupeKey), \(event.attributedLinkID), \(event.attributedClickID), \(event.linkOpenedAt),
                \(event.sessionID), \(event.sdk))
            ON CONFLICT (project_id, dedupe_key) DO NOTHING RETURNING id
            """
        return statement.prepared(HotStatement.Event.self)
    }

    /// The stored event with `event`'s key.
    static func earlierEvent(_ event: EventRecord) -> SQLStatement {
        "\(sql: eventColumns) WHERE project_id = \(event.projectID) AND dedupe_key = \(event.dedupeKey)"
    }
}
