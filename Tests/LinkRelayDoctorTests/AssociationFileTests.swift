import Foundation
import LinkRelayDoctor
import Testing

/// The test fixtures: association files, entitlements and Info.plists written for these tests.
func fixture(_ name: String) throws -> Data {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").appendingPathComponent(name)
    return try Data(contentsOf: url)
}

let appID = "ABCDE12345.com.acme.shop"

/// One association file and what iOS does with a link for the app.
struct VerdictCase: CustomTestStringConvertible, Sendable {
    let file: String
    let link: String
    let verdict: AssociationFile.Verdict
    var testDescription: String { "\(file): \(link)" }
}

@Suite("apple-app-site-association")
struct AssociationFileTests {
    static let cases: [VerdictCase] = [
        // The modern form: components in order, the first match decides.
        VerdictCase(file: "modern.json", link: "https://go.acme.app/k3m9x2qa/Xk9_2bQz", verdict: .opensApp(by: #"{"/": "/k3m9x2qa/*"}"#)),
        VerdictCase(file: "modern.json", link: "https://go.acme.app/k3m9x2qa/", verdict: .opensApp(by: #"{"/": "/k3m9x2qa/*"}"#)),
        // A trailing /* also matches the parent path, as Apple's matcher does.
        VerdictCase(file: "modern.json", link: "https://go.acme.app/k3m9x2qa", verdict: .opensApp(by: #"{"/": "/k3m9x2qa/*"}"#)),
        VerdictCase(file: "modern.json", link: "https://go.acme.app/k3m9x2qaX", verdict: .noMatch),
        VerdictCase(
            file: "modern.json", link: "https://go.acme.app/admin/users", verdict: .excluded(by: #"{"/": "/admin/*", "exclude": true}"#)),
        VerdictCase(
            file: "modern.json", link: "https://go.acme.app/buy/42?ref=mail",
            verdict: .opensApp(by: #"{"/": "/buy/*", "?": {"ref": "?*"}}"#)),
        VerdictCase(file: "modern.json", link: "https://go.acme.app/buy/42", verdict: .noMatch),
        VerdictCase(file: "modern.json", link: "https://go.acme.app/buy/42?ref=", verdict: .noMatch),
        VerdictCase(file: "modern.json", link: "https://go.acme.app/p/abc", verdict: .opensApp(by: #"{"/": "/p/???"}"#)),
        VerdictCase(file: "modern.json", link: "https://go.acme.app/p/ab", verdict: .noMatch),
        VerdictCase(
            file: "modern.json", link: "https://go.acme.app/PROMO/spring",
            verdict: .opensApp(by: #"{"/": "/Promo/*", "caseSensitive": false}"#)),
        VerdictCase(
            file: "modern.json", link: "https://go.acme.app/search?q=shoes", verdict: .opensApp(by: #"{"/": "/search", "?": "q=*"}"#)),
        VerdictCase(file: "modern.json", link: "https://go.acme.app/search?page=2", verdict: .noMatch),
        VerdictCase(
            file: "modern.json", link: "https://go.acme.app/help/a#faq-returns", verdict: .opensApp(by: ##"{"#": "faq*", "/": "/help/*"}"##)
        ),
        VerdictCase(file: "modern.json", link: "https://go.acme.app/help/a#contact", verdict: .noMatch),
        // The legacy form: "NOT " excludes, in order.
        VerdictCase(file: "legacy.json", link: "https://go.acme.app/sale/spring", verdict: .opensApp(by: #""/sale/*""#)),
        VerdictCase(file: "legacy.json", link: "https://go.acme.app/admin/x", verdict: .excluded(by: #""NOT /admin/*""#)),
        VerdictCase(file: "legacy.json", link: "https://go.acme.app/other", verdict: .noMatch),
        // An exclude before the catch-all wins.
        VerdictCase(
            file: "excludes-all.json", link: "https://go.acme.app/k3m9x2qa/Xk9",
            verdict: .excluded(by: #"{"/": "/k3m9x2qa/*", "exclude": true}"#)),
        VerdictCase(file: "excludes-all.json", link: "https://go.acme.app/anything", verdict: .opensApp(by: #"{"/": "*"}"#)),
        // Another app's file.
        VerdictCase(file: "other-app.json", link: "https://go.acme.app/k3m9x2qa/Xk9", verdict: .appNotListed),
    ]

    @Test("verdicts", arguments: cases)
    func verdicts(_ row: VerdictCase) throws {
        let file = try AssociationFile(data: fixture(row.file))
        #expect(file.verdict(for: URL(string: row.link)!, appID: appID) == row.verdict)
    }

    @Test(
        "malformed or wrong content says what is wrong",
        arguments: [
            ("malformed.json", "not valid JSON"), ("html.json", "not valid JSON"), ("not-applinks.json", "no \"applinks\" object"),
        ])
    func refused(_ file: String, _ expected: String) throws {
        let error = #expect(throws: DoctorError.self) { try AssociationFile(data: fixture(file)) }
        #expect(error?.description.contains(expected) == true)
    }

    @Test("both forms read their app ids and rules")
    func forms() throws {
        let modern = try AssociationFile(data: fixture("modern.json"))
        #expect(modern.details.first?.appIDs == [appID, "ABCDE12345.com.acme.shop.beta"])
        #expect(modern.details.first?.isLegacy == false)
        #expect(modern.rules(for: appID)?.count == 7)
        let legacy = try AssociationFile(data: fixture("legacy.json"))
        #expect(legacy.details.first?.isLegacy == true)
        #expect(legacy.hasAppsKey)
        #expect(try AssociationFile(data: fixture("legacy-no-apps.json")).hasAppsKey == false)
    }

    @Test(
        "wildcards: * any run (slashes too, or none), ? exactly one character",
        arguments: [
            ("/*", "/", true), ("/*", "/a/b/c", true), ("*", "", true), ("/a/*/c", "/a/b/x/c", true), ("/a/*/c", "/a/c", false),
            ("/p/?", "/p/x", true), ("/p/?", "/p/", false), ("/p/?*", "/p/", false), ("/p/?*", "/p/xy", true),
            ("/a*b*c", "/aXbYc", true), ("/a*b*c", "/aXbY", false), ("/exact", "/exact", true), ("/exact", "/exactly", false),
            ("*.html", "/index.html", true), (String(repeating: "*a", count: 30), String(repeating: "a", count: 60) + "b", false),
        ])
    func wildcards(_ pattern: String, _ text: String, _ matches: Bool) {
        let rule = AssociationFile.Rule(
            path: pattern, query: nil, fragment: nil, exclude: false, caseSensitive: true, percentEncoded: true, written: pattern)
        let url = URL(string: "https://go.acme.app" + (text.hasPrefix("/") ? text : "/" + text))!
        if text.isEmpty || !text.hasPrefix("/") {
            // Paths always start with "/": test the pattern engine directly for the rest.
            #expect(AssociationFile.Rule.wildcard(pattern, matches: text, caseSensitive: true) == matches)
        } else {
            #expect(rule.matches(url) == matches)
        }
    }
}
