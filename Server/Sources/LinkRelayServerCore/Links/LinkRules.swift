import Foundation
import LinkRelay

/// A link's field that breaks a rule: the field's name as the API spells it, and what is wrong,
/// as a sentence's end (`"must start with /"`). The HTTP API answers it as a `400` naming the
/// field; the dashboard shows it next to the field.
package struct LinkFieldError: Error, Sendable, Hashable {
    /// The field, as the API names it (`deepLinkPath`).
    package var field: String
    /// What is wrong with it (`must start with /`).
    package var problem: String

    /// An error for `field`; see each property.
    package init(_ field: String, _ problem: String) {
        self.field = field
        self.problem = problem
    }
}

/// What a link's values must be, wherever they come from (the admin and SDK API, the dashboard's
/// form, the command line): one place for each rule.
package enum LinkRules {
    /// Path segments a short code or a template slug may not take: the server's own routes.
    package static let reservedSegments: Set<String> = ["api", ".well-known", "health", "favicon.ico", "robots.txt", "dashboard"]

    /// Whether `code` may be a link's own short code: 1 to 20 of `A–Z a–z 0–9 _ -`, not a
    /// reserved segment.
    package static func isValidCode(_ code: String) -> Bool {
        (1...20).contains(code.count) && !reservedSegments.contains(code.lowercased())
            && code.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-") }
    }

    /// Schemes a browser handles itself, or that run code: never an app's.
    package static let refusedSchemes: Set<String> = [
        "javascript", "data", "vbscript", "file", "http", "https", "about", "blob", "ftp", "ws", "wss",
    ]

    /// Whether `scheme` is one an app can register: RFC 3986's form, lower-case, not one of
    /// ``refusedSchemes``.
    package static func isValidScheme(_ scheme: String) -> Bool {
        guard !refusedSchemes.contains(scheme), let first = scheme.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return scheme.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+.-".unicodeScalars.contains($0)
        }
    }

    /// The most characters (Unicode scalars) of a link's short texts (title, preview title) and
    /// long ones (descriptions), and of a URL.
    package static let shortText = 512
    package static let longText = 2048
    package static let url = 2048

    /// The hours an install may come after its click and still be attributed to it.
    package static let attributionWindowHours = 1...2160

    /// The keys `utmParameters` takes (LinkForty Core's five).
    package static let utmKeys: Set<String> = ["source", "medium", "campaign", "term", "content"]

    /// Whether `byte` may stand in a URI (RFC 3986: unreserved, reserved and `%`).
    package static func isURICharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "-._~:/?#[]@!$&'()*+,;=%".utf8.contains(byte)
        }
    }

    /// Checks `text` of `field` against at most `limit` characters.
    package static func checkLength(_ text: String, of field: String, limit: Int) throws(LinkFieldError) {
        // Characters as JSON Schema counts them (Unicode scalars), so the API's description says
        // the limit exactly.
        guard TextLimit.fits(text, characters: limit) else { throw LinkFieldError(field, "is longer than \(limit) characters") }
    }

    /// Checks that `text` of `field` is an absolute `http`/`https` URL of at most 2,048
    /// characters, of RFC 3986's characters only.
    package static func checkWebURL(_ text: String, of field: String) throws(LinkFieldError) {
        try checkLength(text, of: field, limit: url)
        // A raw non-ASCII host or a space would make a `Location` header no client reads; an
        // international one is written in punycode and percent-encoding.
        guard text.utf8.allSatisfy(isURICharacter) else {
            throw LinkFieldError(
                field, "must be a URL of RFC 3986's characters: percent-encode spaces, quotes and other characters (a host in punycode)")
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw LinkFieldError(field, "must be an absolute http or https URL")
        }
    }

    /// Checks `deepLinkPath`: it starts with `/`.
    package static func checkDeepLinkPath(_ path: String) throws(LinkFieldError) {
        try checkLength(path, of: "deepLinkPath", limit: longText)
        guard path.hasPrefix("/") else { throw LinkFieldError("deepLinkPath", "must start with /") }
    }

    /// Checks `appScheme`: one an app can register (``isValidScheme(_:)``).
    package static func checkAppScheme(_ scheme: String) throws(LinkFieldError) {
        try checkLength(scheme, of: "appScheme", limit: 64)
        guard isValidScheme(scheme) else {
            throw LinkFieldError(
                "appScheme",
                "must be a scheme an app can register (^[a-z][a-z0-9+.-]*$, not \(refusedSchemes.sorted().joined(separator: ", ")))")
        }
    }

    /// Checks `targetingRules`: `countries`, `devices` (`ios`, `android`, `web`) and `languages`,
    /// each a list of strings.
    package static func checkTargeting(_ rules: [String: JSONValue]) throws(LinkFieldError) {
        for (name, value) in rules.sorted(by: { $0.key < $1.key }) {
            guard ["countries", "devices", "languages"].contains(name) else {
                throw LinkFieldError("targetingRules", "has an unknown rule '\(name.prefix(40))' (allowed: countries, devices, languages)")
            }
            guard case .array(let items) = value, items.allSatisfy({ $0.stringValue != nil }) else {
                throw LinkFieldError("targetingRules", "\(name) must be a list of strings")
            }
            if name == "devices", !items.allSatisfy({ ["ios", "android", "web"].contains($0.stringValue ?? "") }) {
                throw LinkFieldError("targetingRules", "devices takes ios, android and web")
            }
        }
    }

    /// Checks `utmParameters`: Core's five keys, each at most 2,048 characters.
    package static func checkUTM(_ parameters: [String: String]) throws(LinkFieldError) {
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            guard utmKeys.contains(key) else {
                throw LinkFieldError(
                    "utmParameters", "has an unknown key '\(key.prefix(40))' (allowed: \(utmKeys.sorted().joined(separator: ", ")))")
            }
            guard TextLimit.fits(value, characters: longText) else {
                throw LinkFieldError("utmParameters", "must hold strings of at most \(longText) characters")
            }
        }
    }

    /// Checks `attributionWindowHours`: 1 to 2,160 (90 days).
    package static func checkAttributionWindow(_ hours: Int) throws(LinkFieldError) {
        guard attributionWindowHours.contains(hours) else {
            throw LinkFieldError(
                "attributionWindowHours", "must be between \(attributionWindowHours.lowerBound) and \(attributionWindowHours.upperBound)")
        }
    }
}
