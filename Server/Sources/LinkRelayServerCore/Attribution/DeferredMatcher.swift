import Foundation

/// What a device tells about itself: an install report, or a click's fingerprint. Clicks and
/// installs each hold one (``ClickRecord/device``, ``InstallRecord/device``), stored in the same
/// columns of their tables (``SQLStore/deviceColumns``).
package struct DeviceSignals: Sendable, Hashable, Codable {
    /// Its public address, when it has one.
    package var ip: String?
    /// The address's network (``ClientAddress/networkPrefix(of:)``).
    package var networkPrefix: String?
    /// The user agent.
    package var userAgent: String?
    /// The IANA time zone.
    package var timezone: String?
    /// The language (`en_US`, `en-GB`).
    package var language: String?
    /// The screen's width, in the SDK's units (points × scale).
    package var screenWidth: Int?
    /// The screen's height.
    package var screenHeight: Int?

    /// Signals; see each property.
    package init(
        ip: String? = nil, networkPrefix: String? = nil, userAgent: String? = nil, timezone: String? = nil, language: String? = nil,
        screenWidth: Int? = nil, screenHeight: Int? = nil
    ) {
        self.ip = ip
        self.networkPrefix = networkPrefix
        self.userAgent = userAgent
        self.timezone = timezone
        self.language = language
        self.screenWidth = screenWidth
        self.screenHeight = screenHeight
    }
}

/// An install attributed to a click.
package struct DeferredMatch: Sendable, Hashable {
    /// The click.
    package var click: ClickRecord
    /// 70…100 on LinkForty's scale.
    package var confidence: Int
    /// The factors that matched, in LinkForty's order.
    package var factors: [String]
    /// Whether the network was shared by so many devices that its address weighed half.
    package var sharedNetwork: Bool

    /// `fingerprint`, or `fingerprint_shared_network` when the address weighed half.
    package var method: AttributionMethod { sharedNetwork ? .fingerprintSharedNetwork : .fingerprint }
}

/// The deferred match: LinkForty Core's factors, weights and threshold, so a confidence means
/// what it means to LinkForty's users (§4.3: `ip` 40, `user_agent` 30, `timezone` 10,
/// `language` 10, `screen` 10; attributed at 70 or more; the newest click wins a tie), over
/// candidates found by network and time instead of the newest 1,000 clicks of every link.
///
/// Eight things Core does not do:
/// - **Only a browser's agent counts.** A click earns `user_agent` only when its agent names a
///   browser: an app's agent (Core's key `|`) can be sent to a redirect by anyone, so a forged
///   click with the app's own agent no longer scores 100 (issue 48, §4.2), and the app's own
///   resolve of a link it opened no longer attributes the next launch at 100 (§4.4 of the
///   protocol notes). ``score(_:_:ipWeight:)`` stays Core's, for comparison.
/// - **The exact address first** (``matchesAddressFirst``): the newest tap from the install's
///   own address that agrees on time zone, language and screen is the match (factor `address`),
///   the network's score only without one; a household's router tells more than its ISP's /24.
/// - **An IPv4 /24 is not a household** (``scoresIPv4Networks``, off): without a tap from its
///   own address an IPv4 install stays organic; an IPv6 install is scored against its /64, one
///   LAN, where the phone's privacy address rotates.
/// - **Sprayers never attribute** (``sprayerDevices``): an address from which more distinct
///   devices click within 10 minutes, an hour or four hours than its own rate explains (3 within
///   10 minutes on a quiet address) is forging fingerprints, and those clicks are no candidates.
/// - **A shared network weighs less.** When the install's network shows clicks from
///   ``sharedNetworkDevices`` or more distinct devices in the last week, within their windows
///   (a carrier's NAT, an office, a campus), the same address says little, so `ip` counts 20
///   instead of 40: a match then needs the user agent and two more factors, or every other
///   factor.
/// - **A tap is its first click** (``tapSpan``): identical clicks from one address within 30
///   seconds of each other are one tap, and the first decides; a forged copy sent after the real
///   tap no longer wins as the newer.
/// - **A fingerprint is a day's guess.** Clicks older than ``fingerprintWindowHours`` (24) are
///   not matched, whatever the link's window.
/// - **Bots never become candidates** (their clicks are stored with `is_bot`, and the
///   candidate query leaves them out).
package struct DeferredMatcher: Sendable {
    /// The score an install needs (LinkForty's `CONFIDENCE_THRESHOLD`).
    package static let threshold = 70
    /// The oldest click considered, whatever a link's window: 2,160 hours (90 days), LinkForty's bound.
    package static let lookback: TimeInterval = 2160 * 3600
    /// How far back a network's crowd is counted: a week (within each click's link window). A
    /// network's crowd is what it is this week; and on PostgreSQL the count reads a week's day
    /// partitions, not ninety.
    package static let crowdWindow: TimeInterval = 168 * 3600
    /// The most clicks a network's crowd is counted among (its newest in ``crowdWindow``): a
    /// network stuffed with clicks costs this many rows, not all of them (issue 48, §4.4).
    package static let crowdRows = 2_000

    /// Distinct devices in one network (in the last week, within their clicks' windows) from
    /// which the address weighs half. At least 2. Default 20.
    package var sharedNetworkDevices: Int
    /// The most candidates read for one install (the newest of its address, or of its network).
    /// Default 1,000: a busy network holds about a hundred clicks in a fingerprint's day (the
    /// benchmark's carriers at a million clicks a week), and a network stuffed with clicks then
    /// costs each of its installs about 10 ms instead of 90 ms for 10,000 (issue 48, §4.4).
    package var candidateLimit: Int
    /// Whether an install is left organic when clicks of two different devices (by user agent,
    /// time zone, language and screen) share the best score. Default `true`; Core attributes
    /// it to the newer click.
    package var refusesAmbiguousMatches: Bool
    /// The oldest click a fingerprint may match, in hours, whatever the link's window (the
    /// shorter of the two applies). 1…2,160; default 24, as Adjust's and AppsFlyer's probabilistic
    /// windows: a phone that installs days after a tap is rarer than another phone of its network
    /// that looks the same, so older fingerprint matches are mostly wrong. 2,160 gives Core's
    /// behaviour (the link's window alone).
    package var fingerprintWindowHours: Int

    /// Whether a tap from the install's exact address is taken first: the newest tap, within
    /// the fingerprint's window, from the same address that agrees on time zone, language and
    /// screen (each present on both sides), scored with the ``addressFactor``; the network's
    /// score only when there is none. Default `true`; `false` is the score alone (LinkForty
    /// Core's comparison of /24s). When another device's tap from the address agrees as well
    /// (two phones of one family alike), the install stays organic if
    /// ``refusesAmbiguousMatches``.
    package var matchesAddressFirst: Bool

    /// Whether an IPv4 install without a tap from its own address is scored against its /24, as
    /// Core does. Default `false`: an IPv4 /24 is an ISP's 254 customers, and a tap from another
    /// address there that looks like the install is a neighbour's at least as often as the
    /// installing phone's (on dense households it added 97 wrong attributions to 34 and no right
    /// one; `Benchmarks/RESULTS.md`). An IPv6 install is always scored against its /64: a /64 is
    /// one LAN (a household, an office), and the phone's privacy address within it rotates daily.
    /// Only with ``matchesAddressFirst``; without it the network score is all there is.
    package var scoresIPv4Networks: Bool

    /// The fewest distinct devices (user agent, time zone, language, screen) clicking from one
    /// exact address within ``sprayWindow`` of each other that can make the address a
    /// **sprayer**, whose clicks in that span never attribute (issue 48, §4.2: 54 fingerprints
    /// sprayed from one address took 17 of 30 installs of phones that never tapped). At least 2;
    /// default 3 (10 before issue 63, a cliff: nine sprayed fingerprints took 21 of 30).
    ///
    /// The address is judged against its own rate, at three spans (``sprayScales(floor:)``):
    /// within 10 minutes, an hour and four hours, its distinct devices are a sprayer's when they
    /// reach both the span's floor (this many, two more, three times this many) and ``sprayFactor``
    /// times what the address's distinct devices over the fingerprint's window make of that
    /// span. A carrier's address where 54 phones tap in a day (one every 27 minutes) is no
    /// sprayer; the same 54 in four minutes, or 9 in ten, or 9 paced every 15 minutes, are. What
    /// it costs: 3 different phones tapping your links from one quiet address within ten
    /// minutes (a QR code on a venue's screen) stay organic, where phones alike would mostly make
    /// the match ambiguous anyway (`linkrelay-server-bench spray` measures it).
    package var sprayerDevices: Int

    /// The factor an exact address adds (`address`, 20; the confidence stays at most 100): a
    /// household's router, an office's egress. A carrier's NAT address is shared by many phones,
    /// where two of them alike make the install organic, as on any address.
    package static let addressFactor = ("address", 20)

    /// A matcher; values out of range are clamped to it.
    package init(
        sharedNetworkDevices: Int = ServeSettings.sharedNetworkDevices.defaultInteger, candidateLimit: Int = 1_000,
        refusesAmbiguousMatches: Bool = true, fingerprintWindowHours: Int = ServeSettings.fingerprintWindowHours.defaultInteger,
        matchesAddressFirst: Bool = ServeSettings.addressFirst.defaultFlag,
        scoresIPv4Networks: Bool = ServeSettings.ipv4NetworkMatch.defaultFlag,
        sprayerDevices: Int = ServeSettings.sprayerDevices.defaultInteger
    ) {
        self.matchesAddressFirst = matchesAddressFirst
        self.scoresIPv4Networks = scoresIPv4Networks
        self.sprayerDevices = ServeSettings.sprayerDevices.clamped(sprayerDevices)
        self.sharedNetworkDevices = ServeSettings.sharedNetworkDevices.clamped(sharedNetworkDevices)
        self.candidateLimit = max(candidateLimit, 1)
        self.refusesAmbiguousMatches = refusesAmbiguousMatches
        self.fingerprintWindowHours = ServeSettings.fingerprintWindowHours.clamped(fingerprintWindowHours)
    }

    /// The best click for `install` among `candidates` (newest first) at `now`, or `nil`.
    ///
    /// - Parameter networkDevices: how many distinct devices clicked from the install's network
    ///   within the last ``crowdWindow`` and their links' windows
    ///   (``ServerStore/networkDevices(project:networkPrefix:at:since:limit:)``); `nil` counts them
    ///   among `candidates`, which must then hold the network's clicks of that week, not only the
    ///   fingerprint window's.
    package func best(
        for install: DeviceSignals, among candidates: [MatchCandidate], networkDevices: Int? = nil, at now: Date
    ) -> DeferredMatch? {
        let sprayed = Self.sprayedClicks(
            in: candidates, floor: sprayerDevices, since: now.addingTimeInterval(-TimeInterval(fingerprintWindowHours) * 3600),
            span: TimeInterval(fingerprintWindowHours) * 3600)
        let repeated = Self.repeatedTaps(in: candidates)
        // A sprayer's clicks are never the match, but they still make a look-alike's match
        // ambiguous: voiding them must not hand an install to the tap they hid.
        let live = candidates.filter { candidate in
            now.timeIntervalSince(candidate.click.clickedAt) <= TimeInterval(candidate.windowHours) * 3600
                && !repeated.contains(candidate.click.id)
        }
        let shared: Bool
        if let networkDevices {
            shared = networkDevices >= sharedNetworkDevices
        } else {
            let crowdSince = now.addingTimeInterval(-Self.crowdWindow)
            var devices = Set<String>()
            for candidate in live.prefix(Self.crowdRows)
            where devices.count < sharedNetworkDevices && candidate.click.clickedAt >= crowdSince && !sprayed.contains(candidate.click.id) {
                devices.insert(Self.deviceSignature(candidate.click.device))
            }
            shared = devices.count >= sharedNetworkDevices
        }
        let oldest = now.addingTimeInterval(-TimeInterval(fingerprintWindowHours) * 3600)
        if matchesAddressFirst {
            if let match = addressMatch(for: install, among: live, voided: sprayed, since: oldest, shared: shared) { return match }
            // An IPv4 /24 is not a household: without a tap from the address, organic.
            if matchesAddressOnly(install) { return nil }
        }
        var best: DeferredMatch?
        var bestDevice = ""
        var ambiguous = false
        // The sprayers' clicks that would match, by score and device.
        var voided: [(Int, String)] = []
        // Each user agent's key once: many clicks of a network share an agent.
        var keys: [String: String] = [:]
        let installKey = install.userAgent.map(Self.normalizedUserAgent)
        for candidate in live where candidate.click.clickedAt >= oldest {
            // Only a browser's agent earns `user_agent`: an app's (`Acme/2.3 CFNetwork/…`, key `|`)
            // is what any client can send to a redirect, and what the app itself sends when it
            // resolves a link it already opened; neither says a browser tapped.
            let clickKey = candidate.click.device.userAgent.flatMap { agent -> String? in
                let key = keys[agent] ?? Self.normalizedUserAgent(agent)
                keys[agent] = key
                return Self.isBrowserKey(key) ? key : nil
            }
            let (score, factors) = Self.score(
                install, candidate.click.device, ipWeight: shared ? 20 : 40, userAgentKeys: (installKey, clickKey))
            guard score >= Self.threshold else { continue }
            if sprayed.contains(candidate.click.id) {
                voided.append((score, Self.deviceSignature(candidate.click.device)))
                continue
            }
            // Strictly greater: on a tie the earlier candidate, the newer click, stays.
            if score > (best?.confidence ?? 0) {
                best = DeferredMatch(click: candidate.click, confidence: score, factors: factors, sharedNetwork: shared)
                bestDevice = Self.deviceSignature(candidate.click.device)
                ambiguous = false
            } else if refusesAmbiguousMatches, score == best?.confidence, Self.deviceSignature(candidate.click.device) != bestDevice {
                // Another device scores as well: the signals cannot tell which tapped.
                ambiguous = true
            }
        }
        if refusesAmbiguousMatches, let confidence = best?.confidence, voided.contains(where: { $0.0 >= confidence && $0.1 != bestDevice })
        {
            ambiguous = true
        }
        return ambiguous ? nil : best
    }

    /// The newest tap from the install's exact address, within the fingerprint's window, that
    /// agrees on time zone, language and screen (each present on both sides); with
    /// ``refusesAmbiguousMatches``, only when no other device's tap there agrees as well (a
    /// `voided` one included, which is never the match itself).
    private func addressMatch(
        for install: DeviceSignals, among live: [MatchCandidate], voided: Set<String>, since oldest: Date, shared: Bool
    ) -> DeferredMatch? {
        guard let address = install.ip else { return nil }
        // The network's score, with only a browser's agent counted (as in `best`), decides which
        // taps agree: every one of time zone, language and screen among their factors.
        let installKey = install.userAgent.map(Self.normalizedUserAgent)
        let agreeing = live.lazy.filter { $0.click.clickedAt >= oldest && $0.click.device.ip == address }.compactMap { candidate in
            let clickKey = candidate.click.device.userAgent.map(Self.normalizedUserAgent).flatMap { Self.isBrowserKey($0) ? $0 : nil }
            let scored = Self.score(install, candidate.click.device, ipWeight: shared ? 20 : 40, userAgentKeys: (installKey, clickKey))
            return Self.agreementFactors.isSubset(of: scored.1) ? (candidate.click, scored) : nil
        }
        guard let (found, (score, factors)) = agreeing.first(where: { !voided.contains($0.0.id) }) else { return nil }
        if refusesAmbiguousMatches {
            let foundDevice = Self.deviceSignature(found.device)
            if agreeing.contains(where: { Self.deviceSignature($0.0.device) != foundDevice }) { return nil }
        }
        var named = factors
        named.insert(Self.addressFactor.0, at: named.firstIndex(of: "ip").map { $0 + 1 } ?? 0)
        return DeferredMatch(click: found, confidence: min(100, score + Self.addressFactor.1), factors: named, sharedNetwork: shared)
    }

    /// Whether only a tap from `install`'s exact address can match it: an IPv4 install with the
    /// address first and without ``scoresIPv4Networks`` (an IPv6 install's /64 is its LAN). The
    /// store then reads that address's clicks alone.
    package func matchesAddressOnly(_ install: DeviceSignals) -> Bool {
        guard matchesAddressFirst, !scoresIPv4Networks, let address = install.ip ?? install.networkPrefix else { return false }
        return !ClientAddress.isIPv6(address)
    }

    /// What a tap from the install's own address must agree on.
    private static let agreementFactors: Set<String> = ["timezone", "language", "screen"]

    /// Core's score of `install` against `click`: each factor only when both sides have it.
    package static func score(_ install: DeviceSignals, _ click: DeviceSignals, ipWeight: Int = 40) -> (Int, [String]) {
        score(
            install, click, ipWeight: ipWeight,
            userAgentKeys: (install.userAgent.map(normalizedUserAgent), click.userAgent.map(normalizedUserAgent)))
    }

    /// The score, with both user agents' keys made already.
    static func score(_ install: DeviceSignals, _ click: DeviceSignals, ipWeight: Int, userAgentKeys: (String?, String?)) -> (Int, [String])
    {
        var score = 0
        var factors: [String] = []
        if let a = install.networkPrefix, let b = click.networkPrefix, a == b {
            score += ipWeight
            factors.append("ip")
        }
        if let a = userAgentKeys.0, let b = userAgentKeys.1, a == b {
            score += 30
            factors.append("user_agent")
        }
        if let a = install.timezone, let b = click.timezone, a == b {
            score += 10
            factors.append("timezone")
        }
        if let a = install.language, let b = click.language, a.count >= 2, b.count >= 2,
            a.prefix(2).lowercased() == b.prefix(2).lowercased()
        {
            score += 10
            factors.append("language")
        }
        if let width = install.screenWidth, let height = install.screenHeight, let otherWidth = click.screenWidth,
            let otherHeight = click.screenHeight, width != 0, height != 0, width == otherWidth, height == otherHeight
        {
            score += 10
            factors.append("screen")
        }
        return (score, factors)
    }

    /// Core's user-agent key: `platform|browser`, lower-cased, each the leftmost of its tokens
    /// (versions ignored; an app's `Name/1.0 iOS/17.4` and `CFNetwork` agents are both `|`).
    package static func normalizedUserAgent(_ agent: String) -> String {
        let bytes = LowercasedText(agent).bytes
        return "\(leftmost(platformTokens, in: bytes))|\(leftmost(browserTokens, in: bytes))"
    }

    /// Whether a user-agent key names a browser (`iphone|safari`, `|chrome`): an app's agent
    /// names none (`|`, `iphone|`).
    static func isBrowserKey(_ key: String) -> Bool {
        !key.hasSuffix("|")
    }

    private static let platformTokens = ["iphone", "ipad", "android", "windows", "macintosh", "linux"].map { Array($0.utf8) }
    private static let browserTokens = ["chrome", "safari", "firefox", "edge", "opera"].map { Array($0.utf8) }

    /// The token that starts first in `text` (lower-cased bytes), as text; empty when none does.
    private static func leftmost(_ tokens: [[UInt8]], in text: [UInt8]) -> String {
        guard !text.isEmpty else { return "" }
        for start in text.indices {
            for token in tokens where text.count - start >= token.count && text[start] == token[0] {
                if text[start..<(start + token.count)].elementsEqual(token) { return String(decoding: token, as: UTF8.self) }
            }
        }
        return ""
    }

    /// What tells two devices of one network apart.
    static func deviceSignature(_ device: DeviceSignals) -> String {
        [
            device.userAgent ?? "", device.timezone ?? "", device.language.map { String($0.prefix(2)).lowercased() } ?? "",
            device.screenWidth.map(String.init) ?? "", device.screenHeight.map(String.init) ?? "",
        ].joined(separator: "|")
    }

    /// LinkForty's fingerprint hash: the hex SHA-256 of
    /// `ip|userAgent|timezone|language|screenWidth|screenHeight|platform|platformVersion`, with
    /// the platform's name as the SDK sent it.
    package static func fingerprintHash(_ device: DeviceSignals, platform: String?, platformVersion: String?) -> String {
        let text = [
            device.ip ?? "", device.userAgent ?? "", device.timezone ?? "", device.language ?? "",
            device.screenWidth.map(String.init) ?? "",
            device.screenHeight.map(String.init) ?? "", platform ?? "", platformVersion ?? "",
        ].joined(separator: "|")
        return sha256Hex(text)
    }
}
