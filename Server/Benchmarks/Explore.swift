import Foundation
import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage

/// `--explore`: the matcher's settings side by side, in memory (no server), on each population
/// and size, beside Core's replay and the two references; for choosing the defaults quickly (the
/// figures that count go through the install endpoint).
enum Explore {
    static func run(_ options: Options) {
        let core = 2160  // a fingerprint window no shorter than any link's: Core's behaviour
        let settings: [(String, DeferredMatcher)] = [
            (
                "Core's rules, indexed",
                DeferredMatcher(
                    sharedNetworkDevices: 1_000_000, refusesAmbiguousMatches: false, fingerprintWindowHours: core,
                    matchesAddressFirst: false)
            ),
            ("+ ambiguity", DeferredMatcher(sharedNetworkDevices: 1_000_000, fingerprintWindowHours: core, matchesAddressFirst: false)),
            (
                "+ crowd 20",
                DeferredMatcher(
                    sharedNetworkDevices: 20, refusesAmbiguousMatches: false, fingerprintWindowHours: core, matchesAddressFirst: false)
            ),
            ("+ ambiguity + crowd 20", DeferredMatcher(sharedNetworkDevices: 20, fingerprintWindowHours: core, matchesAddressFirst: false)),
            ("+ ambiguity + crowd 20 + fingerprint 48 h", DeferredMatcher(fingerprintWindowHours: 48, matchesAddressFirst: false)),
            ("+ ambiguity + crowd 20 + fingerprint 24 h (the default before issue 48)", DeferredMatcher(matchesAddressFirst: false)),
            ("+ ambiguity + crowd 20 + fingerprint 12 h", DeferredMatcher(fingerprintWindowHours: 12, matchesAddressFirst: false)),
            ("+ ambiguity + crowd 5 + fingerprint 24 h", DeferredMatcher(sharedNetworkDevices: 5, matchesAddressFirst: false)),
            ("address first + IPv4 /24s, without ambiguity", DeferredMatcher(refusesAmbiguousMatches: false, scoresIPv4Networks: true)),
            ("address first + IPv4 /24s + ambiguity + crowd 20 + fingerprint 24 h", DeferredMatcher(scoresIPv4Networks: true)),
            (
                "address first + IPv4 /24s + ambiguity + crowd 20 + fingerprint 48 h",
                DeferredMatcher(fingerprintWindowHours: 48, scoresIPv4Networks: true)
            ),
            ("address first, without ambiguity", DeferredMatcher(refusesAmbiguousMatches: false)),
            ("address first + ambiguity + crowd 20 + fingerprint 24 h (the default)", DeferredMatcher()),
            ("address first + ambiguity + no crowd + fingerprint 24 h", DeferredMatcher(sharedNetworkDevices: 1_000_000)),
            ("address first + ambiguity + crowd 20 + fingerprint 48 h", DeferredMatcher(fingerprintWindowHours: 48)),
            ("address first + ambiguity + crowd 20 + fingerprint 168 h", DeferredMatcher(fingerprintWindowHours: 168)),
        ]
        for (shape, size) in options.shapes.flatMap({ shape in options.sizes.map { (shape, $0) } }) {
            let population = Population(clickCount: size, shape: shape)
            let data = Signals(population: population, projectID: "p", linkIDs: (0..<population.linkCount).map { "l\($0)" })
            let byNetwork = population.clicks.indices.reduce(into: [Int32: [Int]]()) {
                $0[population.clicks[$1].network, default: []].append($1)
            }
            let stride = max(1, population.installs.count / options.installs)
            let sample = Swift.stride(from: 0, to: population.installs.count, by: stride).map { population.installs[$0] }
            var oracle = 0
            var matchable = 0
            var outcomes = [MatchOutcome](repeating: MatchOutcome(), count: settings.count)
            var core = MatchOutcome()
            var sameNetwork = MatchOutcome()
            var sameAddress = MatchOutcome()
            for install in sample {
                let (_, _, signals) = data.install(install)
                if case .matchable = install.truth { matchable += 1 }
                if Oracle.distinguishable(install, signals: signals, byNetwork: byNetwork, data: data) { oracle += 1 }
                core.record(install.truth, attributedTo: CoreReplay.match(install, signals: signals, in: data))
                sameNetwork.record(
                    install.truth,
                    attributedTo: Reference.match(install, signals: signals, byNetwork: byNetwork, data: data, exactAddress: false))
                sameAddress.record(
                    install.truth,
                    attributedTo: Reference.match(install, signals: signals, byNetwork: byNetwork, data: data, exactAddress: true))
                for (index, setting) in settings.enumerated() {
                    outcomes[index].record(
                        install.truth,
                        attributedTo: InMemoryRelay.match(install, signals: signals, byNetwork: byNetwork, data: data, matcher: setting.1))
                }
            }
            let oracleRecall = Double(oracle) / Double(max(matchable, 1))
            say(
                "\(shape.rawValue), \(size) clicks, \(sample.count) installs (\(matchable) matchable), oracle recall \(percent(oracleRecall))"
            )
            say("  Core replay: recall \(percent(core.recall)), wrong \(percent(core.wrongShare)) of \(core.attributed)")
            say(
                "  same /24, zone, language, screen: recall \(percent(sameNetwork.recall)) (\(String(format: "%.3f", sameNetwork.recall / max(oracleRecall, 0.0001)))× oracle), wrong \(percent(sameNetwork.wrongShare)) of \(sameNetwork.attributed)"
            )
            say(
                "  same address, zone, language, screen: recall \(percent(sameAddress.recall)) (\(String(format: "%.3f", sameAddress.recall / max(oracleRecall, 0.0001)))× oracle), wrong \(percent(sameAddress.wrongShare)) of \(sameAddress.attributed)"
            )
            for (index, setting) in settings.enumerated() {
                let outcome = outcomes[index]
                say(
                    "  \(setting.0): recall \(percent(outcome.recall)) (\(String(format: "%.3f", outcome.recall / max(oracleRecall, 0.0001)))× oracle), wrong \(percent(outcome.wrongShare)) of \(outcome.attributed) (organic attributed \(outcome.organicAttributed))"
                )
            }
        }
    }
}
