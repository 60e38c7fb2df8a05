import Foundation

extension KeyedDecodingContainer {
    /// The value for `key`, or `nil` when it is absent, `null`, or of an unexpected shape.
    /// Adapters decode optional provider fields this way, so that one odd field never fails a
    /// whole response.
    package func lenient<Value: Decodable>(_ type: Value.Type, forKey key: Key) -> Value? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }
}

/// The error body most provider APIs send: `{"error": "…"}` and/or `{"message": "…"}`.
package struct ProviderErrorBody: Decodable {
    package var error: String?
    package var message: String?

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        error = container.lenient(String.self, forKey: .error)
        message = container.lenient(String.self, forKey: .message)
    }

    enum CodingKeys: String, CodingKey { case error, message }

    /// `error`, else `message`, from a response body; `nil` when it has neither.
    package static func text(in body: Data) -> String? {
        guard let decoded = try? JSONDecoder().decode(ProviderErrorBody.self, from: body) else { return nil }
        return decoded.error ?? decoded.message
    }
}

/// ISO 8601 timestamps as providers send them: with or without fractional seconds.
package enum ISO8601Timestamp {
    /// The date `string` denotes, or `nil` when it is not ISO 8601.
    package static func parse(_ string: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: string) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: string)
    }

    /// `2026-03-02T08:05:00Z` (UTC), with milliseconds when `fractional` is true.
    package static func string(from date: Date, fractional: Bool = false) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = fractional ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter.string(from: date)
    }
}

/// Percent-encoding for query strings that servers decode as HTML forms: only unreserved
/// characters (and `/`, which such servers read literally) stay as they are, so `+`, `&`, `=`,
/// `#` and spaces always arrive as written.
package enum FormEncoding {
    private static let allowed = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")

    package static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// `name=value&…` in the given order.
    package static func query(_ items: [(String, String)]) -> String {
        items.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }
}
