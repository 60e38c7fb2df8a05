import Foundation
import Testing

@testable import LinkRelay

/// The Web Platform Tests' URL cases (copied from shared/corpora/wpt-urltestdata.json), read as
/// absolute URLs on their own: what `LinkParser` makes of each input, compared with what
/// Foundation's `URL` and `URLComponents` make of it.
struct WPTComparison {
    /// One input, and where LinkParser and Foundation part.
    struct Row: Sendable {
        var input: String
        /// `nil` when both agree.
        var difference: Difference?
    }

    /// A way the two read an input differently, each documented in `LinkParser`'s "Compared
    /// with Foundation".
    enum Difference: String, Sendable, CaseIterable {
        /// LinkParser refuses what Foundation reads: no scheme, or a web URL without a host.
        case refusedNoSchemeOrHost
        /// An IP literal (`[2001::1]`): LinkParser gives the address without brackets, as
        /// `URL.host` does; `URLComponents.host` keeps them.
        case ipLiteralWithoutBrackets
        /// A web host written in Unicode: LinkParser keeps the punycode `URL` stores
        /// (`xn--6qqa088eba`); `URLComponents.host` decodes it.
        case webHostStaysPunycode
        /// A custom-scheme host in punycode: LinkParser decodes it to Unicode (the first path
        /// segment); `URLComponents.host` keeps punycode.
        case customSchemeHostDecoded
        /// An escape in a web host: LinkParser lower-cases the host as written, escape included
        /// (`%c3%a9.com`); Foundation decodes it.
        case webHostEscapeLowercased
        /// A custom-scheme host that is not valid punycode or whose escapes are not UTF-8: kept
        /// as written; Foundation gives no host.
        case customSchemeHostKeptAsWritten
        /// A malformed escape: Foundation takes the whole component as written and LinkParser
        /// keeps it as written.
        case malformedEscapeKeptAsWritten
        /// Anything else: a disagreement nobody documented.
        case undocumented
    }

    static func cases() throws -> [String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/wpt-urltestdata.json")
        let data = try Data(contentsOf: url)
        guard case .array(let entries) = try JSONDecoder().decode(JSONValue.self, from: data) else { return [] }
        return entries.compactMap { entry in
            guard case .object(let fields) = entry else { return nil }  // the file's comments are strings
            return fields["input"]?.stringValue
        }
    }

    /// The segments and items Foundation reads, in LinkParser's terms.
    static func foundation(_ url: URL) -> (host: String?, segments: [String], items: [(String, String)], fragment: String?)? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        let scheme = components.scheme?.lowercased() ?? ""
        let isWeb = scheme == "http" || scheme == "https"
        var segments = components.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if !isWeb, let host = components.host, !host.isEmpty { segments.insert(host, at: 0) }
        let items = (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }
        return (components.host, segments, items, components.fragment)
    }

    static func compare(_ input: String) -> Row {
        guard !input.isEmpty, let url = URL(string: input) else {
            // Foundation refuses it; so must LinkParser.
            return Row(input: input, difference: (try? LinkParser.parse(input)) == nil ? nil : .undocumented)
        }
        let parsed: ParsedLink
        do {
            parsed = try LinkParser.parse(url)
        } catch {
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            let scheme = components?.scheme?.lowercased()
            let webWithoutHost = (scheme == "http" || scheme == "https") && (components?.host ?? "").allSatisfy { $0 == "[" || $0 == "]" }
            return Row(input: input, difference: scheme == nil || webWithoutHost ? .refusedNoSchemeOrHost : .undocumented)
        }
        guard let theirs = foundation(url) else { return Row(input: input, difference: .undocumented) }
        let isWeb = parsed.scheme == "http" || parsed.scheme == "https"
        let ours = (host: parsed.host, segments: parsed.pathSegments, items: parsed.queryItems.map { ($0.name, $0.value) })
        // LinkParser leaves out an item with an empty name (documented in its rules).
        let theirItems = theirs.items.filter { !$0.0.isEmpty }
        let itemsAgree = ours.items.elementsEqual(theirItems, by: ==)
        let pathAfterHost = isWeb ? ours.segments : Array(ours.segments.dropFirst())
        let theirPathAfterHost = isWeb || theirs.host == nil || theirs.host == "" ? theirs.segments : Array(theirs.segments.dropFirst())
        let restAgrees = pathAfterHost == theirPathAfterHost && itemsAgree
        if let host = theirs.host, host.hasPrefix("["), host.hasSuffix("]"), ours.host == String(host.dropFirst().dropLast()),
            ours.host == url.host, restAgrees
        {
            return Row(input: input, difference: .ipLiteralWithoutBrackets)
        }
        if isWeb, let host = theirs.host, ours.host != host.lowercased(), restAgrees {
            if let encoded = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedHost, encoded.contains("%"),
                ours.host == encoded.lowercased() || ours.host == url.host?.lowercased()
            {
                return Row(
                    input: input,
                    difference: encoded.contains("%") && ours.host?.contains("%") == true ? .webHostEscapeLowercased : .webHostStaysPunycode
                )
            }
            if ours.host == url.host?.lowercased() { return Row(input: input, difference: .webHostStaysPunycode) }
            return Row(input: input, difference: .undocumented)
        }
        if !isWeb, ours.segments != theirs.segments, restAgrees, let written = ours.host {
            if let host = theirs.host, host.lowercased() != written.lowercased(), Punycode.decodeHost(host) == written {
                return Row(input: input, difference: .customSchemeHostDecoded)
            }
            if theirs.host == nil, url.absoluteString.contains("//" + written) {
                return Row(input: input, difference: .customSchemeHostKeptAsWritten)
            }
        }
        if !(ours.segments == theirs.segments && itemsAgree) {
            return Row(
                input: input, difference: Self.hasMalformedEscape(url.absoluteString) ? .malformedEscapeKeptAsWritten : .undocumented)
        }
        return Row(input: input, difference: nil)
    }

    /// Whether `text` has a `%` not followed by two hex digits.
    static func hasMalformedEscape(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "%") {
            guard index + 2 < bytes.count, bytes[index + 1].hexDigitValue != nil, bytes[index + 2].hexDigitValue != nil else { return true }
        }
        return false
    }
}

@Suite("LinkParser against the Web Platform Tests' URLs", .timeLimit(.minutes(1)))
struct WPTURLTests {
    @Test("LinkParser reads every WPT input as Foundation does, except where its documentation says otherwise")
    func agreesWithFoundation() throws {
        let inputs = try WPTComparison.cases()
        #expect(inputs.count == 869)
        let rows = inputs.map(WPTComparison.compare)
        let counts = Dictionary(grouping: rows.compactMap(\.difference), by: { $0 }).mapValues(\.count)
        let agreeing = rows.filter { $0.difference == nil }.count
        print(
            "WPT URLs: \(inputs.count) inputs, \(agreeing) read alike; \(counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", "))"
        )
        let undocumented = rows.filter { $0.difference == .undocumented }.map(\.input)
        #expect(undocumented.isEmpty, "\(undocumented.prefix(20).map { $0.debugDescription })")
        #expect(agreeing >= 600)
        #expect((counts[.ipLiteralWithoutBrackets] ?? 0) > 0 && (counts[.webHostStaysPunycode] ?? 0) > 0)
    }

    @Test("the documented differences, one by one")
    func documentedDifferences() throws {
        // Web hosts stay punycode, as URL stores them; a custom-scheme host is decoded to Unicode.
        #expect(try LinkParser.parse("http://你好你好/a").host == "xn--6qqa088eba")
        #expect(URLComponents(string: "http://你好你好/a")?.host == "你好你好")
        #expect(try LinkParser.parse("myapp://xn--6qqa088eba/a").pathSegments == ["你好你好", "a"])
        // A web host is lower-cased: a decodable escape after decoding, one that is not UTF-8 as
        // written (Foundation gives no host for it).
        #expect(try LinkParser.parse("http://EX%C3%A9.com/").host == "exé.com")
        #expect(URL(string: "http://EX%C3%A9.com/")?.host == "EXé.com")
        let undecodable = try #require(URL(dataRepresentation: Data("http://EX%A0.com/x".utf8), relativeTo: nil))
        #expect(try LinkParser.parse(undecodable).host == "ex%a0.com")
        #expect(undecodable.host == nil)
        // A byte-order mark inside the URL is kept, where WHATWG's parser would not keep it raw.
        let bom = try LinkParser.parse("https://go.acme.app/\u{FEFF}sale?ref=\u{FEFF}x")
        #expect(bom.pathSegments == ["\u{FEFF}sale"])
        #expect(bom.parameters["ref"] == "\u{FEFF}x")
        // An IP literal without its brackets, as URL.host gives it.
        #expect(try LinkParser.parse("http://[2001::1]:80/x").host == "2001::1")
    }
}
