import Foundation
import LinkRelay
import LinkRelayWire

/// Paylisher's endpoints and headers, and nothing else.
enum PaylisherEndpoints {
    /// Short links: `GET https://{short host}/resolve/{key}`.
    static func shortLinkResolve(host: String, scheme: String, key: String) -> URL? {
        URL(string: "\(scheme)://\(host)/resolve/\(encodeSegment(key))")
    }

    /// Other keyed links: `GET {base}/campaign/resolve/{key}`.
    static func campaignResolve(base: URL, key: String) -> URL {
        let text = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        return URL(string: text + "/campaign/resolve/" + encodeSegment(key)) ?? base
    }

    /// `GET {endpoint}?fingerprint=…[&idfa=…]`: one trailing `/` removed, any query replaced.
    static func deferred(endpoint: URL, fingerprint: String, idfa: String?) -> URL {
        var text = endpoint.absoluteString
        if let query = text.firstIndex(of: "?") { text = String(text[..<query]) }
        if text.hasSuffix("/") { text.removeLast() }
        var query = "fingerprint=\(fingerprint)"
        if let idfa { query += "&idfa=\(idfa)" }
        return URL(string: text + "?" + query) ?? endpoint
    }

    static func deferredHeaders(apiKey: String, idfa: String?) -> HTTPHeaders {
        var headers: HTTPHeaders = [
            "Authorization": "Bearer \(apiKey)", "X-SDK-Version": "paylisher-ios/1.8.9", "X-Device-Platform": "ios",
        ]
        if let idfa { headers["X-IDFA"] = idfa }
        return headers
    }

    /// `{host}/batch`, joined as Paylisher's SDK joins it (relative to the host: a last path
    /// segment without a trailing `/` is replaced).
    static func batch(host: URL) -> URL {
        URL(string: "batch", relativeTo: host)?.absoluteURL ?? host
    }

    static let batchHeaders: HTTPHeaders = [
        "Content-Type": "application/json; charset=utf-8", "User-Agent": "paylisher-ios/1.8.9",
        "Accept-Encoding": "gzip", "Content-Encoding": "gzip",
    ]

    private static let segmentAllowed = PercentEncodingSet.unreserved

    /// A key is one path segment: spaces, `/` and `?` are escaped (Paylisher's SDK breaks on them).
    static func encodeSegment(_ key: String) -> String {
        segmentAllowed.encode(key)
    }
}
