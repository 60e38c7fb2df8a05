import Foundation
import HTTPTypes
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage

/// The admin API's links and analytics: LinkForty Core's routes (`GET /api/links`, `GET`,
/// `DELETE /api/links/:id`, `POST /api/links/:id/duplicate`, `GET /api/analytics/overview`,
/// `GET /api/analytics/links/:id`), behind an admin key, over the key's own project.
///
/// Where Core is wrong, this is right, and says so:
/// - a listing comes in pages (`limit`, at most 500, and a `Link: <…>; rel="next"` header),
///   not every link at once, and can be searched and filtered;
/// - clicks from crawlers and link-preview fetchers are not counted (Core counts them all);
/// - an unknown or foreign link is a `404` JSON error (Core answers `500` for "Link not found");
/// - a query value that cannot be read is a `400` naming it (Core interpolates `days` into
///   its SQL).
struct LinkAdmin: Sendable {
    let store: any ServerStore
    let configuration: ServerConfiguration
    let clock: any LinkRelayClock

    func register(on groups: RouteGroups) {
        groups.admin.get("api/links") { try await list($0, $1) }
        groups.admin.get("api/links/:id") { request, context in try await read(request, context, id: context.parameters.require("id")) }
        groups.admin.delete("api/links/:id") { request, context in try await delete(context, id: context.parameters.require("id")) }
        groups.admin.post("api/links/:id/duplicate") { request, context in
            try await duplicate(request, context, id: context.parameters.require("id"))
        }
        groups.admin.get("api/links/:id/qr") { request, context in try await qr(request, context, id: context.parameters.require("id")) }
        groups.admin.get("api/analytics/overview") { try await overview($0, $1) }
        groups.admin.get("api/analytics/links/:id") { request, context in
            try await linkAnalytics(request, context, id: context.parameters.require("id"))
        }
    }

    /// RFC 8288's `Link` header, which names the next page.
    static let linkHeader = HTTPField.Name("Link")!

    /// The most links one page holds, and the default.
    static let maximumPage = 500
    static let defaultPage = 50

    /// `GET /api/links?search=&active=&template=&limit=&cursor=`: the project's links, newest
    /// first, as Core's rows with `clickCount`; the next page's address in `Link`.
    func list(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let query = AdminQuery(request)
        let limit = try query.integer("limit", in: 1...Self.maximumPage) ?? Self.defaultPage
        let filter = LinkFilter(
            search: try query.text("search", maxLength: 200), active: try query.bool("active"),
            templateSlug: try query.text("template", maxLength: 64))
        var cursor: LinkCursor?
        if let token = query.raw("cursor") {
            guard let read = LinkCursor(token: token) else { throw APIError.field("cursor", "is not a cursor this server gave") }
            cursor = read
        }
        var links = try await store.links(project: key.projectID, filter: filter, after: cursor, limit: limit + 1)
        let more = links.count > limit
        links = Array(links.prefix(limit))
        let counts = try await store.clickCounts(links: links.map(\.id))
        var response = ServerHTTP.json(links.map { LinkRow($0, clicks: counts[$0.id] ?? 0) })
        if more, let last = links.last {
            var components = URLComponents()
            components.path = "/api/links"
            components.queryItems =
                query.items.filter { $0.name != "cursor" } + [URLQueryItem(name: "cursor", value: LinkCursor(after: last).token)]
            response.headers[Self.linkHeader] = "<\(components.string ?? "/api/links")>; rel=\"next\""
        }
        return response
    }

    /// `GET /api/links/:id`: the link's row with `clickCount`.
    func read(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let link = try await ownLink(id, context)
        return ServerHTTP.json(LinkRow(link, clicks: try await store.clickCounts(links: [link.id])[link.id] ?? 0))
    }

    /// `DELETE /api/links/:id`: `{"success": true}`; the link, its clicks and click tokens are
    /// gone, its code answers 404 from then on. Installs and events keep the link's id.
    func delete(_ context: ServerContext, id: String) async throws -> Response {
        let key = try context.requireAPIKey()
        guard try await store.deleteLink(project: key.projectID, id: id) else { throw APIError.linkNotFound }
        return ServerHTTP.json(Success(success: true))
    }

    /// `POST /api/links/:id/duplicate`: a new link with the same destinations and settings, a
    /// new random code, the title with ` (Copy)` (as Core), no clicks; `201` with its row.
    func duplicate(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let stored = try await LinkCreation.duplicate(try await ownLink(id, context), at: clock.currentDate, into: store)
        return LinkRow(stored, clicks: 0).response(status: .created)
    }

    /// `GET /api/links/:id/qr?format=svg&size=256&level=M`: the link's share URL as a QR code,
    /// SVG (`image/svg+xml`), `size` pixels a side (64…4096, at least a pixel a module), at
    /// error-correction level L, M, Q or H.
    func qr(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let link = try await ownLink(id, context)
        let query = AdminQuery(request)
        guard (query.raw("format") ?? "svg") == "svg" else { throw APIError.field("format", "must be svg (the only format served)") }
        let size = try query.integer("size", in: 64...4096) ?? 256
        let levelName = query.raw("level") ?? "M"
        guard let level = QRCode.Level(rawValue: levelName.uppercased()) else { throw APIError.field("level", "must be L, M, Q or H") }
        let url = link.shareURL(on: configuration.shareOrigin(for: request)).absoluteString
        let code: QRCode
        do {
            code = try QRCode(text: url, level: level)
        } catch {
            throw APIError(
                .unprocessableContent,
                "The link's URL (\(error.bytes) bytes) is longer than a QR code at level \(level.rawValue) holds (\(error.capacity)).",
                field: "level")
        }
        return ServerHTTP.svg(code, pixels: size, filename: "\(link.shortCode).svg", download: false)
    }

    /// `GET /api/analytics/overview?days=30`: the project's clicks in the last `days` days
    /// (1…365), in Core's shape, with the referrers, `utm_source`s and installs besides.
    func overview(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let period = try Period(AdminQuery(request), now: clock.currentDate)
        let clicks = try await store.clickSummary(project: key.projectID, link: nil, from: period.from, to: period.to)
        var answer = Analytics(
            days: period.days, from: period.from, to: period.to, clicks: clicks,
            installs: try await store.installSummary(project: key.projectID, link: nil, from: period.from, to: period.to))
        var top: [Analytics.TopLink] = []
        for entry in clicks.topLinks { top.append(Analytics.TopLink(entry, link: try await store.link(id: entry.linkID))) }
        answer.topLinks = top
        return ServerHTTP.json(answer)
    }

    /// `GET /api/analytics/links/:id?days=30`: one link's clicks in Core's shape, with the
    /// referrers, `utm_source`s and the installs attributed to it besides.
    func linkAnalytics(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let link = try await ownLink(id, context)
        let period = try Period(AdminQuery(request), now: clock.currentDate)
        let clicks = try await store.clickSummary(project: link.projectID, link: link.id, from: period.from, to: period.to)
        var answer = Analytics(
            days: period.days, from: period.from, to: period.to, clicks: clicks,
            installs: try await store.installSummary(project: link.projectID, link: link.id, from: period.from, to: period.to))
        answer.linkId = link.id
        return ServerHTTP.json(answer)
    }

    /// The key's project's link `id`; another project's is not found, as one that does not exist.
    private func ownLink(_ id: String, _ context: ServerContext) async throws -> LinkRecord {
        let key = try context.requireAPIKey()
        guard let link = try await store.link(id: id), link.projectID == key.projectID else { throw APIError.linkNotFound }
        return link
    }

    /// The time an analytics request covers: the last `days` days up to now.
    struct Period {
        var days: Int
        var from: Date
        var to: Date

        init(_ query: AdminQuery, now: Date) throws {
            days = try query.integer("days", in: 1...365) ?? 30
            to = now
            from = now.addingTimeInterval(-Double(days) * 86_400)
        }
    }
}

/// An admin request's query, read strictly: a value that cannot be read is a `400` naming it.
package struct AdminQuery {
    let items: [URLQueryItem]

    package init(_ request: Request) {
        items = URLComponents(string: request.uri.description)?.queryItems ?? []
    }

    /// The value of `name` as sent (the last, when repeated); `nil` when absent or empty.
    package func raw(_ name: String) -> String? {
        items.last { $0.name == name }?.value.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Text of at most `maxLength` characters (Unicode scalars, as JSON Schema counts them);
    /// empty is absent.
    package func text(_ name: String, maxLength: Int) throws -> String? {
        guard let value = raw(name) else { return nil }
        guard TextLimit.fits(value, characters: maxLength) else { throw APIError.field(name, "is longer than \(maxLength) characters") }
        return value
    }

    /// A whole number within `range`; present but empty (`?days=`) is not one.
    package func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = items.last(where: { $0.name == name }).map({ $0.value ?? "" }) else { return nil }
        guard let number = Int(value), range.contains(number) else {
            throw APIError.field(name, "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// `true` or `false`; present but empty is neither.
    package func bool(_ name: String) throws -> Bool? {
        switch items.last(where: { $0.name == name }).map({ $0.value ?? "" }) {
        case nil: return nil
        case "true": return true
        case "false": return false
        default: throw APIError.field(name, "must be true or false")
        }
    }
}
