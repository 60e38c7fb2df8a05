import Foundation

/// Where the server keeps links and templates: stored, read by code, id or the request that made
/// them, listed, edited and deleted. One of the stores ``ServerStore`` is made of (the SQL engines
/// implement every one); a part of the server that needs only this takes only this.
package protocol LinkStore: Sendable {
    /// Stores a template.
    /// - Throws: ``StoreError/Kind/conflict`` when its slug is taken.
    func insertTemplate(_ template: TemplateRecord) async throws

    /// The template of `project` with `id`.
    func template(project: String, id: String) async throws -> TemplateRecord?

    /// The template of `project` with `slug`.
    func template(project: String, slug: String) async throws -> TemplateRecord?

    /// Stores a link.
    /// - Throws: ``StoreError/Kind/conflict`` when its template slug and code are taken.
    func insertLink(_ link: LinkRecord) async throws

    /// Stores `link`'s editable fields over the stored link with its id and project (its code,
    /// template, owner and creation stay); `false` when there is none. Once this returns, this
    /// process serves the link as changed; the other processes on the database within a second
    /// (PostgreSQL's notice), at most the link cache's time.
    func updateLink(_ link: LinkRecord) async throws -> Bool

    /// The link with `shortCode` (and `templateSlug`, when given; the link without a template
    /// first otherwise), of `project` when given, live or not.
    func link(project: String?, shortCode: String, templateSlug: String?) async throws -> LinkRecord?

    /// The link of `project` made by the same request before (``LinkRecord/dedupeKey``).
    func link(project: String, dedupeKey: String) async throws -> LinkRecord?

    /// The link with `id`, as stored now.
    func link(id: String) async throws -> LinkRecord?

    /// `project`'s links that `filter` lets through, newest first, after `cursor` when given, at
    /// most `limit` (at most 1,000).
    func links(project: String, filter: LinkFilter, after cursor: LinkCursor?, limit: Int) async throws -> [LinkRecord]

    /// Deletes `project`'s link `id` with its clicks and click tokens (installs and events keep
    /// the link's id); `false` when there is none. Once this returns, its code answers 404 on this
    /// process; on the others within a second.
    func deleteLink(project: String, id: String) async throws -> Bool

    /// How many links `project` has.
    func linkCount(project: String) async throws -> Int
}

package struct LinkFilter: Sendable, Hashable {
    /// Text the link's code, title or destination contains (any case); `nil` for any.
    package var search: String?
    /// Only active (`true`) or inactive (`false`) links; `nil` for both.
    package var active: Bool?
    /// Only links of the template with this slug (`""`: links without a template); `nil` for any.
    package var templateSlug: String?

    /// A filter; see each property.
    package init(search: String? = nil, active: Bool? = nil, templateSlug: String? = nil) {
        self.search = search
        self.active = active
        self.templateSlug = templateSlug
    }
}

package struct LinkCursor: Sendable, Hashable {
    package var createdAt: Date
    package var id: String

    /// The cursor after `link`.
    package init(after link: LinkRecord) {
        createdAt = link.createdAt
        id = link.id
    }

    /// The cursor as a query value: `milliseconds.id`, as base64url.
    package var token: String {
        Data("\(EpochMilliseconds.of(createdAt)).\(id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The cursor a ``token`` names; `nil` for anything else.
    package init?(token: String) {
        guard token.utf8.count <= 200 else { return nil }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8),
            let dot = text.firstIndex(of: "."), let milliseconds = Int64(text[..<dot]), milliseconds >= 0
        else { return nil }
        let id = String(text[text.index(after: dot)...])
        guard !id.isEmpty else { return nil }
        createdAt = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        self.id = id
    }
}
