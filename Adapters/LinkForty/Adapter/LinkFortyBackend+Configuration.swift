import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

extension LinkFortyBackend {
    /// How to reach a LinkForty server (LinkForty Cloud or a self-hosted LinkForty Core).
    ///
    /// ```swift
    /// let backend = LinkFortyBackend(try .init(baseURL: URL(string: "https://go.acme.app")!, apiKey: key))
    /// ```
    ///
    /// Creating a configuration validates it: the base URL must use HTTPS (plain HTTP only for
    /// `localhost`, `127.0.0.1` and `::1`), the attribution window must be 1…2160 hours, and an
    /// API key, when given, must not be empty. A mistake throws ``/LinkRelay/DeepLinkError`` with code
    /// `.invalidConfiguration` naming the field.
    public struct Configuration: Sendable, Hashable, CustomStringConvertible {
        /// The server, for example `https://go.acme.app`. A path prefix is kept (a server behind
        /// a reverse proxy at `https://acme.app/links` works), unlike in LinkForty's own SDK.
        public let baseURL: URL
        /// The API key, sent as `Authorization: Bearer …` when present. LinkForty Cloud needs it;
        /// Core ignores it. Link creation needs it.
        public let apiKey: String?
        /// Sent with the install report. Default 168 (7 days).
        public let attributionWindowHours: Int
        /// The link domains this backend claims. Default: the base URL's host.
        public let linkDomains: Set<String>
        /// The app's own URL schemes that LinkForty links open (a link's `appScheme`). Such links
        /// are the route already and are parsed on the device.
        public let appSchemes: Set<String>
        /// The app's name in the `User-Agent` LinkForty fingerprints; default: the device's
        /// ``/LinkRelay/DeviceInfo/appName`` (the bundle's display name, else its name), else `App`.
        public let appName: String?

        /// A validated configuration; see each property for its default.
        ///
        /// - Throws: ``/LinkRelay/DeepLinkError`` `.invalidConfiguration` naming the field: a base URL that is not
        ///   HTTPS (plain HTTP only on `localhost`, `127.0.0.1`, `::1`), an attribution window outside
        ///   1 to 2,160 hours (90 days), an API key that is empty or blank.
        public init(
            baseURL: URL,
            apiKey: String? = nil,
            attributionWindowHours: Int = 168,
            linkDomains: Set<String>? = nil,
            appSchemes: Set<String> = [],
            appName: String? = nil
        ) throws {
            try ConfigurationValidation.baseURL(baseURL, field: "baseURL", backend: .linkForty)
            try ConfigurationValidation.attributionWindow(
                attributionWindowHours, field: "attributionWindowHours", backend: .linkForty)
            try ConfigurationValidation.apiKey(apiKey, field: "apiKey", backend: .linkForty)
            self.baseURL = baseURL
            self.apiKey = apiKey
            self.attributionWindowHours = attributionWindowHours
            self.linkDomains = Set((linkDomains ?? [baseURL.host ?? ""]).map { $0.lowercased() }.filter { !$0.isEmpty })
            self.appSchemes = Set(appSchemes.map { $0.lowercased() })
            self.appName = appName
        }

        /// Never shows the API key.
        public var description: String {
            "LinkFortyBackend.Configuration(baseURL: \(baseURL.absoluteString), apiKey: \(apiKey == nil ? "none" : "[redacted]"), attributionWindowHours: \(attributionWindowHours), linkDomains: \(linkDomains.sorted()), appSchemes: \(appSchemes.sorted()))"
        }
    }
}
