import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

/// LinkForty's paths, queries and headers, and nothing else.
enum LinkFortyEndpoints {
    static let installPath = "/api/sdk/v1/install"
    static let eventPath = "/api/sdk/v1/event"
    /// LinkRelay Server's: an Apple Ads token added to an install after its report. LinkForty
    /// Core has no such route (404).
    static let lateAppleAdsTokenPath = "/api/sdk/v1/install/apple-ads-token"
    static let resolvePath = "/api/sdk/v1/resolve"
    /// Core's dashboard endpoint, used for link creation from a template.
    static let linksPath = "/api/links"
    /// LinkForty Cloud's SDK endpoint for link creation without a template.
    static let sdkLinksPath = "/api/sdk/v1/links"

    /// `base` (its path kept, its query dropped) followed by `path`, itself already
    /// percent-encoded, and `query`.
    static func url(_ base: URL, path: String, query: String? = nil) -> URL {
        // Joined as text: the base's own query and fragment dropped, one slash between.
        var text = base.absoluteString
        if let cut = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = String(text[..<cut]) }
        if text.hasSuffix("/") { text.removeLast() }
        text += path
        if let query, !query.isEmpty { text += "?" + query }
        return URL(string: text) ?? base
    }

    /// `/api/sdk/v1/resolve/{code}` or `/api/sdk/v1/resolve/{templateSlug}/{code}`, each segment
    /// percent-encoded.
    static func resolve(_ base: URL, templateSlug: String?, code: String, fingerprint: [(String, String)]) -> URL {
        let segments = [templateSlug, code].compactMap { $0 }.map(encodeSegment)
        return url(base, path: resolvePath + "/" + segments.joined(separator: "/"), query: FormEncoding.query(fingerprint))
    }

    /// The segments of a link's path that name the link: the base URL's own path prefix, when
    /// the link is on the base host, is not part of them.
    static func linkSegments(of link: ParsedLink, base: URL) -> [String] {
        var segments = link.pathSegments
        let prefix = base.path.split(separator: "/").map(String.init)
        if link.host == base.host?.lowercased(), !prefix.isEmpty, segments.starts(with: prefix) {
            segments.removeFirst(prefix.count)
        }
        return segments
    }

    /// The name LinkRelay gives itself to LinkForty: `X-LinkForty-SDK: linkrelay/<version>` on
    /// every request, `sdkName`/`sdkVersion` in install and event bodies, as LinkForty's
    /// Android, Flutter and React Native SDKs name themselves (§12.6).
    static let sdkName = "linkrelay"

    static func headers(apiKey: String?, userAgent: String) -> HTTPHeaders {
        var headers: HTTPHeaders = [
            "Content-Type": "application/json", "User-Agent": userAgent, "X-LinkForty-SDK": "\(sdkName)/\(LinkRelayVersion.string)",
        ]
        if let apiKey { headers["Authorization"] = "Bearer \(apiKey)" }
        return headers
    }

    private static let segmentAllowed = PercentEncodingSet.unreserved

    private static func encodeSegment(_ segment: String) -> String {
        segmentAllowed.encode(segment)
    }
}
