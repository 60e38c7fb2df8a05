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
    let clock: @Sendable () -> Date

    /// Link creation, both forms, behind the SDK key (an admin key too).
    func register(on groups: RouteGroups) {
        groups.sdk.post("api/sdk/v1/links") { try await createForSDK($0, $1) }
        groups.sdk.post("api/links") { try await createAsRow($0, $1) }
    }

    /// Path segments a short code or a template slug may not take (``LinkRules/reservedSegments``).
    static var reservedSegments: Set<String> { LinkRules.reservedSegments }

    /// `POST /api/sdk/v1/links`: `{"url", "shortCode", "linkId", "deduplicated"}`.
    func createForSDK(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let (link, deduplicated) = try await create(
            try await JSONBody.read(request, timeout: configuration.bodyTimeout), key: key, admin: key.scope == .admin)
        return ServerApplication.json(
            [
                "url": .string(shareURL(link, request: request).absoluteString), "shortCode": .string(link.shortCode),
                "linkId": .string(link.id),
                "deduplicated": .bool(deduplicated), "warnings": .array(Self.warnings(link).map(JSONValue.string)),
            ] as [String: JSONValue])
    }

    /// `POST /api/links`: the link's row as Core answers it (snake_case, with the camelCase
    /// copies and `clickCount`), plus `url`.
    func createAsRow(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let (link, deduplicated) = try await create(
            try await JSONBody.read(request, timeout: configuration.bodyTimeout), key: key, admin: key.scope == .admin)
        var row = Self.row(link)
        row["url"] = .string(shareURL(link, request: request).absoluteString)
        row["deduplicated"] = .bool(deduplicated)
        row["warnings"] = .array(Self.warnings(link).map(JSONValue.string))
        return ServerApplication.json(row, status: deduplicated ? .ok : .created)
    }

    /// The link a body asks for, stored, or the one it repeats. An SDK key may set what an app
    /// shares (parameters, path, UTM, title, code); the destinations, targeting and preview are
    /// an admin's (an SDK key's values for them are refused, not ignored).
    func create(_ body: JSONBody, key: APIKeyRecord, admin: Bool) async throws -> (LinkRecord, Bool) {
        if !admin {
            for name in [
                "iosAppStoreUrl", "androidAppStoreUrl", "appScheme", "iosUniversalLink", "androidAppLink", "targetingRules", "isActive",
                "ogTitle", "ogDescription", "ogImageUrl", "appendClickId", "expiresAt", "attributionWindowHours",
            ] where body.object[name] != nil && body.object[name] != .null {
                throw APIError(.forbidden, "\(name) needs an admin key.", field: name)
            }
        }
        var template: TemplateRecord?
        if let id = try body.string("templateId", maxLength: 64) {
            guard let found = try await store.template(project: key.projectID, id: id) else {
                throw APIError(.notFound, "templateId names no template of this project.", field: "templateId")
            }
            template = found
        }
        if let slug = try body.string("templateSlug", maxLength: 64) {
            // Both given: the one template with that id and that slug, or none (404, as a slug
            // or an id alone that names no template).
            if let template, template.slug != slug {
                throw APIError(.notFound, "templateId and templateSlug name no one template of this project.", field: "templateSlug")
            }
            if template == nil {
                guard let found = try await store.template(project: key.projectID, slug: slug) else {
                    throw APIError(.notFound, "templateSlug names no template of this project.", field: "templateSlug")
                }
                template = found
            }
        }
        let customCode = try body.string("customCode", maxLength: 64)
        if let customCode, !Self.isValidCode(customCode) {
            throw APIError.field("customCode", "must be 1 to 20 characters of A-Z a-z 0-9 _ - and not a reserved word")
        }
        let webFallback = try body.webURL("webFallbackUrl")
        let requestedOriginal = try body.webURL("originalUrl")
        if !admin {
            // The SDK key ships in apps: where its links may send people is the project's to say.
            let allowed = try await store.destinationHosts(project: key.projectID)
            for name in LinkRecord.destinationFields {
                let value = name == "originalUrl" ? requestedOriginal : name == "webFallbackUrl" ? webFallback : try body.webURL(name)
                if let value, !allowed.allows(value) {
                    throw APIError(
                        .forbidden,
                        "\(name) is not on one of the project's destination hosts (an admin adds its host: PUT /api/destination-hosts, or the dashboard's Keys page).",
                        field: name)
                }
            }
        }
        let originalURL = requestedOriginal ?? webFallback ?? template?.webFallbackURL ?? ""
        let deepLinkPath = try Self.deepLinkPath(body)
        let appScheme = try Self.appScheme(body)
        let parameters = try body.object("deepLinkParameters") ?? [:]
        let utm = try Self.utmParameters(body) ?? [:]
        let targeting = try Self.targetingRules(body) ?? [:]
        let externalUserID = try body.string("externalUserId", maxLength: 256)
        var link = LinkRecord(
            projectID: key.projectID, templateSlug: template?.slug ?? "", shortCode: customCode ?? Self.randomCode(),
            originalURL: originalURL, deepLinkPath: deepLinkPath, appScheme: appScheme,
            iosAppStoreURL: try body.webURL("iosAppStoreUrl") ?? template?.iosAppStoreURL,
            androidAppStoreURL: try body.webURL("androidAppStoreUrl") ?? template?.androidAppStoreURL,
            webFallbackURL: webFallback ?? template?.webFallbackURL, utmParameters: utm, deepLinkParameters: parameters,
            attributionWindowHours: try body.integer("attributionWindowHours", in: 1...2160) ?? 168,
            isActive: try body.bool("isActive") ?? true,
            expiresAt: try body.date("expiresAt"), createdAt: clock(), templateID: template?.id,
            title: try body.string("title", maxLength: 512),
            description: try body.string("description", maxLength: 2048), iosUniversalLink: try body.webURL("iosUniversalLink"),
            androidAppLink: try body.webURL("androidAppLink"), targetingRules: targeting,
            ogTitle: try body.string("ogTitle", maxLength: 512),
            ogDescription: try body.string("ogDescription", maxLength: 2048), ogImageURL: try body.webURL("ogImageUrl"),
            appendClickID: try body.bool("appendClickId") ?? false, externalUserID: externalUserID,
            landingPage: try body.bool("landingPage"))
        if let externalUserID {
            let key = Self.dedupeKey(link, externalUserID: externalUserID, customCode: customCode)
            if let earlier = try await store.link(project: link.projectID, dedupeKey: key) { return (earlier, true) }
            link.dedupeKey = key
        }
        let stored = try await Self.insert(link, customCode: customCode != nil, into: store)
        // An admin's link says where the project's links go (``DestinationHosts/Mode/learned``).
        if admin { try await store.learnDestinations(of: stored) }
        return (stored, false)
    }

    /// A copy of `original` stored: the same destinations and settings, a new random code, the
    /// title with ` (Copy)` (as Core), made at `date`; never the answer to a repeated SDK request.
    static func duplicate(_ original: LinkRecord, at date: Date, into store: any LinkStore) async throws -> LinkRecord {
        var copy = original
        copy.id = UUID().uuidString.lowercased()
        copy.shortCode = randomCode()
        copy.createdAt = date.storedPrecision
        copy.title = original.title.map { String("\($0) (Copy)".prefix(512)) }
        copy.dedupeKey = nil
        return try await insert(copy, customCode: false, into: store)
    }

    /// Stores `link`; with a code of its own (`customCode`) a taken code is a `409`, else up to
    /// ten random codes are tried. Returns the link as stored.
    static func insert(_ link: LinkRecord, customCode: Bool, into store: any LinkStore) async throws -> LinkRecord {
        var link = link
        for attempt in 1...10 {
            do {
                try await store.insertLink(link)
                return link
            } catch let error as StoreError where error.kind == .conflict {
                if customCode {
                    throw APIError(.conflict, "The short code '\(link.shortCode)' is taken.", field: "customCode")
                }
                if attempt == 10 { break }
                link.shortCode = randomCode()
            }
        }
        throw APIError(.serviceUnavailable, "No free short code was found; try again.")
    }

    /// `https://{host}/{code}` or `https://{host}/{template}/{code}`: the configured public
    /// URL, else the request's own origin.
    func shareURL(_ link: LinkRecord, request: Request) -> URL {
        let base = configuration.publicBaseURL ?? ServerApplication.origin(of: request, trustProxy: configuration.trustProxy)
        let path = (link.templateSlug.isEmpty ? "" : link.templateSlug + "/") + link.shortCode
        return base.appendingPathComponent(path)
    }

    /// Eight characters of `A–Z a–z 0–9 _ -` (LinkForty's alphabet), from the secure generator.
    static func randomCode() -> String {
        APIKeys.randomString(8, alphabet: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"))
    }

    static func isValidCode(_ code: String) -> Bool { LinkRules.isValidCode(code) }

    static func isValidScheme(_ scheme: String) -> Bool { LinkRules.isValidScheme(scheme) }

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
            throw APIError.field(error.field, error.problem)
        }
    }

    /// The hash of what makes two requests of one user the same link: every field the request
    /// set, destinations, targeting and preview included, so a link planted with another
    /// destination (the SDK key ships in apps, and an `externalUserId` is guessable) is never
    /// handed back to the user as theirs. Each value is length-prefixed, so no two requests'
    /// fields run together into the same text.
    static func dedupeKey(_ link: LinkRecord, externalUserID: String, customCode: String?) -> String {
        let parts: [String] =
            [
                "v2", externalUserID, link.templateSlug, customCode ?? "", link.originalURL, link.deepLinkPath ?? "", link.appScheme ?? "",
                JSONText.encode(link.deepLinkParameters), JSONText.encode(link.utmParameters), link.title ?? "", link.description ?? "",
                link.iosAppStoreURL ?? "", link.androidAppStoreURL ?? "", link.webFallbackURL ?? "", link.iosUniversalLink ?? "",
                link.androidAppLink ?? "", JSONText.encode(link.targetingRules), link.ogTitle ?? "", link.ogDescription ?? "",
                link.ogImageURL ?? "",
                String(link.attributionWindowHours), link.isActive ? "1" : "0", link.expiresAt.map(ServerApplication.timestamp) ?? "",
                link.appendClickID ? "1" : "0",
            ] + (link.landingPage.map { [$0 ? "landing:1" : "landing:0"] } ?? [])
        return sha256Hex(parts.map { "\($0.utf8.count):\($0)" }.joined())
    }

    /// What a link's creator should know: it was made, but will not do all it seems to.
    static func warnings(_ link: LinkRecord) -> [String] {
        var warnings: [String] = []
        if link.deepLinkPath != nil, link.appScheme == nil, link.iosUniversalLink == nil, link.androidAppLink == nil {
            warnings.append(
                "deepLinkPath is set without appScheme (or a universal/app link): a phone whose browser opens this link goes to the store or the web even when it has the app; the path reaches the app only through a deferred install or a universal link."
            )
        }
        return warnings
    }

    /// The link as Core's `POST /api/links` answers it.
    static func row(_ link: LinkRecord) -> [String: JSONValue] {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        let utm = JSONValue.object(link.utmParameters.mapValues(JSONValue.string))
        return [
            "id": .string(link.id), "short_code": .string(link.shortCode), "original_url": .string(link.originalURL),
            "template_id": text(link.templateID), "template_slug": link.templateSlug.isEmpty ? .null : .string(link.templateSlug),
            "title": text(link.title), "description": text(link.description), "ios_app_store_url": text(link.iosAppStoreURL),
            "android_app_store_url": text(link.androidAppStoreURL), "web_fallback_url": text(link.webFallbackURL),
            "app_scheme": text(link.appScheme), "ios_universal_link": text(link.iosUniversalLink),
            "android_app_link": text(link.androidAppLink),
            "deep_link_path": text(link.deepLinkPath), "deep_link_parameters": .object(link.deepLinkParameters), "utm_parameters": utm,
            "targeting_rules": .object(link.targetingRules), "is_active": .bool(link.isActive),
            "expires_at": link.expiresAt.map { .string(ServerApplication.timestamp($0)) } ?? .null,
            "attribution_window_hours": .int(link.attributionWindowHours), "og_title": text(link.ogTitle),
            "og_description": text(link.ogDescription), "og_image_url": text(link.ogImageURL), "append_click_id": .bool(link.appendClickID),
            "landing_page": link.landingPage.map(JSONValue.bool) ?? .null,
            "created_at": .string(ServerApplication.timestamp(link.createdAt)), "utmParameters": utm,
            "targetingRules": .object(link.targetingRules), "deepLinkParameters": .object(link.deepLinkParameters), "clickCount": 0,
        ]
    }
}
