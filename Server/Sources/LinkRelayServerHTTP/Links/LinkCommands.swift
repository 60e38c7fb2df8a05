import Foundation
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage

/// What `linkrelay-server links …` and `linkrelay-server stats --link` do, over a store: the
/// same rules as the admin API (an edit is checked field by field as ``LinkEditing`` checks it),
/// here so that the command stays thin and the tests reach it.
package enum LinkCommands {
    /// The link `text` names in `project`: its id, its code, or `template/code`.
    package static func find(_ text: String, project: String, in store: any LinkStore & ProjectStore) async throws -> LinkRecord? {
        if let byID = try await store.link(id: text), byID.projectID == project { return byID }
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        let (slug, code) = parts.count == 2 ? (parts[0], parts[1]) : ("", text)
        return try await store.link(project: project, shortCode: code, templateSlug: slug)
    }

    /// The link `text` names, or a ``StartupError`` saying there is none.
    package static func require(_ text: String, project: String, in store: any LinkStore & ProjectStore) async throws -> LinkRecord {
        guard let link = try await find(text, project: project, in: store) else {
            throw StartupError("No link '\(text.prefix(80))' in this project (`linkrelay-server links list` shows them).")
        }
        return link
    }

    /// `link` changed as `fields` say (the admin API's names: `title`, `originalUrl`,
    /// `isActive`…), each checked as the API checks it, and stored.
    /// - Throws: ``StartupError`` naming the field that is wrong.
    package static func update(
        _ link: LinkRecord, fields: [String: JSONValue], in store: any LinkStore & ProjectStore
    ) async throws -> LinkRecord {
        var changed = link
        do {
            try LinkEditing.apply(JSONBody(object: fields), to: &changed)
        } catch let error as APIError {
            throw StartupError(error.message)
        }
        guard try await store.updateLink(changed) else { throw StartupError("The link was deleted meanwhile.") }
        try await store.learnDestinations(of: changed)
        return changed
    }

    /// Links as the admin API's rows (`GET /api/links`), with their clicks.
    package static func json(_ links: [LinkRecord], clicks: [String: Int]) -> String {
        ServerHTTP.jsonText(links.map { LinkRow($0, clicks: clicks[$0.id] ?? 0) })
    }

    /// One link as the admin API's row (`GET /api/links/:id`).
    package static func json(_ link: LinkRecord, clicks: Int) -> String {
        ServerHTTP.jsonText(LinkRow(link, clicks: clicks))
    }

    /// The fields of a JSON object given on the command line; `nil` when it is not one.
    package static func fields(fromJSON text: String) -> [String: JSONValue]? {
        guard case .object(let object)? = try? JSONParser.parse(Array(text.utf8)) else { return nil }
        return object
    }

    /// Links with their clicks as a table: code, status, clicks, created, title, destination.
    package static func table(_ links: [LinkRecord], clicks: [String: Int], now: Date) -> String {
        let rows =
            [["CODE", "STATUS", "CLICKS", "CREATED", "TITLE", "DESTINATION"]]
            + links.map { link in
                [
                    (link.templateSlug.isEmpty ? "" : link.templateSlug + "/") + link.shortCode, link.status(at: now),
                    String(clicks[link.id] ?? 0), link.createdAt.formatted(Date.ISO8601FormatStyle()),
                    String((link.title ?? "").prefix(40)),
                    link.originalURL,
                ]
            }
        return aligned(rows)
    }

    /// One link's fields, a line each.
    package static func details(_ link: LinkRecord, clicks: Int, now: Date) -> String {
        let fields: [(String, String?)] = [
            ("id", link.id), ("code", (link.templateSlug.isEmpty ? "" : link.templateSlug + "/") + link.shortCode),
            ("status", link.status(at: now)), ("clicks", String(clicks)), ("title", link.title), ("original URL", link.originalURL),
            ("web fallback", link.webFallbackURL), ("App Store", link.iosAppStoreURL), ("Google Play", link.androidAppStoreURL),
            ("app scheme", link.appScheme), ("deep link path", link.deepLinkPath),
            ("parameters", link.deepLinkParameters.isEmpty ? nil : JSONText.compact(.object(link.deepLinkParameters))),
            (
                "UTM",
                link.utmParameters.isEmpty
                    ? nil : link.utmParameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            ),
            ("window", "\(link.attributionWindowHours) h"), ("expires", link.expiresAt.map { $0.formatted(Date.ISO8601FormatStyle()) }),
            ("created", link.createdAt.formatted(Date.ISO8601FormatStyle())),
        ]
        return aligned(fields.compactMap { name, value in value.map { [name, $0] } })
    }

    /// A link's numbers over `days` days, as `stats --link` prints them.
    package static func stats(_ link: LinkRecord, clicks: ClickSummary, installs: [NamedCount], days: Int) -> String {
        func list(_ counts: [NamedCount]) -> String {
            counts.isEmpty ? "none" : counts.map { "\($0.name ?? "unknown") \($0.count)" }.joined(separator: ", ")
        }
        let perDay = clicks.byDay.map { "\(Timestamp.date(ofDay: $0.day)) \($0.clicks)" }
        return [
            "\(link.shortCode): \(clicks.total) clicks from \(clicks.unique) addresses in the last \(days) days (bots not counted)",
            "  by day: " + (perDay.isEmpty ? "none" : perDay.joined(separator: ", ")),
            "  by platform: " + list(clicks.byPlatform), "  by country: " + list(clicks.byCountry),
            "  by referrer: " + list(clicks.byReferrer), "  by utm_source: " + list(clicks.byUTMSource),
            "  installs: " + list(installs),
        ].joined(separator: "\n")
    }

    /// `rows` with their columns padded to the widest cell (the last column as it is).
    static func aligned(_ rows: [[String]]) -> String {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, text in
                column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
