/// The marketing campaign a link belongs to, as far as the link or the provider says.
///
/// Locally, ``LinkParser`` reads `campaign_id` (alias `campaign`), the campaign key `keyName`
/// (aliases `key`, `k`), the journey id `jid`, and the source `source` (alias `utm_source`).
/// Providers that resolve campaigns on their server fill in the rest, such as ``name``.
public struct Campaign: Sendable, Hashable, Codable {
    /// The campaign's identifier.
    public var id: String?
    /// The campaign key (Paylisher's `keyName`): the handle a provider resolves the campaign by.
    public var key: String?
    /// The campaign's human-readable name.
    public var name: String?
    /// The customer-journey id the link belongs to.
    public var journeyID: String?
    /// Where the traffic came from (`instagram`, `newsletter`, …), as the link or provider says.
    public var source: String?

    /// A campaign; every field is optional.
    public init(
        id: String? = nil, key: String? = nil, name: String? = nil, journeyID: String? = nil,
        source: String? = nil
    ) {
        self.id = id
        self.key = key
        self.name = name
        self.journeyID = journeyID
        self.source = source
    }

    /// True when no field is set.
    public var isEmpty: Bool {
        id == nil && key == nil && name == nil && journeyID == nil && source == nil
    }
}
