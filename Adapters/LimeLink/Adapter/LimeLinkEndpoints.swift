import Foundation
import LinkRelay
import LinkRelayWire

/// LimeLink's endpoints, queries and headers, and which one a link goes to.
enum LimeLinkEndpoints {
    /// The request headers the subdomain's HEAD answer carries that go on to the resolve call,
    /// in their canonical spelling (compared case-insensitively).
    static let forwardedHeaders = ["X-Request-ID", "X-User-Agent", "X-Referer", "X-Forwarded-For", "Authorization"]

    /// Where a link is resolved.
    enum Route: Equatable {
        /// `https://{project}.limelink.org/link/{suffix}`: HEAD on the project host, then
        /// `dynamic_link/{suffix}`.
        case projectLink(project: String, suffix: String)
        /// Another path on a project host: `dynamic_link/{project}`, no HEAD.
        case projectHost(project: String)
        /// `https://limelink.org/…/dynamic_link/{suffix}` (also on `www.`): no HEAD.
        case direct(suffix: String)
        /// The app's own domains and schemes: the legacy resolver.
        case legacy(subdomain: String, path: String)
        /// A link on LimeLink's domain that names no link.
        case unresolvable
    }

    /// The route for `url`. Hosts compare case-insensitively, and `www.` is LimeLink's own
    /// domain, not a project named `www` (LimeLink's SDK gets both wrong).
    static func route(for url: URL, providerDomain: String) -> Route? {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let path = url.path
        if host == providerDomain || host == "www." + providerDomain {
            for prefix in ["/universal-link/app/dynamic_link/", "/api/v1/app/dynamic_link/"] where path.hasPrefix(prefix) {
                let suffix = String(path.dropFirst(prefix.count))
                if !suffix.isEmpty { return .direct(suffix: suffix) }
            }
            return .unresolvable
        }
        if host.hasSuffix("." + providerDomain) {
            let project = String(host.dropLast(providerDomain.count + 1))
            if path.hasPrefix("/link/"), path.count > "/link/".count {
                return .projectLink(project: project, suffix: String(path.dropFirst("/link/".count)))
            }
            return .projectHost(project: project)
        }
        let subdomain = host.split(separator: ".").first.map(String.init) ?? host
        return .legacy(subdomain: subdomain, path: path)
    }

    /// `HEAD https://{project}.{providerDomain}/`.
    static func head(project: String, providerDomain: String, scheme: String) -> URL? {
        URL(string: "\(scheme)://\(project).\(providerDomain)/")
    }

    /// `{base}api/v1/app/dynamic_link/{suffix}?full_request_url=…[&event_type=setup]`.
    static func dynamicLink(base: URL, suffix: String, fullRequestURL: String?, setup: Bool) -> URL {
        var query: [(String, String)] = []
        if let fullRequestURL { query.append(("full_request_url", fullRequestURL)) }
        if setup { query.append(("event_type", "setup")) }
        return api(base, "api/v1/app/dynamic_link/" + encodePath(suffix), query: query)
    }

    /// `{base}api/v1/deferred-deep-link?width=…&height=…&user_agent=…`.
    static func deferred(base: URL, width: Int?, height: Int?, userAgent: String) -> URL {
        var query: [(String, String)] = []
        if let width { query.append(("width", String(width))) }
        if let height { query.append(("height", String(height))) }
        query.append(("user_agent", userAgent))
        return api(base, "api/v1/deferred-deep-link", query: query)
    }

    /// `{base}api/v1/stats/event`.
    static func stats(base: URL) -> URL {
        api(base, "api/v1/stats/event", query: [])
    }

    /// `{legacy}?subdomain=…&path=…&platform=ios`, every value encoded (LimeLink's SDK leaves `&`
    /// and `=` in the path raw, so part of it leaks out as other parameters).
    static func legacy(_ endpoint: URL, subdomain: String, path: String) -> URL {
        let query = encodeQuery([("subdomain", subdomain), ("path", path), ("platform", "ios")])
        return URL(string: endpoint.absoluteString + (endpoint.query == nil ? "?" : "&") + query) ?? endpoint
    }

    static let jsonHeaders: HTTPHeaders = ["Content-Type": "application/json"]

    private static func api(_ base: URL, _ path: String, query: [(String, String)]) -> URL {
        let text = base.absoluteString + path + (query.isEmpty ? "" : "?" + encodeQuery(query))
        return URL(string: text) ?? base
    }

    // MARK: Encoding

    /// Query values keep only unreserved characters and `/ ? : @` literal, so a server decoding
    /// by RFC 3986 or as a form recovers `full_request_url` byte for byte: `&`, `=`, `#`, `+`,
    /// spaces, `%` and non-ASCII are all escaped.
    private static let queryAllowed = PercentEncodingSet(unreservedPlus: "/?:@")
    private static let segmentAllowed = PercentEncodingSet.unreserved

    static func encodeQuery(_ items: [(String, String)]) -> String {
        items.map { name, value in
            "\(name)=\(queryAllowed.encode(value))"
        }.joined(separator: "&")
    }

    /// Each `/`-separated segment percent-encoded (spaces, unicode and all), the slashes kept.
    static func encodePath(_ suffix: String) -> String {
        suffix.split(separator: "/", omittingEmptySubsequences: false)
            .map { segmentAllowed.encode(String($0)) }
            .joined(separator: "/")
    }
}
