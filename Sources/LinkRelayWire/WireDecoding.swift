import Foundation
import LinkRelay

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
        guard let decoded = try? WireJSON.decode(ProviderErrorBody.self, from: body) else { return nil }
        return decoded.error ?? decoded.message
    }
}

/// ISO 8601 timestamps as providers send them: with or without fractional seconds.
package enum ISO8601Timestamp {
    // A hand-written RFC 3339 reader and writer: `ISO8601DateFormatter` builds an ICU formatter
    // each time (hundreds of allocations, tens of microseconds), and it is not `Sendable` to
    // share. Dates are proleptic Gregorian, as RFC 3339's are.

    /// The date `string` denotes, or `nil` when it is not an RFC 3339 date-time:
    /// `2026-03-02T08:05:00Z`, with optional fractional seconds and a `Z` or `±hh:mm` (or
    /// `±hhmm`) offset.
    package static func parse(_ string: String) -> Date? {
        var text = string
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// `2026-03-02T08:05:00Z` (UTC), with milliseconds when `fractional` is true.
    package static func string(from date: Date, fractional: Bool = false) -> String {
        // As Foundation's formatter does: to the nearest millisecond, then whole seconds cut.
        let totalMilliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard totalMilliseconds.isFinite, abs(totalMilliseconds) < 1e17 else { return "" }
        let milliseconds = totalMilliseconds.saturatingInt
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let millis = milliseconds - seconds * 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        text += "T" + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if fractional { text += "." + pad(millis, 3) }
        return text + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for index in start..<(start + count) {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int) -> UInt8? { index < bytes.count ? bytes[index] : nil }
        guard let year = number(0, 4), byte(4) == UInt8(ascii: "-"), let month = number(5, 2), byte(7) == UInt8(ascii: "-"),
            let day = number(8, 2), byte(10) == UInt8(ascii: "T") || byte(10) == UInt8(ascii: "t"),
            let hour = number(11, 2), byte(13) == UInt8(ascii: ":"), let minute = number(14, 2), byte(16) == UInt8(ascii: ":"),
            let second = number(17, 2),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var fraction = 0.0
        if byte(index) == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while let digit = byte(index), digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") {
                fraction += Double(digit - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        switch byte(index) {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = byte(index) == UInt8(ascii: "-") ? -1 : 1
            guard let hours = number(index + 1, 2), hours < 24 else { return nil }
            var minutesAt = index + 3
            if byte(minutesAt) == UInt8(ascii: ":") { minutesAt += 1 }
            guard let minutes = number(minutesAt, 2), minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
            index = minutesAt + 2
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = (month + 9) % 12
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01.
    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// The characters left as they are when percent-encoding: RFC 3986's unreserved ones
/// (`A–Z a–z 0–9 - . _ ~`) plus any ASCII characters named. Everything else is encoded as
/// `%XX` (upper-case hex) of its UTF-8 bytes, as `addingPercentEncoding(withAllowedCharacters:)`
/// does, without its per-call character-set and UTF-16 work.
package struct PercentEncodingSet: Sendable {
    private var low: UInt64 = 0
    private var high: UInt64 = 0

    /// The unreserved characters and the ASCII characters of `extra`.
    package init(unreservedPlus extra: String = "") {
        for byte in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8 { insert(byte) }
        for byte in extra.utf8 where byte < 128 { insert(byte) }
    }

    private mutating func insert(_ byte: UInt8) {
        if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
    }

    private func contains(_ byte: UInt8) -> Bool {
        if byte < 64 { return low & (1 << UInt64(byte)) != 0 }
        if byte < 128 { return high & (1 << UInt64(byte - 64)) != 0 }
        return false
    }

    /// `value` with every byte outside this set percent-encoded.
    package func encode(_ value: String) -> String {
        // Most values need no escape at all: return them as they are.
        if value.utf8.allSatisfy({ contains($0) }) { return value }
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            if contains(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// RFC 3986's unreserved characters only: for a path segment.
    package static let unreserved = PercentEncodingSet()
}

extension String {
    /// The string with `%XX` escapes decoded, or `nil` when an escape is malformed or the result
    /// is not UTF-8: what `removingPercentEncoding` answers, without Foundation's `NSString`
    /// round trip.
    package var percentDecoded: String? {
        guard utf8.contains(UInt8(ascii: "%")) else { return self }
        let bytes = Array(utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = bytes[index + 1].hexDigitValue, let low = bytes[index + 2].hexDigitValue else {
                    return nil
                }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        let decoded = String(decoding: output, as: UTF8.self)
        return decoded.utf8.elementsEqual(output) ? decoded : nil
    }

    /// The string with every `target` character replaced: `replacingOccurrences(of:with:)` for
    /// one character, without Foundation.
    package func replacing(_ target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}

/// Percent-encoding for query strings that servers decode as HTML forms: only unreserved
/// characters (and `/`, which such servers read literally) stay as they are, so `+`, `&`, `=`,
/// `#` and spaces always arrive as written.
package enum FormEncoding {
    private static let allowed = PercentEncodingSet(unreservedPlus: "/")

    package static func encode(_ value: String) -> String {
        allowed.encode(value)
    }

    /// `name=value&…` in the given order.
    package static func query(_ items: [(String, String)]) -> String {
        items.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }
}

extension URL {
    /// `text` as an absolute URL, or `nil`: a URL field in a provider's answer counts only when
    /// it has a scheme, and, for `http` and `https`, a host. On Linux and on iOS 17 and later
    /// `URL(string: "not a url")` is not `nil` but a relative URL without a scheme; the
    /// providers' SDKs treat such a field as absent (dynalinks.md §3.2), and so do the adapters.
    package static func absolute(_ text: String?) -> URL? {
        guard let text, !text.isEmpty, let url = URL(string: text), let scheme = url.scheme?.lowercased(), !scheme.isEmpty else {
            return nil
        }
        if scheme == "http" || scheme == "https" {
            guard let host = url.host, !host.isEmpty else { return nil }
        }
        return url
    }
}
