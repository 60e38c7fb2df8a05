import Foundation
import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import LinkRelaySimulator

/// What one matcher made of the sampled installs.
struct MatchOutcome {
    var matchable = 0
    var attributedRight = 0
    var attributed = 0
    var attributedWrong = 0
    var organicAttributed = 0
    var installs = 0

    var recall: Double { matchable == 0 ? 0 : Double(attributedRight) / Double(matchable) }
    var wrongShare: Double { attributed == 0 ? 0 : Double(attributedWrong) / Double(attributed) }

    /// Counts one install whose truth is `truth`, attributed to a click of `device` (`nil`: organic;
    /// `-1`: a crawler's click).
    mutating func record(_ truth: Population.Truth, attributedTo device: Int?) {
        installs += 1
        if case .matchable = truth { matchable += 1 }
        guard let device else { return }
        attributed += 1
        if case .matchable(let own) = truth, own == device {
            attributedRight += 1
        } else {
            attributedWrong += 1
            if truth == .organic { organicAttributed += 1 }
        }
    }
}

/// The population's clicks and installs as the server stores and receives them.
struct Signals {
    let population: Population
    let projectID: String
    let linkIDs: [String]
    /// Every click as the server stores it, made once.
    private(set) var records: [ClickRecord] = []

    init(population: Population, projectID: String, linkIDs: [String]) {
        self.population = population
        self.projectID = projectID
        self.linkIDs = linkIDs
        records = population.clicks.indices.map(makeRecord)
    }

    func clickID(_ index: Int) -> String { "c\(index)" }

    func record(_ index: Int) -> ClickRecord { records[index] }

    private func makeRecord(_ index: Int) -> ClickRecord {
        let click = population.clicks[index]
        let ip: String
        var userAgent: String
        var timezone: String?
        var language: String?
        var screen: (Int, Int)?
        switch click.kind {
        case .tap:
            let device = population.devices[Int(click.device)]
            ip = population.ip(device: Int(click.device), network: Int(click.network), at: click.time)
            userAgent = population.browserUserAgent(device: Int(click.device))
            timezone = Population.timezones[device.timezone]
            language = Population.languages[device.language].0
            screen = Population.screens[device.screen]
        case .preview:
            ip = population.ip(device: Int(click.device), network: Int(click.network), at: click.time)
            userAgent = Population.previewUserAgent
        case .crawler:
            ip = population.networks[Int(click.network)].prefix + ".\(index % 250 + 2)"
            userAgent = Population.crawlerUserAgent
        }
        return ClickRecord(
            id: clickID(index), linkID: linkIDs[Int(click.link)], projectID: projectID,
            clickedAt: Date(timeIntervalSince1970: TimeInterval(click.time) / 1000),
            device: DeviceSignals(
                ip: ip, networkPrefix: ClientAddress.networkPrefix(of: ip), userAgent: userAgent, timezone: timezone, language: language,
                screenWidth: screen?.0, screenHeight: screen?.1),
            platform: .ios, isBot: ClickRecord.isBot(userAgent: userAgent))
    }

    /// The install body LinkForty's SDKs (and LinkRelay's adapter) send, and the address it comes from.
    func install(_ install: Population.Install) -> (body: [String: JSONValue], ip: String, signals: DeviceSignals) {
        let device = population.devices[install.device]
        let ip = population.ip(device: install.device, network: install.network, at: install.time)
        let screen = Population.screens[device.screen]
        let timezone = Population.timezones[device.timezone]
        let language = Population.languages[device.language].1
        let body: [String: JSONValue] = [
            "userAgent": .string(Population.appUserAgent), "timezone": .string(timezone), "language": .string(language),
            "screenWidth": .int(screen.0), "screenHeight": .int(screen.1), "platform": "iOS", "platformVersion": "17.4.1",
            "appVersion": "2.3.0", "attributionWindowHours": 168,
        ]
        let signals = DeviceSignals(
            ip: ip, networkPrefix: ClientAddress.networkPrefix(of: ip), userAgent: Population.appUserAgent, timezone: timezone,
            language: language, screenWidth: screen.0, screenHeight: screen.1)
        return (body, ip, signals)
    }
}

/// LinkForty Core's matcher, replayed exactly as `shared/protocols/linkforty.md` §4 says: the
/// newest 1,000 clicks (of every link) within 90 days, each within its link's window, scored
/// 40/30/10/10/10, attributed at 70, ties to the newest. Bots are candidates (Core does not
/// filter them). Scored by the root package's own reproduction of Core
/// (`LinkFortyMatcher`, which LinkForty's emulation uses), not by the server's
/// `DeferredMatcher.score`: a scoring bug in the server shows here instead of on both sides.
enum CoreReplay {
    static func match(_ install: Population.Install, signals: DeviceSignals, in data: Signals) -> Int? {
        let clicks = data.population.clicks
        // The newest click at or before the install: clicks are sorted by time.
        var low = 0
        var high = clicks.count
        while low < high {
            let middle = (low + high) / 2
            if clicks[middle].time <= install.time { low = middle + 1 } else { high = middle }
        }
        let oldestTime = install.time - 2160 * 3_600_000
        var candidates: [LinkFortyMatcher.Candidate] = []
        var index = low - 1
        while index >= 0, candidates.count < 1000, clicks[index].time >= oldestTime {
            let record = data.record(index)
            candidates.append(
                LinkFortyMatcher.Candidate(
                    clickID: record.id, clickedAt: record.clickedAt,
                    attributionWindowHours: Population.windows[Int(clicks[index].link) % Population.windows.count],
                    fingerprint: LinkFortyMatcher.Fingerprint(
                        ip: record.device.ip, userAgent: record.device.userAgent, timezone: record.device.timezone,
                        language: record.device.language,
                        screenWidth: record.device.screenWidth, screenHeight: record.device.screenHeight)))
            index -= 1
        }
        let fingerprint = LinkFortyMatcher.Fingerprint(
            ip: signals.ip, userAgent: signals.userAgent, timezone: signals.timezone, language: signals.language,
            screenWidth: signals.screenWidth, screenHeight: signals.screenHeight)
        let now = Date(timeIntervalSince1970: TimeInterval(install.time) / 1000)
        return LinkFortyMatcher().match(fingerprint, among: candidates, now: now)
            .flatMap { Int($0.clickID.dropFirst()) }.map { Int(clicks[$0].device) }
    }
}

/// Which installs the signals can tell apart at all: a matchable install is distinguishable
/// when every live, non-bot click of its network that agrees with it on time zone, language and
/// screen is its own phone's.
enum Oracle {
    static func distinguishable(
        _ install: Population.Install, signals: DeviceSignals, byNetwork: [Int32: [Int]], data: Signals
    ) -> Bool {
        let population = data.population
        guard case .matchable(let device) = install.truth else { return false }
        var own = false
        for index in byNetwork[Int32(install.network)] ?? [] {
            let click = population.clicks[index]
            guard click.kind == .tap, click.time <= install.time, install.time - click.time <= Population.window(link: click.link)
            else { continue }
            let record = data.record(index)
            guard record.device.timezone == signals.timezone,
                record.device.language.map({ $0.prefix(2).lowercased() }) == signals.language.map({ $0.prefix(2).lowercased() }),
                record.device.screenWidth == signals.screenWidth, record.device.screenHeight == signals.screenHeight
            else { continue }
            if Int(click.device) == device { own = true } else { return false }
        }
        return own
    }
}

/// LinkRelay's matcher in memory, on the candidates the store's query returns (the install's
/// network, 90 days, newest first, bots left out, at most `limit`): for choosing its settings
/// quickly; the figures that count go through the install endpoint.
enum InMemoryRelay {
    static func match(
        _ install: Population.Install, signals: DeviceSignals, byNetwork: [Int32: [Int]], data: Signals, matcher: DeferredMatcher
    ) -> Int? {
        let candidates = candidates(for: install, byNetwork: byNetwork, data: data, limit: matcher.candidateLimit)
        let now = Date(timeIntervalSince1970: TimeInterval(install.time) / 1000)
        return matcher.best(for: signals, among: candidates, at: now).flatMap { Int($0.click.id.dropFirst()) }.map {
            Int(data.population.clicks[$0].device)
        }
    }

    /// The clicks the store reads for `install`: its network's, before it, within 90 days, bots
    /// left out, newest first, at most `limit`.
    static func candidates(for install: Population.Install, byNetwork: [Int32: [Int]], data: Signals, limit: Int) -> [MatchCandidate] {
        let clicks = data.population.clicks
        var candidates: [MatchCandidate] = []
        for index in (byNetwork[Int32(install.network)] ?? []).reversed() where clicks[index].time <= install.time {
            let record = data.record(index)
            guard !record.isBot, install.time - clicks[index].time <= 2160 * 3_600_000 else { continue }
            candidates.append(
                MatchCandidate(click: record, windowHours: Population.windows[Int(clicks[index].link) % Population.windows.count]))
            if candidates.count == limit { break }
        }
        return candidates
    }
}

/// The two simplest matchers anyone could build on the same data (issue 48): the newest live tap
/// (not a bot's, before the install, within its link's window) with the install's time zone,
/// language (first two letters) and screen, from the same network (IPv4 /24, IPv6 /64), or from
/// the same exact address. The server must never do worse than either.
enum Reference {
    static func match(
        _ install: Population.Install, signals: DeviceSignals, byNetwork: [Int32: [Int]], data: Signals, exactAddress: Bool
    ) -> Int? {
        let clicks = data.population.clicks
        for index in (byNetwork[Int32(install.network)] ?? []).reversed() {
            let click = clicks[index]
            guard click.time <= install.time, install.time - click.time <= Population.window(link: click.link) else { continue }
            let record = data.record(index)
            guard !record.isBot, record.device.networkPrefix == signals.networkPrefix, !exactAddress || record.device.ip == signals.ip,
                record.device.timezone == signals.timezone,
                record.device.language.map({ $0.prefix(2).lowercased() }) == signals.language.map({ $0.prefix(2).lowercased() }),
                record.device.screenWidth == signals.screenWidth, record.device.screenHeight == signals.screenHeight
            else { continue }
            return Int(click.device)
        }
        return nil
    }
}
