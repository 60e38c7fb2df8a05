import Foundation
import LinkRelay

/// The deferred link an attributed install carries (`deepLinkData`, stored with the install and
/// answered to the SDK).
package enum DeepLinkData {
    /// Core's `deepLinkData` (§3.4), plus `linkId`, `clickId`, `deepLinkPath` and `appScheme`.
    package static func deepLinkData(_ link: LinkRecord, match: DeferredMatch) -> [String: JSONValue] {
        deepLinkData(link, clickID: match.click.id, clickedAt: match.click.clickedAt, confidence: match.confidence, factors: match.factors)
    }

    package static func deepLinkData(
        _ link: LinkRecord, clickID: String, clickedAt: Date, confidence: Int, factors: [String]
    ) -> [String: JSONValue] {
        var data: [String: JSONValue] = [
            "shortCode": .string(link.shortCode), "originalUrl": .string(link.originalURL), "linkId": .string(link.id),
            "clickId": .string(clickID),
            "utmParameters": .object(link.utmParameters.mapValues(JSONValue.string)), "targetingRules": .object(link.targetingRules),
            "deepLinkParameters": .object(link.deepLinkParameters), "clickedAt": .string(DeepLinkData.timestamp(clickedAt)),
            "confidenceScore": .int(confidence), "matchedFactors": .array(factors.map(JSONValue.string)),
        ]
        for (name, value) in [
            ("iosUrl", link.iosAppStoreURL), ("androidUrl", link.androidAppStoreURL), ("webFallbackUrl", link.webFallbackURL),
            ("deepLinkPath", link.deepLinkPath), ("appScheme", link.appScheme),
        ] {
            data[name] = value.map(JSONValue.string) ?? .null
        }
        if !link.templateSlug.isEmpty { data["templateSlug"] = .string(link.templateSlug) }
        return data
    }

    /// A time as LinkForty's SDKs read it in `deepLinkData`: ISO 8601 in UTC, whole seconds
    /// (`2026-03-02T08:05:00Z`).
    package static func timestamp(_ date: Date) -> String {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)).formatted(wholeSeconds)
    }

    private static let wholeSeconds = Date.ISO8601FormatStyle()
}

extension Optional {
    /// `map` with an asynchronous, throwing transform.
    package func asyncFlatMap<U>(_ transform: (Wrapped) async throws -> U?) async rethrows -> U? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
