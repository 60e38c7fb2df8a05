import Foundation

/// Decides whether a resolved destination may be handed to the app.
///
/// `javascript:`, `vbscript:`, `file:` and `data:` are never allowed, whatever the
/// configuration: a link that points there is an attack, not a route.
struct DestinationPolicy: Sendable {
    static let neverAllowed: Set<String> = ["javascript", "vbscript", "file", "data"]

    let allowedSchemes: Set<String>

    init(allowedSchemes: Set<String>) {
        self.allowedSchemes = Set(allowedSchemes.map { $0.lowercased() }).subtracting(Self.neverAllowed)
    }

    /// `nil` when `link` may be delivered, otherwise the error that refuses it, naming the URL
    /// the app handed over.
    func refusal(for link: DeepLink, handedOver url: URL) -> DeepLinkError? {
        guard let destination = link.destination else { return nil }
        let scheme = destination.scheme?.lowercased() ?? ""
        guard !allowedSchemes.contains(scheme) else { return nil }
        let shown = scheme.isEmpty ? "a destination without a scheme" : "the destination scheme '\(scheme):'"
        return DeepLinkError(
            .rejected,
            "The link was refused: \(shown) is not allowed. Allowed: \(allowedSchemes.sorted().joined(separator: ", ")).",
            backend: link.provider,
            url: url)
    }
}
