import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import NIOCore

/// CSV exports of the links, a link's clicks and the installs: streamed a page of rows at a time
/// (the memory an export holds does not grow with its rows), RFC 4180, UTF-8.
extension Dashboard {
    /// Rows read from the store per page of an export.
    static let exportPage = 1000

    func linksCSV(_ context: ServerContext) async throws -> Response {
        let session = try context.requireSession()
        let store = self.store
        let now = clock.currentDate
        return Self.csv(
            filename: "links.csv",
            header: ["id", "code", "template", "title", "status", "clicks", "original_url", "web_fallback_url", "created_at", "expires_at"]
        ) { (cursor: LinkCursor?) in
            let links = try await store.links(project: session.projectID, filter: LinkFilter(), after: cursor, limit: Self.exportPage)
            let clicks = try await store.clickCounts(links: links.map(\.id))
            let rows = links.map { link in
                [
                    link.id, link.shortCode, link.templateSlug, link.title ?? "", link.status(at: now),
                    String(clicks[link.id] ?? 0),
                    link.originalURL, link.webFallbackURL ?? "", ServerHTTP.timestamp(link.createdAt),
                    link.expiresAt.map(ServerHTTP.timestamp) ?? "",
                ]
            }
            return (rows, links.count == Self.exportPage ? links.last.map(LinkCursor.init(after:)) : nil)
        }
    }

    func clicksCSV(_ context: ServerContext, id: String) async throws -> Response {
        let session = try context.requireSession()
        let link = try await ownLink(id, session)
        let store = self.store
        return Self.csv(
            filename: "\(link.shortCode)-clicks.csv",
            header: ["clicked_at", "platform", "country", "referrer", "utm_source", "bot", "network", "user_agent"]
        ) { (cursor: TimeCursor?) in
            let clicks = try await store.clicks(link: link.id, after: cursor, limit: Self.exportPage)
            let rows = clicks.map { click in
                [
                    ServerHTTP.timestamp(click.clickedAt), click.platform?.rawValue ?? "", click.source.country ?? "",
                    click.source.referrerHost ?? "", click.source.utmSource ?? "", click.isBot ? "yes" : "no",
                    click.device.networkPrefix ?? "",
                    click.device.userAgent ?? "",
                ]
            }
            return (rows, clicks.count == Self.exportPage ? clicks.last.map { TimeCursor(date: $0.clickedAt, id: $0.id) } : nil)
        }
    }

    func installsCSV(_ context: ServerContext) async throws -> Response {
        let session = try context.requireSession()
        let store = self.store
        return Self.csv(
            filename: "installs.csv",
            header: ["installed_at", "id", "link_id", "method", "confidence", "matched_factors", "platform", "platform_version"]
        ) { (cursor: TimeCursor?) in
            let installs = try await store.installs(project: session.projectID, after: cursor, limit: Self.exportPage)
            let rows = installs.map { install in
                [
                    ServerHTTP.timestamp(install.installedAt), install.id, install.linkID ?? "", install.method.rawValue,
                    String(install.confidence), install.matchedFactors.joined(separator: " "), install.platform?.rawValue ?? "",
                    install.platformVersion ?? "",
                ]
            }
            return (rows, installs.count == Self.exportPage ? installs.last.map { TimeCursor(date: $0.installedAt, id: $0.id) } : nil)
        }
    }

    /// A CSV answer written page by page: `page` gives the rows after a cursor and the cursor of
    /// the next page (`nil` at the end). A failure after the first bytes ends the file early (the
    /// status is already sent) and is logged.
    static func csv<Cursor: Sendable>(
        filename: String, header: [String], page: @escaping @Sendable (Cursor?) async throws -> (rows: [[String]], next: Cursor?)
    ) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"\(filename)\"",
                .cacheControl: "no-store",
            ],
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: CSV.line(header)))
                var cursor: Cursor?
                repeat {
                    let (rows, next) = try await page(cursor)
                    if !rows.isEmpty { try await writer.write(ByteBuffer(string: rows.map(CSV.line).joined())) }
                    cursor = next
                } while cursor != nil
                try await writer.finish(nil)
            })
    }
}

/// RFC 4180's CSV, safe to open in a spreadsheet.
enum CSV {
    /// `fields` as one line ending in CRLF.
    static func line(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }

    /// A field: quoted when it holds a separator of any locale's spreadsheet (`,`; `;` where
    /// the decimal mark is a comma, as in German or French Excel; a tab; `|`), a quote or a line
    /// break (its quotes doubled). Wherever a cell could begin (the field's start, and after each
    /// of those separators and line breaks, in case a program splits it anyway), a character a
    /// spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or a carriage return) gets
    /// a `'` in front: `x;=cmd|…` opened with `;` as the separator no longer makes a cell that
    /// starts with `=`.
    static func field(_ text: String) -> String {
        var value = String.UnicodeScalarView()
        var quoted = false
        var cellStart = true
        for scalar in text.unicodeScalars {
            if cellStart, formulaStarts.contains(scalar) { value.append("'") }
            value.append(scalar)
            cellStart = cellBreaks.contains(scalar)
            if cellStart || scalar == "\"" { quoted = true }
        }
        let result = String(value)
        guard quoted else { return result }
        return "\"" + result.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// What a spreadsheet runs as a formula at the start of a cell.
    private static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]
    /// Where a cell ends in some locale's reading: the separators and line breaks.
    private static let cellBreaks: Set<Unicode.Scalar> = [",", ";", "\t", "|", "\n", "\r"]
}
