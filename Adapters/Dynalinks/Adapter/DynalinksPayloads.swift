import Foundation
import LinkRelay
import LinkRelayWire

// Dynalinks' JSON, exactly as on the wire: snake_case keys, absent values omitted (never null).

/// `POST /fingerprints/match` body.
struct DynalinksMatchRequest: Encodable, Equatable {
    var fingerprint: DynalinksFingerprint
    var platform = "ios"
}

/// `POST /links/attribute` body.
struct DynalinksAttributeRequest: Encodable, Equatable {
    var url: String
    var platform = "ios"
}

/// The device fingerprint, keys exactly as Dynalinks' SDK sends them.
struct DynalinksFingerprint: Encodable, Equatable {
    var screenWidth: Int?
    var screenHeight: Int?
    var devicePixelRatio: Double?
    var osVersion: String
    var timezone: String
    var calendar: String?
    var language: String?
    var languages: [String]?
    var countryCode: String?
    var deviceModel: String?
    var idfv: String?
    var appVersion: String?
    var appBuild: String?
    var simulator: Bool

    enum CodingKeys: String, CodingKey {
        case screenWidth = "screen_width"
        case screenHeight = "screen_height"
        case devicePixelRatio = "device_pixel_ratio"
        case osVersion = "os_version"
        case timezone, calendar, language, languages
        case countryCode = "country_code"
        case deviceModel = "device_model"
        case idfv
        case appVersion = "app_version"
        case appBuild = "app_build"
        case simulator
    }
}

/// Both endpoints' answer: `{"matched", "confidence", "match_score", "link"}`. `matched` is
/// required; an unknown `confidence` or a fractional score does not fail the response.
struct DynalinksResult: Decodable {
    var matched: Bool
    var confidence: String?
    var matchScore: Double?
    var link: DynalinksLink?

    enum CodingKeys: String, CodingKey {
        case matched, confidence
        case matchScore = "match_score"
        case link
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        matched = try container.decode(Bool.self, forKey: .matched)
        confidence = container.lenient(String.self, forKey: .confidence)
        matchScore = container.lenient(Double.self, forKey: .matchScore)
        // A link object without an id fails the response; `null` or absent is no link.
        link = try container.decodeIfPresent(DynalinksLink.self, forKey: .link)
    }
}

/// A link. Only `id` is required; every other field is read leniently.
struct DynalinksLink: Decodable {
    var id: String
    var name: String?
    var path: String?
    var shortenedPath: String?
    var url: String?
    var fullURL: String?
    var deepLinkValue: String?
    var iosDeferredDeepLinkingEnabled: Bool?
    var androidFallbackURL: String?
    var iosFallbackURL: String?
    var enableForcedRedirect: Bool?
    var socialTitle: String?
    var socialDescription: String?
    var socialImageURL: String?
    var clicks: Int?
    var referrer: String?
    var providerToken: String?
    var campaignToken: String?

    enum CodingKeys: String, CodingKey {
        case id, name, path
        case shortenedPath = "shortened_path"
        case url
        case fullURL = "full_url"
        case deepLinkValue = "deep_link_value"
        case iosDeferredDeepLinkingEnabled = "ios_deferred_deep_linking_enabled"
        case androidFallbackURL = "android_fallback_url"
        case iosFallbackURL = "ios_fallback_url"
        case enableForcedRedirect = "enable_forced_redirect"
        case socialTitle = "social_title"
        case socialDescription = "social_description"
        case socialImageURL = "social_image_url"
        case clicks, referrer
        case providerToken = "provider_token"
        case campaignToken = "campaign_token"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = container.lenient(String.self, forKey: .name)
        path = container.lenient(String.self, forKey: .path)
        shortenedPath = container.lenient(String.self, forKey: .shortenedPath)
        url = container.lenient(String.self, forKey: .url)
        fullURL = container.lenient(String.self, forKey: .fullURL)
        deepLinkValue = container.lenient(String.self, forKey: .deepLinkValue)
        iosDeferredDeepLinkingEnabled = container.lenient(Bool.self, forKey: .iosDeferredDeepLinkingEnabled)
        androidFallbackURL = container.lenient(String.self, forKey: .androidFallbackURL)
        iosFallbackURL = container.lenient(String.self, forKey: .iosFallbackURL)
        enableForcedRedirect = container.lenient(Bool.self, forKey: .enableForcedRedirect)
        socialTitle = container.lenient(String.self, forKey: .socialTitle)
        socialDescription = container.lenient(String.self, forKey: .socialDescription)
        socialImageURL = container.lenient(String.self, forKey: .socialImageURL)
        clicks = container.lenient(Int.self, forKey: .clicks)
        referrer = container.lenient(String.self, forKey: .referrer)
        providerToken = container.lenient(String.self, forKey: .providerToken)
        campaignToken = container.lenient(String.self, forKey: .campaignToken)
    }
}
