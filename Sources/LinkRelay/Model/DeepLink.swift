import Foundation

/// A link that opened (or, for a deferred link, installed) the app, in one shape whatever the
/// provider.
///
/// Route on ``pathSegments`` and ``parameters``; they are normalised so that a custom-scheme link
/// and a universal link to the same place look the same:
///
/// ```swift
/// // myapp://products/42?color=red   and   https://go.acme.app/products/42?color=red
/// let segments = link.pathSegments            // ["products", "42"] for both
/// if segments.count == 2, segments[0] == "products" {
///     router.showProduct(segments[1], color: link.parameters["color"])
/// }
/// ```
///
/// When the provider resolved the link on its server, ``destination`` says where it points and
/// ``resolution`` is ``Resolution/server``. When it could not (timeout, error, unknown link, or a
/// backend that works offline), the link is still delivered, parsed on the device, with
/// ``Resolution/local(_:)`` saying why.
public struct DeepLink: Sendable, Hashable, Codable, Identifiable {
    /// How the link reached the app.
    public enum Origin: String, Sendable, Hashable, Codable {
        /// An `https` link the system opened the app with.
        case universalLink
        /// A link with the app's own URL scheme (`myapp://…`).
        case customScheme
        /// A link the user clicked before installing the app, matched on first launch.
        case deferred
    }

    /// Why a link was parsed on the device instead of resolved by the provider.
    public enum LocalReason: Sendable, Hashable, Codable {
        /// Resolved on the device by design, with the provider online or not: a ``LocalBackend``
        /// link, an app-scheme link that is already the route (no provider resolves those), a
        /// Paylisher link without a campaign key. No provider call was needed.
        case onDevice
        /// The provider did not answer within ``DeepLinkClient/Configuration/resolutionTimeout``.
        case timedOut
        /// The provider does not know this link.
        case notFound
        /// The provider's resolution failed with this error.
        case failed(DeepLinkError)

        private enum CodingKeys: String, CodingKey {
            case onDevice, timedOut, notFound, failed
            /// `onDevice`'s earlier name: links stored by earlier builds keep reading.
            case offlineBackend
        }

        private enum PayloadKeys: String, CodingKey {
            case _0
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard container.allKeys.count == 1, let key = container.allKeys.first else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "A local reason has one case."))
            }
            switch key {
            case .onDevice, .offlineBackend: self = .onDevice
            case .timedOut: self = .timedOut
            case .notFound: self = .notFound
            case .failed:
                let payload = try container.nestedContainer(keyedBy: PayloadKeys.self, forKey: .failed)
                self = .failed(try payload.decode(DeepLinkError.self, forKey: ._0))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .onDevice: _ = container.nestedContainer(keyedBy: PayloadKeys.self, forKey: .onDevice)
            case .timedOut: _ = container.nestedContainer(keyedBy: PayloadKeys.self, forKey: .timedOut)
            case .notFound: _ = container.nestedContainer(keyedBy: PayloadKeys.self, forKey: .notFound)
            case .failed(let error):
                var payload = container.nestedContainer(keyedBy: PayloadKeys.self, forKey: .failed)
                try payload.encode(error, forKey: ._0)
            }
        }
    }

    /// Who produced the link's fields.
    public enum Resolution: Sendable, Hashable, Codable {
        /// The provider's server resolved the link.
        case server
        /// The link was parsed on the device, for the given reason.
        case local(LocalReason)
    }

    /// The fields, in one reference-counted box shared by copies until one of them changes
    /// (copy on write): a link is copied at each step between `handle` and `for await`, and a
    /// copy is one retain instead of one per field. The box's `Codable` and `Hashable` are the
    /// ones the fields had as stored properties, so the stored and encoded form is unchanged.
    struct Fields: Hashable, Codable, Sendable {
        var id: String
        var url: URL
        var origin: Origin
        var provider: BackendID
        var resolution: Resolution
        var destination: URL?
        var path: String
        var pathSegments: [String]
        var parameters: [String: String]
        var utm: UTMParameters
        var campaign: Campaign?
        var shortCode: String?
        var linkID: String?
        var clickedAt: Date?
        var requiresAuthentication: Bool
        var metadata: [String: JSONValue]
        /// `true` when an ad re-engagement opened the app with the link; absent otherwise, so
        /// links stored before it read as they were.
        var adReengagement: Bool?
    }

    /// Never changed once made (other copies of the link may share it): a change replaces it.
    final class Storage: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }

        /// Held for the moment a change is made, so that the fields being changed are not
        /// shared with the box they came from.
        static let vacant = Storage(
            Fields(
                id: "", url: URL(fileURLWithPath: "/"), origin: .universalLink, provider: "", resolution: .server, destination: nil,
                path: "/", pathSegments: [], parameters: [:], utm: UTMParameters(), campaign: nil, shortCode: nil, linkID: nil,
                clickedAt: nil, requiresAuthentication: false, metadata: [:], adReengagement: nil))
    }

    fileprivate(set) var storage: Storage

    /// The fields, for a change: this link lets go of its box while the change is made, so when
    /// it held the only reference the fields' collections are changed in place, then a new box
    /// holds the result; a box another copy shares is left as it was.
    private var fields: Fields {
        get { storage.fields }
        _modify {
            var fields = storage.fields
            storage = Storage.vacant
            defer { storage = Storage(fields) }
            yield &fields
        }
    }

    /// A stable identifier: the same link (URL, origin and provider) always has the same id.
    public var id: String {
        get { storage.fields.id }
        _modify { yield &fields.id }
    }
    /// The URL the system handed over, or for a deferred link the link that was clicked.
    public var url: URL {
        get { storage.fields.url }
        _modify { yield &fields.url }
    }
    /// How the link reached the app.
    public var origin: Origin {
        get { storage.fields.origin }
        _modify { yield &fields.origin }
    }
    /// The backend that produced the link.
    public var provider: BackendID {
        get { storage.fields.provider }
        _modify { yield &fields.provider }
    }
    /// Whether the provider's server resolved the link, or why it was parsed locally.
    public var resolution: Resolution {
        get { storage.fields.resolution }
        _modify { yield &fields.resolution }
    }
    /// Where the app should go, when the provider says (an app URL such as `myapp://products/42`
    /// or a web URL). `nil` when the link itself is the destination.
    public var destination: URL? {
        get { storage.fields.destination }
        _modify { yield &fields.destination }
    }
    /// The normalised path, `/` followed by ``pathSegments`` joined with `/`.
    public var path: String {
        get { storage.fields.path }
        _modify { yield &fields.path }
    }
    /// The path's segments, percent-decoded, empty segments removed. For a custom-scheme link
    /// the host is the first segment: `myapp://products/42` gives `["products", "42"]`.
    /// When the provider resolves a short link to an in-app path (LinkForty's `deepLinkPath`),
    /// that path's segments, so that routing sees the route rather than the short code.
    public var pathSegments: [String] {
        get { storage.fields.pathSegments }
        _modify { yield &fields.pathSegments }
    }
    /// The query parameters (and those the provider adds), percent-decoded; for a repeated key
    /// the last value wins.
    public var parameters: [String: String] {
        get { storage.fields.parameters }
        _modify { yield &fields.parameters }
    }
    /// The `utm_*` parameters.
    public var utm: UTMParameters {
        get { storage.fields.utm }
        _modify { yield &fields.utm }
    }
    /// The campaign the link belongs to, if the link or provider names one.
    public var campaign: Campaign? {
        get { storage.fields.campaign }
        _modify { yield &fields.campaign }
    }
    /// The provider's short code for the link, if it has one.
    public var shortCode: String? {
        get { storage.fields.shortCode }
        _modify { yield &fields.shortCode }
    }
    /// The provider's identifier for the link, if it has one.
    public var linkID: String? {
        get { storage.fields.linkID }
        _modify { yield &fields.linkID }
    }
    /// When the link was clicked, if the provider reports it.
    public var clickedAt: Date? {
        get { storage.fields.clickedAt }
        _modify { yield &fields.clickedAt }
    }
    /// Whether the link asks for a signed-in user (`auth=required`, or the provider says so).
    /// The client also gates paths listed in
    /// ``DeepLinkClient/Configuration/authenticationRequiredPaths``.
    public var requiresAuthentication: Bool {
        get { storage.fields.requiresAuthentication }
        _modify { yield &fields.requiresAuthentication }
    }
    /// The provider's payload for fields that have no place above, so no provider data is lost.
    public var metadata: [String: JSONValue] {
        get { storage.fields.metadata }
        _modify { yield &fields.metadata }
    }
    /// Whether an ad opened the installed app with this link: iOS 18's AdAttributionKit
    /// re-engagement, which adds `Postback.reengagementOpenURLParameter` to the universal link
    /// (``DeepLinkClient/Configuration/adReengagementParameter``). The client takes that
    /// parameter off the link before anything sees it, and says so here instead; a schema's
    /// ``ConversionSchema/reengagementRules`` count from this open.
    public var isAdReengagement: Bool {
        get { storage.fields.adReengagement == true }
        set { fields.adReengagement = newValue ? true : nil }
    }

    /// A link; `id` defaults to the stable id of `url`, `origin` and `provider`, and ``path`` follows `pathSegments`.
    public init(
        id: String? = nil,
        url: URL,
        origin: Origin,
        provider: BackendID,
        resolution: Resolution,
        destination: URL? = nil,
        pathSegments: [String],
        parameters: [String: String] = [:],
        utm: UTMParameters = UTMParameters(),
        campaign: Campaign? = nil,
        shortCode: String? = nil,
        linkID: String? = nil,
        clickedAt: Date? = nil,
        requiresAuthentication: Bool = false,
        metadata: [String: JSONValue] = [:]
    ) {
        storage = Storage(
            Fields(
                id: id ?? DeepLink.stableID(url: url, origin: origin, provider: provider), url: url, origin: origin,
                provider: provider, resolution: resolution, destination: destination, path: DeepLink.path(of: pathSegments),
                pathSegments: pathSegments, parameters: parameters, utm: utm, campaign: campaign, shortCode: shortCode,
                linkID: linkID, clickedAt: clickedAt, requiresAuthentication: requiresAuthentication, metadata: metadata,
                adReengagement: nil))
    }

    /// Replaces the path, keeping ``path`` and ``pathSegments`` consistent.
    public mutating func setPathSegments(_ segments: [String]) {
        Self.change(&fields) { fields in
            fields.pathSegments = segments
            fields.path = DeepLink.path(of: segments)
        }
    }

    /// One change of several fields, in one access.
    private static func change(_ fields: inout Fields, _ body: (inout Fields) -> Void) { body(&fields) }

    public init(from decoder: any Decoder) throws {
        storage = Storage(try Fields(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try storage.fields.encode(to: encoder)
    }

    public static func == (lhs: DeepLink, rhs: DeepLink) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    public func hash(into hasher: inout Hasher) {
        storage.fields.hash(into: &hasher)
    }

    static func path(of segments: [String]) -> String {
        // A plain loop, not `joined(separator:)`: that one is generic in the standard library and
        // costs about 0.25 M instructions of runtime metadata work the first time it runs, which
        // is the first link of a process.
        var path = "/"
        for (index, segment) in segments.enumerated() {
            if index > 0 { path.append("/") }
            path.append(segment)
        }
        return path
    }

    /// FNV-1a over the URL, origin and provider: stable across launches and platforms, unlike
    /// `hashValue`.
    static func stableID(url: URL, origin: Origin, provider: BackendID) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ text: String) {
            var text = text
            text.withUTF8 { bytes in
                for byte in bytes {
                    hash ^= UInt64(byte)
                    hash &*= 0x0000_0100_0000_01b3
                }
            }
        }
        // The same bytes as hashing "provider|origin|url", without building that string.
        add(provider.rawValue)
        add("|")
        add(origin.rawValue)
        add("|")
        add(url.absoluteString)
        // Sixteen lower-case hex digits, zero-padded, as `String(hash, radix: 16)` would write them.
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 16) { buffer in
            digits.withUTF8Buffer { table in
                for index in 0..<16 {
                    buffer[index] = table[Int((hash >> UInt64(60 - 4 * index)) & 0xF)]
                }
            }
            return 16
        }
    }
}
