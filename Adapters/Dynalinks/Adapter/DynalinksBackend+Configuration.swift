import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

extension DynalinksBackend {
    /// How to reach Dynalinks.
    ///
    /// ```swift
    /// let backend = DynalinksBackend(try .init(apiKey: key, linkDomains: ["acme.dynalinks.app"]))
    /// ```
    ///
    /// Creating a configuration validates it: a non-empty client API key, an HTTPS base URL (plain
    /// HTTP only on `localhost`, `127.0.0.1`, `::1`), at least one link domain. A mistake throws
    /// ``/LinkRelay/DeepLinkError`` with code `.invalidConfiguration` naming the field.
    public struct Configuration: Sendable, Hashable, CustomStringConvertible {
        /// The project's client API key, sent as `Authorization: Bearer …`; never logged.
        public let apiKey: String
        /// Dynalinks' API. Default `https://dynalinks.app/api/v1`; a path is kept, a trailing `/`
        /// does not give `//`.
        public let baseURL: URL
        /// The link domains the backend claims: the project's Dynalinks host
        /// (`acme.dynalinks.app`) and custom domains; `*.example.com` claims subdomains.
        public let linkDomains: Set<String>
        /// The app's own URL schemes, allowed as destinations.
        public let appSchemes: Set<String>
        /// Whether the deferred match runs on an iOS simulator. Default `false`: there the match is
        /// skipped, and the install outcome says why.
        public let allowSimulator: Bool

        /// `https://dynalinks.app/api/v1`.
        public static let defaultBaseURL = URL(string: "https://dynalinks.app/api/v1")!

        /// A validated configuration; see each property for its default.
        ///
        /// - Throws: ``/LinkRelay/DeepLinkError`` `.invalidConfiguration` naming the field: an empty API key, a
        ///   base URL that is not HTTPS (plain HTTP only on `localhost`, `127.0.0.1`, `::1`), no link
        ///   domain.
        public init(
            apiKey: String,
            baseURL: URL = Configuration.defaultBaseURL,
            linkDomains: Set<String>,
            appSchemes: Set<String> = [],
            allowSimulator: Bool = false
        ) throws {
            try ConfigurationValidation.apiKey(apiKey, field: "apiKey", backend: .dynalinks)
            try ConfigurationValidation.baseURL(baseURL, field: "baseURL", backend: .dynalinks)
            guard !linkDomains.isEmpty else {
                throw DeepLinkError(
                    .invalidConfiguration, "linkDomains must name the project's Dynalinks host, such as acme.dynalinks.app.",
                    backend: .dynalinks)
            }
            self.apiKey = apiKey
            self.baseURL = baseURL
            self.linkDomains = Set(linkDomains.map { $0.lowercased() })
            self.appSchemes = Set(appSchemes.map { $0.lowercased() })
            self.allowSimulator = allowSimulator
        }

        /// Never shows the key.
        public var description: String {
            "DynalinksBackend.Configuration(apiKey: [redacted], baseURL: \(baseURL.absoluteString), linkDomains: \(linkDomains.sorted()), appSchemes: \(appSchemes.sorted()), allowSimulator: \(allowSimulator))"
        }
    }
}
