import Foundation
import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage

/// Issue 63, 6: fingerprints sprayed from a shared address, in memory (the matcher the server
/// runs, on the candidates its store reads). On the carrier-heavy population, the carrier NAT
/// addresses with the most installs are each attacked once: `k` clicks from the address, each
/// with one of the `k` most common phones of the carriers (time zone, language, screen, Safari
/// version), sent all at once (20 s apart), every 15 minutes, or every hour. What the attack
/// took is the share of the address's organic installs in the next 24 hours attributed to one
/// of its clicks; what it cost is the share of the address's matchable installs then that lost
/// their own tap. Beside it, each matcher's recall and wrong attributions without an attack, on
/// the populations where taps crowd an address or a /64 (so the rule is seen to keep their recall).
///
///   linkrelay-server-bench spray [--clicks 100000] [--attacks 40]
enum SprayAttack {
    struct Options {
        var clicks = 100_000
        var attacks = 40

        init(_ arguments: ArraySlice<String>) {
            let values = ModeArguments(arguments, names: ["--clicks", "--attacks"])
            clicks = values.integer("--clicks", in: 1_000...2_000_000) ?? clicks
            attacks = values.integer("--attacks", in: 1...10_000) ?? attacks
        }
    }

    static let counts = [1, 2, 3, 5, 9, 20, 54]
    static let paces: [(String, Int64)] = [("at once (20 s apart)", 20_000), ("every 15 min", 900_000), ("every hour", 3_600_000)]

    /// The matchers compared: the default, the rule at 0.6.0's floor, and no rule.
    static let matchers: [(String, DeferredMatcher)] = [
        ("default (--sprayer-devices 3)", DeferredMatcher()),
        ("--sprayer-devices 10 (0.6.0's count, with the rate)", DeferredMatcher(sprayerDevices: 10)),
        ("no sprayer rule", DeferredMatcher(sprayerDevices: 1_000_000)),
    ]

    /// Whether it measured: some organic install followed a spray, and each population had matchable installs.
    static func run(_ arguments: ArraySlice<String>) -> Bool {
        let options = Options(arguments)
        let population = Population(clickCount: options.clicks, shape: .carrierHeavy)
        let data = Signals(population: population, projectID: "p", linkIDs: (0..<population.linkCount).map { "l\($0)" })
        let byNetwork = population.clicks.indices.reduce(into: [Int32: [Int]]()) {
            $0[population.clicks[$1].network, default: []].append($1)
        }
        // The carriers' addresses by their installs.
        var installsByAddress: [String: [Population.Install]] = [:]
        for install in population.installs where population.networks[install.network].kind == .carrier {
            installsByAddress[population.ip(device: install.device, network: install.network, at: install.time), default: []].append(
                install)
        }
        let attacked = installsByAddress.sorted { ($0.value.count, $0.key) > ($1.value.count, $1.key) }.prefix(options.attacks)
        // The carriers' most common phones, as an attacker who knows the market would pick them.
        var phones: [[Int]: Int] = [:]
        for device in population.devices where population.networks[device.network].kind == .carrier {
            phones[[device.timezone, device.language, device.screen, device.safariVersion], default: 0] += 1
        }
        let common = phones.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key.lexicographicallyPrecedes($1.key) }.map(\.key)
        say("Sprayed fingerprints on \(attacked.count) carrier NAT addresses (carrier-heavy, \(options.clicks) clicks), \(Date())")
        say(
            "\nShare of the address's organic installs in the 24 hours after the first spray that a spray took; in brackets, its matchable installs that lost their own tap:\n"
        )
        say("| matcher | sprayed | " + counts.map { "\($0) phones" }.joined(separator: " | ") + " |")
        say("|---|---|" + String(repeating: "---|", count: counts.count))
        var measured = true
        var organicSeen = 0
        for (name, matcher) in matchers {
            for (pace, every) in paces {
                var cells: [String] = []
                for count in counts {
                    var organic = 0, taken = 0, matchable = 0, lost = 0
                    for (index, (address, installs)) in attacked.enumerated() {
                        let first = installs.map(\.time).min() ?? population.start
                        let start = first - 1_800_000
                        let sprays = spray(
                            count, every: every, from: address, at: start, phones: common, population: population, attack: index)
                        let end = start + Int64(count - 1) * every
                        for install in installs where install.time > end && install.time <= start + 86_400_000 {
                            let (_, _, signals) = data.install(install)
                            let answer = match(
                                install, signals: signals, sprays: sprays, byNetwork: byNetwork, data: data, matcher: matcher)
                            if install.truth == .organic {
                                organic += 1
                                if answer?.hasPrefix("s") == true { taken += 1 }
                            } else if case .matchable(let device) = install.truth {
                                matchable += 1
                                let own = answer.flatMap { $0.hasPrefix("c") ? Int($0.dropFirst()) : nil }.map {
                                    Int(population.clicks[$0].device)
                                }
                                if own != device { lost += 1 }
                            }
                        }
                    }
                    organicSeen += organic
                    cells.append("\(percent(Double(taken) / Double(max(organic, 1)))) of \(organic) (\(lost) of \(matchable))")
                }
                say("| \(name) | \(pace) | " + cells.joined(separator: " | ") + " |")
            }
        }
        say("\nWithout an attack (every install, in memory): recall, wrong\n")
        say(
            "| matcher | "
                + [Population.Shape.carrierHeavy, .bench, .denseHouseholds, .ipv6Households].map(\.rawValue).joined(separator: " | ") + " |"
        )
        say("|---|---|---|---|---|")
        var quality: [[String]] = matchers.map { [$0.0] }
        for shape in [Population.Shape.carrierHeavy, .bench, .denseHouseholds, .ipv6Households] {
            let population = shape == .carrierHeavy ? population : Population(clickCount: options.clicks, shape: shape)
            let data =
                shape == .carrierHeavy
                ? data : Signals(population: population, projectID: "p", linkIDs: (0..<population.linkCount).map { "l\($0)" })
            let byNetwork =
                shape == .carrierHeavy
                ? byNetwork
                : population.clicks.indices.reduce(into: [Int32: [Int]]()) { $0[population.clicks[$1].network, default: []].append($1) }
            for (index, (_, matcher)) in matchers.enumerated() {
                var outcome = MatchOutcome()
                for install in population.installs {
                    let (_, _, signals) = data.install(install)
                    outcome.record(
                        install.truth,
                        attributedTo: InMemoryRelay.match(install, signals: signals, byNetwork: byNetwork, data: data, matcher: matcher))
                }
                if outcome.matchable == 0 { measured = false }
                quality[index].append("\(percent(outcome.recall)), \(percent(outcome.wrongShare)) of \(outcome.attributed)")
            }
        }
        for row in quality { say("| " + row.joined(separator: " | ") + " |") }
        return measured && organicSeen > 0
    }

    /// `count` clicks from `address`, `every` milliseconds from `start`, each one of the common
    /// phones (ids `s…`).
    static func spray(
        _ count: Int, every: Int64, from address: String, at start: Int64, phones: [[Int]], population: Population, attack: Int
    ) -> [ClickRecord] {
        (0..<count).map { index in
            let phone = phones[index % max(phones.count, 1)]
            let version = ["17_4", "17_3", "16_6", "15_8"][phone[3]]
            let agent =
                "Mozilla/5.0 (iPhone; CPU iPhone OS \(version) like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/\(version.replacingOccurrences(of: "_", with: ".")) Mobile/15E148 Safari/604.1"
            let screen = Population.screens[phone[2]]
            return ClickRecord(
                id: "s\(attack)-\(index)", linkID: "l0", projectID: "p",
                clickedAt: Date(timeIntervalSince1970: TimeInterval(start + Int64(index) * every) / 1000),
                device: DeviceSignals(
                    ip: address, networkPrefix: ClientAddress.networkPrefix(of: address), userAgent: agent,
                    timezone: Population.timezones[phone[0]],
                    language: Population.languages[phone[1]].0, screenWidth: screen.0, screenHeight: screen.1),
                platform: .ios, isBot: false)
        }
    }

    /// The id of the click `matcher` gives `install` among its network's clicks and the sprays
    /// made before it (newest first, as the store reads them), or `nil`.
    static func match(
        _ install: Population.Install, signals: DeviceSignals, sprays: [ClickRecord], byNetwork: [Int32: [Int]], data: Signals,
        matcher: DeferredMatcher
    ) -> String? {
        let now = Date(timeIntervalSince1970: TimeInterval(install.time) / 1000)
        var candidates = InMemoryRelay.candidates(for: install, byNetwork: byNetwork, data: data, limit: matcher.candidateLimit)
        candidates += sprays.filter { $0.clickedAt <= now }.map { MatchCandidate(click: $0, windowHours: 168) }
        candidates.sort { $0.click.clickedAt > $1.click.clickedAt }
        return matcher.best(for: signals, among: Array(candidates.prefix(matcher.candidateLimit)), at: now)?.click.id
    }
}
