import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import Synchronization

// linkrelay-server-bench: LinkRelay Server measured against LinkForty Core's algorithm on the
// same synthetic population (see Population), with the truth known.
//
//   swift run -c release --package-path Server linkrelay-server-bench [--clicks 1000,100000,1000000]
//       [--installs 3000] [--postgres URL] [--population bench|dense-households|sparse-households|
//       carrier-heavy|ipv6-households|all] [--explore] [--smoke]
//   linkrelay-server-bench stuffed [--clicks 10000] [--installs 200] [--postgres URL]
//   linkrelay-server-bench dashboard [--clicks 1000000] [--links 100] [--requests 200] [--postgres URL]
//   linkrelay-server-bench spray [--clicks 100000] [--attacks 40]
//
// Prints one table per population and engine: recall and wrong attributions for LinkRelay
// Server (through its real install endpoint over HTTP on loopback), for the two reference
// matchers (the newest tap with the install's zone, language and screen from the same /24, or
// from the same address) and for Core's replayed matcher, the recall of an oracle that knows
// which installs the signals can tell apart, and the install request's latency, with verdicts
// against the targets at the largest size.

struct Options {
    var sizes = [1_000, 100_000, 1_000_000]
    var installs = 3_000
    var postgres: URL?
    var smoke = false
    var explore = false
    /// Where an install's time goes: the candidate query, the scoring and the durable write,
    /// each timed on its own after the request (so the request's own figures in that run are
    /// not the ones to quote).
    var phases = false
    /// Which population (``Population/Shape``); `--population all` runs each.
    var shapes: [Population.Shape] = [.bench]
    /// The shares of installs whose phone tapped the pasteboard landing page's button and
    /// allowed the paste (`--token-share 0,0.1,0.3,0.5`): their install reports carry the click
    /// token of their own tap. Default: none.
    var tokenShares: [Double] = [0]

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--clicks": sizes = (iterator.next() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--installs": installs = iterator.next().flatMap { Int($0) } ?? installs
            case "--postgres": postgres = iterator.next().flatMap { URL(string: $0) }
            case "--explore": explore = true
            case "--phases": phases = true
            case "--token-share":
                tokenShares = (iterator.next() ?? "").split(separator: ",").compactMap { Double($0) }.filter {
                    $0.isFinite && (0...1).contains($0)
                }
                if tokenShares.isEmpty {
                    FileHandle.standardError.write(Data("--token-share takes shares from 0 to 1, such as 0,0.1,0.3,0.5\n".utf8))
                    exit(64)
                }
            case "--population":
                let name = iterator.next() ?? ""
                if name == "all" {
                    shapes = Population.Shape.allCases
                } else if let shape = Population.Shape(rawValue: name) {
                    shapes = [shape]
                } else {
                    FileHandle.standardError.write(
                        Data(
                            "--population takes all or one of: \(Population.Shape.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8)
                    )
                    exit(64)
                }
            case "--smoke":
                smoke = true
                sizes = [1_000, 2_000]
                installs = 200
            default:
                FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
                exit(64)
            }
        }
        if postgres == nil, let url = ProcessInfo.processInfo.environment["LINKRELAY_TEST_POSTGRES"] { postgres = URL(string: url) }
    }
}

struct Row {
    var clicks: Int
    var engine: String
    var sampled = 0
    var matchable = 0
    var oracle = 0.0
    var relay = MatchOutcome()
    var core = MatchOutcome()
    /// The references: the newest matching tap of the same network, of the same address.
    var sameNetwork = MatchOutcome()
    var sameAddress = MatchOutcome()
    var latencies: [Double] = []
    var setupSeconds = 0.0
    /// The SQLite file (and its WAL) per click stored, indexes included.
    var bytesPerClick: Double?
    /// Installs that carried a click token (``carriesToken(_:share:)``).
    var tokens = 0

    func percentile(_ p: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        let sorted = latencies.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }
}

/// The server's clock in a replay: set to each install's date. Its uptime is that date's seconds
/// (a replay only moves forward); a sleep waits that long in real time (nothing here sleeps).
final class BenchClock: LinkRelayClock, Sendable {
    private let now: Mutex<Date>
    init(_ date: Date = Date()) { now = Mutex(date) }
    func set(_ date: Date) { now.withLock { $0 = date } }
    var currentDate: Date { now.withLock { $0 } }
    var uptime: TimeInterval { currentDate.timeIntervalSince1970 }

    func sleep(untilUptime deadline: TimeInterval) async throws {
        try await Task.sleep(for: .seconds(min(max(deadline - uptime, 0), 86_400)))
    }
}

func run(clicks size: Int, shape: Population.Shape, engine: String, tokenShare: Double = 0, options: Options) async throws -> Row {
    let row = Row(clicks: size, engine: engine)
    let population = Population(clickCount: size, shape: shape)
    return try await ScratchStore.with(engine: engine, postgres: options.postgres, name: "\(size)") { scratch in
        try await run(clicks: size, population: population, row: row, scratch: scratch, tokenShare: tokenShare, options: options)
    }
}

/// Whether the `index`th sampled install's phone is among the `share` that tapped the landing
/// page's button and allowed the paste: a fixed spread of the index (Knuth's multiplicative
/// hash), the same installs in every run.
func carriesToken(_ index: Int, share: Double) -> Bool {
    guard share > 0 else { return false }
    return Double((UInt64(index) &* 2_654_435_761) % 1_000_000) < share * 1_000_000
}

func run(
    clicks size: Int, population: Population, row: Row, scratch: ScratchStore, tokenShare: Double = 0, options: Options
) async throws -> Row {
    var row = row
    let store = scratch.store
    let engine = scratch.engine
    _ = try await store.migrate()
    let project = try await store.createProject(name: "bench", at: Date())
    let key = APIKeys.issue(project: project.id, scope: .sdk, name: "bench", at: Date())
    try await store.insertKey(key.record)
    var linkIDs: [String] = []
    for index in 0..<population.linkCount {
        let link = LinkRecord(
            projectID: project.id, shortCode: "l\(index)", originalURL: "https://acme.example/\(index)", deepLinkPath: "/p/\(index)",
            attributionWindowHours: Population.windows[index % Population.windows.count], createdAt: Date())
        try await store.insertLink(link)
        linkIDs.append(link.id)
    }
    let data = Signals(population: population, projectID: project.id, linkIDs: linkIDs)
    let byNetwork = population.clicks.indices.reduce(into: [Int32: [Int]]()) { $0[population.clicks[$1].network, default: []].append($1) }
    // Each device's taps, oldest first: the tap a token names.
    let tapsByDevice: [Int32: [Int]] =
        tokenShare > 0
        ? population.clicks.indices.reduce(into: [:]) { taps, index in
            let click = population.clicks[index]
            if click.kind == .tap { taps[click.device, default: []].append(index) }
        } : [:]

    // The sampled installs, evenly through time.
    let stride = max(1, population.installs.count / options.installs)
    let sample = Swift.stride(from: 0, to: population.installs.count, by: stride).map { population.installs[$0] }
    row.sampled = sample.count

    let clock = BenchClock()
    let app = Application(
        router: ServerApplication.router(store: store, configuration: ServerConfiguration(trustProxy: true), clock: clock),
        configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    let setupStart = ContinuousClock.now
    struct Tally: Sendable {
        var relay = MatchOutcome()
        var core = MatchOutcome()
        var sameNetwork = MatchOutcome()
        var sameAddress = MatchOutcome()
        var latencies: [Double] = []
        var distinguishable = 0
        var importTime = Duration.zero
        var phases: [(candidates: Int, query: Double, score: Double, write: Double)] = []
        var tokens = 0
    }
    let tally = try await app.test(.live) { client in
        var tally = Tally()
        var imported = 0
        // PostgreSQL's day partitions over the population's days, as the server's hourly pass
        // would have made them.
        var day = population.start
        while day <= (population.installs.last?.time ?? population.start) {
            _ = try await store.maintainClickPartitions(now: Date(timeIntervalSince1970: TimeInterval(day) / 1000), droppingBefore: nil)
            day += 86_400_000
        }
        for (sampleIndex, install) in sample.enumerated() {
            // The clicks made before this install, stored as the redirect would have.
            var batch: [ClickRecord] = []
            while imported < population.clicks.count, population.clicks[imported].time <= install.time {
                batch.append(data.record(imported))
                imported += 1
                if batch.count == 20_000 {
                    let started = ContinuousClock.now
                    try await store.importClicks(batch)
                    tally.importTime += ContinuousClock.now - started
                    batch.removeAll(keepingCapacity: true)
                }
            }
            let started = ContinuousClock.now
            try await store.importClicks(batch)
            tally.importTime += ContinuousClock.now - started
            clock.set(Date(timeIntervalSince1970: TimeInterval(install.time) / 1000))

            var (body, ip, signals) = data.install(install)
            // A phone that tapped the landing page's button: its install names its own tap, the
            // newest from this network before the install, which the page stored a token for.
            if case .matchable(let device) = install.truth, carriesToken(sampleIndex, share: tokenShare),
                let tap = tapsByDevice[Int32(device)]?.last(where: {
                    population.clicks[$0].time <= install.time && Int(population.clicks[$0].network) == install.network
                })
            {
                let click = data.record(tap)
                let token = ClickTokens.make()
                let window = Population.windows[Int(population.clicks[tap].link) % Population.windows.count]
                try await store.insertClickToken(
                    ClickTokenRecord(
                        tokenHash: ClickTokens.hash(token), projectID: project.id, linkID: click.linkID, clickID: click.id,
                        clickedAt: click.clickedAt, expiresAt: click.clickedAt.addingTimeInterval(TimeInterval(window) * 3600)))
                body["clickToken"] = .string(token)
                tally.tokens += 1
            }
            var headers: HTTPFields = [.authorization: "Bearer \(key.secret)", .contentType: "application/json"]
            headers[.init("X-Forwarded-For")!] = ip
            let sent = ContinuousClock.now
            let answer = try await client.execute(
                uri: "/api/sdk/v1/install", method: .post, headers: headers, body: ByteBuffer(data: try JSONEncoder().encode(body))
            ) { response in
                try JSONDecoder().decode([String: JSONValue].self, from: Data(buffer: response.body))
            }
            let elapsed = ContinuousClock.now - sent
            tally.latencies.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            var relayDevice: Int?
            if case .object(let link)? = answer["deepLinkData"], case .string(let clickID)? = link["clickId"],
                let index = Int(clickID.dropFirst())
            {
                relayDevice = Int(population.clicks[index].device)
            }
            tally.relay.record(install.truth, attributedTo: relayDevice)
            tally.core.record(install.truth, attributedTo: CoreReplay.match(install, signals: signals, in: data))
            tally.sameNetwork.record(
                install.truth,
                attributedTo: Reference.match(install, signals: signals, byNetwork: byNetwork, data: data, exactAddress: false))
            tally.sameAddress.record(
                install.truth,
                attributedTo: Reference.match(install, signals: signals, byNetwork: byNetwork, data: data, exactAddress: true))
            if Oracle.distinguishable(install, signals: signals, byNetwork: byNetwork, data: data) { tally.distinguishable += 1 }
            if options.phases {
                let now = Date(timeIntervalSince1970: TimeInterval(install.time) / 1000)
                // What the install endpoint does (its AttributionService), timed step by step.
                let report = InstallReport(signals: signals, platform: "iOS", platformVersion: "17.4.1", attributionWindowHours: 168)
                let timings = try await AttributionService(store: store, matcher: DeferredMatcher()).attribute(
                    report, project: project.id, at: now
                ).timings
                func ms(_ duration: Duration) -> Double {
                    Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1000
                }
                tally.phases.append((timings.candidates, ms(timings.read), ms(timings.scoring), ms(timings.write)))
            }
        }
        if !tally.phases.isEmpty {
            func p(_ values: [Double], _ q: Double) -> Double { values.sorted()[min(values.count - 1, Int(Double(values.count) * q))] }
            let phases = tally.phases
            say("  phases at \(size) clicks (\(engine)), p50 / p99 / max:")
            say(
                String(
                    format: "    candidates read     %.0f / %.0f / %.0f", p(phases.map { Double($0.candidates) }, 0.5),
                    p(phases.map { Double($0.candidates) }, 0.99), phases.map { Double($0.candidates) }.max() ?? 0))
            say(
                String(
                    format: "    crowd + candidates  %.2f / %.2f / %.2f ms", p(phases.map(\.query), 0.5), p(phases.map(\.query), 0.99),
                    phases.map(\.query).max() ?? 0))
            say(
                String(
                    format: "    scoring             %.2f / %.2f / %.2f ms", p(phases.map(\.score), 0.5), p(phases.map(\.score), 0.99),
                    phases.map(\.score).max() ?? 0))
            say(
                String(
                    format: "    durable write       %.2f / %.2f / %.2f ms", p(phases.map(\.write), 0.5), p(phases.map(\.write), 0.99),
                    phases.map(\.write).max() ?? 0))
            let slow = phases.sorted { $0.query + $0.score > $1.query + $1.score }.prefix(phases.count / 100 + 1)
            say(
                String(
                    format: "    the slowest 1 %% of reads+scoring: %.0f candidates on average",
                    slow.map { Double($0.candidates) }.reduce(0, +) / Double(slow.count)))
        }
        return tally
    }
    row.relay = tally.relay
    row.tokens = tally.tokens
    row.core = tally.core
    row.sameNetwork = tally.sameNetwork
    row.sameAddress = tally.sameAddress
    row.latencies = tally.latencies
    let distinguishable = tally.distinguishable
    let importTime = tally.importTime
    row.setupSeconds = Double((ContinuousClock.now - setupStart - importTime).components.seconds)
    row.matchable = row.relay.matchable
    row.oracle = row.matchable == 0 ? 0 : Double(distinguishable) / Double(row.matchable)
    if engine == "sqlite" {
        // Closed first, as before: the last connection's close checkpoints the WAL into the file.
        try await store.close()
        row.bytesPerClick = Double(try await scratch.bytes()) / Double(max(population.clicks.count, 1))
    }
    return row
}

func percent(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }

/// A line out at once (also into a file or a pipe).
func say(_ line: String = "") {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// Other modes, for Server/scripts/throughput.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "bare" {
    try await BareRedirect.run(port: CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 0 : 0)
    exit(0)
}
if CommandLine.arguments.count > 3, CommandLine.arguments[1] == "seed" {
    try await Seed.run(
        database: CommandLine.arguments[2], clicks: Int(CommandLine.arguments[3]) ?? 1_000_000,
        installsFile: CommandLine.arguments.count > 4 ? CommandLine.arguments[4] : nil)
    exit(0)
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "stuffed" {
    exit(try await StuffedNetwork.run(CommandLine.arguments.dropFirst(2)) ? 0 : 1)
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "dashboard" {
    exit(try await DashboardTiming.run(CommandLine.arguments.dropFirst(2)) ? 0 : 1)
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "metrics-cost" {
    exit(MetricsCost.run(CommandLine.arguments.dropFirst(2)) ? 0 : 1)
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "spray" {
    exit(SprayAttack.run(CommandLine.arguments.dropFirst(2)) ? 0 : 1)
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "retention" {
    exit(try await RetentionRun.run(CommandLine.arguments.dropFirst(2)) ? 0 : 1)
}

let options = Options(CommandLine.arguments)
if options.explore {
    Explore.run(options)
    exit(0)
}
var engines = ["sqlite"]
let tokenRuns = options.tokenShares != [0]
if options.postgres != nil { engines.append("postgres") }
say("LinkRelay Server vs LinkForty Core's matcher, on the same synthetic population (seeded)")
say(
    "machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GB; \(Date())\n"
)
var failed = false
for shape in options.shapes {
    for engine in engines {
        for tokenShare in options.tokenShares {
            say("engine: \(engine)")
            say("population: \(shape.rawValue)")
            if tokenRuns { say("token share: \(tokenShare) (installs whose phone tapped the landing page's button and allowed the paste)") }
            say(
                "| clicks in window | installs (matchable) | oracle recall | LinkRelay recall (÷ oracle) | LinkRelay wrong | same /24 ref. recall | wrong | same address ref. recall | wrong | Core recall | Core wrong | install p50 / p99 | bytes per click |"
            )
            say("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
            var rows: [Row] = []
            for size in options.sizes {
                let row = try await run(clicks: size, shape: shape, engine: engine, tokenShare: tokenShare, options: options)
                rows.append(row)
                let ratio = row.oracle == 0 ? 0 : row.relay.recall / row.oracle
                say(
                    "| \(size) | \(row.sampled) (\(row.matchable)) | \(percent(row.oracle)) | \(percent(row.relay.recall)) (\(String(format: "%.3f", ratio))) | "
                        + "\(percent(row.relay.wrongShare)) of \(row.relay.attributed) | "
                        + "\(percent(row.sameNetwork.recall)) | \(percent(row.sameNetwork.wrongShare)) | \(percent(row.sameAddress.recall)) | \(percent(row.sameAddress.wrongShare)) | "
                        + "\(percent(row.core.recall)) | \(percent(row.core.wrongShare)) of \(row.core.attributed) | "
                        + String(format: "%.2f / %.2f ms | ", row.percentile(0.5), row.percentile(0.99))
                        + (row.bytesPerClick.map { String(format: "%.0f |", $0) } ?? "– |"))
            }
            if let largest = rows.last, !options.smoke, tokenRuns {
                let relay = largest.relay
                let verdicts = [
                    (
                        "recall ≥ the oracle's", relay.recall >= largest.oracle,
                        "\(percent(relay.recall)) against \(percent(largest.oracle)); \(largest.tokens) installs carried a token"
                    ),
                    (
                        "wrong attributions ≤ 2 % of attributed installs", relay.wrongShare <= 0.02,
                        "\(percent(relay.wrongShare)) of \(relay.attributed)"
                    ),
                ]
                say("\nat \(largest.clicks) clicks on \(engine), \(shape.rawValue), token share \(tokenShare):")
                for (target, met, figure) in verdicts {
                    say("  \(met ? "met" : "MISSED"): \(target) (\(figure))")
                    // Judged where the issue sets it: a share of 0.3 and more.
                    if !met, tokenShare >= 0.3 { failed = true }
                }
            } else if let largest = rows.last, !options.smoke {
                let ratio = largest.oracle == 0 ? 0 : largest.relay.recall / largest.oracle
                let relay = largest.relay
                let verdicts = [
                    ("recall ≥ 0.99 × the oracle's", ratio >= 0.99, String(format: "%.3f", ratio)),
                    (
                        "wrong attributions ≤ 1 %", relay.wrongShare <= 0.01,
                        "\(percent(relay.wrongShare)): \(relay.organicAttributed) installs of phones that never tapped, "
                            + "\(relay.attributedWrong - relay.organicAttributed) given another phone's tap or a tap from another network or past its window"
                    ),
                    ("install p99 ≤ 10 ms", largest.percentile(0.99) <= 10, String(format: "%.2f ms", largest.percentile(0.99))),
                    (
                        "recall ≥ the same-/24 reference's", relay.recall >= largest.sameNetwork.recall,
                        "\(percent(relay.recall)) against \(percent(largest.sameNetwork.recall))"
                    ),
                    (
                        "wrong ≤ the same-address reference's", relay.wrongShare <= largest.sameAddress.wrongShare,
                        "\(percent(relay.wrongShare)) against \(percent(largest.sameAddress.wrongShare))"
                    ),
                ]
                say("\nat \(largest.clicks) clicks on \(engine), \(shape.rawValue):")
                for (target, met, figure) in verdicts {
                    say("  \(met ? "met" : "MISSED"): \(target) (\(figure))")
                    if !met { failed = true }
                }
            }
            say("")
        }
    }
}
exit(failed ? 1 : 0)
