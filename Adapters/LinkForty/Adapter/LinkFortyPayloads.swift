import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

// LinkForty's JSON, exactly as on the wire. Requests encode absent values by omitting them
// (Core's schemas reject `null`); responses decode every optional field leniently.

/// `POST /api/sdk/v1/install` body.
struct LinkFortyInstallRequest: Encodable, Equatable {
    var userAgent: String
    /// Left out with the fingerprint withheld (Core's schema has it optional).
    var timezone: String?
    var language: String?
    var screenWidth: Int?
    var screenHeight: Int?
    var platform: String
    var platformVersion: String
    var appVersion: String?
    var deviceId: String?
    var attributionWindowHours: Int
    /// LinkRelay's name and version, which Core stores for diagnostics (§12.6).
    var sdkName = LinkFortyEndpoints.sdkName
    var sdkVersion = LinkRelayVersion.string
    /// The click token of the install's certain link (``/LinkRelay/CertainLink/clickToken``):
    /// LinkRelay Server attributes the install to that very click; LinkForty Core's schema
    /// strips the unknown key. Left out when there is none.
    var clickToken: String?
    /// The Apple Ads attribution token (``/LinkRelay/BackendContext/appleAdsToken``), for the
    /// server to ask Apple's attribution API; left out when there is none.
    var appleAdsToken: String?
    /// `false` when the app withholds its fingerprint (``/LinkRelay/BackendContext/fingerprintWithheld``):
    /// LinkRelay Server then matches the install by its click token only; Core strips the key.
    /// Left out otherwise.
    var fingerprint: Bool?
}

/// `POST /api/sdk/v1/install/apple-ads-token` body (LinkRelay Server; Core has no such route):
/// the Apple Ads token that came after the install report, for the install it names.
struct LinkFortyLateAppleAdsToken: Encodable, Equatable {
    var installId: String
    var appleAdsToken: String
}

/// `POST /api/sdk/v1/install` response. `installId` is required, as in every LinkForty SDK
/// (§12.4): without it no event could be sent for the install.
struct LinkFortyInstallResponse: Decodable {
    var installId: String
    var attributed: Bool
    var confidenceScore: Double?
    var matchedFactors: [String]
    var deepLinkData: LinkFortyLinkData?

    enum CodingKeys: String, CodingKey {
        case installId, attributed, confidenceScore, matchedFactors, deepLinkData
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let installId = container.lenient(String.self, forKey: .installId), !installId.isEmpty else {
            throw DecodingError.keyNotFound(
                CodingKeys.installId, .init(codingPath: decoder.codingPath, debugDescription: "The install answer has no installId."))
        }
        self.installId = installId
        attributed = container.lenient(Bool.self, forKey: .attributed) ?? false
        confidenceScore = container.lenient(Double.self, forKey: .confidenceScore)
        matchedFactors = container.lenient([String].self, forKey: .matchedFactors) ?? []
        deepLinkData = container.lenient(LinkFortyLinkData.self, forKey: .deepLinkData)
    }
}

/// A link as LinkForty describes it: the resolve response (E2/E3) and the install response's
/// `deepLinkData` (E1) share this shape, with different keys present. `{}` decodes to a value
/// whose ``shortCode`` is `nil`: no link.
struct LinkFortyLinkData: Decodable {
    var shortCode: String?
    var linkId: String?
    var originalUrl: String?
    var deepLinkPath: String?
    var appScheme: String?
    var iosUrl: String?
    var androidUrl: String?
    /// Resolve's web fallback.
    var webUrl: String?
    /// Install's web fallback.
    var webFallbackUrl: String?
    var utmParameters: LinkFortyUTM?
    /// Resolve's parameters; values of any JSON type.
    var customParameters: [String: JSONValue]?
    /// Install's parameters; values of any JSON type.
    var deepLinkParameters: [String: JSONValue]?
    var targetingRules: JSONValue?
    var clickedAt: String?

    enum CodingKeys: String, CodingKey {
        case shortCode, linkId, originalUrl, deepLinkPath, appScheme, iosUrl, androidUrl, webUrl, webFallbackUrl
        case utmParameters, customParameters, deepLinkParameters, targetingRules, clickedAt
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        shortCode = container.lenient(String.self, forKey: .shortCode)
        linkId = container.lenient(String.self, forKey: .linkId)
        originalUrl = container.lenient(String.self, forKey: .originalUrl)
        deepLinkPath = container.lenient(String.self, forKey: .deepLinkPath)
        appScheme = container.lenient(String.self, forKey: .appScheme)
        iosUrl = container.lenient(String.self, forKey: .iosUrl)
        androidUrl = container.lenient(String.self, forKey: .androidUrl)
        webUrl = container.lenient(String.self, forKey: .webUrl)
        webFallbackUrl = container.lenient(String.self, forKey: .webFallbackUrl)
        utmParameters = container.lenient(LinkFortyUTM.self, forKey: .utmParameters)
        customParameters = container.lenient([String: JSONValue].self, forKey: .customParameters)
        deepLinkParameters = container.lenient([String: JSONValue].self, forKey: .deepLinkParameters)
        targetingRules = container.lenient(JSONValue.self, forKey: .targetingRules)
        clickedAt = container.lenient(String.self, forKey: .clickedAt)
    }
}

/// `utmParameters`: `{source, medium, campaign, term, content}`, any of them.
struct LinkFortyUTM: Codable, Equatable {
    var source: String?
    var medium: String?
    var campaign: String?
    var term: String?
    var content: String?

    init(source: String? = nil, medium: String? = nil, campaign: String? = nil, term: String? = nil, content: String? = nil) {
        self.source = source
        self.medium = medium
        self.campaign = campaign
        self.term = term
        self.content = content
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        source = container.lenient(String.self, forKey: .source)
        medium = container.lenient(String.self, forKey: .medium)
        campaign = container.lenient(String.self, forKey: .campaign)
        term = container.lenient(String.self, forKey: .term)
        content = container.lenient(String.self, forKey: .content)
    }
}

/// `POST /api/sdk/v1/event` body.
struct LinkFortyEventRequest: Encodable, Equatable {
    var installId: String
    var eventName: String
    var eventData: [String: JSONValue]
    var timestamp: String
    /// LinkRelay's name and version, which Core stores for diagnostics (§12.6).
    var sdkName = LinkFortyEndpoints.sdkName
    var sdkVersion = LinkRelayVersion.string
}

/// `POST /api/links` (Core, with a template) and `POST /api/sdk/v1/links` (Cloud) body.
struct LinkFortyCreateLinkRequest: Encodable, Equatable {
    var templateId: String?
    var templateSlug: String?
    var originalUrl: String?
    var deepLinkPath: String?
    var deepLinkParameters: [String: String]?
    var title: String?
    var description: String?
    var customCode: String?
    var utmParameters: LinkFortyUTM?
    var externalUserId: String?
}

/// Core's `POST /api/links` response: the link row, snake_case.
struct LinkFortyLinkRow: Decodable {
    var id: String
    var shortCode: String

    enum CodingKeys: String, CodingKey {
        case id
        case shortCode = "short_code"
    }
}

/// Cloud's `POST /api/sdk/v1/links` response.
struct LinkFortyCreatedLink: Decodable {
    var url: String
    var shortCode: String
    var linkId: String
    var deduplicated: Bool?

    enum CodingKeys: String, CodingKey {
        case url, shortCode, linkId, deduplicated
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        shortCode = try container.decode(String.self, forKey: .shortCode)
        linkId = try container.decode(String.self, forKey: .linkId)
        deduplicated = container.lenient(Bool.self, forKey: .deduplicated)
    }
}
