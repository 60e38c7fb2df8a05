import Foundation
import LinkRelay

extension DeepLinkBackend {
    /// Resolves `url` as the client does: parsed on the device first (``LinkParser``), then
    /// ``DeepLinkBackend/resolve(_:context:)`` with the parsed link. For a backend's tests,
    /// which have a URL in hand.
    ///
    /// - Throws: ``DeepLinkError`` `.invalidURL` for a URL that cannot be parsed, else what the
    ///   backend throws.
    public func resolve(_ url: URL, context: BackendContext) async throws -> DeepLink {
        try await resolve(try LinkParser.parse(url), context: context)
    }
}
