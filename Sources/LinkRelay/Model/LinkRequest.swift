import Foundation

/// A link the app asks its provider to create (a share or referral link).
public struct LinkRequest: Sendable, Hashable, Codable {
    /// The in-app path the link opens, such as `/products/42`.
    public var deepLinkPath: String?
    /// The web page for people without the app, where the provider supports one.
    public var fallbackURL: URL?
    /// Extra parameters delivered with the link.
    public var parameters: [String: String]
    /// Campaign parameters.
    public var utm: UTMParameters
    /// A title for the link, where the provider shows one.
    public var title: String?
    /// A description of the link, where the provider keeps one (LinkForty: `description`).
    public var description: String?
    /// The provider's template to create the link from, where it has templates.
    public var templateID: String?
    /// The template's short name, where the provider puts it in the link's URL
    /// (LinkForty: `https://go.acme.app/<templateSlug>/<code>`).
    public var templateSlug: String?
    /// A custom short code instead of a generated one, where the provider allows it.
    public var customCode: String?
    /// The user the link belongs to. When `nil`, the client attaches
    /// ``DeepLinkClient/externalUserID`` if one is set.
    public var externalUserID: String?

    /// A link request; every field is optional, as providers need different ones.
    public init(
        deepLinkPath: String? = nil,
        fallbackURL: URL? = nil,
        parameters: [String: String] = [:],
        utm: UTMParameters = UTMParameters(),
        title: String? = nil,
        description: String? = nil,
        templateID: String? = nil,
        templateSlug: String? = nil,
        customCode: String? = nil,
        externalUserID: String? = nil
    ) {
        self.deepLinkPath = deepLinkPath
        self.fallbackURL = fallbackURL
        self.parameters = parameters
        self.utm = utm
        self.title = title
        self.description = description
        self.templateID = templateID
        self.templateSlug = templateSlug
        self.customCode = customCode
        self.externalUserID = externalUserID
    }
}

/// A link the provider created.
public struct CreatedLink: Sendable, Hashable, Codable {
    /// The URL to share.
    public var url: URL
    /// The link's short code, if the provider issues one.
    public var shortCode: String?
    /// The provider's identifier for the link.
    public var linkID: String?
    /// True when the provider returned an existing identical link instead of a new one.
    public var deduplicated: Bool?

    /// A created link at `url`.
    public init(url: URL, shortCode: String? = nil, linkID: String? = nil, deduplicated: Bool? = nil) {
        self.url = url
        self.shortCode = shortCode
        self.linkID = linkID
        self.deduplicated = deduplicated
    }
}
