import Foundation
import LinkRelay
import LinkRelayServerCore

/// A link as LinkForty Core's admin API answers it (`GET /api/links/{id}`, the list, an edit):
/// its columns in snake_case, an empty one `null`, and the camelCase copies of the three maps
/// and `clickCount` that Core's answers carry too.
package struct LinkRow: WireAnswer {
    package var id: String
    package var shortCode: String
    package var originalURL: String
    package var templateID: Nullable<String>
    package var templateSlug: Nullable<String>
    package var title: Nullable<String>
    package var description: Nullable<String>
    package var iosAppStoreURL: Nullable<String>
    package var androidAppStoreURL: Nullable<String>
    package var webFallbackURL: Nullable<String>
    package var appScheme: Nullable<String>
    package var iosUniversalLink: Nullable<String>
    package var androidAppLink: Nullable<String>
    package var deepLinkPath: Nullable<String>
    package var deepLinkParameters: [String: JSONValue]
    package var utmParameters: [String: String]
    package var targetingRules: [String: JSONValue]
    package var isActive: Bool
    package var expiresAt: Nullable<Date>
    package var attributionWindowHours: Int
    package var ogTitle: Nullable<String>
    package var ogDescription: Nullable<String>
    package var ogImageURL: Nullable<String>
    package var appendClickID: Bool
    package var landingPage: Nullable<Bool>
    package var createdAt: Date
    /// The link's clicks; absent in an edit's answer (as Core's).
    package var clickCount: Int?

    private enum CodingKeys: String, CodingKey {
        case id, title, description
        case shortCode = "short_code", originalURL = "original_url", templateID = "template_id", templateSlug = "template_slug"
        case iosAppStoreURL = "ios_app_store_url", androidAppStoreURL = "android_app_store_url", webFallbackURL = "web_fallback_url"
        case appScheme = "app_scheme", iosUniversalLink = "ios_universal_link", androidAppLink = "android_app_link"
        case deepLinkPath = "deep_link_path", deepLinkParameters = "deep_link_parameters", utmParameters = "utm_parameters"
        case targetingRules = "targeting_rules", isActive = "is_active", expiresAt = "expires_at"
        case attributionWindowHours = "attribution_window_hours", ogTitle = "og_title", ogDescription = "og_description"
        case ogImageURL = "og_image_url", appendClickID = "append_click_id", landingPage = "landing_page", createdAt = "created_at"
        case clickCount
        case utmParametersCopy = "utmParameters", targetingRulesCopy = "targetingRules", deepLinkParametersCopy = "deepLinkParameters"
    }

    /// `link`'s row, with `clicks` as its `clickCount` (left out when `nil`).
    package init(_ link: LinkRecord, clicks: Int?) {
        id = link.id
        shortCode = link.shortCode
        originalURL = link.originalURL
        templateID = Nullable(link.templateID)
        templateSlug = Nullable(link.templateSlug.isEmpty ? nil : link.templateSlug)
        title = Nullable(link.title)
        description = Nullable(link.description)
        iosAppStoreURL = Nullable(link.iosAppStoreURL)
        androidAppStoreURL = Nullable(link.androidAppStoreURL)
        webFallbackURL = Nullable(link.webFallbackURL)
        appScheme = Nullable(link.appScheme)
        iosUniversalLink = Nullable(link.iosUniversalLink)
        androidAppLink = Nullable(link.androidAppLink)
        deepLinkPath = Nullable(link.deepLinkPath)
        deepLinkParameters = link.deepLinkParameters
        utmParameters = link.utmParameters
        targetingRules = link.targetingRules
        isActive = link.isActive
        expiresAt = Nullable(link.expiresAt)
        attributionWindowHours = link.attributionWindowHours
        ogTitle = Nullable(link.ogTitle)
        ogDescription = Nullable(link.ogDescription)
        ogImageURL = Nullable(link.ogImageURL)
        appendClickID = link.appendClickID
        landingPage = Nullable(link.landingPage)
        createdAt = link.createdAt
        clickCount = clicks
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(shortCode, forKey: .shortCode)
        try container.encode(originalURL, forKey: .originalURL)
        try container.encode(templateID, forKey: .templateID)
        try container.encode(templateSlug, forKey: .templateSlug)
        try container.encode(title, forKey: .title)
        try container.encode(description, forKey: .description)
        try container.encode(iosAppStoreURL, forKey: .iosAppStoreURL)
        try container.encode(androidAppStoreURL, forKey: .androidAppStoreURL)
        try container.encode(webFallbackURL, forKey: .webFallbackURL)
        try container.encode(appScheme, forKey: .appScheme)
        try container.encode(iosUniversalLink, forKey: .iosUniversalLink)
        try container.encode(androidAppLink, forKey: .androidAppLink)
        try container.encode(deepLinkPath, forKey: .deepLinkPath)
        try container.encode(deepLinkParameters, forKey: .deepLinkParameters)
        try container.encode(utmParameters, forKey: .utmParameters)
        try container.encode(targetingRules, forKey: .targetingRules)
        try container.encode(isActive, forKey: .isActive)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(attributionWindowHours, forKey: .attributionWindowHours)
        try container.encode(ogTitle, forKey: .ogTitle)
        try container.encode(ogDescription, forKey: .ogDescription)
        try container.encode(ogImageURL, forKey: .ogImageURL)
        try container.encode(appendClickID, forKey: .appendClickID)
        try container.encode(landingPage, forKey: .landingPage)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(clickCount, forKey: .clickCount)
        // Core's camelCase copies.
        try container.encode(utmParameters, forKey: .utmParametersCopy)
        try container.encode(targetingRules, forKey: .targetingRulesCopy)
        try container.encode(deepLinkParameters, forKey: .deepLinkParametersCopy)
    }

    package static let schema = "LinkRow"
    package static let example = LinkRow(WireTypes.exampleLink, clicks: 3)
}

/// `POST /api/links`: the new link's row (with `clickCount` 0), its share URL, whether it
/// repeats one made before, and what the server noticed about it.
package struct CreatedLinkRow: WireAnswer {
    package var row: LinkRow
    package var url: URL
    package var deduplicated: Bool
    package var warnings: [String]

    private enum CodingKeys: String, CodingKey {
        case url, deduplicated, warnings
    }

    package func encode(to encoder: any Encoder) throws {
        try row.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url.absoluteString, forKey: .url)
        try container.encode(deduplicated, forKey: .deduplicated)
        try container.encode(warnings, forKey: .warnings)
    }

    package static let schema = "CreatedLinkRow"
    package static let example = CreatedLinkRow(
        row: LinkRow(WireTypes.exampleLink, clicks: 0), url: URL(string: "https://go.acme.example/k3m9x2qa/spring")!,
        deduplicated: false, warnings: ["The link has no App Store page."])
}

/// `POST /api/sdk/v1/links`: `{"url", "shortCode", "linkId", "deduplicated", "warnings"}`.
package struct SDKLink: WireAnswer {
    package var url: URL
    package var shortCode: String
    package var linkId: String
    package var deduplicated: Bool
    package var warnings: [String]

    private enum CodingKeys: String, CodingKey {
        case url, shortCode, linkId, deduplicated, warnings
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url.absoluteString, forKey: .url)
        try container.encode(shortCode, forKey: .shortCode)
        try container.encode(linkId, forKey: .linkId)
        try container.encode(deduplicated, forKey: .deduplicated)
        try container.encode(warnings, forKey: .warnings)
    }

    package static let schema = "SDKLink"
    package static let example = SDKLink(
        url: URL(string: "https://go.acme.example/spring")!, shortCode: "spring", linkId: WireTypes.exampleLink.id, deduplicated: true,
        warnings: [])
}
