/// The standard `utm_*` campaign parameters of a link.
///
/// Taken from the link's query by ``LinkParser`` (the first occurrence of each wins) or from the
/// provider's payload when the provider reports them.
public struct UTMParameters: Sendable, Hashable, Codable {
    /// `utm_source`: where the traffic comes from (`newsletter`, `instagram`).
    public var source: String?
    /// `utm_medium`: the channel (`email`, `social`).
    public var medium: String?
    /// `utm_campaign`: the campaign's name.
    public var campaign: String?
    /// `utm_term`: the paid search term.
    public var term: String?
    /// `utm_content`: which variant of the ad or link.
    public var content: String?

    /// UTM parameters; every field is optional.
    public init(
        source: String? = nil, medium: String? = nil, campaign: String? = nil,
        term: String? = nil, content: String? = nil
    ) {
        self.source = source
        self.medium = medium
        self.campaign = campaign
        self.term = term
        self.content = content
    }

    /// True when no parameter is set.
    public var isEmpty: Bool {
        source == nil && medium == nil && campaign == nil && term == nil && content == nil
    }

    /// The query names, in the order LinkRelay reads and writes them.
    static let queryNames = ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"]

    /// Sets the field for a `utm_*` query name unless it is already set (first occurrence wins).
    mutating func setIfAbsent(queryName: String, value: String) {
        switch queryName {
        case "utm_source": if source == nil { source = value }
        case "utm_medium": if medium == nil { medium = value }
        case "utm_campaign": if campaign == nil { campaign = value }
        case "utm_term": if term == nil { term = value }
        case "utm_content": if content == nil { content = value }
        default: break
        }
    }
}
