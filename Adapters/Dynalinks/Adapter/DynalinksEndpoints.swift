import Foundation
@_spi(Backend) import LinkRelay

/// Dynalinks' endpoints and headers, and nothing else.
enum DynalinksEndpoints {
    /// `{base}/fingerprints/match`: the base path kept, never `//`.
    static func match(_ base: URL) -> URL { join(base, "fingerprints/match") }

    /// `{base}/links/attribute`.
    static func attribute(_ base: URL) -> URL { join(base, "links/attribute") }

    /// Keeps Dynalinks' SDK detection working (`DynalinksSDK-…`) and says who is calling.
    static let userAgent = "DynalinksSDK-iOS/1.0.4 LinkRelay/\(LinkRelayVersion.string)"

    static func headers(apiKey: String) -> HTTPHeaders {
        ["Authorization": "Bearer \(apiKey)", "Content-Type": "application/json", "User-Agent": userAgent]
    }

    private static func join(_ base: URL, _ path: String) -> URL {
        let text = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        return URL(string: text + "/" + path) ?? base
    }
}
