import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// Conversion values owned by LinkRelay: the app's schema applied on every tracked event, a
/// value never decreasing within a window, locks kept, windows timed from the first launch on
/// the client's clock, and the system's refusal reported once.
@Suite("Conversion values", .timeLimit(.minutes(1)))
struct ConversionValueTests {
    static let day: TimeInterval = 86_400

    /// The system's side: records what it was asked to write; refuses while `refusing`.
    final class Writer: ConversionValueWriter, Sendable {
        let written = Locked<[ConversionValueUpdate]>([])
        let refusing: Locked<Bool>
        init(refusing: Bool = false) { self.refusing = Locked(refusing) }

        func write(_ update: ConversionValueUpdate) async throws {
            written.withLock { $0.append(update) }
            if refusing.withLock({ $0 }) { throw NSError(domain: "SKANErrorDomain", code: 10) }
        }

        var values: [String] {
            written.withLock { $0.map { "\($0.window):\($0.value)\($0.locksWindow ? " locked" : "")" } }
        }
    }

    static let schema = try! ConversionSchema(
        currency: "EUR",
        rules: [
            .event("signup", fine: 4, coarse: .low),
            .event("level_complete", count: 3, fine: 8, coarse: .medium),
            .event("share", fine: 2, coarse: .high, in: [.second, .third]),
            .revenue(atLeast: 1, fine: 32, coarse: .high),
            .revenue(atLeast: 20, fine: 63, coarse: .high, locksWindow: true),
        ])

    func client(
        _ writer: Writer, clock: ManualClock, store: InMemoryStore = InMemoryStore(), schema: ConversionSchema = Self.schema,
        logs: LogCollector? = nil
    ) -> DeepLinkClient {
        makeClient(InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"]), clock: clock, store: store) {
            $0.retryPolicy = .none
            $0.processLaunch = UUID()
            $0.conversionValues = ConversionValues(schema: schema, writer: writer)
            if let logs { $0.logSink = logs.sink }
        }
    }

    /// One step of a scripted install: an event, revenue, or time passing.
    enum Step {
        case event(String)
        case revenue(Decimal, String)
        case wait(days: Double)
        /// The app launched again: a new process, a new client on the same store.
        case relaunch
    }

    @Test(
        "a table of event orders: the values written, never decreasing, locks kept, windows elapsing",
        arguments: [
            // The first launch registers the install with the lowest value; each rule met raises it.
            (
                [.event("signup"), .event("level_complete"), .event("level_complete"), .event("level_complete")] as [Step],
                ["1:0/low", "1:4/low", "1:8/medium"]
            ),
            // Revenue in the schema's currency only; the second threshold locks, and nothing follows.
            (
                [.revenue(5, "USD"), .revenue(0.5, "EUR"), .revenue(0.5, "EUR"), .revenue(19, "EUR"), .event("signup")],
                ["1:0/low", "1:32/high", "1:63/high locked"]
            ),
            // A later, lower rule never lowers the value: parts rise separately.
            (
                [.revenue(1, "EUR"), .event("signup"), .event("level_complete"), .event("level_complete"), .event("level_complete")],
                ["1:0/low", "1:32/high"]
            ),
            // An event the rules do not name changes nothing.
            ([.event("opened_settings"), .event("signup"), .event("signup")], ["1:0/low", "1:4/low"]),
            // The second window starts afresh: counts and revenue are per window; a rule of only
            // the later windows counts there.
            (
                [.event("share"), .event("signup"), .wait(days: 3), .event("share"), .event("signup"), .revenue(2, "EUR")],
                ["1:0/low", "1:4/low", "2:2/high", "2:4/high", "2:32/high"]
            ),
            // A locked first window does not lock the second.
            (
                [.revenue(25, "EUR"), .event("signup"), .wait(days: 2), .event("signup")],
                ["1:0/low", "1:63/high locked", "2:4/low"]
            ),
            // After 35 days nothing is written.
            ([.wait(days: 35), .event("signup"), .revenue(30, "EUR")], ["1:0/low"]),
            // Each later window gets its value at the first launch in it, once: without a
            // write inside a window, its postback is never sent.
            ([.wait(days: 3), .relaunch, .relaunch, .wait(days: 5), .relaunch], ["1:0/low", "2:0/low", "3:0/low"]),
            // A value already written in the window is not written again at a launch.
            ([.wait(days: 3), .event("share"), .relaunch, .event("share")], ["1:0/low", "2:2/high"]),
            // After the last window, a launch writes nothing.
            ([.wait(days: 36), .relaunch], ["1:0/low"]),
        ] as [([Step], [String])])
    func table(steps: [Step], expected: [String]) async throws {
        let clock = ManualClock()
        let writer = Writer()
        let store = InMemoryStore()
        var client = client(writer, clock: clock, store: store)
        await client.start()
        for step in steps {
            switch step {
            case .event(let name): try await client.track(name)
            case .revenue(let amount, let currency): try await client.trackRevenue(amount: amount, currency: currency)
            case .wait(let days): clock.advance(by: days * Self.day)
            case .relaunch:
                await client.conversionWritesSettled()
                await client.shutdown()
                client = self.client(writer, clock: clock, store: store)
                await client.start()
            }
        }
        await client.conversionWritesSettled()
        #expect(writer.values == expected)
    }

    @Test("the first value is written when the client is made, before start() (which waits for consent): it reaches no provider")
    func registeredBeforeStart() async {
        let clock = ManualClock()
        let writer = Writer()
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        let client = makeClient(backend, clock: clock) {
            $0.processLaunch = UUID()
            $0.conversionValues = ConversionValues(schema: Self.schema, writer: writer)
        }
        await client.conversionWritesSettled()
        #expect(writer.values == ["1:0/low"])
        #expect(backend.calls.isEmpty)
        await client.start()
        await client.conversionWritesSettled()
        #expect(writer.values == ["1:0/low"], "start() does not write it again")
    }

    /// The system's side with two frameworks: `failing` ones refuse, the others take the value.
    final class TwoFrameworks: ConversionValueWriter, Sendable {
        let written = Locked<[(ConversionFramework, ConversionValue)]>([])
        let failing: Locked<Set<ConversionFramework>>
        init(failing: Set<ConversionFramework>) { self.failing = Locked(failing) }

        func write(_ update: ConversionValueUpdate) async throws {
            let failing = self.failing.withLock { $0 }
            for framework in ConversionFramework.allCases where update.frameworks.contains(framework) {
                written.withLock { $0.append((framework, update.value)) }
            }
            let failed = update.frameworks.intersection(failing)
            if !failed.isEmpty { throw ConversionWriteFailure(failed: failed, reason: "SKANErrorDomain 10") }
        }

        var log: [String] { written.withLock { $0.map { "\($0.0.rawValue):\($0.1)" } } }
    }

    @Test("each framework answers on its own: one that refused is written again, the one that took the value is not")
    func perFramework() async throws {
        let clock = ManualClock()
        let writer = TwoFrameworks(failing: [.skAdNetwork])
        let client = makeClient(InMemoryBackend(), clock: clock) {
            $0.processLaunch = UUID()
            $0.conversionValues = ConversionValues(schema: Self.schema, writer: writer)
        }
        await client.start()
        await client.conversionWritesSettled()
        #expect(writer.log == ["adAttributionKit:0/low", "skAdNetwork:0/low"])
        try await client.track("opened_settings")  // nothing new: the refused value again, to SKAdNetwork only
        await client.conversionWritesSettled()
        #expect(writer.log.dropFirst(2) == ["skAdNetwork:0/low"])
        writer.failing.withLock { $0 = [] }
        try await client.track("opened_settings")
        await client.conversionWritesSettled()
        try await client.track("opened_settings")  // accepted everywhere now: nothing more
        await client.conversionWritesSettled()
        #expect(writer.log.dropFirst(3) == ["skAdNetwork:0/low"])
        try await client.track("signup")  // a new value goes to both
        await client.conversionWritesSettled()
        #expect(writer.log.dropFirst(4) == ["adAttributionKit:4/low", "skAdNetwork:4/low"])
    }

    @Test("before iOS 16.1 (one window, no coarse value): the first window's fine value only")
    func singleWindow() {
        for (window, expected) in [(PostbackWindow.first, 8 as Int?), (.second, nil), (.third, nil)] {
            let update = ConversionValueUpdate(window: window, value: ConversionValue(fine: 8, coarse: .medium), locksWindow: false)
            #expect(update.singleWindowFineValue == expected, "\(window)")
        }
    }

    @Test("the account survives a relaunch and clearData: counts go on, the first launch's value is not written again")
    func persisted() async throws {
        let clock = ManualClock()
        let store = InMemoryStore()
        let writer = Writer()
        let first = client(writer, clock: clock, store: store)
        await first.start()
        try await first.track("level_complete")
        try await first.track("level_complete")
        await first.clearData()
        await first.conversionWritesSettled()
        let second = client(writer, clock: clock, store: store)
        await second.start()
        try await second.track("level_complete")
        await second.conversionWritesSettled()
        #expect(writer.values == ["1:0/low", "1:8/medium"])
    }

    @Test("the system refusing (SKANErrorDomain 10): reported once per install, the value tried again with the next event")
    func refusals() async throws {
        let clock = ManualClock()
        let writer = Writer(refusing: true)
        let logs = LogCollector()
        let client = client(writer, clock: clock, logs: logs)
        let events = client.linkEvents()
        await client.start()
        try await client.track("signup")
        await client.conversionWritesSettled()
        try await client.track("opened_settings")  // changes nothing, but the refused value is sent again
        await client.conversionWritesSettled()
        #expect(writer.values == ["1:0/low", "1:4/low", "1:4/low"])  // not again while a write is under way, once after
        #expect(logs.lines.filter { $0.contains("refused conversion value") }.count == 1)
        let received = await eventsUntilMarker(client, events)
        #expect(received.filter { if case .failure(let error) = $0 { error.code == .rejected } else { false } }.count == 1)

        writer.refusing.withLock { $0 = false }
        try await client.track("opened_settings")
        await client.conversionWritesSettled()
        try await client.track("opened_settings")  // accepted: nothing more
        await client.conversionWritesSettled()
        #expect(writer.values == ["1:0/low", "1:4/low", "1:4/low", "1:4/low"])
    }

    /// A backend that reports no events (as LimeLink and Dynalinks): the values are the app's.
    struct SilentBackend: DeepLinkBackend {
        let id: BackendID = "silent"
        var capabilities: BackendCapabilities { [.linkResolution, .deferredLinks] }
        func canHandle(_ url: URL) -> Bool { false }
        func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
            link.deepLink(provider: id, resolution: .server)
        }
        func matchInstall(context: BackendContext) async throws -> InstallMatch { .organic(.organic()) }
    }

    @Test("on a backend that reports no events, the schema still applies: conversion values work on every backend")
    func everyBackend() async throws {
        let writer = Writer()
        let client = makeClient(SilentBackend()) { $0.conversionValues = ConversionValues(schema: Self.schema, writer: writer) }
        await client.start()
        try await client.trackRevenue(amount: 3, currency: "eur")
        await client.conversionWritesSettled()
        #expect(writer.values == ["1:0/low", "1:32/high"])
        #expect(await client.queuedEventCount == 0)
    }

    @Test("an existing user's windows are long over: nothing is written")
    func existingUsers() async throws {
        let clock = ManualClock()
        let store = InMemoryStore()
        // The app ran with another backend before this one: the history says existing user.
        var history = LaunchHistory(
            firstSeen: clock.currentDate, launchCount: 1, lastProcessLaunch: UUID(), lastKind: .firstInstall,
            recent: [.init(date: clock.currentDate, version: AppVersion(version: "1", build: "1"))],
            backends: [.init(id: BackendID(rawValue: "other"), joinedExistingUser: true)])
        history.lastKind = .relaunch
        store.save(history, forKey: LaunchHistory.key, logger: .silent)
        let writer = Writer()
        let client = client(writer, clock: clock, store: store)
        await client.start()
        try await client.track("signup")
        await client.conversionWritesSettled()
        #expect(writer.values.isEmpty)
    }

    @Test("a write that never answers counts as refused after 10 s on the client's clock; the next write goes on")
    func hangingWrite() async throws {
        final class Hanging: ConversionValueWriter, Sendable {
            let clock: ManualClock
            let calls = Locked(0)
            init(clock: ManualClock) { self.clock = clock }
            func write(_ update: ConversionValueUpdate) async throws {
                if calls.withLock({
                    $0 += 1; return $0
                }) == 1 {
                    try await clock.sleep(for: 3600)
                }
            }
        }
        let clock = ManualClock()
        let writer = Hanging(clock: clock)
        let client = makeClient(InMemoryBackend(), clock: clock) {
            $0.conversionValues = ConversionValues(schema: Self.schema, writer: writer)
        }
        await client.start()
        try await client.track("signup")
        await clock.waitForSleepers(count: 2)  // the hanging write and its deadline
        clock.advance(by: ConversionValues.writeTimeout)
        await client.conversionWritesSettled()
        #expect(writer.calls.withLock { $0 } == 2)
    }

    @Test("a schema is refused at configuration, naming the rule")
    func refusedSchemas() {
        for (rules, currency, fragment) in [
            ([ConversionRule.event("a", fine: 64)], "EUR", "rule 1: the fine value 64"),
            ([.event("a", fine: 1), .event("b", fine: -1)], "EUR", "rule 2: the fine value -1"),
            ([.event("a", count: 0)], "EUR", "the count 0"),
            ([.event(" ")], "EUR", "no name"),
            ([.revenue(atLeast: -1)], "EUR", "zero or more"),
            ([.revenue(atLeast: .nan)], "EUR", "zero or more"),
            ([.event("a", in: [])], "EUR", "no window"),
            ([], "euro", "three-letter"),
        ] as [([ConversionRule], String, String)] {
            do {
                _ = try ConversionSchema(currency: currency, rules: rules)
                Issue.record("accepted \(fragment)")
            } catch let error as DeepLinkError {
                #expect(error.code == .invalidConfiguration && error.message.contains(fragment), "\(error.message)")
            } catch {
                Issue.record("\(error)")
            }
        }
        #expect((try? ConversionSchema(currency: "eur", rules: []))?.currency == "EUR")
    }

    @Test("windows: 2, 7 and 35 days from the first launch")
    func windows() {
        for (days, expected) in [
            (-1.0, PostbackWindow.first), (0, .first), (1.99, .first), (2, .second), (6.9, .second), (7, .third), (34.9, .third),
        ]
            as [(Double, PostbackWindow)]
        {
            #expect(PostbackWindow(elapsed: days * Self.day) == expected, "\(days)")
        }
        #expect(PostbackWindow(elapsed: 35 * Self.day) == nil)
        #expect(PostbackWindow(elapsed: .infinity) == nil)
        #expect(PostbackWindow(elapsed: .nan) == nil)
        #expect(ConversionValue(fine: 99, coarse: .low).fine == 63 && ConversionValue(fine: -4, coarse: .low).fine == 0)
        // How the system writer picks each framework's own coarse value.
        #expect(CoarseConversionValue.allCases.map { $0.pick(low: "l", medium: "m", high: "h") } == ["l", "m", "h"])
    }
}

/// iOS 18's AdAttributionKit re-engagement: the system's parameter taken off the link, the link
/// marked, and a schema's re-engagement rules counted from the open, in windows of their own,
/// written for re-engagement postbacks only.
@Suite("Ad re-engagement", .timeLimit(.minutes(1)))
struct AdReengagementTests {
    /// A stand-in for `Postback.reengagementOpenURLParameter`, whose real value only iOS 18 knows.
    static let parameter = "aak_reengagement"
    static let day: TimeInterval = 86_400

    final class Writer: ConversionValueWriter, Sendable {
        let written = Locked<[ConversionValueUpdate]>([])
        func write(_ update: ConversionValueUpdate) async throws { written.withLock { $0.append(update) } }

        /// `install:1:0/low`, `re:1:4/low` (for re-engagement postbacks, AdAttributionKit only), `both:1:0/low`.
        var log: [String] {
            written.withLock {
                $0.map { update in
                    let kind =
                        update.conversionTypes == [.install] ? "install" : update.isReengagementOnly ? "re" : "both"
                    if update.isReengagementOnly { #expect(update.frameworks == [.adAttributionKit]) }
                    return "\(kind):\(update.window):\(update.value)"
                }
            }
        }
    }

    static let schema = try! ConversionSchema(
        currency: "EUR", rules: [.event("signup", fine: 4, coarse: .low)],
        reengagementRules: [.event("purchase", fine: 9, coarse: .high), .revenue(atLeast: 10, fine: 20, coarse: .high)])

    func client(
        _ writer: Writer, clock: ManualClock, store: InMemoryStore, schema: ConversionSchema? = Self.schema,
        parameter: String? = Self.parameter
    ) -> DeepLinkClient {
        makeClient(InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"]), clock: clock, store: store) {
            $0.retryPolicy = .none
            $0.processLaunch = UUID()
            $0.adReengagementParameter = parameter
            if let schema { $0.conversionValues = ConversionValues(schema: schema, writer: writer) }
        }
    }

    @Test("the parameter is taken off before anything sees the link; the link says an ad re-engagement opened it")
    func linkMarked() async throws {
        let client = client(Writer(), clock: ManualClock(), store: InMemoryStore(), schema: nil)
        var links = client.deepLinks().makeAsyncIterator()
        client.handle(url("https://go.acme.app/sale?utm_source=ad&\(Self.parameter)=1&color=red"))
        let link = try #require(await links.next())
        #expect(link.isAdReengagement)
        #expect(link.url == url("https://go.acme.app/sale?utm_source=ad&color=red"))
        #expect(link.parameters["color"] == "red" && link.parameters[Self.parameter] == nil)
        client.handle(url("https://go.acme.app/plain"))
        #expect(await links.next()?.isAdReengagement == false)
        // Without the system's name (before iOS 18, Linux) nothing is taken off.
        let other = self.client(Writer(), clock: ManualClock(), store: InMemoryStore(), schema: nil, parameter: nil)
        var otherLinks = other.deepLinks().makeAsyncIterator()
        other.handle(url("https://go.acme.app/sale?\(Self.parameter)=1"))
        let kept = try #require(await otherLinks.next())
        #expect(!kept.isAdReengagement && kept.parameters[Self.parameter] == "1")
    }

    @Test("taking the parameter off keeps every other item and its encoding; a query of only it goes")
    func strip() {
        let (stripped, found) = AdReengagement.strip("p", from: url("https://a.example/x?q=a%20b&p=1&p=2&r="))
        #expect(found && stripped.absoluteString == "https://a.example/x?q=a%20b&r=")
        #expect(AdReengagement.strip("p", from: url("https://a.example/x?p=1")).url.absoluteString == "https://a.example/x")
        #expect(AdReengagement.strip("p", from: url("https://a.example/x?pp=1")).found == false)
        #expect(AdReengagement.strip(nil, from: url("https://a.example/x?p=1")).found == false)
        #expect(AdReengagement.strip("", from: url("https://a.example/x?p=1")).found == false)
    }

    @Test("a link stored before the flag existed reads as it was; the flag is kept when stored")
    func coding() throws {
        var link = DeepLink.fixture(path: "/sale", host: "go.acme.app")
        let plain = try JSONEncoder().encode(link)
        #expect(!String(decoding: plain, as: UTF8.self).contains("adReengagement"))
        #expect(try JSONDecoder().decode(DeepLink.self, from: plain) == link)
        link.isAdReengagement = true
        #expect(try JSONDecoder().decode(DeepLink.self, from: try JSONEncoder().encode(link)).isAdReengagement)
    }

    @Test(
        "re-engagement rules count from the open in windows of their own, for re-engagement postbacks only; the install's values for the install's"
    )
    func values() async throws {
        let clock = ManualClock()
        let store = InMemoryStore()
        let writer = Writer()
        var client = client(writer, clock: clock, store: store)
        await client.start()
        try await client.track("purchase")  // before any re-engagement: the install's rules only
        clock.advance(by: 10 * Self.day)
        client.handle(url("https://go.acme.app/sale?\(Self.parameter)=1"))
        await client.waitUntilIdle()
        try await client.track("signup")  // the install's windows are its own: day 10 is window 3
        try await client.track("purchase")
        try await client.trackRevenue(amount: 12, currency: "EUR")
        await client.conversionWritesSettled()
        #expect(writer.log == ["install:1:0/low", "re:1:0/low", "install:3:4/low", "re:1:9/high", "re:1:20/high"])
        // Three days after the re-engagement: its second window gets its value at the launch.
        clock.advance(by: 3 * Self.day)
        await client.shutdown()
        client = self.client(writer, clock: clock, store: store)
        await client.conversionWritesSettled()
        #expect(writer.log.dropFirst(5) == ["re:2:0/low"])
    }

    @Test("without re-engagement rules: the install's values go to both kinds of postback, and a re-engagement writes nothing of its own")
    func withoutRules() async throws {
        let writer = Writer()
        let client = client(
            writer, clock: ManualClock(), store: InMemoryStore(), schema: try ConversionSchema(rules: [.event("signup", fine: 4)]))
        await client.start()
        client.handle(url("https://go.acme.app/sale?\(Self.parameter)=1"))
        await client.waitUntilIdle()
        try await client.track("signup")
        await client.conversionWritesSettled()
        #expect(writer.log == ["both:1:0/low", "both:1:4/low"])
    }

    @Test("a re-engagement rule is checked like any other")
    func checked() {
        #expect(throws: DeepLinkError.self) { try ConversionSchema(rules: [], reengagementRules: [.event("x", fine: 64)]) }
    }
}
