import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage

/// Changing a link: LinkForty Core's `PUT /api/links/:id`, behind the admin key.
struct LinkEditing: Sendable {
    let store: any ServerStore
    let configuration: ServerConfiguration

    func register(on groups: RouteGroups) {
        groups.admin.put("api/links/:id") { request, context in try await update(request, context, id: context.parameters.require("id")) }
        groups.admin.patch("api/links/:id") { request, context in try await update(request, context, id: context.parameters.require("id")) }
    }

    /// `PUT` (Core's) or `PATCH /api/links/:id`: the fields the body names, each checked as at
    /// creation, the others kept; `null` clears a field that may be empty. Answers the link's row
    /// as ``LinkCreation/row(_:)`` makes it, without `clickCount`. Once answered, this server
    /// serves the change (its cache forgot the link); the other servers on the same PostgreSQL
    /// within a second.
    func update(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let key = try context.requireAPIKey()
        // Another project's link is not found, as one that does not exist.
        guard var link = try await store.link(id: id), link.projectID == key.projectID else { throw APIError.linkNotFound }
        let body = try await JSONBody.read(request, timeout: configuration.bodyTimeout)
        try Self.apply(body, to: &link)
        guard try await store.updateLink(link) else { throw APIError.linkNotFound }
        try await store.learnDestinations(of: link)
        var row = LinkCreation.row(link)
        row["clickCount"] = nil
        return ServerApplication.json(row)
    }

    /// The fields an edit may set.
    static let editable: Set<String> = [
        "originalUrl", "title", "description", "iosAppStoreUrl", "androidAppStoreUrl", "webFallbackUrl", "appScheme", "iosUniversalLink",
        "androidAppLink", "deepLinkPath", "deepLinkParameters", "utmParameters", "targetingRules", "ogTitle", "ogDescription", "ogImageUrl",
        "attributionWindowHours", "isActive", "expiresAt", "appendClickId", "landingPage",
    ]

    /// Fields of a link that an edit may not change, with the reason.
    static let fixed: [String: String] = [
        "customCode": "a link's code cannot change (links already shared would break)",
        "shortCode": "a link's code cannot change (links already shared would break)",
        "templateId": "a link's template cannot change (its URL would)", "templateSlug": "a link's template cannot change (its URL would)",
        "externalUserId": "a link's owner cannot change", "userId": "a link's owner cannot change", "id": "a link's id cannot change",
    ]

    /// Sets on `link` what `body` names, each checked as ``LinkCreation`` checks it.
    /// - Throws: ``APIError`` (`400`) naming the first field that is unknown, fixed, `null`
    ///   where a value is needed, or wrong; or saying that the body names none.
    static func apply(_ body: JSONBody, to link: inout LinkRecord) throws {
        for name in body.object.keys.sorted() where !editable.contains(name) {
            if let reason = fixed[name] { throw APIError.field(name, "cannot be changed: \(reason)") }
            throw APIError.field(
                String(name.prefix(40)), "is not a field of a link (allowed: \(editable.sorted().joined(separator: ", ")))")
        }
        guard !body.object.isEmpty else { throw APIError(.badRequest, "The body names no field to change.") }
        for name in ["originalUrl", "attributionWindowHours", "isActive", "appendClickId"] where body.object[name] == .null {
            throw APIError.field(name, "cannot be null")
        }
        func has(_ name: String) -> Bool { body.object[name] != nil }
        if has("originalUrl") { link.originalURL = try body.webURL("originalUrl", required: true) ?? link.originalURL }
        if has("title") { link.title = try body.string("title", maxLength: 512) }
        if has("description") { link.description = try body.string("description", maxLength: 2048) }
        if has("iosAppStoreUrl") { link.iosAppStoreURL = try body.webURL("iosAppStoreUrl") }
        if has("androidAppStoreUrl") { link.androidAppStoreURL = try body.webURL("androidAppStoreUrl") }
        if has("webFallbackUrl") { link.webFallbackURL = try body.webURL("webFallbackUrl") }
        if has("appScheme") { link.appScheme = try LinkCreation.appScheme(body) }
        if has("iosUniversalLink") { link.iosUniversalLink = try body.webURL("iosUniversalLink") }
        if has("androidAppLink") { link.androidAppLink = try body.webURL("androidAppLink") }
        if has("deepLinkPath") { link.deepLinkPath = try LinkCreation.deepLinkPath(body) }
        if has("deepLinkParameters") { link.deepLinkParameters = try body.object("deepLinkParameters") ?? [:] }
        if has("utmParameters") { link.utmParameters = try LinkCreation.utmParameters(body) ?? [:] }
        if has("targetingRules") { link.targetingRules = try LinkCreation.targetingRules(body) ?? [:] }
        if has("ogTitle") { link.ogTitle = try body.string("ogTitle", maxLength: 512) }
        if has("ogDescription") { link.ogDescription = try body.string("ogDescription", maxLength: 2048) }
        if has("ogImageUrl") { link.ogImageURL = try body.webURL("ogImageUrl") }
        if has("attributionWindowHours") {
            link.attributionWindowHours =
                try body.integer("attributionWindowHours", in: 1...2160, required: true) ?? link.attributionWindowHours
        }
        if has("isActive") { link.isActive = try body.bool("isActive") ?? link.isActive }
        if has("expiresAt") { link.expiresAt = try body.date("expiresAt") }
        if has("appendClickId") { link.appendClickID = try body.bool("appendClickId") ?? link.appendClickID }
        // `null`: as the project says.
        if has("landingPage") { link.landingPage = try body.bool("landingPage") }
    }
}
