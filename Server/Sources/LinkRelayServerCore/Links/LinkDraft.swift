import Foundation
import LinkRelay

/// A new link as asked for, before it is made: what a `POST /api/links` or `POST
/// /api/sdk/v1/links` body holds, or the dashboard's new-link form. Every field is `nil` when not
/// given. ``LinkMaker`` makes the link.
package struct LinkDraft: Sendable, Hashable {
    package var templateID: String?
    package var templateSlug: String?
    package var customCode: String?
    package var originalURL: String?
    package var title: String?
    package var description: String?
    package var iosAppStoreURL: String?
    package var androidAppStoreURL: String?
    package var webFallbackURL: String?
    package var appScheme: String?
    package var iosUniversalLink: String?
    package var androidAppLink: String?
    package var deepLinkPath: String?
    package var deepLinkParameters: [String: JSONValue]?
    package var utmParameters: [String: String]?
    package var targetingRules: [String: JSONValue]?
    package var ogTitle: String?
    package var ogDescription: String?
    package var ogImageURL: String?
    package var attributionWindowHours: Int?
    package var isActive: Bool?
    package var expiresAt: Date?
    package var appendClickID: Bool?
    /// `nil`: as the project says.
    package var landingPage: Bool?
    /// The app's user the link is made for: a repeat of the same request gets the same link.
    package var externalUserID: String?

    /// An empty draft.
    package init() {}

    /// The fields only an admin key may set (API names): the destinations an app does not
    /// choose, targeting, the preview and the link's life. An SDK key ships in apps, so its
    /// values for them are refused, not ignored.
    package static let adminFields = [
        "iosAppStoreUrl", "androidAppStoreUrl", "appScheme", "iosUniversalLink", "androidAppLink", "targetingRules", "isActive",
        "ogTitle", "ogDescription", "ogImageUrl", "appendClickId", "expiresAt", "attributionWindowHours",
    ]

    /// The fields of ``adminFields`` the draft sets.
    package var setAdminFields: [String] {
        let set: [String: Bool] = [
            "iosAppStoreUrl": iosAppStoreURL != nil, "androidAppStoreUrl": androidAppStoreURL != nil, "appScheme": appScheme != nil,
            "iosUniversalLink": iosUniversalLink != nil, "androidAppLink": androidAppLink != nil, "targetingRules": targetingRules != nil,
            "isActive": isActive != nil, "ogTitle": ogTitle != nil, "ogDescription": ogDescription != nil, "ogImageUrl": ogImageURL != nil,
            "appendClickId": appendClickID != nil, "expiresAt": expiresAt != nil, "attributionWindowHours": attributionWindowHours != nil,
        ]
        return Self.adminFields.filter { set[$0] == true }
    }

    /// The destinations the draft names, by their API names, in the order they are checked.
    var destinations: [(field: String, url: String?)] {
        [
            ("originalUrl", originalURL), ("webFallbackUrl", webFallbackURL), ("iosAppStoreUrl", iosAppStoreURL),
            ("androidAppStoreUrl", androidAppStoreURL), ("iosUniversalLink", iosUniversalLink), ("androidAppLink", androidAppLink),
        ]
    }

    /// Checks every value the draft sets by ``LinkRules``, in the order of the fields above.
    /// - Throws: ``LinkFieldError`` for the first value that breaks a rule.
    package func check() throws(LinkFieldError) {
        if let customCode, !LinkRules.isValidCode(customCode) {
            throw LinkFieldError("customCode", "must be 1 to 20 characters of A-Z a-z 0-9 _ - and not a reserved word")
        }
        for (field, url) in destinations { if let url { try LinkRules.checkWebURL(url, of: field) } }
        if let ogImageURL { try LinkRules.checkWebURL(ogImageURL, of: "ogImageUrl") }
        for (field, text, limit) in [
            ("title", title, LinkRules.shortText), ("description", description, LinkRules.longText),
            ("ogTitle", ogTitle, LinkRules.shortText), ("ogDescription", ogDescription, LinkRules.longText),
        ] {
            if let text { try LinkRules.checkLength(text, of: field, limit: limit) }
        }
        if let appScheme { try LinkRules.checkAppScheme(appScheme) }
        if let deepLinkPath { try LinkRules.checkDeepLinkPath(deepLinkPath) }
        if let utmParameters { try LinkRules.checkUTM(utmParameters) }
        if let targetingRules { try LinkRules.checkTargeting(targetingRules) }
        if let attributionWindowHours { try LinkRules.checkAttributionWindow(attributionWindowHours) }
    }
}

/// Why a link could not be made (``LinkMaker/make(_:key:admin:)``): each with the sentence an
/// API client or the dashboard shows.
package enum LinkCreationError: Error, Sendable, Hashable {
    /// A value breaks a rule (`400`).
    case field(LinkFieldError)
    /// The field needs an admin key (`403`).
    case adminOnly(field: String)
    /// The destination is not on one of the project's destination hosts (`403`).
    case destinationNotAllowed(field: String)
    /// `templateId` or `templateSlug` names no template of the project (`404`).
    case noTemplate(field: String, message: String)
    /// The link's own code is taken (`409`).
    case codeTaken(String)
    /// Ten random codes were taken (`503`).
    case noFreeCode

    /// The field the error is about, if one.
    package var field: String? {
        switch self {
        case .field(let error): error.field
        case .adminOnly(let field), .destinationNotAllowed(let field), .noTemplate(let field, _): field
        case .codeTaken: "customCode"
        case .noFreeCode: nil
        }
    }

    /// What the API answers and the dashboard shows.
    package var message: String {
        switch self {
        case .field(let error): "\(error.field) \(error.problem)."
        case .adminOnly(let field): "\(field) needs an admin key."
        case .destinationNotAllowed(let field):
            "\(field) is not on one of the project's destination hosts (an admin adds its host: PUT /api/destination-hosts, or the dashboard's Keys page)."
        case .noTemplate(_, let message): message
        case .codeTaken(let code): "The short code '\(code)' is taken."
        case .noFreeCode: "No free short code was found; try again."
        }
    }
}

/// Makes links from drafts, over the project's links and settings: the template the draft
/// names, the project's destination hosts for an SDK key, a random code unless the draft has
/// its own, and the same link back for a repeated request of one user.
package struct LinkMaker: Sendable {
    let store: any LinkStore & ProjectStore
    let clock: any LinkRelayClock

    /// A maker over `store`, its links dated by `clock`.
    package init(store: any LinkStore & ProjectStore, clock: any LinkRelayClock) {
        self.store = store
        self.clock = clock
    }

    /// The link `draft` asks for, stored, or the one it repeats (`true`). An SDK key (`admin`
    /// false) may set what an app shares (parameters, path, UTM, title, code) and only
    /// destinations on the project's hosts.
    /// - Throws: ``LinkCreationError``, or the store's error.
    package func make(_ draft: LinkDraft, key: APIKeyRecord, admin: Bool) async throws -> (LinkRecord, Bool) {
        if !admin, let field = draft.setAdminFields.first { throw LinkCreationError.adminOnly(field: field) }
        do throws(LinkFieldError) {
            try draft.check()
        } catch {
            throw LinkCreationError.field(error)
        }
        let template = try await template(of: draft, project: key.projectID)
        if !admin {
            // The SDK key ships in apps: where its links may send people is the project's to say.
            let allowed = try await store.destinationHosts(project: key.projectID)
            for (field, url) in draft.destinations {
                if let url, !allowed.allows(url) { throw LinkCreationError.destinationNotAllowed(field: field) }
            }
        }
        var link = LinkRecord(
            projectID: key.projectID, templateSlug: template?.slug ?? "", shortCode: draft.customCode ?? Self.randomCode(),
            originalURL: draft.originalURL ?? draft.webFallbackURL ?? template?.webFallbackURL ?? "", deepLinkPath: draft.deepLinkPath,
            appScheme: draft.appScheme, iosAppStoreURL: draft.iosAppStoreURL ?? template?.iosAppStoreURL,
            androidAppStoreURL: draft.androidAppStoreURL ?? template?.androidAppStoreURL,
            webFallbackURL: draft.webFallbackURL ?? template?.webFallbackURL, utmParameters: draft.utmParameters ?? [:],
            deepLinkParameters: draft.deepLinkParameters ?? [:], attributionWindowHours: draft.attributionWindowHours ?? 168,
            isActive: draft.isActive ?? true, expiresAt: draft.expiresAt, createdAt: clock.currentDate, templateID: template?.id,
            title: draft.title,
            description: draft.description, iosUniversalLink: draft.iosUniversalLink, androidAppLink: draft.androidAppLink,
            targetingRules: draft.targetingRules ?? [:], ogTitle: draft.ogTitle, ogDescription: draft.ogDescription,
            ogImageURL: draft.ogImageURL, appendClickID: draft.appendClickID ?? false, externalUserID: draft.externalUserID,
            landingPage: draft.landingPage)
        if let externalUserID = draft.externalUserID {
            let dedupeKey = Self.dedupeKey(link, externalUserID: externalUserID, customCode: draft.customCode)
            if let earlier = try await store.link(project: link.projectID, dedupeKey: dedupeKey) { return (earlier, true) }
            link.dedupeKey = dedupeKey
        }
        let stored = try await Self.insert(link, customCode: draft.customCode != nil, into: store)
        // An admin's link says where the project's links go (``DestinationHosts/Mode/learned``).
        if admin { try await store.learnDestinations(of: stored) }
        return (stored, false)
    }

    /// The template the draft names by id, slug or both (then the one with both).
    private func template(of draft: LinkDraft, project: String) async throws -> TemplateRecord? {
        var template: TemplateRecord?
        if let id = draft.templateID {
            guard let found = try await store.template(project: project, id: id) else {
                throw LinkCreationError.noTemplate(field: "templateId", message: "templateId names no template of this project.")
            }
            template = found
        }
        if let slug = draft.templateSlug {
            // Both given: the one template with that id and that slug, or none (404, as a slug
            // or an id alone that names no template).
            if let template, template.slug != slug {
                throw LinkCreationError.noTemplate(
                    field: "templateSlug", message: "templateId and templateSlug name no one template of this project.")
            }
            if template == nil {
                guard let found = try await store.template(project: project, slug: slug) else {
                    throw LinkCreationError.noTemplate(field: "templateSlug", message: "templateSlug names no template of this project.")
                }
                template = found
            }
        }
        return template
    }

    /// A copy of `original` stored: the same destinations and settings, a new random code, the
    /// title with ` (Copy)` (as Core), made at `date`; never the answer to a repeated SDK request.
    package static func duplicate(_ original: LinkRecord, at date: Date, into store: any LinkStore) async throws -> LinkRecord {
        var copy = original
        copy.id = UUID().uuidString.lowercased()
        copy.shortCode = randomCode()
        copy.createdAt = date.storedPrecision
        copy.title = original.title.map { String("\($0) (Copy)".prefix(LinkRules.shortText)) }
        copy.dedupeKey = nil
        return try await insert(copy, customCode: false, into: store)
    }

    /// Stores `link`; with a code of its own (`customCode`) a taken code is
    /// ``LinkCreationError/codeTaken(_:)``, else up to ten random codes are tried. Returns the
    /// link as stored.
    static func insert(_ link: LinkRecord, customCode: Bool, into store: any LinkStore) async throws -> LinkRecord {
        var link = link
        for attempt in 1...10 {
            do {
                try await store.insertLink(link)
                return link
            } catch let error as StoreError where error.kind == .conflict {
                if customCode { throw LinkCreationError.codeTaken(link.shortCode) }
                if attempt == 10 { break }
                link.shortCode = randomCode()
            }
        }
        throw LinkCreationError.noFreeCode
    }

    /// Eight characters of `A–Z a–z 0–9 _ -` (LinkForty's alphabet), from the secure generator.
    package static func randomCode() -> String {
        APIKeys.randomString(8, alphabet: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"))
    }

    /// The hash of what makes two requests of one user the same link: every field the request
    /// set, destinations, targeting and preview included, so a link planted with another
    /// destination (the SDK key ships in apps, and an `externalUserId` is guessable) is never
    /// handed back to the user as theirs. Each value is length-prefixed, so no two requests'
    /// fields run together into the same text.
    package static func dedupeKey(_ link: LinkRecord, externalUserID: String, customCode: String?) -> String {
        let parts: [String] =
            [
                "v2", externalUserID, link.templateSlug, customCode ?? "", link.originalURL, link.deepLinkPath ?? "", link.appScheme ?? "",
                JSONText.encode(link.deepLinkParameters), JSONText.encode(link.utmParameters), link.title ?? "", link.description ?? "",
                link.iosAppStoreURL ?? "", link.androidAppStoreURL ?? "", link.webFallbackURL ?? "", link.iosUniversalLink ?? "",
                link.androidAppLink ?? "", JSONText.encode(link.targetingRules), link.ogTitle ?? "", link.ogDescription ?? "",
                link.ogImageURL ?? "",
                String(link.attributionWindowHours), link.isActive ? "1" : "0", link.expiresAt.map(Timestamp.withMilliseconds) ?? "",
                link.appendClickID ? "1" : "0",
            ] + (link.landingPage.map { [$0 ? "landing:1" : "landing:0"] } ?? [])
        return sha256Hex(parts.map { "\($0.utf8.count):\($0)" }.joined())
    }

    /// What a link's creator should know: it was made, but will not do all it seems to.
    package static func warnings(_ link: LinkRecord) -> [String] {
        var warnings: [String] = []
        if link.deepLinkPath != nil, link.appScheme == nil, link.iosUniversalLink == nil, link.androidAppLink == nil {
            warnings.append(
                "deepLinkPath is set without appScheme (or a universal/app link): a phone whose browser opens this link goes to the store or the web even when it has the app; the path reaches the app only through a deferred install or a universal link."
            )
        }
        return warnings
    }
}

/// Times as the API writes them.
package enum Timestamp {
    /// `2026-03-01T10:15:30.123Z`: ISO 8601 with milliseconds, as LinkForty's server writes dates.
    package static func withMilliseconds(_ date: Date) -> String {
        date.formatted(millisecondsStyle)
    }

    /// `2026-11-28` for a day counted from 1970 (UTC), as the daily counts are kept.
    package static func date(ofDay day: Int) -> String {
        Date(timeIntervalSince1970: Double(day) * 86_400).formatted(.iso8601.year().month().day())
    }

    /// Made once (a Sendable value), not a formatter per call.
    package static let millisecondsStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}
