import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import NIOCore

/// A form's fields as a browser posts them (`application/x-www-form-urlencoded`, at most 64 KiB),
/// read by Hummingbird's `URLEncodedFormDecoder`.
struct FormBody {
    let values: [String: String]

    /// The form `request` posts.
    /// - Throws: ``DashboardError`` `413` past 64 KiB; `400` for a body that is not a form of
    ///   plain fields, each once, percent-encoded (no browser posts another from these pages).
    static func read(_ request: Request, timeout: Duration) async throws -> FormBody {
        let buffer: ByteBuffer
        do {
            buffer = try await JSONBody.collect(request, limit: JSONBody.sdkLimit, timeout: timeout)
        } catch is NIOTooManyBytesError {
            throw DashboardError(.contentTooLarge, "The form is larger than 64 KiB.")
        }
        do {
            return FormBody(values: try URLEncodedFormDecoder().decode([String: String].self, from: String(buffer: buffer)))
        } catch {
            throw DashboardError(.badRequest, "The form could not be read: each field once, percent-encoded, as a browser posts it.")
        }
    }

    init(values: [String: String]) {
        self.values = values
    }

    /// The field's text, trimmed; `nil` when absent or empty.
    subscript(_ name: String) -> String? {
        values[name].map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// The link form: every field of link creation, with its error next to it. What it posts
/// becomes the admin API's JSON body, checked by the same code (``LinkCreation``, ``LinkEditing``).
struct LinkForm {
    /// One field: its name in the form and in the API, how it is shown, what it holds.
    struct Field {
        let name: String
        let apiName: String
        let label: String
        let type: String
        var value: String
        let hint: String?
        var error: String?
        let checkbox: Bool
        var checked: Bool
        let textarea: Bool
        let select: Bool
        var options: [Option]
        /// Whether it is a plain input (templates see stored properties only).
        let input: Bool

        init(
            name: String, apiName: String, label: String, type: String, value: String, hint: String?, error: String? = nil,
            checkbox: Bool = false,
            checked: Bool = false, textarea: Bool = false, select: Bool = false, options: [Option] = []
        ) {
            self.name = name
            self.apiName = apiName
            self.label = label
            self.type = type
            self.value = value
            self.hint = hint
            self.error = error
            self.checkbox = checkbox
            self.checked = checked
            self.textarea = textarea
            self.select = select
            self.options = options
            input = !checkbox && !textarea && !select
        }
    }

    struct Option {
        let value: String
        let label: String
        var selected: Bool
    }

    var fields: [Field]

    /// The form, empty (for a new link) or with `link`'s values.
    init(_ link: LinkRecord? = nil) {
        func text(_ name: String, _ api: String, _ label: String, _ value: String?, type: String = "text", hint: String? = nil) -> Field {
            Field(
                name: name, apiName: api, label: label, type: type, value: value ?? "", hint: hint, error: nil, checkbox: false,
                checked: false,
                textarea: false, select: false, options: [])
        }
        let utm = link?.utmParameters ?? [:]
        let targeting = link?.targetingRules ?? [:]
        func list(_ name: String) -> String? {
            guard case .array(let items)? = targeting[name] else { return nil }
            return items.compactMap(\.stringValue).joined(separator: ", ")
        }
        var fields = [
            text(
                "originalUrl", "originalUrl", "Destination (original URL)", link?.originalURL, type: "url",
                hint: "Where a browser goes: https://…"),
            text("title", "title", "Title", link?.title),
            text("description", "description", "Description", link?.description),
        ]
        if link == nil {
            fields.append(text("customCode", "customCode", "Custom code", nil, hint: "1–20 of A–Z a–z 0–9 _ -; empty for a random code"))
        }
        fields += [
            text(
                "webFallbackUrl", "webFallbackUrl", "Web fallback URL", link?.webFallbackURL, type: "url",
                hint: "For a device without the app"),
            text("iosAppStoreUrl", "iosAppStoreUrl", "App Store URL", link?.iosAppStoreURL, type: "url"),
            text("androidAppStoreUrl", "androidAppStoreUrl", "Google Play URL", link?.androidAppStoreURL, type: "url"),
            text("appScheme", "appScheme", "App scheme", link?.appScheme, hint: "Such as acmeshop"),
            text("deepLinkPath", "deepLinkPath", "Deep link path", link?.deepLinkPath, hint: "Starts with /"),
            Field(
                name: "deepLinkParameters", apiName: "deepLinkParameters", label: "Deep link parameters (JSON object)", type: "text",
                value: link.map { $0.deepLinkParameters.isEmpty ? "" : JSONText.compact(.object($0.deepLinkParameters)) } ?? "",
                hint: "Such as {\"productId\": \"42\"}", error: nil, checkbox: false, checked: false, textarea: true, select: false,
                options: []),
            text("iosUniversalLink", "iosUniversalLink", "iOS universal link", link?.iosUniversalLink, type: "url"),
            text("androidAppLink", "androidAppLink", "Android app link", link?.androidAppLink, type: "url"),
            text("utm_source", "utmParameters", "UTM source", utm["source"]),
            text("utm_medium", "utmParameters", "UTM medium", utm["medium"]),
            text("utm_campaign", "utmParameters", "UTM campaign", utm["campaign"]),
            text("utm_term", "utmParameters", "UTM term", utm["term"]),
            text("utm_content", "utmParameters", "UTM content", utm["content"]),
            text(
                "countries", "targetingRules", "Only these countries", list("countries"),
                hint: "Codes, comma-separated (DE, FR); empty for all"),
            text("devices", "targetingRules", "Only these devices", list("devices"), hint: "ios, android, web; empty for all"),
            text("languages", "targetingRules", "Only these languages", list("languages"), hint: "Such as en, de; empty for all"),
            text("ogTitle", "ogTitle", "Preview title", link?.ogTitle),
            text("ogDescription", "ogDescription", "Preview description", link?.ogDescription),
            text("ogImageUrl", "ogImageUrl", "Preview image URL", link?.ogImageURL, type: "url"),
            text(
                "attributionWindowHours", "attributionWindowHours", "Attribution window (hours)",
                String(link?.attributionWindowHours ?? 168),
                type: "number", hint: "1–2160"),
            text(
                "expiresAt", "expiresAt", "Expires at", link?.expiresAt.map(ServerHTTP.timestamp),
                hint: "Such as 2026-12-31T23:59:00Z; empty for never"),
            Field(
                name: "appendClickId", apiName: "appendClickId", label: "Add the click's id to the destination (lf_click)",
                type: "checkbox", value: "true",
                hint: nil, error: nil, checkbox: true, checked: link?.appendClickID ?? false, textarea: false, select: false, options: []),
            Field(
                name: "landingPage", apiName: "landingPage", label: "Pasteboard landing page", type: "select", value: "", hint: nil,
                error: nil,
                checkbox: false, checked: false, textarea: false, select: true,
                options: [
                    Option(value: "", label: "As the project says", selected: link?.landingPage == nil),
                    Option(value: "true", label: "On", selected: link?.landingPage == true),
                    Option(value: "false", label: "Off", selected: link?.landingPage == false),
                ]),
        ]
        self.fields = fields
    }

    /// The form as `posted`, its values kept to show again.
    mutating func fill(_ posted: FormBody) {
        for index in fields.indices {
            let name = fields[index].name
            if fields[index].checkbox {
                fields[index].checked = posted[name] == "true"
            } else if fields[index].select {
                for option in fields[index].options.indices {
                    fields[index].options[option].selected = fields[index].options[option].value == (posted[name] ?? "")
                }
            } else {
                fields[index].value = posted.values[name] ?? ""
            }
        }
    }

    /// `error` shown next to the first field that posts `apiName`.
    mutating func mark(_ apiName: String, _ error: String) -> Bool {
        guard let index = fields.firstIndex(where: { $0.apiName == apiName }) else { return false }
        fields[index].error = error
        return true
    }

    /// The change the edit form asks for, as the Core's value: every field of the form set, an
    /// emptied one cleared. The rules are the Core's (``LinkChange/applied(to:)``); only what a
    /// form's text cannot be read as is refused here.
    /// - Throws: ``APIError`` naming the field when a value cannot be read at all.
    static func change(_ posted: FormBody) throws -> LinkChange {
        var change = LinkChange()
        change.title = .some(posted["title"])
        change.description = .some(posted["description"])
        change.webFallbackURL = .some(posted["webFallbackUrl"])
        change.iosAppStoreURL = .some(posted["iosAppStoreUrl"])
        change.androidAppStoreURL = .some(posted["androidAppStoreUrl"])
        change.appScheme = .some(posted["appScheme"])
        change.deepLinkPath = .some(posted["deepLinkPath"])
        change.iosUniversalLink = .some(posted["iosUniversalLink"])
        change.androidAppLink = .some(posted["androidAppLink"])
        change.ogTitle = .some(posted["ogTitle"])
        change.ogDescription = .some(posted["ogDescription"])
        change.ogImageURL = .some(posted["ogImageUrl"])
        change.expiresAt = .some(try expiresAt(posted))
        change.originalURL = posted["originalUrl"]
        change.deepLinkParameters = try deepLinkParameters(posted) ?? [:]
        change.utmParameters = utm(posted)
        change.targetingRules = targeting(posted).mapValues { .array($0.map(JSONValue.string)) }
        change.attributionWindowHours = try attributionWindowHours(posted)
        change.appendClickID = posted["appendClickId"] == "true"
        change.landingPage = .some(landingPage(posted))
        return change
    }

    /// The posted `deepLinkParameters` (a JSON object), `nil` when empty.
    private static func deepLinkParameters(_ posted: FormBody) throws -> [String: JSONValue]? {
        guard let parameters = posted["deepLinkParameters"] else { return nil }
        guard case .object(let object)? = try? JSONParser.parse(Array(parameters.utf8)) else {
            throw APIError.field("deepLinkParameters", "must be a JSON object, such as {\"productId\": \"42\"}")
        }
        return object
    }

    /// The posted `utm_…` fields that are not empty.
    private static func utm(_ posted: FormBody) -> [String: String] {
        var utm: [String: String] = [:]
        for key in ["source", "medium", "campaign", "term", "content"] {
            if let value = posted["utm_" + key] { utm[key] = value }
        }
        return utm
    }

    /// The posted targeting rules: each a comma-separated list, its items trimmed.
    private static func targeting(_ posted: FormBody) -> [String: [String]] {
        var targeting: [String: [String]] = [:]
        for key in ["countries", "devices", "languages"] {
            guard let value = posted[key] else { continue }
            targeting[key] = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return targeting
    }

    /// The posted landing page choice: `nil` for "as the project says".
    private static func landingPage(_ posted: FormBody) -> Bool? {
        switch posted["landingPage"] {
        case "true": true
        case "false": false
        default: nil
        }
    }

    /// The draft the new link's form asks for, as the Core's value: an empty field not given.
    /// - Throws: ``APIError`` naming the field when a value cannot be read at all.
    static func draft(_ posted: FormBody) throws -> LinkDraft {
        var draft = LinkDraft()
        draft.customCode = posted["customCode"]
        draft.originalURL = posted["originalUrl"]
        draft.title = posted["title"]
        draft.description = posted["description"]
        draft.webFallbackURL = posted["webFallbackUrl"]
        draft.iosAppStoreURL = posted["iosAppStoreUrl"]
        draft.androidAppStoreURL = posted["androidAppStoreUrl"]
        draft.appScheme = posted["appScheme"]
        draft.deepLinkPath = posted["deepLinkPath"]
        draft.iosUniversalLink = posted["iosUniversalLink"]
        draft.androidAppLink = posted["androidAppLink"]
        draft.ogTitle = posted["ogTitle"]
        draft.ogDescription = posted["ogDescription"]
        draft.ogImageURL = posted["ogImageUrl"]
        draft.expiresAt = try expiresAt(posted)
        draft.deepLinkParameters = try deepLinkParameters(posted)
        let utm = utm(posted)
        draft.utmParameters = utm.isEmpty ? nil : utm
        let targeting = targeting(posted)
        draft.targetingRules = targeting.isEmpty ? nil : targeting.mapValues { .array($0.map(JSONValue.string)) }
        draft.attributionWindowHours = try attributionWindowHours(posted)
        draft.appendClickID = posted["appendClickId"] == "true"
        draft.landingPage = landingPage(posted)
        return draft
    }

    /// The posted `expiresAt`, an ISO 8601 date; `nil` when empty.
    private static func expiresAt(_ posted: FormBody) throws -> Date? {
        guard let text = posted["expiresAt"] else { return nil }
        guard let date = ServerHTTP.parseTimestamp(text) else {
            throw APIError.field("expiresAt", "must be an ISO 8601 date (2026-03-02T08:05:00Z)")
        }
        return date
    }

    /// The posted `attributionWindowHours`, a whole number; `nil` when empty.
    private static func attributionWindowHours(_ posted: FormBody) throws -> Int? {
        guard let hours = posted["attributionWindowHours"] else { return nil }
        guard let number = Int(hours) else { throw APIError.field("attributionWindowHours", "must be a whole number from 1 to 2160") }
        return number
    }
}
