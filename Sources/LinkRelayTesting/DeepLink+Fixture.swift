import Foundation
import LinkRelay

extension DeepLink {
    /// A link for tests, built from a path: `DeepLink.fixture(path: "/products/42")` is a
    /// server-resolved universal link to `https://links.example.com/products/42`.
    ///
    /// - Parameters:
    ///   - path: the path, with or without a leading `/`.
    ///   - host: the host of the universal link (ignored for custom-scheme links).
    ///   - origin: for `.customScheme`, the URL is `myapp://<path>`.
    ///   - parameters: query parameters, added to the URL too (sorted by name).
    public static func fixture(
        path: String = "/products/42",
        host: String = "links.example.com",
        origin: Origin = .universalLink,
        provider: BackendID = "in-memory",
        resolution: Resolution = .server,
        destination: URL? = nil,
        parameters: [String: String] = [:],
        campaign: Campaign? = nil,
        requiresAuthentication: Bool = false,
        metadata: [String: JSONValue] = [:]
    ) -> DeepLink {
        let trimmed = path.split(separator: "/").map(String.init)
        var components = URLComponents()
        if origin == .customScheme {
            components.scheme = "myapp"
            components.host = trimmed.first
            components.path = trimmed.dropFirst().isEmpty ? "" : "/" + trimmed.dropFirst().joined(separator: "/")
        } else {
            components.scheme = "https"
            components.host = host
            components.path = "/" + trimmed.joined(separator: "/")
        }
        if !parameters.isEmpty {
            components.queryItems = parameters.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        }
        let url = components.url ?? URL(fileURLWithPath: "/")
        return DeepLink(
            url: url, origin: origin, provider: provider, resolution: resolution, destination: destination,
            pathSegments: trimmed, parameters: parameters, campaign: campaign,
            requiresAuthentication: requiresAuthentication, metadata: metadata)
    }
}
