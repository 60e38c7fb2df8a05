import Foundation

/// A backend with no provider: it claims the app's own schemes and domains and parses their
/// links on the device.
///
/// Use it for links you host yourself, in tests, or beside a provider in a ``RoutingBackend``.
///
/// ```swift
/// let backend = LocalBackend(.init(schemes: ["myapp"], hosts: ["go.acme.app"]))
/// ```
///
/// Links are delivered with ``DeepLink/Resolution/local(_:)`` and the reason
/// ``DeepLink/LocalReason/onDevice``. A query item named by
/// ``Configuration/destinationParameter`` (default `link`) whose value is an absolute URL
/// becomes the link's ``DeepLink/destination``: `https://go.acme.app/open?link=myapp://cart`.
/// It has no install matching, events or link creation: those throw
/// ``DeepLinkError/Code-swift.struct/unsupported``.
public struct LocalBackend: DeepLinkBackend {
    /// What a ``LocalBackend`` claims.
    public struct Configuration: Sendable, Hashable {
        /// Custom URL schemes (`myapp`), compared case-insensitively.
        public var schemes: Set<String>
        /// Web hosts (`go.acme.app`); `*.acme.app` also claims every subdomain. Compared
        /// case-insensitively; `http` and `https` both count.
        public var hosts: Set<String>
        /// The query item whose absolute-URL value is the destination; `nil` for none.
        public var destinationParameter: String?

        /// What to claim; schemes and hosts are lower-cased.
        public init(schemes: Set<String> = [], hosts: Set<String> = [], destinationParameter: String? = "link") {
            self.schemes = Set(schemes.map { $0.lowercased() })
            self.hosts = Set(hosts.map { $0.lowercased() })
            self.destinationParameter = destinationParameter
        }
    }

    /// The backend's name (default ``BackendID/local``).
    public let id: BackendID
    /// What the backend claims.
    public let configuration: Configuration

    /// A backend claiming what `configuration` lists.
    public init(_ configuration: Configuration, id: BackendID = .local) {
        self.configuration = configuration
        self.id = id
    }

    public var appSchemes: Set<String> { configuration.schemes }

    public func canHandle(_ url: URL) -> Bool {
        HostPattern.claims(url, hosts: configuration.hosts, schemes: configuration.schemes)
    }

    public func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
        self.link(parsed: link)
    }

    /// Every link is answered on the device.
    public func resolveOnDevice(_ link: ParsedLink) -> DeepLink? {
        self.link(parsed: link)
    }

    /// Every link that parses is answered on the device.
    public func resolveOnDevice(_ url: URL) -> DeepLink? {
        try? link(for: url)
    }

    private func link(for url: URL) throws -> DeepLink {
        link(parsed: try LinkParser.parse(url))
    }

    private func link(parsed: ParsedLink) -> DeepLink {
        var link = parsed.deepLink(provider: id, resolution: .local(.onDevice))
        if let name = configuration.destinationParameter, let value = link.parameters[name],
            let destination = URL(string: value), destination.scheme != nil
        {
            link.destination = destination
        }
        return link
    }

    /// None: every link is answered on the device, there is no install match, no events and
    /// no link creation.
    public var capabilities: BackendCapabilities { [] }

    public func matchInstall(context: BackendContext) async throws -> InstallMatch {
        throw DeepLinkError(
            .unsupported, "LocalBackend has no provider to match installs with.", backend: id)
    }
}

/// Host matching shared by backends: exact names, and `*.example.com` for every subdomain.
@_spi(Backend) public enum HostPattern {
    /// Whether `host` (lower-cased) matches one of `patterns` (lower-cased).
    public static func matches(_ host: String, anyOf patterns: Set<String>) -> Bool {
        if patterns.contains(host) { return true }
        for pattern in patterns where pattern.hasPrefix("*.") {
            let suffix = pattern.dropFirst(1)  // ".example.com"
            if host.hasSuffix(suffix), host.count > suffix.count { return true }
        }
        return false
    }

    /// Whether `url` is a web link (`http`/`https`) on one of `hosts`, or a link with one of
    /// `schemes`: how every backend decides which links are its own. Both sets lower-cased.
    public static func claims(_ url: URL, hosts: Set<String>, schemes: Set<String>) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        if scheme == "http" || scheme == "https" {
            guard let host = url.host?.lowercased() else { return false }
            return matches(host, anyOf: hosts)
        }
        return schemes.contains(scheme)
    }
}
