import Foundation
import Testing

@testable import LinkRelay

/// One row of the parser table: what a URL must parse to. `nil` fields are not checked.
struct ParserCase: CustomTestStringConvertible, Sendable {
    var input: String
    var segments: [String]? = nil
    var origin: DeepLink.Origin? = nil
    var host: String? = nil
    var parameters: [String: String]? = nil
    var utm: UTMParameters? = nil
    var campaign: Campaign?? = nil
    var requiresAuthentication: Bool? = nil
    var fragment: String? = nil
    var invalid = false

    var testDescription: String {
        if input.isEmpty { return "(empty)" }
        let printable = input.replacingOccurrences(of: "\u{0}", with: "\\0")
        return printable.count > 100 ? "\(printable.prefix(60))… (\(input.utf8.count) bytes)" : printable
    }
}

@Suite("LinkParser")
struct LinkParserTests {
    static let cases: [ParserCase] = [
        // Paths: custom schemes and universal links normalise the same way.
        ParserCase(input: "myapp://products/42", segments: ["products", "42"], origin: .customScheme, host: "products"),
        ParserCase(input: "https://go.acme.app/products/42", segments: ["products", "42"], origin: .universalLink, host: "go.acme.app"),
        ParserCase(input: "HTTPS://Go.Acme.App/Products/42", segments: ["Products", "42"], origin: .universalLink, host: "go.acme.app"),
        ParserCase(input: "http://go.acme.app/a", segments: ["a"], origin: .universalLink),
        ParserCase(input: "https://go.acme.app/", segments: []),
        ParserCase(input: "https://go.acme.app", segments: [], parameters: [:], campaign: .some(nil)),
        ParserCase(input: "myapp://", segments: [], origin: .customScheme),
        ParserCase(input: "myapp:", segments: [], origin: .customScheme),
        ParserCase(input: "myapp:products/42", segments: ["products", "42"]),
        ParserCase(input: "myapp:///products/42", segments: ["products", "42"]),
        ParserCase(input: "https://go.acme.app//products///42/", segments: ["products", "42"]),
        ParserCase(input: "https://go.acme.app/caf%C3%A9/%E2%9C%93", segments: ["café", "✓"]),
        ParserCase(input: "https://go.acme.app/a%2Fb/c", segments: ["a/b", "c"]),
        ParserCase(input: "https://go.acme.app/a+b", segments: ["a+b"]),
        ParserCase(input: "myapp://商品/1", segments: ["商品", "1"], host: "商品"),
        ParserCase(input: "https://user:secret@go.acme.app:8443/x", segments: ["x"], host: "go.acme.app"),
        ParserCase(input: "https://[::1]:8080/x", segments: ["x"], host: "::1"),
        // Query: decoding, repeats, empty values.
        ParserCase(input: "https://go.acme.app/p?x=1&x=2", parameters: ["x": "2"]),
        // A + stays a plus, as URLComponents and every provider's SDK read it (linkforty.md §7.3).
        ParserCase(input: "https://go.acme.app/p?q=summer+sale", parameters: ["q": "summer+sale"]),
        ParserCase(input: "https://go.acme.app/p?running+shoes=1&tz=Etc/GMT+5", parameters: ["running+shoes": "1", "tz": "Etc/GMT+5"]),
        ParserCase(input: "https://go.acme.app/p?q=a%2Bb", parameters: ["q": "a+b"]),
        ParserCase(input: "https://go.acme.app/p?q=%26%3D%23%20", parameters: ["q": "&=# "]),
        ParserCase(input: "https://go.acme.app/p?name=%E6%97%A5%E6%9C%AC", parameters: ["name": "日本"]),
        ParserCase(input: "https://go.acme.app/p?q=日本", parameters: ["q": "日本"]),
        ParserCase(input: "https://go.acme.app/p?empty=&flag", parameters: ["empty": "", "flag": ""]),
        ParserCase(input: "https://go.acme.app/p?=orphan&ok=1&&", parameters: ["ok": "1"]),
        ParserCase(input: "https://go.acme.app/p?a=1;b=2", parameters: ["a": "1;b=2"]),
        ParserCase(input: "https://go.acme.app/p?next=https%3A%2F%2Fx.com%2F%3Fa%3D1", parameters: ["next": "https://x.com/?a=1"]),
        ParserCase(input: "https://go.acme.app/p?a=1#frag?x=2", parameters: ["a": "1"], fragment: "frag?x=2"),
        // Malformed escapes are kept as written, never dropped.
        ParserCase(input: "https://go.acme.app/p?bad=%zz&lone=%", parameters: ["bad": "%zz", "lone": "%"]),
        ParserCase(input: "https://go.acme.app/p?bad=%C3&ok=1", parameters: ["bad": "%C3", "ok": "1"]),
        // One malformed escape makes Foundation escape every "%" of that component: nothing in
        // the query is decoded, while the path still is.
        ParserCase(input: "https://go.acme.app/caf%C3%A9?q=%41&bad=%zz", segments: ["café"], parameters: ["q": "%41", "bad": "%zz"]),
        // UTM: first occurrence wins (parameters keep the last).
        ParserCase(
            input: "https://go.acme.app/p?utm_source=a&utm_source=b", parameters: ["utm_source": "b"],
            utm: UTMParameters(source: "a")),
        ParserCase(
            input: "myapp://products?utm_medium=email&utm_campaign=spring&utm_term=shoes&utm_content=banner",
            utm: UTMParameters(medium: "email", campaign: "spring", term: "shoes", content: "banner")),
        // Campaign fields and their aliases.
        ParserCase(input: "myapp://p?keyName=K1&key=K2&k=K3", campaign: Campaign(key: "K1")),
        ParserCase(input: "myapp://p?key=&k=K3", campaign: Campaign(key: "K3")),
        ParserCase(input: "myapp://p?k=first&k=second", campaign: Campaign(key: "first")),
        ParserCase(input: "myapp://p?campaign=C2&campaign_id=C1", campaign: Campaign(id: "C1")),
        ParserCase(input: "myapp://p?campaign=C2", campaign: Campaign(id: "C2")),
        ParserCase(
            input: "myapp://p?jid=J1&source=email&utm_source=ig", utm: UTMParameters(source: "ig"),
            campaign: Campaign(journeyID: "J1", source: "email")),
        ParserCase(input: "myapp://p?utm_source=ig", campaign: Campaign(source: "ig")),
        ParserCase(input: "myapp://p?color=red", campaign: .some(nil)),
        // Authentication.
        ParserCase(input: "myapp://wallet?auth=required", requiresAuthentication: true),
        ParserCase(input: "myapp://wallet?auth=REQUIRED", requiresAuthentication: true),
        ParserCase(input: "myapp://wallet?auth=optional", requiresAuthentication: false),
        ParserCase(input: "myapp://wallet", requiresAuthentication: false),
        // Malformed: typed errors, never a crash.
        ParserCase(input: "", invalid: true),
        ParserCase(input: "products/42", invalid: true),
        ParserCase(input: "https:///path", invalid: true),
        ParserCase(input: "https://", invalid: true),
        ParserCase(input: "1abc://x", invalid: true),
        ParserCase(input: "://nothing", invalid: true),
        // Hostile input: a result or a typed error, never a crash or a hang.
        ParserCase(
            input: "https://go.acme.app/" + String(repeating: "a", count: 65_536), segments: [String(repeating: "a", count: 65_536)]),
        ParserCase(
            input: "https://go.acme.app/p?" + String(repeating: "x=1&", count: 10_000) + "x=last&utm_source="
                + String(repeating: "s", count: 60_000),
            parameters: ["x": "last", "utm_source": String(repeating: "s", count: 60_000)],
            utm: UTMParameters(source: String(repeating: "s", count: 60_000))),
        ParserCase(input: "https://go.acme.app/" + String(repeating: "%", count: 3_000), segments: [String(repeating: "%", count: 3_000)]),
        ParserCase(input: "https://go.acme.app/%zz/%E2%9C/%%41?q=%G1%", segments: ["%zz", "%E2%9C", "%%41"], parameters: ["q": "%G1%"]),
        // An IDNA host, however written, compares in its ASCII (punycode) form.
        ParserCase(input: "https://xn--bcher-kva.example/x", segments: ["x"], host: "xn--bcher-kva.example"),
        ParserCase(input: "https://bücher.example/x", segments: ["x"], host: "xn--bcher-kva.example"),
        ParserCase(input: "https://go.acme.app/日本/ü/🙂", segments: ["日本", "ü", "🙂"]),
        ParserCase(input: "https://go.acme.app/%F0%9F%99%82", segments: ["🙂"]),
        ParserCase(input: ":x", invalid: true),
        ParserCase(input: ":", invalid: true),
        ParserCase(input: "javascript:alert(1)", segments: ["alert(1)"], origin: .customScheme),
        ParserCase(input: "data:text/html;base64,PHNjcmlwdD4=", segments: ["text", "html;base64,PHNjcmlwdD4="], origin: .customScheme),
        // A raw NUL is escaped by Foundation and then decoded like %00: a result, not a crash.
        ParserCase(input: "https://go.acme.app/a\u{0}b", segments: ["a\u{0}b"]),
        ParserCase(input: "myapp://x?q=%00&ok=1", parameters: ["q": "\u{0}", "ok": "1"]),
        ParserCase(input: "https://go.acme.app/a%00b", segments: ["a\u{0}b"]),
    ]

    @Test(
        "query values read as URLComponents reads them, + included",
        arguments: [
            "https://go.acme.app/p?q=running+shoes&a=%2B&b=x%20y+z&c&d=&+=plus",
            "myapp://open?utm_campaign=spring+sale&k=A+B&e=%E2%82%AC+1",
        ])
    func queryAsURLComponents(_ input: String) throws {
        let parsed = try LinkParser.parse(input)
        let expected = try #require(URLComponents(string: input)?.queryItems)
        #expect(parsed.queryItems.map(\.name) == expected.map(\.name))
        #expect(parsed.queryItems.map(\.value) == expected.map { $0.value ?? "" })
    }

    @Test("form decoding, when asked for, reads + as a space")
    func formDecoding() throws {
        let input = "https://go.acme.app/p?q=summer+sale&a=%2B&x+y=1&utm_campaign=spring+sale"
        let form = try LinkParser.parse(input, queryDecoding: .form)
        #expect(form.parameters == ["q": "summer sale", "a": "+", "x y": "1", "utm_campaign": "spring sale"])
        #expect(form.utm.campaign == "spring sale")
        let plain = try LinkParser.parse(try #require(URL(string: input)))
        #expect(plain.parameters["q"] == "summer+sale")
    }

    @Test("parses", arguments: cases)
    func parses(_ row: ParserCase) throws {
        if row.invalid {
            let error = #expect(throws: DeepLinkError.self) { try LinkParser.parse(row.input) }
            #expect(error?.code == .invalidURL)
            return
        }
        let parsed = try LinkParser.parse(row.input)
        if let segments = row.segments {
            #expect(parsed.pathSegments == segments)
            #expect(parsed.path == "/" + segments.joined(separator: "/"))
        }
        if let origin = row.origin { #expect(parsed.origin == origin) }
        if let host = row.host { #expect(parsed.host == host) }
        if let parameters = row.parameters { #expect(parsed.parameters == parameters) }
        if let utm = row.utm { #expect(parsed.utm == utm) }
        if let campaign = row.campaign { #expect(parsed.campaign == campaign) }
        if let requiresAuthentication = row.requiresAuthentication {
            #expect(parsed.requiresAuthentication == requiresAuthentication)
        }
        if let fragment = row.fragment { #expect(parsed.fragment == fragment) }
    }

    @Test("the table covers at least 30 URLs")
    func tableSize() {
        #expect(Self.cases.count >= 30)
    }

    @Test("a custom-scheme link and a universal link to the same place give the same DeepLink path")
    func sameRouteAcrossSchemes() throws {
        let custom = try LinkParser.parse("myapp://products/42?color=red").deepLink(provider: .local, resolution: .server)
        let universal = try LinkParser.parse("https://go.acme.app/products/42?color=red")
            .deepLink(provider: .local, resolution: .server)
        #expect(custom.pathSegments == universal.pathSegments)
        #expect(custom.path == "/products/42")
        #expect(custom.parameters == universal.parameters)
        #expect(custom.origin == .customScheme)
        #expect(universal.origin == .universalLink)
    }

    @Test("query items keep every occurrence in order")
    func queryItemsInOrder() throws {
        let parsed = try LinkParser.parse("myapp://x?a=1&b=2&a=3")
        #expect(parsed.queryItems.map(\.name) == ["a", "b", "a"])
        #expect(parsed.queryItems.map(\.value) == ["1", "2", "3"])
        #expect(parsed.firstValue(of: "a") == "1")
    }

    @Test("the DeepLink id is stable for the same link and differs for another")
    func stableIdentifier() throws {
        let first = try LinkParser.parse("myapp://products/42").deepLink(provider: .local, resolution: .server)
        let again = try LinkParser.parse("myapp://products/42").deepLink(provider: .local, resolution: .local(.timedOut))
        let other = try LinkParser.parse("myapp://products/43").deepLink(provider: .local, resolution: .server)
        #expect(first.id == again.id)
        #expect(first.id != other.id)
        #expect(first.id.count == 16)
    }

    @Test(
        "punycode host labels decode",
        arguments: [
            ("xn--jvrxl", "商品"), ("xn--mnchen-3ya", "münchen"), ("plain", "plain"), ("xn--", "xn--"),
        ])
    func punycode(_ encoded: String, _ decoded: String) {
        #expect(Punycode.decodeHost(encoded) == decoded)
    }
}
