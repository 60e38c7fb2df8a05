import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage

/// Making links: `POST /api/sdk/v1/links` (what LinkForty's SDKs call without a template) and
/// `POST /api/links` (Core's endpoint; with a template from the SDKs, everything from an admin).
///
/// Where Core is wrong, this is right, and says so:
/// - a `customCode` that is taken is a `409` naming the field (Core silently hands out a
///   random code instead, so the link the app announced does not exist);
/// - an unknown `templateId` is a `404` (Core fails on the foreign key with a 500, which the
///   SDKs retry three times);
/// - `originalUrl` is optional (the SDKs never send it; Core requires it, so their
///   `createLink` always fails against Core): it falls back to the web fallback, then to the
///   template's.
/// - a request with an `externalUserId` that repeats an earlier one of the same user (same
///   template, path, parameters, UTM, URLs) gets that link back with `"deduplicated": true`,
///   the rule LinkForty documents for its Cloud.
struct LinkCreation: Sendable {
    let store: any ServerStore
    let configuration: ServerConfiguration
    let clock: any LinkRelayClock

    /// Link creation, both forms, behind the SDK key (an admin key too).
    func register(on groups: RouteGroups) {
        groups.sdk.post("api/sdk/v1/links") { try await createForSDK($0, $1) }
        groups.sdk.post("api/links") { try await createAsRow($0, $1) }
    }

    /// `POST /api/sdk/v1/links`: `{"url", "shortCode", "linkId", "deduplicated"}`.
    func createForSDK(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let (link, deduplicated) = try await create(
            try await JSONBody.read(request, timeout: configuration.bodyTimeout), key: key, admin: key.scope == .admin)
        return ServerHTTP.json(
            SDKLink(
                url: shareURL(link, request: request), shortCode: link.shortCode, linkId: link.id, deduplicated: deduplicated,
                warnings: LinkMaker.warnings(link)))
    }

    /// `POST /api/links`: the link's row as Core answers it (snake_case, with the camelCase
    /// copies and `clickCount`), plus `url`.
    func createAsRow(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let (link, deduplicated) = try await create(
            try await JSONBody.read(request, timeout: configuration.bodyTimeout), key: key, admin: key.scope == .admin)
        let row = CreatedLinkRow(
            row: LinkRow(link, clicks: 0), url: shareURL(link, request: request), deduplicated: deduplicated,
            warnings: LinkMaker.warnings(link))
        return row.response(status: deduplicated ? .ok : .created)
    }

    /// The link a body asks for, stored, or the one it repeats (``LinkMaker``). An SDK key's
    /// values for an admin's fields (``LinkDraft/adminFields``) are refused before anything else
    /// is read.
    func create(_ body: JSONBody, key: APIKeyRecord, admin: Bool) async throws -> (LinkRecord, Bool) {
        if !admin {
            for name in LinkDraft.adminFields where body.object[name] != nil && body.object[name] != .null {
                throw APIError(LinkCreationError.adminOnly(field: name))
            }
        }
        return try await create(try LinkDraft(json: body), key: key, admin: admin)
    }

    /// The link `draft` asks for, stored, or the one it repeats; a broken rule answered as the API's error.
    func create(_ draft: LinkDraft, key: APIKeyRecord, admin: Bool) async throws -> (LinkRecord, Bool) {
        do {
            return try await LinkMaker(store: store, clock: clock).make(draft, key: key, admin: admin)
        } catch let error as LinkCreationError {
            throw APIError(error)
        }
    }

    /// A copy of `original` stored (``LinkMaker/duplicate(_:at:into:)``).
    static func duplicate(_ original: LinkRecord, at date: Date, into store: any LinkStore) async throws -> LinkRecord {
        do {
            return try await LinkMaker.duplicate(original, at: date, into: store)
        } catch let error as LinkCreationError {
            throw APIError(error)
        }
    }

    /// `https://{host}/{code}` or `https://{host}/{template}/{code}` (``LinkRecord/shareURL(on:)``).
    func shareURL(_ link: LinkRecord, request: Request) -> URL {
        link.shareURL(on: configuration.shareOrigin(for: request))
    }

    /// `deepLinkPath`, which starts with `/` (``LinkRules/checkDeepLinkPath(_:)``).
    static func deepLinkPath(_ body: JSONBody) throws -> String? {
        let path = try body.string("deepLinkPath", maxLength: LinkRules.longText)
        if let path { try checked { () throws(LinkFieldError) in try LinkRules.checkDeepLinkPath(path) } }
        return path
    }

    /// `appScheme`, one an app can register (``LinkRules/checkAppScheme(_:)``).
    static func appScheme(_ body: JSONBody) throws -> String? {
        let scheme = try body.string("appScheme", maxLength: 64)
        if let scheme { try checked { () throws(LinkFieldError) in try LinkRules.checkAppScheme(scheme) } }
        return scheme
    }

    /// `utmParameters`: Core's five keys, each a string.
    static func utmParameters(_ body: JSONBody) throws -> [String: String]? {
        try body.stringMap("utmParameters", keys: LinkRules.utmKeys)
    }

    /// `targetingRules` (``LinkRules/checkTargeting(_:)``).
    static func targetingRules(_ body: JSONBody) throws -> [String: JSONValue]? {
        let rules = try body.object("targetingRules")
        if let rules { try checked { () throws(LinkFieldError) in try LinkRules.checkTargeting(rules) } }
        return rules
    }

    /// `rule` run, its broken rule answered as the API's `400` naming the field.
    static func checked(_ rule: () throws(LinkFieldError) -> Void) throws {
        do {
            try rule()
        } catch {
            throw APIError(error)
        }
    }
}

extension APIError {
    /// `400` for a link's value that breaks a rule, naming its field.
    package init(_ error: LinkFieldError) {
        self = .field(error.field, error.problem)
    }

    /// The answer for a link that could not be made: `400` for a broken rule, `403` for an
    /// admin's field or a destination off the project's hosts, `404` for no template, `409` for
    /// a taken code, `503` when no free code was found.
    package init(_ error: LinkCreationError) {
        let status: HTTPResponse.Status =
            switch error {
            case .field: .badRequest
            case .adminOnly, .destinationNotAllowed: .forbidden
            case .noTemplate: .notFound
            case .codeTaken: .conflict
            case .noFreeCode: .serviceUnavailable
            }
        self.init(status, error.message, field: error.field)
    }
}

extension LinkDraft {
    /// The draft a `POST /api/links` or `POST /api/sdk/v1/links` body holds: each field read as
    /// its type (`null` as absent), the rules left to ``LinkMaker``.
    /// - Throws: ``APIError`` (`400`) naming the first field that is not of its type.
    init(json body: JSONBody) throws {
        self.init()
        templateID = try body.string("templateId", maxLength: 64)
        templateSlug = try body.string("templateSlug", maxLength: 64)
        customCode = try body.string("customCode", maxLength: 64)
        webFallbackURL = try body.webURL("webFallbackUrl")
        originalURL = try body.webURL("originalUrl")
        iosAppStoreURL = try body.webURL("iosAppStoreUrl")
        androidAppStoreURL = try body.webURL("androidAppStoreUrl")
        iosUniversalLink = try body.webURL("iosUniversalLink")
        androidAppLink = try body.webURL("androidAppLink")
        deepLinkPath = try LinkCreation.deepLinkPath(body)
        appScheme = try LinkCreation.appScheme(body)
        deepLinkParameters = try body.object("deepLinkParameters")
        utmParameters = try LinkCreation.utmParameters(body)
        targetingRules = try LinkCreation.targetingRules(body)
        externalUserID = try body.string("externalUserId", maxLength: 256)
        attributionWindowHours = try body.integer("attributionWindowHours", in: LinkRules.attributionWindowHours)
        isActive = try body.bool("isActive")
        expiresAt = try body.date("expiresAt")
        title = try body.string("title", maxLength: LinkRules.shortText)
        description = try body.string("description", maxLength: LinkRules.longText)
        ogTitle = try body.string("ogTitle", maxLength: LinkRules.shortText)
        ogDescription = try body.string("ogDescription", maxLength: LinkRules.longText)
        ogImageURL = try body.webURL("ogImageUrl")
        appendClickID = try body.bool("appendClickId")
        landingPage = try body.bool("landingPage")
    }
}
