import Foundation

/// The clicks a candidate list holds that are not taps of their own: a tap's repeats, and a
/// sprayer's fingerprints (issue 48, §4.2; issue 63, 6).
extension DeferredMatcher {
    /// The first span at which ``sprayerDevices`` distinct devices can make an address a sprayer: 10 minutes.
    package static let sprayWindow: TimeInterval = 600

    /// The spans an address's distinct devices are counted in, each with the fewest that can make
    /// it a sprayer there: `floor` within 10 minutes, `floor + 2` within an hour, `3 × floor`
    /// within four hours.
    package static func sprayScales(floor: Int) -> [(span: TimeInterval, floor: Int)] {
        [(sprayWindow, floor), (3600, floor + 2), (4 * 3600, 3 * floor)]
    }

    /// How many times the address's own rate (its distinct devices over the fingerprint's
    /// window, spread evenly) a span's distinct devices must reach to be a sprayer's: 3.
    package static let sprayFactor = 3.0

    /// How close two identical clicks (one address, one device: user agent, time zone, language,
    /// screen) must be to be one tap: 30 seconds.
    package static let tapSpan: TimeInterval = 30

    /// The ids of the clicks that repeat an earlier identical click within ``tapSpan`` (each
    /// compared with the one before it, so a run of them is one tap): only the first of a tap
    /// is a candidate. On a shared address (a carrier's NAT, an office) a forged click copying
    /// the victim's agent and fingerprint, sent a second after the real tap, was the newer of
    /// two identical clicks and took the install (issue 63, 6); a person who taps twice, or
    /// reloads, is attributed to the first. Linear in the candidates (newest first).
    static func repeatedTaps(in candidates: [MatchCandidate]) -> Set<String> {
        var previous: [String: Date] = [:]
        var repeated = Set<String>()
        for candidate in candidates.reversed() {
            guard let ip = candidate.click.device.ip else { continue }
            let key = ip + "\u{0}" + deviceSignature(candidate.click.device)
            if let earlier = previous[key], candidate.click.clickedAt.timeIntervalSince(earlier) <= tapSpan {
                repeated.insert(candidate.click.id)
            }
            previous[key] = candidate.click.clickedAt
        }
        return repeated
    }

    /// The ids of the clicks made by sprayers (``sprayerDevices``): for each address (an IPv6
    /// client's /64), at each of
    /// ``sprayScales(floor:)``, the clicks of every span in which its distinct devices reach
    /// the span's floor and ``sprayFactor`` times the address's own rate: its distinct devices
    /// clicking at or after `since`, spread over `span` seconds. Only those clicks are judged
    /// (older ones can no longer match a fingerprint). Linear in the candidates after sorting
    /// each address's clicks by time.
    static func sprayedClicks(in candidates: [MatchCandidate], floor: Int, since: Date, span: TimeInterval) -> Set<String> {
        // Only clicks a fingerprint may still match (at or after `since`) are judged, against
        // the same span's rate: a busy morning days ago decides nothing today.
        // An IPv6 client is its /64: a sprayer there picks a new address for each fingerprint
        // at no cost (2⁶⁴ of them), where one IPv4 address is what a NAT shares.
        var byAddress: [String: [ClickRecord]] = [:]
        for candidate in candidates where candidate.click.clickedAt >= since {
            guard let ip = candidate.click.device.ip else { continue }
            let key = ClientAddress.isIPv6(ip) ? candidate.click.device.networkPrefix ?? ip : ip
            byAddress[key, default: []].append(candidate.click)
        }
        let scales = sprayScales(floor: max(floor, 2))
        var sprayed = Set<String>()
        for (_, clicks) in byAddress where clicks.count >= max(floor, 2) {
            let sorted = clicks.sorted { $0.clickedAt < $1.clickedAt }
            let signatures = sorted.map { deviceSignature($0.device) }
            let daily = Set(signatures).count
            for scale in scales {
                // The address's own rate in this span, times the factor (bounded: at most the
                // candidates' count times the factor and the spans' ratio).
                let expected = sprayFactor * Double(daily) * scale.span / max(span, 1)
                let threshold = max(scale.floor, Int(min(expected, 1e9).rounded(.up)))
                guard clicks.count >= threshold else { continue }
                var counts: [String: Int] = [:]
                var start = 0
                // Clicks before this index are marked already: each is marked once.
                var markedUpTo = 0
                for end in sorted.indices {
                    counts[signatures[end], default: 0] += 1
                    while sorted[end].clickedAt.timeIntervalSince(sorted[start].clickedAt) > scale.span {
                        counts[signatures[start]]! -= 1
                        if counts[signatures[start]] == 0 { counts[signatures[start]] = nil }
                        start += 1
                    }
                    if counts.count >= threshold {
                        for index in max(start, markedUpTo)...end { sprayed.insert(sorted[index].id) }
                        markedUpTo = end + 1
                    }
                }
            }
        }
        return sprayed
    }
}
