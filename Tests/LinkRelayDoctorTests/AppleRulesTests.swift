import Foundation
import LinkRelay
import LinkRelayDoctor
import Testing

/// A file of the real-world corpus (copied from shared/corpora/aasa; see Fixtures/corpora/README.md).
func corpusFile(_ name: String) throws -> Data {
    try fixture("corpora/aasa/" + name)
}

/// The corpus's file names.
let corpusNames: [String] = {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/corpora/aasa")
    return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
}()

/// A URL, what iOS does with it for an app, and the rule that decides (its place), as Apple's
/// documentation describes its examples.
struct AppleCase: CustomTestStringConvertible, Sendable {
    let file: String
    let appID: String
    let link: String
    /// `opens`, `excluded` or `none`.
    let verdict: String
    /// The deciding rule's place, when one decides.
    let place: String?
    var testDescription: String { "\(file): \(link) → \(verdict)" }

    init(_ file: String, _ link: String, _ verdict: String, _ place: String? = nil, appID: String = "ABCDE12345.com.example.app") {
        self.file = file
        self.link = link
        self.verdict = verdict
        self.place = place
        self.appID = appID
    }
}

@Suite("apple-app-site-association: Apple's rules against real files")
struct AppleRulesTests {
    @Test("every file of the corpus is read; what iOS would refuse or ignore is reported, and only that")
    func corpus() throws {
        #expect(corpusNames.count == 25)
        var findings: [String: [String]] = [:]
        for name in corpusNames {
            let data = try corpusFile(name)
            if name == "as207960.json" {
                // webcredentials only: no universal links at all.
                let error = #expect(throws: DoctorError.self) { try AssociationFile(data: data) }
                #expect(error?.description.contains("no \"applinks\" object") == true)
                continue
            }
            let file = try AssociationFile(data: data)
            #expect(!file.details.isEmpty, "\(name)")
            #expect(file.details.allSatisfy { !$0.appIDs.isEmpty }, "\(name)")
            for detail in file.details {
                for id in detail.appIDs { #expect(file.rules(for: id) != nil, "\(name): \(id)") }
            }
            if !file.findings.isEmpty { findings[name] = file.findings.map { "\($0.status.rawValue): \($0.message)" } }
        }
        #expect(findings.keys.sorted() == ["agora-universal-links.json", "apple-doc-legacy.json"])
        // A template's placeholders and the documentation's eight-character team ID.
        #expect(findings["agora-universal-links.json"]?.first?.contains("DEVELOPMENT_TEAM.PRODUCT_BUNDLE_IDENTIFIER") == true)
        #expect(
            findings["apple-doc-legacy.json"]?.first?.hasPrefix("failure: applinks.details[1] lists the app ID \"ABCD1234.com.apple.wwdc\"")
                == true)
    }

    static let appleCases: [AppleCase] = [
        // Components, in order (Apple: "Supporting associated domains").
        AppleCase("apple-doc-components.json", "https://example.com/buy/item", "opens", "component #2 of ABCDE12345.com.example.app"),
        AppleCase("apple-doc-components.json", "https://example.com/buy", "opens", "component #2 of ABCDE12345.com.example.app"),
        AppleCase(
            "apple-doc-components.json", "https://example.com/buy/item#no_universal_links", "excluded",
            "component #1 of ABCDE12345.com.example.app"),
        AppleCase(
            "apple-doc-components.json", "https://example.com/help/website/faq", "excluded", "component #3 of ABCDE12345.com.example.app"),
        AppleCase(
            "apple-doc-components.json", "https://example.com/help/website", "excluded", "component #3 of ABCDE12345.com.example.app"),
        AppleCase(
            "apple-doc-components.json", "https://example.com/help/article?articleNumber=1234", "opens",
            "component #4 of ABCDE12345.com.example.app"),
        AppleCase("apple-doc-components.json", "https://example.com/help/article?articleNumber=12345", "none"),
        AppleCase("apple-doc-components.json", "https://example.com/help/article", "none"),
        // A repeated name must match at every occurrence.
        AppleCase("apple-doc-components.json", "https://example.com/help/article?articleNumber=99&articleNumber=1234", "none"),
        AppleCase(
            "apple-doc-components.json", "https://example.com/help/article?articleNumber=1234&articleNumber=5678", "opens",
            "component #4 of ABCDE12345.com.example.app"),
        AppleCase("apple-doc-components.json", "https://example.com/other", "none"),
        AppleCase(
            "apple-doc-components.json", "https://example.com/buy/item", "opens", "component #2 of ABCDE12345.com.example.app",
            appID: "ABCDE12345.com.example.app2"),
        // defaults: caseSensitive false for every component.
        AppleCase("apple-doc-defaults.json", "https://example.com/products/abc", "opens", "component #1 of ABCDE12345.com.example.app"),
        AppleCase("apple-doc-defaults.json", "https://example.com/PRODUCTS/abc", "opens", "component #1 of ABCDE12345.com.example.app"),
        AppleCase("apple-doc-defaults.json", "https://example.com/products", "opens", "component #1 of ABCDE12345.com.example.app"),
        AppleCase("apple-doc-defaults.json", "https://example.com/product/abc", "none"),
        // Substitution variables, custom and built-in.
        AppleCase("apple-doc-substitution.json", "https://example.com/en_US/taco/", "opens", "component #1 of ABCDE12345.com.example.app"),
        AppleCase("apple-doc-substitution.json", "https://example.com/fr_CA/sushi/", "opens", "component #1 of ABCDE12345.com.example.app"),
        AppleCase("apple-doc-substitution.json", "https://example.com/en_US/pizza/", "none"),
        AppleCase("apple-doc-substitution.json", "https://example.com/xx_US/taco/", "none"),
        AppleCase("apple-doc-substitution.json", "https://example.com/en_QQ/taco/", "none"),
        AppleCase("apple-doc-substitution.json", "https://example.com/en_US/taco", "none"),
        // The legacy form.
        AppleCase(
            "apple-doc-legacy.json", "https://example.com/wwdc/news/", "opens", "path #1 of 9JA89QQLNQ.com.apple.wwdc",
            appID: "9JA89QQLNQ.com.apple.wwdc"),
        AppleCase("apple-doc-legacy.json", "https://example.com/wwdc/news", "none", appID: "9JA89QQLNQ.com.apple.wwdc"),
        AppleCase(
            "apple-doc-legacy.json", "https://example.com/videos/wwdc/2015/123", "opens", "path #2 of 9JA89QQLNQ.com.apple.wwdc",
            appID: "9JA89QQLNQ.com.apple.wwdc"),
        AppleCase("apple-doc-legacy.json", "https://example.com/videos/wwdc/2014/123", "none", appID: "9JA89QQLNQ.com.apple.wwdc"),
        AppleCase(
            "apple-doc-legacy.json", "https://example.com/anything", "opens", "path #1 of ABCD1234.com.apple.wwdc",
            appID: "ABCD1234.com.apple.wwdc"),
        AppleCase(
            "apple-doc-legacy-not.json", "https://example.com/videos/wwdc/2010/x", "excluded", "path #1 of ABCDE12345.com.example.app"),
        AppleCase("apple-doc-legacy-not.json", "https://example.com/videos/wwdc/2012/x", "opens", "path #2 of ABCDE12345.com.example.app"),
        AppleCase("apple-doc-legacy-not.json", "https://example.com/videos/wwdc/2020/x", "none"),
    ]

    @Test("Apple's documented examples", arguments: appleCases)
    func appleExamples(_ row: AppleCase) throws {
        let file = try AssociationFile(data: corpusFile(row.file))
        let decision = file.decision(for: URL(string: row.link)!, appID: row.appID)
        let verdict: String =
            switch decision.verdict {
            case .opensApp: "opens"
            case .excluded: "excluded"
            case .noMatch: "none"
            case .appNotListed: "not listed"
            }
        #expect(verdict == row.verdict)
        #expect(decision.rule?.place == row.place)
    }

    /// A file from a JSON literal.
    func file(_ json: String) throws -> AssociationFile {
        try AssociationFile(data: Data(json.utf8))
    }

    func verdict(_ file: AssociationFile, _ link: String, appID: String = "ABCDE12345.com.example.app") -> AssociationFile.Verdict {
        file.verdict(for: URL(string: link)!, appID: appID)
    }

    @Test("what Apple's matcher accepts beyond the corpus: no leading slash, a wrongly typed query, details keyed by app ID, */terms/*")
    func beyondTheCorpus() throws {
        let noSlash = try file(#"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "buy/*"}]}]}}"#)
        #expect(verdict(noSlash, "https://example.com/buy/1") == .opensApp(by: #"{"/": "buy/*"}"#))

        let typedQuery = try file(
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/a", "?": {"id": 5, "x": "?"}}]}]}}"#
        )
        // The whole dictionary is ignored: any query matches.
        #expect(verdict(typedQuery, "https://example.com/a?x=long") == .opensApp(by: #"{"/": "/a", "?": {"id": 5, "x": "?"}}"#))
        #expect(typedQuery.findings.map(\.status) == [.warning])

        let keyed = try file(#"{"applinks": {"apps": [], "details": {"ABCDE12345.com.example.app": {"paths": ["/keyed/*"]}}}}"#)
        #expect(verdict(keyed, "https://example.com/keyed/1") == .opensApp(by: #""/keyed/*""#))
        #expect(keyed.findings.isEmpty)

        let terms = try file(
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "*/terms/*", "exclude": true}, {"/": "*"}]}]}}"#
        )
        #expect(verdict(terms, "https://example.com/terms") == .excluded(by: #"{"/": "*/terms/*", "exclude": true}"#))
        #expect(verdict(terms, "https://example.com/en/terms/privacy") == .excluded(by: #"{"/": "*/terms/*", "exclude": true}"#))
        #expect(verdict(terms, "https://example.com/termsandmore") == .opensApp(by: #"{"/": "*"}"#))

        // percentEncoded in defaults, and a component's own setting over the defaults.
        let encoded = try file(
            #"{"applinks": {"defaults": {"percentEncoded": false, "caseSensitive": false}, "details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/café", "caseSensitive": true}, {"/": "/Tea"}]}]}}"#
        )
        #expect(verdict(encoded, "https://example.com/caf%C3%A9") == .opensApp(by: #"{"/": "/café", "caseSensitive": true}"#))
        #expect(verdict(encoded, "https://example.com/CAF%C3%A9") == .noMatch)
        #expect(verdict(encoded, "https://example.com/tea") == .opensApp(by: #"{"/": "/Tea"}"#))
    }

    @Test("LinkForty's validator's checks: BOM, legacy apps array, an entry without rules, an unknown key, a malformed app ID")
    func validatorChecks() throws {
        var bom = Data([0xEF, 0xBB, 0xBF])
        bom.append(Data(#"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/*"}]}]}}"#.utf8))
        let withBOM = try AssociationFile(data: bom)
        #expect(withBOM.hasByteOrderMark)
        #expect(withBOM.findings.map(\.status) == [.warning])
        #expect(verdict(withBOM, "https://example.com/x") == .opensApp(by: #"{"/": "/*"}"#))

        let apps = try file(
            #"{"applinks": {"apps": ["ABCDE12345.com.example.app"], "details": [{"appID": "ABCDE12345.com.example.app", "paths": ["*"]}]}}"#
        )
        #expect(apps.findings.map(\.status) == [.failure])
        #expect(apps.findings.first?.message.contains("applinks.apps must be an empty array") == true)

        let noRules = try file(#"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"]}]}}"#)
        #expect(noRules.findings.map(\.status) == [.warning])
        #expect(verdict(noRules, "https://example.com/x") == .noMatch)

        let typo = try file(
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/admin/*", "exlude": true}, {"/": "*"}]}]}}"#
        )
        #expect(
            typo.findings.map(\.message) == [
                #"applinks.details[0].components[0] has the unknown key "exlude" (a typo for "exclude"?); iOS ignores it."#
            ])
        // iOS ignores the misspelt key, so the admin pages open the app.
        #expect(verdict(typo, "https://example.com/admin/x") == .opensApp(by: #"{"/": "/admin/*", "exlude": true}"#))

        let malformed = try file(
            #"{"applinks": {"details": [{"appIDs": ["com.example.app"], "components": [{"/": "*"}]}, {"components": [{"/": "*"}]}]}}"#)
        #expect(malformed.findings.map(\.status) == [.failure, .failure])
    }

    @Test("the app is found by its full app ID, or by its bundle ID alone (any team)")
    func identifiers() throws {
        let file = try corpusFile("deriv-com.json")
        let parsed = try AssociationFile(data: file)
        let full = try #require(parsed.details.first?.appIDs.first)
        let bundle = String(full.split(separator: ".", maxSplits: 1)[1])
        #expect(parsed.rules(for: full) != nil)
        #expect(parsed.rules(for: bundle) == parsed.rules(for: full))
        #expect(parsed.rules(for: "ZZZZZ99999." + bundle) == nil)
        #expect(parsed.rules(for: "com.other.app") == nil)
        #expect(AssociationFile.appID("ABCDE12345.com.example.app", isApp: "com.example.app"))
        #expect(!AssociationFile.appID("ABCDE12345.com.example.app.beta", isApp: "com.example.app"))
    }

    @Test("$(lang) and $(region) are the doctor's own lists: the same on every platform and deployment target")
    func builtInVariableLists() throws {
        let languages = try #require(AssociationFile.Rule.builtInVariables["lang"])
        let regions = try #require(AssociationFile.Rule.builtInVariables["region"])
        #expect(languages.count == 615)
        #expect(regions.count == 261)
        #expect(Set(languages).count == languages.count && languages == languages.sorted())
        #expect(Set(regions).count == regions.count && regions == regions.sorted())
        for code in ["en", "de", "zh", "fil", "yue", "haw"] { #expect(languages.contains(code), "\(code)") }
        for code in ["US", "GB", "DE", "JP", "XK", "AC", "EU"] { #expect(regions.contains(code), "\(code)") }
        #expect(languages.allSatisfy { (2...3).contains($0.count) && $0.allSatisfy { ("a"..."z").contains($0) } })
        #expect(regions.allSatisfy { $0.count == 2 && $0.allSatisfy { ("A"..."Z").contains($0) } })
        // And they are what a file's rule matches with.
        let rule = AssociationFile.Rule.wildcard(
            "/$(lang)_$(region)/*", matches: "/fil_PH/help", caseSensitive: true, variables: AssociationFile.Rule.builtInVariables)
        #expect(rule)
        #expect(
            !AssociationFile.Rule.wildcard(
                "/$(lang)/*", matches: "/english/help", caseSensitive: true, variables: AssociationFile.Rule.builtInVariables))
    }

    @Test("substitution variables never make matching blow up")
    func variablesStayBounded() {
        let pattern = String(repeating: "$(lang)*", count: 20)
        let text = String(repeating: "en", count: 200) + "!"
        #expect(!AssociationFile.Rule.wildcard(pattern + "?x", matches: text, caseSensitive: true, variables: [:]))
        #expect(AssociationFile.Rule.wildcard("/$(v)/*", matches: "/b/c", caseSensitive: true, variables: ["v": ["a", "b"]]))
        // An unknown variable is matched as written.
        #expect(AssociationFile.Rule.wildcard("/$(nope)", matches: "/$(nope)", caseSensitive: true, variables: [:]))
    }
}
