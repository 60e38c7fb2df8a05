import Foundation
import LinkRelay

/// Installs, events, and the writes committed together.
extension SQLStore {
    // MARK: Installs and events

    public func recordInstall(_ install: InstallRecord) async throws {
        _ = try await writes.submit(.install(install))
    }

    public func install(project: String, id: String) async throws -> InstallRecord? {
        try await engine.select(Self.installColumns + " WHERE project_id = ? AND id = ?", [.text(project), .text(id)]).first.flatMap(Self.install)
    }

    public func latestInstall(project: String, fingerprintHash: String) async throws -> InstallRecord? {
        try await engine.select(
            Self.installColumns + " WHERE project_id = ? AND fingerprint_hash = ? ORDER BY installed_at DESC, id DESC LIMIT 1",
            [.text(project), .text(fingerprintHash)]
        ).first.flatMap(Self.install)
    }

    static let installColumns = """
        SELECT id, project_id, link_id, click_id, confidence, matched_factors, method, installed_at, ip, user_agent, timezone, language,
            screen_width, screen_height, platform, platform_version, device_id, deep_link_data, fingerprint_hash,
            attribution_window_hours FROM installs
        """

    static func install(_ row: SQLRow) -> InstallRecord? {
        guard let id = row.string("id"), let project = row.string("project_id"), let installed = row.date("installed_at") else { return nil }
        return InstallRecord(
            id: id, projectID: project, linkID: row.string("link_id"), clickID: row.string("click_id"), confidence: row.int("confidence") ?? 0,
            matchedFactors: JSONText.decode([String].self, row.string("matched_factors")) ?? [], method: row.string("method") ?? "none",
            installedAt: installed, ip: row.string("ip"), userAgent: row.string("user_agent"), timezone: row.string("timezone"),
            language: row.string("language"), screenWidth: row.int("screen_width"), screenHeight: row.int("screen_height"),
            platform: row.string("platform"), platformVersion: row.string("platform_version"), deviceID: row.string("device_id"),
            fingerprintHash: row.string("fingerprint_hash") ?? "", attributionWindowHours: row.int("attribution_window_hours"),
            deepLinkData: JSONText.decode([String: JSONValue].self, row.string("deep_link_data")) ?? [:])
    }

    public func recordEvent(_ event: EventRecord) async throws -> EventOutcome {
        guard case .event(let outcome) = try await writes.submit(.event(event)) else {
            throw StoreError(.failed, "An event's write answered something else.")
        }
        return outcome
    }

    public func events(install: String) async throws -> [EventRecord] {
        try await engine.select(Self.eventColumns + " WHERE install_id = ? ORDER BY received_at, id", [.text(install)]).compactMap(Self.event)
    }

    static let eventColumns = """
        SELECT id, project_id, install_id, name, properties, occurred_at, received_at, dedupe_key, attributed_link_id,
            attributed_click_id, link_opened_at, session_id, sdk FROM events
        """

    static func event(_ row: SQLRow) -> EventRecord? {
        guard let id = row.string("id"), let project = row.string("project_id"), let install = row.string("install_id"),
            let name = row.string("name"), let occurred = row.date("occurred_at"), let received = row.date("received_at")
        else { return nil }
        return EventRecord(
            id: id, projectID: project, installID: install, name: name,
            properties: JSONText.decode([String: JSONValue].self, row.string("properties")) ?? [:], occurredAt: occurred,
            receivedAt: received, dedupeKey: row.string("dedupe_key") ?? id, attributedLinkID: row.string("attributed_link_id"),
            attributedClickID: row.string("attributed_click_id"), linkOpenedAt: row.date("link_opened_at"),
            sessionID: row.string("session_id"), sdk: row.string("sdk"))
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
    static func commit(_ batch: [DurableWrite], engine: any SQLEngine) async -> [Result<DurableWritten, any Error>] {
        if batch.count == 1 {
            do {
                return [.success(try await engine.withConnection { try await perform(batch[0], on: $0) })]
            } catch {
                return [.failure(error)]
            }
        }
        do {
            return try await engine.transaction { connection in
                var results: [Result<DurableWritten, any Error>] = []
                results.reserveCapacity(batch.count)
                // The batch's clicks go in as multi-row statements: under load most of a batch
                // is clicks, and a statement per click kept the writer busy for each of them.
                var clicks: [ClickRecord] = []
                for write in batch {
                    if case .click(let click) = write {
                        clicks.append(click)
                        continue
                    }
                    try await insertClicks(clicks, on: connection)
                    results += clicks.map { _ in .success(.done) }
                    clicks.removeAll()
                    results.append(.success(try await perform(write, on: connection)))
                }
                try await insertClicks(clicks, on: connection)
                results += clicks.map { _ in .success(.done) }
                return results
            }
        } catch {
            guard batch.count > 1 else { return [.failure(error)] }
            var results: [Result<DurableWritten, any Error>] = []
            for write in batch {
                do {
                    results.append(.success(try await engine.transaction { try await perform(write, on: $0) }))
                } catch {
                    results.append(.failure(error))
                }
            }
            return results
        }
    }

    static func perform(_ write: DurableWrite, on connection: any SQLConnection) async throws -> DurableWritten {
        switch write {
        case .click(let click):
            try await insertClicks([click], on: connection)
            return .done
        case .install(let install):
            try await connection.run(
                """
                INSERT INTO installs (id, project_id, link_id, click_id, confidence, matched_factors, method, installed_at, ip,
                    user_agent, timezone, language, screen_width, screen_height, platform, platform_version, device_id,
                    deep_link_data, fingerprint_hash, attribution_window_hours)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(install.id), .text(install.projectID), .text(install.linkID), .text(install.clickID), .integer(install.confidence),
                    .text(JSONText.encode(install.matchedFactors)), .text(install.method), .time(install.installedAt), .text(install.ip),
                    .text(install.userAgent), .text(install.timezone), .text(install.language), .integer(install.screenWidth),
                    .integer(install.screenHeight), .text(install.platform), .text(install.platformVersion), .text(install.deviceID),
                    .text(JSONText.encode(install.deepLinkData)), .text(install.fingerprintHash), .integer(install.attributionWindowHours),
                ])
            return .done
        case .event(let event):
            let inserted = try await connection.run(
                """
                INSERT INTO events (id, project_id, install_id, name, properties, occurred_at, received_at, dedupe_key,
                    attributed_link_id, attributed_click_id, link_opened_at, session_id, sdk)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (project_id, dedupe_key) DO NOTHING RETURNING id
                """,
                [
                    .text(event.id), .text(event.projectID), .text(event.installID), .text(event.name),
                    .text(JSONText.encode(event.properties)), .time(event.occurredAt), .time(event.receivedAt), .text(event.dedupeKey),
                    .text(event.attributedLinkID), .text(event.attributedClickID), .time(event.linkOpenedAt), .text(event.sessionID),
                    .text(event.sdk),
                ])
            if !inserted.isEmpty { return .event(.stored(event)) }
            guard
                let earlier = try await connection.run(
                    eventColumns + " WHERE project_id = ? AND dedupe_key = ?", [.text(event.projectID), .text(event.dedupeKey)]
                ).first.flatMap(Self.event)
            else { throw StoreError(.failed, "An event was neither stored nor found.") }
            return .event(.duplicate(of: earlier))
        }
    }
}
