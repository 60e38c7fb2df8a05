/// The standard `utm_*` campaign parameters of a link.
///
/// Taken from the link's query by ``LinkParser`` (the first occurrence of each wins) or from the
/// provider's payload when the provider reports them.
public struct UTMParameters: Sendable, Hashable, Codable {
    public var source: String?
    public var medium: String?
    public var campaign: String?
    public var term: String?
    public var content: String?

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
