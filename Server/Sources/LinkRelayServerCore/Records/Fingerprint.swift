import Foundation

/// What a click's request tells about the device, as values: its user agent kept within a bound,
/// its platform, whether it is a bot's, and the fingerprint's fields within their bounds. The
/// request itself is read in the HTTP target (`Fingerprint.click(on:request:…)`).
package enum Fingerprint {
    /// The most of a user agent a click keeps: real ones are 100–300 bytes; a click is ~250 bytes
    /// on disk instead of whatever a client sends (61 KiB was seen).
    package static let maxUserAgentBytes = 512

    /// The longest start of `text` of at most `bytes` bytes of UTF-8, ending on a whole character.
    package static func prefix(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var result = ""
        var used = 0
        for character in text {
            used += character.utf8.count
            if used > bytes { break }
            result.append(character)
        }
        return result
    }

    /// A value kept only when it is short enough to be what it claims (a time zone, a language):
    /// at most 64 bytes. `fp_lang`, and the first of `Accept-Language` when it is absent or too
    /// long (70 KB of it was stored).
    package static func bounded(_ value: String) -> String? {
        value.isEmpty || value.utf8.count > 64 ? nil : value
    }

    package static func screenSize(_ value: String) -> Int? {
        Int(value).flatMap { (1...100_000).contains($0) ? $0 : nil }
    }

    package static func platform(_ userAgent: String?) -> DevicePlatform {
        platform(LowercasedText(userAgent))
    }

    package static func platform(_ agent: LowercasedText) -> DevicePlatform {
        if agent.containsAny(["iphone", "ipad", " ios", "cfnetwork"]) { return .ios }
        if agent.contains("android") { return .android }
        return .web
    }

    /// Crawlers and link-preview fetchers: their clicks are kept, never matched.
    package static func isBot(_ userAgent: String?) -> Bool {
        isBot(LowercasedText(userAgent))
    }

    package static func isBot(_ agent: LowercasedText) -> Bool {
        !agent.isEmpty
            && agent.containsAny([
                "bot", "crawler", "spider", "facebookexternalhit", "slurp", "preview", "whatsapp", "telegram", "discord", "curl/", "wget/",
            ])
    }
}
