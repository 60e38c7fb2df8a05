import Foundation

/// A URL taken apart by ``LinkParser``: everything a link says on its own, before any provider
/// is asked.
///
/// Backends start from it to build their ``DeepLink`` and fall back to it when their server
/// cannot help.
public struct ParsedLink: Sendable, Hashable {
    /// One query item, in the order the URL lists them.
    public struct QueryItem: Sendable, Hashable {
        /// The name, form-decoded.
        public var name: String
        /// The value, form-decoded; `""` for an item without `=`.
        public var value: String
    }

    /// The URL as given.
    public var url: URL
    /// The scheme, lower-cased.
    public var scheme: String
    /// The host, lower-cased for `http`/`https`; for a custom scheme as written (it is also the
    /// first path segment). `nil` when the URL has none.
    public var host: String?
    /// `universalLink` for `http`/`https`, otherwise `customScheme`.
    public var origin: DeepLink.Origin
    /// The normalised path segments (see ``DeepLink/pathSegments``).
    public var pathSegments: [String]
    /// Every query item, in order, repeats included.
    public var queryItems: [QueryItem]
    /// The query as a dictionary; a repeated name keeps its last value.
    public var parameters: [String: String]
    /// The `utm_*` items; for each, the first occurrence wins.
    public var utm: UTMParameters
    /// Campaign fields from the query, or `nil` when there are none.
    public var campaign: Campaign?
    /// True when the query says `auth=required` (case-insensitive).
    public var requiresAuthentication: Bool
    /// The fragment, percent-decoded, if any.
    public var fragment: String?

    /// The normalised path: `/` followed by the segments joined with `/`.
    public var path: String { DeepLink.path(of: pathSegments) }

    /// The first non-empty value among `names`, trying each name in turn, and within a name its
    /// first occurrence.
    public func firstValue(of names: String...) -> String? {
        firstValue(of: names)
    }

    /// The first non-empty value among `names`, trying each name in turn, and within a name its
    /// first occurrence.
    public func firstValue(of names: [String]) -> String? {
        for name in names {
            if let item = queryItems.first(where: { $0.name == name && !$0.value.isEmpty }) {
                return item.value
            }
        }
        return nil
    }

    /// The link as a ``DeepLink`` with these fields, for `provider` and `resolution`.
    public func deepLink(
        provider: BackendID,
        resolution: DeepLink.Resolution,
        origin: DeepLink.Origin? = nil
    ) -> DeepLink {
        DeepLink(
            url: url,
            origin: origin ?? self.origin,
            provider: provider,
            resolution: resolution,
            pathSegments: pathSegments,
            parameters: parameters,
            utm: utm,
            campaign: campaign,
            requiresAuthentication: requiresAuthentication
        )
    }
}
