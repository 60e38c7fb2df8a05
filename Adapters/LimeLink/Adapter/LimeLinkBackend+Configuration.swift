import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

extension LimeLinkBackend {
    /// How to reach LimeLink.
    ///
    /// ```swift
    /// let backend = LimeLinkBackend(try .init(apiKey: "lk_live_…", linkDomains: ["go.brand.example"]))
    /// ```
    ///
    /// Creating a configuration validates it: a non-empty API key, HTTPS base URLs (plain HTTP
    /// only on `localhost`, `127.0.0.1`, `::1`). A mistake throws ``/LinkRelay/DeepLinkError`` with code
    /// `.invalidConfiguration` naming the field.
    public struct Configuration: Sendable, Hashable, CustomStringConvertible {
        /// The project's API key. LimeLink takes it only as `private_key` in the stats body;
        /// it is never sent as a header and never logged.
        public let apiKey: String
        /// LimeLink's API, with a trailing `/` (added when missing); a path prefix is kept.
        /// Default `https://limelink.org/`.
        public let apiBaseURL: URL
        /// The domain LimeLink links live on: `{project}.limelink.org` and `limelink.org`.
        /// Default `limelink.org`.
        public let providerDomain: String
        /// The legacy resolver for the app's own domains. Default `https://deep.limelink.org/link`.
        public let legacyResolveURL: URL
        /// The app's own link domains, resolved through the legacy resolver.
        public let linkDomains: Set<String>
        /// The app's own URL schemes (`myapp://open?original-url=…`), resolved through the legacy
        /// resolver.
        public let appSchemes: Set<String>

        /// `https://limelink.org/`.
        public static let defaultAPIBaseURL = URL(string: "https://limelink.org/")!
        /// `https://deep.limelink.org/link`.
        public static let defaultLegacyResolveURL = URL(string: "https://deep.limelink.org/link")!

        /// A validated configuration; see each property for its default.
        ///
        /// - Throws: ``/LinkRelay/DeepLinkError`` `.invalidConfiguration` naming the field: an empty API key, a
        ///   base URL that is not HTTPS (plain HTTP only on `localhost`, `127.0.0.1`, `::1`), a
        ///   `providerDomain` that is not a domain.
        public init(
            apiKey: String,
            apiBaseURL: URL = Configuration.defaultAPIBaseURL,
            providerDomain: String = "limelink.org",
            legacyResolveURL: URL = Configuration.defaultLegacyResolveURL,
            linkDomains: Set<String> = [],
            appSchemes: Set<String> = []
        ) throws {
            try ConfigurationValidation.apiKey(apiKey, field: "apiKey", backend: .limeLink)
            try ConfigurationValidation.baseURL(apiBaseURL, field: "apiBaseURL", backend: .limeLink)
            try ConfigurationValidation.baseURL(legacyResolveURL, field: "legacyResolveURL", backend: .limeLink)
            let domain = providerDomain.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
            guard !domain.isEmpty, !domain.contains("/") else {
                throw DeepLinkError(.invalidConfiguration, "providerDomain must be a domain such as limelink.org.", backend: .limeLink)
            }
            self.apiKey = apiKey
            self.apiBaseURL =
                apiBaseURL.absoluteString.hasSuffix("/")
                ? apiBaseURL : URL(string: apiBaseURL.absoluteString + "/") ?? apiBaseURL
            self.providerDomain = domain
            self.legacyResolveURL = legacyResolveURL
            self.linkDomains = Set(linkDomains.map { $0.lowercased() })
            self.appSchemes = Set(appSchemes.map { $0.lowercased() })
        }

        /// Never shows the API key.
        public var description: String {
            "LimeLinkBackend.Configuration(apiKey: [redacted], apiBaseURL: \(apiBaseURL.absoluteString), providerDomain: \(providerDomain), legacyResolveURL: \(legacyResolveURL.absoluteString), linkDomains: \(linkDomains.sorted()), appSchemes: \(appSchemes.sorted()))"
        }
    }
}
