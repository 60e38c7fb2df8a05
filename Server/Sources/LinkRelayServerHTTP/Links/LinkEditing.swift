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
    /// (``LinkRow``) without `clickCount`. Once answered, this server
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
        return ServerHTTP.json(LinkRow(link, clicks: nil))
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

    /// Sets on `link` what `body` names (``LinkChange/init(json:)``, then
    /// ``LinkChange/applied(to:)``).
    /// - Throws: ``APIError`` (`400`) naming the first field that is unknown, fixed, `null`
    ///   where a value is needed, or wrong; or saying that the body names none.
    static func apply(_ body: JSONBody, to link: inout LinkRecord) throws {
        link = try LinkChange(json: body).appliedForAPI(to: link)
    }
}

extension LinkChange {
    /// The change a `PUT` or `PATCH /api/links/{id}` body asks for: each field it names read as
    /// its type, `null` clearing a field that may be empty.
    /// - Throws: ``APIError`` (`400`) naming the first field that is unknown, fixed, `null`
    ///   where a value is needed, or not of its type; or saying that the body names none.
    init(json body: JSONBody) throws {
        for name in body.object.keys.sorted() where !LinkEditing.editable.contains(name) {
            if let reason = LinkEditing.fixed[name] { throw APIError.field(name, "cannot be changed: \(reason)") }
            throw APIError.field(
                String(name.prefix(40)), "is not a field of a link (allowed: \(LinkEditing.editable.sorted().joined(separator: ", ")))")
        }
        guard !body.object.isEmpty else { throw APIError(.badRequest, "The body names no field to change.") }
        for name in ["originalUrl", "attributionWindowHours", "isActive", "appendClickId"] where body.object[name] == .null {
            throw APIError.field(name, "cannot be null")
        }
        self.init()
        func has(_ name: String) -> Bool { body.object[name] != nil }
        if has("originalUrl") { originalURL = try body.webURL("originalUrl", required: true) }
        if has("title") { title = .some(try body.string("title", maxLength: LinkRules.shortText)) }
        if has("description") { description = .some(try body.string("description", maxLength: LinkRules.longText)) }
        if has("iosAppStoreUrl") { iosAppStoreURL = .some(try body.webURL("iosAppStoreUrl")) }
        if has("androidAppStoreUrl") { androidAppStoreURL = .some(try body.webURL("androidAppStoreUrl")) }
        if has("webFallbackUrl") { webFallbackURL = .some(try body.webURL("webFallbackUrl")) }
        if has("appScheme") { appScheme = .some(try LinkCreation.appScheme(body)) }
        if has("iosUniversalLink") { iosUniversalLink = .some(try body.webURL("iosUniversalLink")) }
        if has("androidAppLink") { androidAppLink = .some(try body.webURL("androidAppLink")) }
        if has("deepLinkPath") { deepLinkPath = .some(try LinkCreation.deepLinkPath(body)) }
        if has("deepLinkParameters") { deepLinkParameters = try body.object("deepLinkParameters") ?? [:] }
        if has("utmParameters") { utmParameters = try LinkCreation.utmParameters(body) ?? [:] }
        if has("targetingRules") { targetingRules = try LinkCreation.targetingRules(body) ?? [:] }
        if has("ogTitle") { ogTitle = .some(try body.string("ogTitle", maxLength: LinkRules.shortText)) }
        if has("ogDescription") { ogDescription = .some(try body.string("ogDescription", maxLength: LinkRules.longText)) }
        if has("ogImageUrl") { ogImageURL = .some(try body.webURL("ogImageUrl")) }
        if has("attributionWindowHours") {
            attributionWindowHours = try body.integer("attributionWindowHours", in: LinkRules.attributionWindowHours, required: true)
        }
        if has("isActive") { isActive = try body.bool("isActive") }
        if has("expiresAt") { expiresAt = .some(try body.date("expiresAt")) }
        if has("appendClickId") { appendClickID = try body.bool("appendClickId") }
        // `null`: as the project says.
        if has("landingPage") { landingPage = .some(try body.bool("landingPage")) }
    }

    /// ``applied(to:)``, a broken rule answered as the API's `400` naming the field.
    func appliedForAPI(to link: LinkRecord) throws -> LinkRecord {
        do {
            return try applied(to: link)
        } catch {
            throw APIError(error)
        }
    }
}
