import Foundation
import LinkRelay

/// A change to a link's editable fields, as a value: each field `nil` to keep it, or what to
/// set; an optional field set to `.some(nil)` is cleared. The admin API reads one from a body
/// (`PATCH /api/links/{id}`), the dashboard from its form, the command line from JSON. All three
/// apply it with the same rules (``applied(to:)``).
package struct LinkChange: Sendable, Hashable {
    package var originalURL: String?
    package var title: String??
    package var description: String??
    package var iosAppStoreURL: String??
    package var androidAppStoreURL: String??
    package var webFallbackURL: String??
    package var appScheme: String??
    package var iosUniversalLink: String??
    package var androidAppLink: String??
    package var deepLinkPath: String??
    /// Set whole; `[:]` clears them.
    package var deepLinkParameters: [String: JSONValue]?
    /// Set whole; `[:]` clears them.
    package var utmParameters: [String: String]?
    /// Set whole; `[:]` clears them.
    package var targetingRules: [String: JSONValue]?
    package var ogTitle: String??
    package var ogDescription: String??
    package var ogImageURL: String??
    package var attributionWindowHours: Int?
    package var isActive: Bool?
    package var expiresAt: Date??
    package var appendClickID: Bool?
    /// `.some(nil)`: as the project says.
    package var landingPage: Bool??

    /// No change.
    package init() {}

    /// Whether the change sets nothing.
    package var isEmpty: Bool { self == LinkChange() }

    /// `link` with the change applied, each value checked by ``LinkRules`` in the order of the
    /// fields above. The code, template, owner and creation are never changed.
    /// - Throws: ``LinkFieldError`` for the first value that breaks a rule.
    package func applied(to link: LinkRecord) throws(LinkFieldError) -> LinkRecord {
        var link = link
        func url(_ value: String??, _ field: String) throws(LinkFieldError) -> String?? {
            if case .some(.some(let text)) = value { try LinkRules.checkWebURL(text, of: field) }
            return value
        }
        func text(_ value: String??, _ field: String, _ limit: Int) throws(LinkFieldError) -> String?? {
            if case .some(.some(let text)) = value { try LinkRules.checkLength(text, of: field, limit: limit) }
            return value
        }
        if let originalURL {
            try LinkRules.checkWebURL(originalURL, of: "originalUrl")
            link.originalURL = originalURL
        }
        if let title = try text(title, "title", LinkRules.shortText) { link.title = title }
        if let description = try text(description, "description", LinkRules.longText) { link.description = description }
        if let value = try url(iosAppStoreURL, "iosAppStoreUrl") { link.iosAppStoreURL = value }
        if let value = try url(androidAppStoreURL, "androidAppStoreUrl") { link.androidAppStoreURL = value }
        if let value = try url(webFallbackURL, "webFallbackUrl") { link.webFallbackURL = value }
        if let appScheme {
            if let scheme = appScheme { try LinkRules.checkAppScheme(scheme) }
            link.appScheme = appScheme
        }
        if let value = try url(iosUniversalLink, "iosUniversalLink") { link.iosUniversalLink = value }
        if let value = try url(androidAppLink, "androidAppLink") { link.androidAppLink = value }
        if let deepLinkPath {
            if let path = deepLinkPath { try LinkRules.checkDeepLinkPath(path) }
            link.deepLinkPath = deepLinkPath
        }
        if let deepLinkParameters { link.deepLinkParameters = deepLinkParameters }
        if let utmParameters {
            try LinkRules.checkUTM(utmParameters)
            link.utmParameters = utmParameters
        }
        if let targetingRules {
            try LinkRules.checkTargeting(targetingRules)
            link.targetingRules = targetingRules
        }
        if let value = try text(ogTitle, "ogTitle", LinkRules.shortText) { link.ogTitle = value }
        if let value = try text(ogDescription, "ogDescription", LinkRules.longText) { link.ogDescription = value }
        if let value = try url(ogImageURL, "ogImageUrl") { link.ogImageURL = value }
        if let attributionWindowHours {
            try LinkRules.checkAttributionWindow(attributionWindowHours)
            link.attributionWindowHours = attributionWindowHours
        }
        if let isActive { link.isActive = isActive }
        if let expiresAt { link.expiresAt = expiresAt?.storedPrecision }
        if let appendClickID { link.appendClickID = appendClickID }
        if let landingPage { link.landingPage = landingPage }
        return link
    }
}
