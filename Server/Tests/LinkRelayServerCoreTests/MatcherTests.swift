import Foundation
import LinkRelay
import Testing

@testable import LinkRelayServerCore

/// The deferred match: LinkForty Core's factors and threshold, windows per link, ties to the
/// newest, the exact address first (IPv4 /24s only on request), sprayers and bots never
/// candidates, a crowded network weighing less.
@Suite("Deferred match")
struct MatcherTests {
    static let now = Date(timeIntervalSince1970: 1_780_000_000)
    static let phone = DeviceSignals(
        ip: "203.0.113.7", networkPrefix: "203.0.113", userAgent: "Acme Shop/2.3.0 iOS/17.4.1", timezone: "America/New_York",
        language: "en_US", screenWidth: 1179, screenHeight: 2556)

    static func click(
        _ id: String, hoursAgo: Double = 1, prefix: String? = "203.0.113", userAgent: String? = Agents.app,
        timezone: String? = "America/New_York", language: String? = "en-US", width: Int? = 1179, height: Int? = 2556, isBot: Bool = false
    ) -> ClickRecord {
        ClickRecord(
            id: id, linkID: "link-\(id)", projectID: "p", clickedAt: now.addingTimeInterval(-hoursAgo * 3600),
            device: DeviceSignals(
                ip: prefix.map { "\($0).9" }, networkPrefix: prefix, userAgent: userAgent, timezone: timezone, language: language,
                screenWidth: width, screenHeight: height),
            platform: .ios, isBot: isBot)
    }

    /// Another device of the network, from an address of its own (four devices tapping from one
    /// address at one moment would be a sprayer's).
    static func crowdClick(_ index: Int, hoursAgo: Double) -> ClickRecord {
        var click = click(
            "other\(index)", hoursAgo: hoursAgo, userAgent: "Mozilla/5.0 (Linux; Android 1\(index)) Chrome/12\(index).0", width: 800 + index
        )
        click.device.ip = "203.0.113.\(20 + index)"
        return click
    }

    @Test(
        "each factor scores as LinkForty's: ip 40, user_agent 30, timezone 10, language 10, screen 10, in that order",
        arguments: [
            (click("a"), 100, ["ip", "user_agent", "timezone", "language", "screen"]),
            (click("b", userAgent: Agents.safari), 70, ["ip", "timezone", "language", "screen"]),
            (click("c", userAgent: Agents.safari, width: nil, height: nil), 60, ["ip", "timezone", "language"]),
            (click("d", prefix: "198.51.100"), 60, ["user_agent", "timezone", "language", "screen"]),
            (click("e", timezone: "Europe/Berlin", language: "de-DE"), 80, ["ip", "user_agent", "screen"]),
            (click("f", width: 2556, height: 1179), 90, ["ip", "user_agent", "timezone", "language"]),
            (click("g", language: "EN_gb"), 100, ["ip", "user_agent", "timezone", "language", "screen"]),
            (click("h", timezone: nil, language: nil, width: nil, height: nil), 70, ["ip", "user_agent"]),
            (click("i", width: 0, height: 0), 90, ["ip", "user_agent", "timezone", "language"]),
        ] as [(ClickRecord, Int, [String])])
    func factors(_ click: ClickRecord, _ score: Int, _ factors: [String]) {
        let (scored, matched) = DeferredMatcher.score(Self.phone, click.device)
        #expect(scored == score)
        #expect(matched == factors)
    }

    @Test(
        "user agents compare as platform|browser, versions ignored; two app agents are both |",
        arguments: [
            ("Acme Shop/2.3.0 iOS/17.4.1", "|"), (Agents.app, "|"), (Agents.safari, "iphone|safari"),
            (
                "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36",
                "linux|chrome"
            ),
            ("Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 CriOS/124.0 Mobile/15E148 Safari/604.1", "ipad|safari"),
            ("", "|"),
        ])
    func userAgents(_ agent: String, _ normalized: String) {
        #expect(DeferredMatcher.normalizedUserAgent(agent) == normalized)
    }

    @Test("below 70 is organic; at 70 it matches")
    func threshold() {
        let matcher = DeferredMatcher(scoresIPv4Networks: true)
        let weak = MatchCandidate(click: Self.click("weak", userAgent: Agents.safari, width: nil, height: nil), windowHours: 168)
        #expect(matcher.best(for: Self.phone, among: [weak], at: Self.now) == nil)
        let enough = MatchCandidate(click: Self.click("enough", userAgent: Agents.safari), windowHours: 168)
        #expect(matcher.best(for: Self.phone, among: [enough], at: Self.now)?.confidence == 70)
    }

    @Test("each link's own window decides; exactly at the window still counts")
    func windows() {
        let matcher = DeferredMatcher(fingerprintWindowHours: 2160, scoresIPv4Networks: true)
        let inside = MatchCandidate(click: Self.click("in", hoursAgo: 24), windowHours: 24)
        let outside = MatchCandidate(click: Self.click("out", hoursAgo: 24.01), windowHours: 24)
        let long = MatchCandidate(click: Self.click("long", hoursAgo: 500), windowHours: 720)
        #expect(matcher.best(for: Self.phone, among: [inside], at: Self.now)?.click.id == "in")
        #expect(matcher.best(for: Self.phone, among: [outside], at: Self.now) == nil)
        #expect(matcher.best(for: Self.phone, among: [outside, long], at: Self.now)?.click.id == "long")
    }

    @Test("a fingerprint matches clicks of the last 24 hours by default, whatever the link's window; the shorter window applies")
    func fingerprintWindow() {
        let day = MatchCandidate(click: Self.click("day", hoursAgo: 24), windowHours: 168)
        let older = MatchCandidate(click: Self.click("older", hoursAgo: 24.01), windowHours: 168)
        let short = MatchCandidate(click: Self.click("short", hoursAgo: 3), windowHours: 2)
        #expect(DeferredMatcher(scoresIPv4Networks: true).best(for: Self.phone, among: [day], at: Self.now)?.click.id == "day")
        #expect(DeferredMatcher(scoresIPv4Networks: true).best(for: Self.phone, among: [older], at: Self.now) == nil)
        #expect(
            DeferredMatcher(fingerprintWindowHours: 48, scoresIPv4Networks: true).best(for: Self.phone, among: [older], at: Self.now)?.click
                .id == "older")
        #expect(
            DeferredMatcher(fingerprintWindowHours: 48, scoresIPv4Networks: true).best(for: Self.phone, among: [short], at: Self.now)
                == nil, "the link's 2 hours")
        // Out-of-range settings are clamped to 1…2,160 hours.
        #expect(DeferredMatcher(fingerprintWindowHours: 0).fingerprintWindowHours == 1)
        #expect(DeferredMatcher(fingerprintWindowHours: -5).fingerprintWindowHours == 1)
        #expect(DeferredMatcher(fingerprintWindowHours: .max).fingerprintWindowHours == 2160)
        // Older clicks still count towards a crowded network, within their links' windows.
        let crowd = (0..<4).map { index in
            MatchCandidate(click: Self.crowdClick(index, hoursAgo: 100), windowHours: 168)
        }
        let target = MatchCandidate(click: Self.click("target", userAgent: Agents.safari), windowHours: 168)
        #expect(
            DeferredMatcher(sharedNetworkDevices: 5, scoresIPv4Networks: true).best(for: Self.phone, among: [target] + crowd, at: Self.now)
                == nil)
    }

    @Test("the best score wins; on a tie between clicks of one device the newest click (the first candidate) wins")
    func ties() {
        let matcher = DeferredMatcher(scoresIPv4Networks: true)
        let newer = MatchCandidate(click: Self.click("newer", hoursAgo: 1, userAgent: Agents.safari), windowHours: 168)
        let older = MatchCandidate(click: Self.click("older", hoursAgo: 2, userAgent: Agents.safari), windowHours: 168)
        // From the install's own address: 90, above the network's 70.
        let best = Self.atAddress("best", hoursAgo: 3)
        #expect(matcher.best(for: Self.phone, among: [newer, older], at: Self.now)?.click.id == "newer")
        #expect(matcher.best(for: Self.phone, among: [newer, older, best], at: Self.now)?.click.id == "best")
    }

    @Test(
        "two devices scoring the best alike: the install stays organic (Core gives it to the newer); one device's two clicks are not ambiguous"
    )
    func ambiguity() {
        let matcher = DeferredMatcher(scoresIPv4Networks: true)
        let mine = MatchCandidate(click: Self.click("mine", hoursAgo: 2, userAgent: Agents.safari), windowHours: 168)
        // Another phone of the same model, zone and language, its Safari a version older.
        let neighbour = MatchCandidate(
            click: Self.click("neighbour", hoursAgo: 1, userAgent: Agents.safari.replacingOccurrences(of: "17_4", with: "16_6")),
            windowHours: 168)
        #expect(matcher.best(for: Self.phone, among: [neighbour, mine], at: Self.now) == nil)
        #expect(
            DeferredMatcher(refusesAmbiguousMatches: false, scoresIPv4Networks: true).best(
                for: Self.phone, among: [neighbour, mine], at: Self.now)?.click.id == "neighbour")
        let again = MatchCandidate(click: Self.click("again", hoursAgo: 1, userAgent: Agents.safari), windowHours: 168)
        #expect(matcher.best(for: Self.phone, among: [again, mine], at: Self.now)?.click.id == "again", "the same phone tapping twice")
        // A better-scoring click wins outright over a lower tie.
        let better = Self.atAddress("better", hoursAgo: 3)
        #expect(matcher.best(for: Self.phone, among: [neighbour, mine, better], at: Self.now)?.click.id == "better")
    }

    /// A click from an exact address (the phone's household router is 203.0.113.7).
    static func atAddress(
        _ id: String, _ address: String = "203.0.113.7", hoursAgo: Double = 1, width: Int = 1179, language: String = "en-US"
    ) -> MatchCandidate {
        var click = click(id, hoursAgo: hoursAgo, userAgent: Agents.safari, language: language, width: width)
        click.device.ip = address
        return MatchCandidate(click: click, windowHours: 168)
    }

    @Test(
        "the exact address first: the newest agreeing tap from the install's own address wins at 90 with `address`, whatever the network's crowd"
    )
    func addressFirst() {
        let matcher = DeferredMatcher()
        let household = Self.atAddress("household", hoursAgo: 3)
        // Newer look-alike taps of the same /24 from other households: on the network's score alone they tie.
        let neighbours = (0..<3).map { Self.atAddress("neighbour\($0)", "203.0.113.\(20 + $0)", hoursAgo: 1) }
        let match = matcher.best(for: Self.phone, among: neighbours + [household], networkDevices: 0, at: Self.now)
        #expect(match?.click.id == "household" && match?.confidence == 90)
        #expect(match?.factors == ["ip", "address", "timezone", "language", "screen"])
        // On a crowded /24 the network weighs 20, the address still decides: 20 + 20 + 30 = 70.
        let crowded = matcher.best(for: Self.phone, among: neighbours + [household], networkDevices: 50, at: Self.now)
        #expect(crowded?.click.id == "household" && crowded?.confidence == 70 && crowded?.sharedNetwork == true)
        #expect(
            DeferredMatcher(matchesAddressFirst: false).best(
                for: Self.phone, among: neighbours + [household], networkDevices: 0, at: Self.now)?.click.id
                == "neighbour0", "without it, the newest look-alike of another household takes the install")
    }

    @Test(
        "an IPv4 install without a tap from its own address stays organic (a neighbour's look-alike tap in the /24 is no match); an IPv6 install matches its /64"
    )
    func networksWithoutTheAddress() {
        // A look-alike tap from another household of the phone's /24.
        let neighbour = Self.atAddress("neighbour", "203.0.113.40", hoursAgo: 1)
        #expect(DeferredMatcher().best(for: Self.phone, among: [neighbour], networkDevices: 0, at: Self.now) == nil)
        let scored = DeferredMatcher(scoresIPv4Networks: true).best(for: Self.phone, among: [neighbour], networkDevices: 0, at: Self.now)
        #expect(
            scored?.click.id == "neighbour" && scored?.confidence == 70 && scored?.factors.contains("address") == false,
            "Core's /24, on request")
        // An IPv6 phone's privacy address rotated since its tap: the same /64 is its LAN.
        var phone = Self.phone
        phone.ip = "2001:db8:7:1:aaaa:bbbb:cccc:1"
        phone.networkPrefix = "2001:db8:7:1"
        var tapped = Self.atAddress("rotated", "2001:db8:7:1:1111:2222:3333:4", hoursAgo: 5)
        tapped.click.device.networkPrefix = "2001:db8:7:1"
        let match = DeferredMatcher().best(for: phone, among: [tapped], networkDevices: 0, at: Self.now)
        #expect(match?.click.id == "rotated" && match?.confidence == 70 && match?.factors == ["ip", "timezone", "language", "screen"])
        // Without the address first, the network score is all there is, IPv4 included (Core's behaviour).
        #expect(
            DeferredMatcher(matchesAddressFirst: false).best(for: Self.phone, among: [neighbour], networkDevices: 0, at: Self.now)?.click.id
                == "neighbour")
    }

    /// `count` clicks from the phone's own address, one every `seconds`, the newest `hoursAgo`
    /// hours ago; each a different device but the one in the middle, which looks exactly like
    /// the phone (which never tapped).
    static func sprayed(_ count: Int, every seconds: Double, hoursAgo: Double = 2, prefix: String = "spray") -> [MatchCandidate] {
        (0..<count).map { index in
            var click = Self.atAddress("\(prefix)\(index)", hoursAgo: hoursAgo + Double(count - 1 - index) * seconds / 3600).click
            if index != count / 2 { click.device.screenWidth = 700 + index }
            return MatchCandidate(click: click, windowHours: 168)
        }.reversed()
    }

    static func sprayed(_ candidates: [MatchCandidate], floor: Int = 3) -> Set<String> {
        DeferredMatcher.sprayedClicks(in: candidates, floor: floor, since: now.addingTimeInterval(-86_400), span: 86_400)
    }

    @Test(
        "a sprayer (more distinct devices from one address within 10 minutes, an hour or four hours than its own day explains) never attributes; a carrier's address on a normal day still does"
    )
    func sprayers() {
        let matcher = DeferredMatcher()
        // 54 fingerprints sprayed from the install's own address within four minutes.
        let spray = Self.sprayed(54, every: 4)
        #expect(Self.sprayed(spray).count == 54)
        #expect(matcher.best(for: Self.phone, among: spray, networkDevices: 0, at: Self.now) == nil)
        #expect(
            DeferredMatcher(sprayerDevices: 100).best(for: Self.phone, among: spray, networkDevices: 0, at: Self.now)?.click.id
                == "spray27", "the rule off")
        // Fifty-four devices over a day (one every 27 minutes): a carrier's address on a normal day.
        let spread = Self.sprayed(54, every: 1600)
        #expect(Self.sprayed(spread).isEmpty)
        #expect(matcher.best(for: Self.phone, among: spread, networkDevices: 0, at: Self.now)?.click.id == "spray27")
        // Two phones of a household within ten minutes are no sprayer.
        #expect(Self.sprayed(Self.sprayed(2, every: 120)).isEmpty)
        // One device tapping 30 times in a minute is one device.
        let repeated = (0..<30).map { Self.atAddress("again\($0)", hoursAgo: 1 - Double($0) / 3600) }
        #expect(Self.sprayed(repeated).isEmpty)
        // Only the span around the spray is the sprayer's: the same address's tap a day earlier
        // (within its window) stays a candidate.
        let earlier = Self.atAddress("earlier", hoursAgo: 20)
        #expect(Self.sprayed(spray + [earlier]).contains("earlier") == false)
        #expect(DeferredMatcher(sprayerDevices: 1).sprayerDevices == 2, "clamped")
    }

    @Test(
        "issue 63, 6: no cliff below the old threshold of 10: nine fingerprints in ten minutes, paced every 15 minutes, or three at once, are a sprayer's; a busy address's own rate raises the bar"
    )
    func sprayersWithoutACliff() {
        let matcher = DeferredMatcher()
        // Nine in ten minutes took 21 of 30 organic installs from a shared address in 0.6.0.
        for (count, every) in [(9, 60.0), (3, 20), (9, 900), (5, 600)] {
            let spray = Self.sprayed(count, every: every)
            #expect(Self.sprayed(spray).count == count, "\(count) every \(every) s")
            #expect(matcher.best(for: Self.phone, among: spray, networkDevices: 0, at: Self.now) == nil, "\(count) every \(every) s")
        }
        // A busy address: 300 devices over the day (a carrier's NAT for a popular app, one every
        // five minutes) makes 3 devices in ten minutes its normal, and 9 in ten minutes still a spray.
        let day = Self.sprayed(300, every: 288, hoursAgo: 0.5, prefix: "day")
        #expect(Self.sprayed(day).isEmpty, "a busy address's own rate")
        let burst = Self.sprayed(9, every: 60, hoursAgo: 3, prefix: "burst")
        let busy = (day + burst).sorted { $0.click.clickedAt > $1.click.clickedAt }
        let marked = Self.sprayed(busy)
        #expect(burst.allSatisfy { marked.contains($0.click.id) }, "the burst on the busy address")
        #expect(marked.count < burst.count + 20, "and little of the day around it (\(marked.count) marked)")
    }

    @Test(
        "an IPv6 sprayer is its /64: nine fingerprints from nine addresses of one /64 in ten minutes are a spray, and do not take a phone's install there"
    )
    func ipv6Sprayers() {
        let spray = Self.sprayed(9, every: 60).enumerated().map { index, candidate in
            var click = candidate.click
            click.device.ip = "2001:db8:63:6::\(index + 1)"
            click.device.networkPrefix = "2001:db8:63:6"
            return MatchCandidate(click: click, windowHours: 168)
        }
        #expect(Self.sprayed(spray).count == 9)
        var phone = Self.phone
        phone.ip = "2001:db8:63:6::99"
        phone.networkPrefix = "2001:db8:63:6"
        #expect(DeferredMatcher().best(for: phone, among: spray, networkDevices: 0, at: Self.now) == nil)
        #expect(DeferredMatcher(sprayerDevices: 100).best(for: phone, among: spray, networkDevices: 0, at: Self.now) != nil, "the rule off")
        // Two phones of one IPv6 household within ten minutes are no sprayer.
        #expect(Self.sprayed(Array(spray.prefix(2))).isEmpty)
    }

    @Test(
        "issue 63, 6: two identical clicks from one address within 30 s are one tap, and the first decides; a forged copy a second after the real tap does not take the install"
    )
    func oneTap() {
        let matcher = DeferredMatcher()
        let real = Self.atAddress("real", hoursAgo: 1)
        var forged = Self.atAddress("forged", hoursAgo: 1 - 1.0 / 3600)
        forged.click.linkID = "attacker"
        // Newest first, as the store answers.
        #expect(matcher.best(for: Self.phone, among: [forged, real], networkDevices: 0, at: Self.now)?.click.id == "real")
        #expect(DeferredMatcher.repeatedTaps(in: [forged, real]) == ["forged"])
        // A run of copies, each within 30 s of the one before, is still that first tap.
        let run = (0..<10).map { Self.atAddress("copy\($0)", hoursAgo: 1 - Double($0) * 20 / 3600) }.reversed()
        #expect(matcher.best(for: Self.phone, among: Array(run), networkDevices: 0, at: Self.now)?.click.id == "copy0")
        // A minute later it is a tap of its own: the newer decides, as before.
        let later = Self.atAddress("later", hoursAgo: 1 - 61.0 / 3600)
        #expect(matcher.best(for: Self.phone, among: [later, real], networkDevices: 0, at: Self.now)?.click.id == "later")
        // Another address, or another device, is another tap.
        var elsewhere = Self.atAddress("elsewhere", hoursAgo: 1 - 1.0 / 3600)
        elsewhere.click.device.ip = "203.0.113.10"
        var other = Self.atAddress("other", hoursAgo: 1 - 1.0 / 3600)
        other.click.device.screenWidth = 1290
        #expect(DeferredMatcher.repeatedTaps(in: [elsewhere, other, real]).isEmpty)
    }

    @Test(
        "at one address: a tap that disagrees is no match; two devices alike are ambiguous; a tap past the fingerprint's day is not taken")
    func addressRules() {
        let matcher = DeferredMatcher()
        #expect(matcher.best(for: Self.phone, among: [Self.atAddress("other-screen", width: 828)], networkDevices: 0, at: Self.now) == nil)
        #expect(
            matcher.best(for: Self.phone, among: [Self.atAddress("other-language", language: "de-DE")], networkDevices: 0, at: Self.now)
                == nil)
        var sibling = Self.atAddress("sibling", hoursAgo: 1)
        sibling.click.device.userAgent = Agents.safari.replacingOccurrences(of: "17_4", with: "16_6")
        let mine = Self.atAddress("mine", hoursAgo: 2)
        #expect(
            matcher.best(for: Self.phone, among: [sibling, mine], networkDevices: 0, at: Self.now) == nil, "two phones of one family alike")
        #expect(
            DeferredMatcher(refusesAmbiguousMatches: false).best(for: Self.phone, among: [sibling, mine], networkDevices: 0, at: Self.now)?
                .click.id == "sibling")
        let again = Self.atAddress("again", hoursAgo: 1)
        #expect(
            matcher.best(for: Self.phone, among: [again, mine], networkDevices: 0, at: Self.now)?.click.id == "again",
            "one phone tapping twice")
        let old = Self.atAddress("old", hoursAgo: 30)
        #expect(matcher.best(for: Self.phone, among: [old], networkDevices: 0, at: Self.now)?.factors.contains("address") != true)
    }

    @Test("a network crowded with distinct devices halves the address: the same partial fingerprint is organic there")
    func sharedNetwork() {
        let matcher = DeferredMatcher(sharedNetworkDevices: 5, scoresIPv4Networks: true)
        let target = MatchCandidate(click: Self.click("target", userAgent: Agents.safari), windowHours: 168)
        let full = Self.atAddress("full", hoursAgo: 2)
        // Four other devices: five in all, the crowd threshold.
        let crowd = (0..<4).map { index in
            MatchCandidate(click: Self.crowdClick(index, hoursAgo: 3), windowHours: 168)
        }
        let quiet = matcher.best(for: Self.phone, among: [target], at: Self.now)
        #expect(quiet?.confidence == 70 && quiet?.sharedNetwork == false && quiet?.method == .fingerprint)
        #expect(matcher.best(for: Self.phone, among: [target] + crowd, at: Self.now) == nil, "ip at 20 + 30 is not enough")
        // A forged click with the app's own agent (Core's key `|`, as the install's) earns no user_agent.
        let forged = MatchCandidate(click: Self.click("forged", hoursAgo: 0.5), windowHours: 168)
        #expect(DeferredMatcher.score(Self.phone, forged.click.device).0 == 100, "Core's score would give it 100")
        #expect(matcher.best(for: Self.phone, among: [forged], at: Self.now)?.confidence == 70)
        #expect(matcher.best(for: Self.phone, among: [forged, Self.atAddress("real", hoursAgo: 2)], at: Self.now)?.click.id == "real")
        // `full` is `target`'s phone (the same signals) from the install's own address: five devices with the crowd.
        let crowded = matcher.best(for: Self.phone, among: [target, full] + crowd, at: Self.now)
        #expect(crowded?.click.id == "full" && crowded?.confidence == 70 && crowded?.sharedNetwork == true, "20 + address 20 + 30")
        #expect(crowded?.method == .fingerprintSharedNetwork)
        // Devices whose clicks are outside their windows do not crowd the network.
        let stale = crowd.map { MatchCandidate(click: $0.click, windowHours: 1) }
        #expect(matcher.best(for: Self.phone, among: [target] + stale, at: Self.now)?.click.id == "target")
    }

    @Test("LinkForty's fingerprint hash: SHA-256 of the eight fields joined by |")
    func fingerprintHash() {
        let hash = DeferredMatcher.fingerprintHash(
            DeviceSignals(ip: "203.0.113.7", userAgent: "UA", language: "en_US", screenWidth: 1179), platform: "iOS",
            platformVersion: "17.4")
        // printf '203.0.113.7|UA||en_US|1179||iOS|17.4' | sha256sum
        #expect(hash == "7d41bb4e66775494077ef7b4dfefab1679eaad62d6d6ef3b360de302c871d55b")
    }
}
