import Foundation
import LinkRelaySimulatorCore
import Testing

@testable import LinkRelayLinkFortyEmulation

@Suite("LinkForty matcher (Core's rules)")
struct LinkFortyMatcherTests {
    typealias Fingerprint = LinkFortyMatcher.Fingerprint
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(
        "attributable addresses",
        arguments: [
            ("203.0.113.10", true), ("8.8.8.8", true), ("10.1.2.3", false), ("127.0.0.1", false), ("0.1.2.3", false),
            ("100.64.0.1", false), ("100.128.0.1", true), ("169.254.1.1", false), ("172.16.0.1", false), ("172.32.0.1", true),
            ("192.168.1.1", false), ("192.0.0.5", false), ("198.18.0.1", false), ("198.20.0.1", true),
            ("::ffff:203.0.113.10", true), ("::1", false), ("::", false), ("fd00::1", false), ("fe80::1", false),
            ("2001:db8:1:2::5", true), ("not an ip", false),
        ])
    func attributable(_ address: String, _ expected: Bool) {
        #expect(IPAddressRules.isAttributable(address) == expected)
    }

    @Test("IPv4 compares /24, IPv6 the first four groups")
    func networks() {
        #expect(IPAddressRules.sameNetwork("203.0.113.10", "203.0.113.250"))
        #expect(!IPAddressRules.sameNetwork("203.0.113.10", "203.0.114.10"))
        #expect(IPAddressRules.sameNetwork("2001:db8:1:2::5", "2001:db8:1:2:ffff::9"))
        #expect(!IPAddressRules.sameNetwork("2001:db8:1:2::5", "2001:db8:1:3::5"))
        #expect(!IPAddressRules.sameNetwork("192.168.1.1", "192.168.1.1"))
    }

    @Test(
        "user agents normalise to platform|browser",
        arguments: [
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Version/17.4 Mobile Safari/604.1",
                "iphone|safari"
            ),
            ("Acme Shop/2.3.0 iOS/17.4.1", "|"), ("AcmeShop/412 CFNetwork/1494.0.7 Darwin/23.4.0", "|"),
            // Core's regex takes the leftmost token, and Android browsers say "Linux" first.
            ("Mozilla/5.0 (Linux; Android 14) Chrome/120 Mobile Safari/537.36", "linux|chrome"),
            ("Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) Firefox/120", "ipad|firefox"),
        ])
    func userAgents(_ agent: String, _ normalised: String) {
        #expect(LinkFortyMatcher.normalise(userAgent: agent) == normalised)
    }

    @Test("weights 40/30/10/10/10 in Core's factor order; each factor only when both sides have it")
    func weights() {
        let full = Fingerprint(
            ip: "203.0.113.1", userAgent: "A/1 iOS/17", timezone: "Europe/Berlin", language: "de_DE", screenWidth: 1179, screenHeight: 2556)
        let (score, factors) = LinkFortyMatcher.score(full, full)
        #expect(score == 100)
        #expect(factors == ["ip", "user_agent", "timezone", "language", "screen"])
        let partial = Fingerprint(ip: "203.0.113.9", timezone: "Europe/Berlin", language: "de-AT", screenWidth: 1179, screenHeight: 2556)
        #expect(LinkFortyMatcher.score(full, partial) == (70, ["ip", "timezone", "language", "screen"]))
        let zeroScreen = Fingerprint(screenWidth: 0, screenHeight: 0)
        #expect(LinkFortyMatcher.score(zeroScreen, zeroScreen).0 == 0)
    }

    @Test("below 70 is organic; the highest score wins; on a tie the most recent click")
    func selection() {
        let install = Fingerprint(
            ip: "203.0.113.1", userAgent: "A/1 iOS/17", timezone: "Europe/Berlin", language: "de", screenWidth: 1, screenHeight: 2)
        let weak = LinkFortyMatcher.Candidate(
            clickID: "weak", clickedAt: now - 60, attributionWindowHours: 168,
            fingerprint: .init(ip: "203.0.113.2", timezone: "Europe/Berlin"))
        #expect(LinkFortyMatcher().match(install, among: [weak], now: now) == nil)
        let older = LinkFortyMatcher.Candidate(
            clickID: "older", clickedAt: now - 7200, attributionWindowHours: 168,
            fingerprint: .init(ip: "203.0.113.2", userAgent: "B/2 iOS/16"))
        let newer = LinkFortyMatcher.Candidate(
            clickID: "newer", clickedAt: now - 60, attributionWindowHours: 168,
            fingerprint: .init(ip: "203.0.113.3", userAgent: "C/3 iOS/18"))
        let best = LinkFortyMatcher.Candidate(
            clickID: "best", clickedAt: now - 9000, attributionWindowHours: 168,
            fingerprint: .init(ip: "203.0.113.4", userAgent: "x", timezone: "Europe/Berlin"))
        #expect(LinkFortyMatcher().match(install, among: [older, newer], now: now)?.clickID == "newer")
        #expect(LinkFortyMatcher().match(install, among: [older, newer, best], now: now)?.clickID == "best")
    }

    @Test("each click uses its own link's window; exactly at the window still counts")
    func windows() {
        let install = Fingerprint(ip: "203.0.113.1", userAgent: "A/1 iOS/17")
        let fingerprint = Fingerprint(ip: "203.0.113.2", userAgent: "A/1 iOS/17")
        let atWindow = LinkFortyMatcher.Candidate(
            clickID: "a", clickedAt: now - 24 * 3600, attributionWindowHours: 24, fingerprint: fingerprint)
        let pastWindow = LinkFortyMatcher.Candidate(
            clickID: "b", clickedAt: now - 24 * 3600 - 1, attributionWindowHours: 24, fingerprint: fingerprint)
        let defaultWindow = LinkFortyMatcher.Candidate(
            clickID: "c", clickedAt: now - 100 * 3600, attributionWindowHours: 0, fingerprint: fingerprint)
        #expect(LinkFortyMatcher().match(install, among: [atWindow], now: now)?.clickID == "a")
        #expect(LinkFortyMatcher().match(install, among: [pastWindow], now: now) == nil)
        #expect(LinkFortyMatcher().match(install, among: [defaultWindow], now: now)?.clickID == "c")
    }
}
