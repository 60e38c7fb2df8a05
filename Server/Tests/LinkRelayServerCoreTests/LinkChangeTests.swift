import Foundation
import LinkRelay
import Testing

@testable import LinkRelayServerCore

/// A link's change set (``LinkChange``) and its rules (``LinkRules``): what the admin API, the
/// dashboard's form and the command line all apply, checked without a server.
@Suite("Link changes and their rules")
struct LinkChangeTests {
    static let link = LinkRecord(
        projectID: "prj_a", shortCode: "spring", originalURL: "https://acme.example/p/42", deepLinkPath: "/p/42", appScheme: "acme",
        createdAt: Date(timeIntervalSince1970: 1_800_000_000), title: "Spring")

    @Test("an empty change keeps every field; a field set is set, .some(nil) clears, nil keeps")
    func keepsSetsAndClears() throws {
        #expect(LinkChange().isEmpty)
        #expect(try LinkChange().applied(to: Self.link) == Self.link)
        var change = LinkChange()
        change.title = .some(nil)
        change.deepLinkPath = .some("/p/43")
        change.attributionWindowHours = 24
        change.landingPage = .some(false)
        change.targetingRules = ["devices": .array([.string("ios")])]
        change.expiresAt = .some(Date(timeIntervalSince1970: 1_900_000_000.1234))
        let changed = try change.applied(to: Self.link)
        #expect(changed.title == nil && changed.deepLinkPath == "/p/43" && changed.attributionWindowHours == 24)
        let rules: [String: JSONValue] = ["devices": .array([.string("ios")])]
        #expect(changed.landingPage == false)
        #expect(changed.targetingRules == rules)
        #expect(changed.appScheme == "acme" && changed.originalURL == Self.link.originalURL, "fields the change leaves are kept")
        #expect(changed.expiresAt == Date(timeIntervalSince1970: 1_900_000_000.1234).storedPrecision)
        #expect(changed.shortCode == Self.link.shortCode)
        #expect(changed.id == Self.link.id)
        #expect(changed.createdAt == Self.link.createdAt)
    }

    @Test("each rule names its field, and the first broken rule in the fields' order is the one answered")
    func rules() {
        func problem(_ edit: (inout LinkChange) -> Void) -> LinkFieldError? {
            var change = LinkChange()
            edit(&change)
            do throws(LinkFieldError) {
                _ = try change.applied(to: Self.link)
                return nil
            } catch {
                return error
            }
        }
        #expect(problem { $0.originalURL = "ftp://acme.example/" }?.field == "originalUrl")
        #expect(problem { $0.webFallbackURL = .some("https://acme.example/a b") }?.problem.hasPrefix("must be a URL of RFC 3986") == true)
        #expect(
            problem { $0.title = .some(String(repeating: "é", count: 513)) } == LinkFieldError("title", "is longer than 512 characters"))
        #expect(problem { $0.appScheme = .some("javascript") }?.field == "appScheme")
        #expect(problem { $0.appScheme = .some("Acme") }?.field == "appScheme", "upper case is no registered scheme")
        #expect(problem { $0.deepLinkPath = .some("p/42") } == LinkFieldError("deepLinkPath", "must start with /"))
        #expect(problem { $0.utmParameters = ["src": "x"] }?.field == "utmParameters")
        #expect(
            problem { $0.targetingRules = ["devices": .array([.string("tv")])] }
                == LinkFieldError("targetingRules", "devices takes ios, android and web"))
        #expect(problem { $0.targetingRules = ["os": .array([])] }?.problem.hasPrefix("has an unknown rule 'os'") == true)
        for hours in [0, 2161, -1, Int.max] {
            #expect(problem { $0.attributionWindowHours = hours } == LinkFieldError("attributionWindowHours", "must be between 1 and 2160"))
        }
        // Two broken fields: the first in the fields' order (originalUrl before deepLinkPath).
        #expect(
            problem {
                $0.deepLinkPath = .some("x"); $0.originalURL = "nope"
            }?.field == "originalUrl")
        // Clearing is never a broken rule.
        #expect(
            problem {
                $0.appScheme = .some(nil); $0.deepLinkPath = .some(nil); $0.ogImageURL = .some(nil)
            } == nil)
    }

    @Test("codes and schemes: the rules the redirect and the templates share")
    func codesAndSchemes() {
        #expect(LinkRules.isValidCode("spring-26_a"))
        #expect(!LinkRules.isValidCode("") && !LinkRules.isValidCode(String(repeating: "a", count: 21)))
        #expect(!LinkRules.isValidCode("API") && !LinkRules.isValidCode("dashboard") && !LinkRules.isValidCode("café"))
        #expect(LinkRules.isValidScheme("acme+app.v2-x"))
        #expect(!LinkRules.isValidScheme("https") && !LinkRules.isValidScheme("2acme") && !LinkRules.isValidScheme(""))
    }
}
