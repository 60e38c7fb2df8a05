import Foundation

/// Parses a link on the device, with no network: the one parser every backend uses.
///
/// ```swift
/// let parsed = try LinkParser.parse(URL(string: "myapp://products/42?utm_source=mail&k=SPRING")!)
/// parsed.pathSegments      // ["products", "42"]
/// parsed.utm.source        // "mail"
/// parsed.campaign?.key     // "SPRING"
/// ```
///
/// Rules:
/// - **Path.** For `http`/`https` the path's segments; for any other scheme the host is the
///   first segment (`myapp://products/42` and `https://go.acme.app/products/42` both give
///   `["products", "42"]`). Segments are percent-decoded and empty ones dropped.
/// - **Query.** Items are split on `&` and percent-decoded; a `+` stays a plus, as
///   `URLComponents.queryItems` reads it and as every provider's own SDK does
///   (`running+shoes` stays `running+shoes`, `test%2Bcampaign` gives `test+campaign`). For links
///   built the way an HTML form sends its fields, pass ``QueryDecoding/form`` (`+` is a space).
///   A repeated name keeps its last value in ``ParsedLink/parameters``; every occurrence
///   stays in ``ParsedLink/queryItems``. An item without `=` has the value `""`; an item with
///   an empty name is ignored.
/// - **UTM.** `utm_source`, `utm_medium`, `utm_campaign`, `utm_term`, `utm_content`; the first
///   occurrence wins.
/// - **Campaign.** id from `campaign_id`, else `campaign`; key from `keyName`, else `key`, else
///   `k`; journey from `jid`; source from `source`, else `utm_source`. For each, the first
///   non-empty value.
/// - **Authentication.** `auth=required` (any case) sets ``ParsedLink/requiresAuthentication``.
/// - **Malformed escapes** are kept as written, never dropped. A `%zz` or a lone `%` makes
///   Foundation's `URL` take that whole component (the path, or the query) as written, so no
///   escape in it is decoded; an escape that decodes to bytes that are not UTF-8 keeps its
///   segment or value as written.
///
/// A URL without a scheme, or an `http`/`https` URL without a host, throws
/// ``DeepLinkError`` with code ``DeepLinkError/Code-swift.struct/invalidURL``.
///
/// **Compared with Foundation.** Over the 869 inputs of the Web Platform Tests' URL cases,
/// LinkParser reads every URL Foundation accepts as `URLComponents` does, except in these
/// ways (each tested in `WPTURLTests`):
/// - A web host stays as `URL` stores it, in punycode and lower case (`http://你好你好` gives
///   the host `xn--6qqa088eba`); `URLComponents.host` decodes it to Unicode. A custom-scheme
///   host, which is the first path segment, is decoded to Unicode (`myapp://xn--6qqa088eba/a`
///   gives `["你好你好", "a"]`).
/// - An escape in a web host is decoded and lower-cased with the host (`EX%C3%A9.com` gives
///   `exé.com`); one that is not UTF-8 is kept as written and lower-cased (`EX%A0.com` gives
///   `ex%a0.com`), where Foundation gives no host. A custom-scheme host that is not UTF-8 or not
///   valid punycode (`xn--`) is kept as written.
/// - An IP literal is given without its brackets (`[2001::1]` gives `2001::1`), as `URL.host`
///   gives it; `URLComponents.host` keeps them.
/// - A byte-order mark (U+FEFF) inside the URL is kept in its segment or value, as Foundation
///   keeps it (a WHATWG parser would treat it differently).
/// - An item with an empty name is left out, and a malformed escape is kept as written (above).
public enum LinkParser {
    /// How the query's names and values are decoded.
    public enum QueryDecoding: Sendable, Hashable {
        /// Percent-escapes only; `+` stays a plus. What `URLComponents.queryItems` gives and what
        /// the providers' SDKs read. The default.
        case percentEncoding
        /// As an HTML form is sent (`application/x-www-form-urlencoded`): `+` is a space, then
        /// percent-escapes. For links your own web pages build from forms.
        case form
    }

    /// Parses `url`; `queryDecoding` says whether a `+` in the query is a plus (the default) or
    /// a space.
    public static func parse(_ url: URL, queryDecoding: QueryDecoding = .percentEncoding) throws -> ParsedLink {
        var string = url.absoluteString
        return try string.withUTF8 { bytes in
            try parse(bytes, url: url, plusAsSpace: queryDecoding == .form)
        }
    }

    /// Parses a URL string; throws ``DeepLinkError/Code-swift.struct/invalidURL`` for a string
    /// that is not a URL.
    public static func parse(_ string: String, queryDecoding: QueryDecoding = .percentEncoding) throws -> ParsedLink {
        guard !string.isEmpty, let url = URL(string: string) else {
            throw DeepLinkError(.invalidURL, "This is not a URL.")
        }
        return try parse(url, queryDecoding: queryDecoding)
    }

    private static func invalid(_ url: URL, _ reason: String) -> DeepLinkError {
        DeepLinkError(.invalidURL, "The link cannot be parsed: \(reason).", url: url)
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, url: URL, plusAsSpace: Bool) throws -> ParsedLink {
        // Scheme: a letter, then letters, digits, "+", "-", "." up to ":".
        var index = 0
        while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
            let byte = bytes[index]
            let valid =
                isLetter(byte)
                || (index > 0
                    && (isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
                        || byte == UInt8(ascii: ".")))
            guard valid else { throw invalid(url, "it has no scheme") }
            index += 1
        }
        guard index > 0, index < bytes.count else { throw invalid(url, "it has no scheme") }
        let scheme = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<index]), as: UTF8.self).lowercased()
        index += 1  // ":"

        let isWeb = scheme == "http" || scheme == "https"
        var host: String?
        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "/"), bytes[index + 1] == UInt8(ascii: "/") {
            index += 2
            let start = index
            while index < bytes.count, !isDelimiter(bytes[index], includingSlash: true) { index += 1 }
            host = hostOf(authority: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        }
        if isWeb {
            host = host?.lowercased()
            guard let host, !host.isEmpty else { throw invalid(url, "a web link needs a host") }
        }

        var segments: [String] = []
        if !isWeb, let written = host, !written.isEmpty {
            let decoded = Punycode.decodeHost(written)
            host = decoded
            segments.append(decoded)
        }
        var segmentStart = index
        while index <= bytes.count {
            let atEnd = index == bytes.count || bytes[index] == UInt8(ascii: "?") || bytes[index] == UInt8(ascii: "#")
            if atEnd || bytes[index] == UInt8(ascii: "/") {
                if index > segmentStart {
                    segments.append(decode(UnsafeBufferPointer(rebasing: bytes[segmentStart..<index]), plusAsSpace: false))
                }
                segmentStart = index + 1
            }
            if atEnd { break }
            index += 1
        }

        var items: [ParsedLink.QueryItem] = []
        if index < bytes.count, bytes[index] == UInt8(ascii: "?") {
            index += 1
            // One allocation for the items: count the separators first.
            var separators = 0
            for byte in UnsafeBufferPointer(rebasing: bytes[index...]) {
                if byte == UInt8(ascii: "#") { break }
                if byte == UInt8(ascii: "&") { separators += 1 }
            }
            items.reserveCapacity(separators + 1)
            var itemStart = index
            while index <= bytes.count {
                let atEnd = index == bytes.count || bytes[index] == UInt8(ascii: "#")
                if atEnd || bytes[index] == UInt8(ascii: "&") {
                    if let item = queryItem(UnsafeBufferPointer(rebasing: bytes[itemStart..<index]), plusAsSpace: plusAsSpace) {
                        items.append(item)
                    }
                    itemStart = index + 1
                }
                if atEnd { break }
                index += 1
            }
        }

        var fragment: String?
        if index < bytes.count, bytes[index] == UInt8(ascii: "#") {
            fragment = decode(UnsafeBufferPointer(rebasing: bytes[(index + 1)...]), plusAsSpace: false)
        }

        return assemble(
            url: url, scheme: scheme, host: host, isWeb: isWeb, segments: segments, items: items,
            fragment: fragment)
    }

    private static func assemble(
        url: URL, scheme: String, host: String?, isWeb: Bool, segments: [String],
        items: [ParsedLink.QueryItem], fragment: String?
    ) -> ParsedLink {
        var parameters: [String: String] = [:]
        parameters.reserveCapacity(items.count)
        var utm = UTMParameters()
        // The campaign's fields in one pass: for each, the first non-empty value of the
        // preferred name, else of its alias.
        var campaignID: (preferred: String?, alias: String?)
        var campaignKey: (preferred: String?, alias: String?, short: String?)
        var journeyID: String?
        var source: (preferred: String?, alias: String?)
        for item in items {
            parameters[item.name] = item.value
            guard !item.value.isEmpty else { continue }
            switch item.name {
            case "campaign_id": campaignID.preferred = campaignID.preferred ?? item.value
            case "campaign": campaignID.alias = campaignID.alias ?? item.value
            case "keyName": campaignKey.preferred = campaignKey.preferred ?? item.value
            case "key": campaignKey.alias = campaignKey.alias ?? item.value
            case "k": campaignKey.short = campaignKey.short ?? item.value
            case "jid": journeyID = journeyID ?? item.value
            case "source": source.preferred = source.preferred ?? item.value
            case "utm_source": source.alias = source.alias ?? item.value
            default: break
            }
        }
        for item in items where item.name.hasPrefix("utm_") { utm.setIfAbsent(queryName: item.name, value: item.value) }
        var parsed = ParsedLink(
            url: url, scheme: scheme, host: host, origin: isWeb ? .universalLink : .customScheme,
            pathSegments: segments, queryItems: items, parameters: parameters, utm: utm, campaign: nil,
            requiresAuthentication: parameters["auth"]?.lowercased() == "required", fragment: fragment)
        if !items.isEmpty {
            let campaign = Campaign(
                id: campaignID.preferred ?? campaignID.alias,
                key: campaignKey.preferred ?? campaignKey.alias ?? campaignKey.short,
                journeyID: journeyID,
                source: source.preferred ?? source.alias)
            parsed.campaign = campaign.isEmpty ? nil : campaign
        }
        return parsed
    }

    // MARK: - Pieces

    /// The host of an authority `user:pass@host:port`, percent-decoded.
    private static func hostOf(authority: UnsafeBufferPointer<UInt8>) -> String {
        var start = 0
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) { start = at + 1 }
        var end = authority.count
        if start < end, authority[start] == UInt8(ascii: "[") {
            // IPv6: without the brackets, as `URL.host` gives it.
            if let close = authority[start...].firstIndex(of: UInt8(ascii: "]")) { end = close }
            start += 1
        } else if let colon = authority[start...].lastIndex(of: UInt8(ascii: ":")) {
            end = colon
        }
        return decode(UnsafeBufferPointer(rebasing: authority[start..<end]), plusAsSpace: false)
    }

    private static func queryItem(_ bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> ParsedLink.QueryItem? {
        guard !bytes.isEmpty else { return nil }
        let equals = bytes.firstIndex(of: UInt8(ascii: "="))
        let nameBytes = UnsafeBufferPointer(rebasing: bytes[0..<(equals ?? bytes.count)])
        let name = decode(nameBytes, plusAsSpace: plusAsSpace)
        guard !name.isEmpty else { return nil }
        let value = equals.map { decode(UnsafeBufferPointer(rebasing: bytes[($0 + 1)...]), plusAsSpace: plusAsSpace) } ?? ""
        return ParsedLink.QueryItem(name: name, value: value)
    }

    /// Percent-decodes (and for queries turns `+` into a space). Escapes that are not hex are
    /// kept as written; a result that is not UTF-8 falls back to the text as written.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> String {
        let needsWork = bytes.contains { $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+")) }
        guard needsWork else { return String(decoding: bytes, as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count, let high = bytes[index + 1].hexDigitValue,
                let low = bytes[index + 2].hexDigitValue
            {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        if let decoded = String(validatingUTF8Bytes: output) { return decoded }
        // Not UTF-8 once decoded: keep the escapes as written, decode only the plus signs.
        let raw = String(decoding: bytes, as: UTF8.self)
        return plusAsSpace ? raw.replacingOccurrences(of: "+", with: " ") : raw
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isDelimiter(_ byte: UInt8, includingSlash: Bool) -> Bool {
        byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") || (includingSlash && byte == UInt8(ascii: "/"))
    }
}

extension String {
    /// The string these bytes spell in UTF-8, or `nil` when they are not valid UTF-8.
    fileprivate init?(validatingUTF8Bytes bytes: [UInt8]) {
        // Decoding repairs invalid sequences with U+FFFD, so the bytes come back unchanged
        // exactly when they were valid: one fast decode and one comparison, no per-scalar work.
        let decoded = String(decoding: bytes, as: UTF8.self)
        guard decoded.utf8.elementsEqual(bytes) else { return nil }
        self = decoded
    }
}
