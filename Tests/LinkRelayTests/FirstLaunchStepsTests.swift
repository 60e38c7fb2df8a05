import Foundation
import Testing

@testable import LinkRelay

/// The first launch as a state machine, without a client: for each row of a table, every
/// order in which the world can answer (the record, the system, the provider, the timer, a
/// paste) gives one outcome and at most one delivery.
@Suite("FirstLaunchSteps")
struct FirstLaunchStepsTests {
    typealias Steps = FirstLaunchSteps
    typealias Event = FirstLaunchSteps.Event

    static let backend: BackendID = "test"
    static let matchedURL = URL(string: "https://go.example.com/matched")!
    static let pastedURL = URL(string: "https://go.example.com/pasted")!
    static let clipURL = URL(string: "https://go.example.com/clip")!

    static func link(_ url: URL) -> DeepLink {
        DeepLink(url: url, origin: .deferred, provider: backend, resolution: .server, pathSegments: [url.lastPathComponent])
    }

    static func launch(_ kind: AppLaunch.Kind, existingUser: Bool = false) -> AppLaunch {
        AppLaunch(
            kind: kind, version: AppVersion(version: "1.0", build: "1"), firstSeen: Date(timeIntervalSince1970: 1_800_000_000),
            launchCount: 1, backends: [backend], isExistingUser: existingUser)
    }

    static func attributed(installID: String = "install-1", link: Bool = true) -> Steps.MatchResult {
        .matched(
            InstallMatch(
                attribution: InstallAttribution(
                    installID: installID, isAttributed: true, confidence: .init(score: 90), method: .fingerprint),
                link: link ? Self.link(matchedURL) : nil))
    }

    static func isTimedOut(_ outcome: InstallOutcome?) -> Bool {
        if case .timedOut? = outcome { return true }
        return false
    }

    static func linkURL(_ outcome: InstallOutcome?) -> URL? {
        if case .attributed(let link, _)? = outcome { return link.url }
        return nil
    }

    static let networkFailure = Steps.MatchResult.failed(DeepLinkError(.network, "The install match failed.", backend: backend))

    /// How the world answers the actions that wait.
    struct Script: Sendable {
        /// What each read of the install record gives, in turn; then it reads.
        var recordReads: [Event] = []
        var appClip: CertainLink?
        var pasteboard: CertainLink?
        /// Whether certain links resolve.
        var resolves = true
        var token: String? = "token"
        /// The provider's answer to the match and to a certain link's report.
        var match: Steps.MatchResult = attributed()
        var report: Steps.MatchResult = attributed(installID: "install-2", link: false)
        /// The deadline may pass before an answer.
        var deadlineCanPass = true
    }

    /// The stored record, what the steps decided and delivered, and the events still to come.
    struct World: Sendable {
        var steps: Steps
        var script: Script
        var record = InstallRecord()
        var directLinkOpened = false
        var allowsFingerprint = true
        var decided: [InstallOutcome] = []
        var published: [InstallOutcome] = []
        var delivered: [URL] = []
        var requests: [CertainLink?] = []
        var offerAnswers: [Bool] = []
        var tokenAsked = 0
        var appClipRemoved = 0
        var problems: [String] = []
        /// Events the world will send, in any order.
        var pending: [Event] = []

        init(setup: Steps.Setup, script: Script, record: InstallRecord = InstallRecord()) {
            steps = Steps(setup: setup)
            self.script = script
            self.record = record
        }

        mutating func fire(_ index: Int) {
            let event = pending.remove(at: index)
            carry(steps.handle(event, record: record, directLinkOpened: directLinkOpened, allowsFingerprint: allowsFingerprint))
        }

        mutating func carry(_ actions: [Steps.Action]) {
            var waited = false
            for action in actions {
                switch action {
                case .save, .decide, .deliver:
                    // The record each save holds is the one given with the event: nothing that
                    // waits may come before it.
                    if waited { problems.append("\(action) after an action that waits") }
                case .readRecord, .waitForProtectedData, .lookAtAppClip, .readPasteboard, .resolveCertainLink, .waitForToken, .send,
                    .addLateAppleAdsToken, .resolveOffered, .readHistory, .askAppStore, .readMarker, .decideLaunch, .launchWithoutHistory:
                    waited = true
                case .askForAppleAdsToken, .removeAppClipLink, .skipPasteboard, .reportRejectedCredentials, .log, .answerOffer:
                    break
                }
                switch action {
                case .readRecord:
                    pending.append(script.recordReads.isEmpty ? .recordRead : script.recordReads.removeFirst())
                case .waitForProtectedData: pending.append(.protectedData(available: true))
                case .askForAppleAdsToken: tokenAsked += 1
                case .lookAtAppClip: pending.append(.appClipLooked(script.appClip))
                case .removeAppClipLink: appClipRemoved += 1
                case .readPasteboard: pending.append(.pasteboardRead(script.pasteboard))
                case .skipPasteboard: break
                case .resolveCertainLink(let certain):
                    pending.append(.certainLinkResolved(script.resolves ? FirstLaunchStepsTests.link(certain.url) : nil))
                case .waitForToken: pending.append(.tokenSettled(script.token))
                case .send(let certain, _):
                    requests.append(certain)
                    pending.append(.answered(certain == nil ? script.match : script.report))
                    if script.deadlineCanPass { pending.append(.deadlinePassed) }
                case .save(let saved): record = saved
                case .decide(let outcome, let publish):
                    decided.append(outcome)
                    if publish { published.append(outcome) }
                case .deliver(let link, _):
                    if !record.deferredLinkDelivered { problems.append("delivered before the record said so") }
                    delivered.append(link.url)
                case .resolveOffered(let certain):
                    pending.append(.offeredResolved(certain, script.resolves ? FirstLaunchStepsTests.link(certain.url) : nil))
                case .answerOffer(let taken): offerAnswers.append(taken)
                case .addLateAppleAdsToken, .reportRejectedCredentials, .log: break
                case .readHistory, .askAppStore, .readMarker, .decideLaunch, .launchWithoutHistory:
                    problems.append("a launch step in the install's run")
                }
            }
        }

        /// What must hold at the end of every ordering.
        func check(_ path: [String]) -> [String] {
            var found = problems
            let finals = decided.filter { if case .timedOut = $0 { false } else { true } }
            let timeouts = decided.count - finals.count
            if decided.isEmpty { found.append("no outcome") }
            if finals.count > 1 { found.append("\(finals.count) final outcomes") }
            if timeouts > 1 { found.append("\(timeouts) time-outs") }
            if timeouts == 1, !FirstLaunchStepsTests.isTimedOut(decided.first) { found.append("a time-out after the outcome") }
            if delivered.count > 1 { found.append("\(delivered.count) deliveries") }
            if requests.filter({ $0 == nil }).count > 1 { found.append("\(requests.count) matches") }
            return found.map { "\($0) after \(path.joined(separator: ", "))" }
        }
    }

    /// Every ordering of the world's answers from `world`, each checked; returns the worlds at
    /// the end (one per ordering).
    static func everyOrdering(_ world: World, path: [String] = [], into ends: inout [World], problems: inout [String]) {
        guard !world.pending.isEmpty else {
            problems += world.check(path)
            ends.append(world)
            return
        }
        for index in world.pending.indices {
            var next = world
            let name = String(describing: next.pending[index]).prefix(40)
            next.fire(index)
            everyOrdering(next, path: path + [String(name)], into: &ends, problems: &problems)
        }
    }

    static func run(_ world: World) -> (ends: [World], problems: [String]) {
        var ends: [World] = []
        var problems: [String] = []
        everyOrdering(world, into: &ends, problems: &problems)
        return (ends, problems)
    }

    static let newInstall = Event.start(launch(.firstInstall), previousInstallID: nil)

    // MARK: - The install

    @Test("a new install's match, its deadline and a paste in every order: one outcome, exactly one deferred link")
    func matchDeadlineAndPaste() {
        var world = World(setup: .init(backend: Self.backend), script: Script())
        world.pending = [Self.newInstall, .offered(CertainLink(url: Self.pastedURL, source: .pasteboard))]
        let (ends, problems) = Self.run(world)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        // The paste before start(), between each step, after the outcome, after a late answer.
        #expect(ends.count >= 10)
        for end in ends {
            // Exactly one: the paste's when it came before the outcome was final, else the match's.
            #expect(end.delivered.count == 1)
            #expect(end.record.deferredLinkDelivered)
            #expect(end.record.matched != nil)
        }
        // Both kinds of ending happen.
        #expect(Set(ends.map(\.delivered)) == [[Self.pastedURL], [Self.matchedURL]])
    }

    @Test("a failing match and a paste in every order: the paste is delivered once, the failure kept only without it")
    func failingMatchAndPaste() {
        var script = Script()
        script.match = Self.networkFailure
        var world = World(setup: .init(backend: Self.backend), script: script)
        world.pending = [Self.newInstall, .offered(CertainLink(url: Self.pastedURL, source: .pasteboard))]
        let (ends, problems) = Self.run(world)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        for end in ends {
            #expect(end.delivered == [Self.pastedURL])
            #expect(end.requests.count <= 1)
        }
    }

    @Test("a direct link blocks the matched deferred link, whenever it opens before the answer")
    func directLink() {
        var world = World(setup: .init(backend: Self.backend), script: Script())
        world.directLinkOpened = true
        world.pending = [Self.newInstall]
        let (ends, problems) = Self.run(world)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        for end in ends {
            #expect(end.delivered.isEmpty)
            #expect(Self.linkURL(end.decided.last) == Self.matchedURL)
        }
    }

    @Test(
        "the pasteboard's link for a backend that names the install in its report: delivered at once, one report, the outcome after it or its deadline"
    )
    func certainLinkWithReport() {
        var script = Script()
        script.pasteboard = CertainLink(url: Self.pastedURL, source: .pasteboard)
        var world = World(
            setup: .init(backend: Self.backend, needsInstallReport: true, hasPasteboardCheck: true), script: script)
        world.pending = [Self.newInstall, .offered(CertainLink(url: Self.clipURL, source: .pasteboard))]
        let (ends, problems) = Self.run(world)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        for end in ends {
            #expect(end.delivered.count == 1)
            #expect(end.requests.count == 1)
            // The report carries the link it settles the install with.
            #expect(end.requests.first??.url == end.delivered.first)
            guard case .attributed(let link, let attribution)? = end.decided.last else {
                Issue.record("not attributed: \(end.decided)")
                continue
            }
            #expect(link.url == end.delivered.first)
            #expect(attribution.method == .pasteboard)
            // Its answer names the install in the record, however late it came.
            #expect(end.record.installID == "install-2")
            #expect(end.record.installReportPending == nil)
        }
        #expect(Set(ends.map(\.delivered)) == [[Self.pastedURL], [Self.clipURL]])
    }

    @Test("the App Clip's link is kept in the record before it is removed, and one that cannot be delivered gives way to the match")
    func appClip() {
        for resolves in [true, false] {
            var script = Script()
            script.appClip = CertainLink(url: Self.clipURL, source: .appClip)
            script.resolves = resolves
            var world = World(setup: .init(backend: Self.backend, hasAppClipHandoff: true), script: script)
            world.pending = [Self.newInstall]
            let (ends, problems) = Self.run(world)
            #expect(problems.isEmpty, "\(problems.prefix(3))")
            for end in ends {
                #expect(end.appClipRemoved == 1)
                #expect(end.delivered == (resolves ? [Self.clipURL] : [Self.matchedURL]))
                #expect(end.requests.count == (resolves ? 0 : 1))
                #expect(end.record.certainLink == (resolves ? script.appClip : nil))
            }
        }
    }

    @Test("a record unreadable while locked is read again once protected data is available: one outcome, one match")
    func lockedRecord() {
        var script = Script()
        script.recordReads = [.recordUnreadable(locked: true), .recordUnreadable(locked: true)]
        var world = World(setup: .init(backend: Self.backend), script: script)
        world.pending = [Self.newInstall]
        let (ends, problems) = Self.run(world)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        for end in ends {
            #expect(end.requests.count == 1)
            #expect(end.delivered == [Self.matchedURL])
            #expect(end.record.matchLaunches == 1)
        }
    }

    @Test("a record unreadable with protected data available fails the outcome, unpublished, and stores nothing")
    func failingRecord() {
        var script = Script()
        script.recordReads = [.recordUnreadable(locked: false)]
        var world = World(setup: .init(backend: Self.backend), script: script)
        world.pending = [Self.newInstall]
        let (ends, problems) = Self.run(world)
        #expect(problems.isEmpty)
        #expect(ends.count == 1)
        #expect(ends[0].decided.map(Self.kind) == ["failed storage"])
        #expect(ends[0].published.isEmpty)
        #expect(ends[0].record == InstallRecord())
        #expect(ends[0].requests.isEmpty)
    }

    @Test("a prewarmed process given up while locked, then the real launch: one outcome, one match, one delivery")
    func prewarmThenLaunch() {
        var script = Script()
        script.recordReads = [.recordUnreadable(locked: true)]
        var prewarm = World(setup: .init(backend: Self.backend), script: script)
        prewarm.pending = [Self.newInstall]
        prewarm.fire(0)
        prewarm.fire(0)
        // The wait ends without protected data: the process is killed, or the client shut down.
        #expect(prewarm.pending.map { "\($0)" } == ["\(Event.protectedData(available: true))"])
        prewarm.pending = [.protectedData(available: false)]
        prewarm.fire(0)
        #expect(prewarm.decided.isEmpty)
        #expect(prewarm.requests.isEmpty)
        #expect(prewarm.record == InstallRecord())
        var real = World(setup: .init(backend: Self.backend), script: Script(), record: prewarm.record)
        real.pending = [Self.newInstall]
        let (ends, problems) = Self.run(real)
        #expect(problems.isEmpty)
        for end in ends {
            #expect(end.requests.count == 1)
            #expect(end.delivered == [Self.matchedURL])
        }
    }

    @Test("the next launch restores the outcome: no match, no delivery, whatever the first launch's order was")
    func nextLaunch() {
        var world = World(setup: .init(backend: Self.backend), script: Script())
        world.pending = [Self.newInstall, .offered(CertainLink(url: Self.pastedURL, source: .pasteboard))]
        for end in Self.run(world).ends {
            var next = World(setup: .init(backend: Self.backend), script: Script(), record: end.record)
            next.pending = [.start(Self.launch(.relaunch), previousInstallID: nil)]
            let (again, problems) = Self.run(next)
            #expect(problems.isEmpty)
            #expect(again.count == 1)
            #expect(again[0].requests.isEmpty)
            #expect(again[0].delivered.isEmpty)
            #expect(again[0].decided == [end.record.matched!])
            #expect(again[0].published.isEmpty)
        }
    }

    @Test("a certain link's report cut short is sent again on the next launch, without delivering or deciding again")
    func reportAgain() {
        var script = Script()
        script.pasteboard = CertainLink(url: Self.pastedURL, source: .pasteboard)
        script.report = Self.networkFailure
        var world = World(setup: .init(backend: Self.backend, needsInstallReport: true, hasPasteboardCheck: true), script: script)
        world.pending = [Self.newInstall]
        for end in Self.run(world).ends {
            #expect(end.record.installReportPending == true)
            #expect(end.record.matchLaunches == 1)
            var next = World(setup: .init(backend: Self.backend, needsInstallReport: true), script: Script(), record: end.record)
            next.pending = [.start(Self.launch(.relaunch), previousInstallID: nil)]
            let (again, problems) = Self.run(next)
            #expect(problems.isEmpty)
            for second in again {
                #expect(second.requests == [script.pasteboard])
                #expect(second.delivered.isEmpty)
                #expect(second.decided.count == 1)
                #expect(second.record.installReportPending == nil)
                #expect(second.record.installID == "install-2")
                #expect(second.record.matchLaunches == 2)
            }
        }
    }

    /// One row of the install table: what is configured and stored, and what every ordering
    /// must end with.
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var setup = Steps.Setup(backend: FirstLaunchStepsTests.backend)
        var record = InstallRecord()
        var start = FirstLaunchStepsTests.newInstall
        var script = Script()
        var allowsFingerprint = true
        /// The outcome's kind, the requests sent, whether the deferred link is delivered.
        var outcome: String
        var requests: Int
        var delivers: Bool
        var published = true
        var testDescription: String { name }
    }

    static func kind(_ outcome: InstallOutcome?) -> String {
        switch outcome {
        case .attributed?: "attributed"
        case .attributedWithoutLink?: "attributedWithoutLink"
        case .organic?: "organic"
        case .failed(let error)?: "failed \(error.code)"
        case .timedOut?: "timedOut"
        case .existingUser?: "existingUser"
        case nil: "none"
        }
    }

    static let rows: [Row] = {
        var rows: [Row] = []
        rows.append(Row(name: "a first install, matched", outcome: "attributed", requests: 1, delivers: true))
        var organic = Row(name: "a first install, not attributed", outcome: "organic", requests: 1, delivers: false)
        organic.script.match = .matched(InstallMatch(attribution: .organic(installID: "i"), link: nil))
        rows.append(organic)
        var noLink = Row(name: "attributed without a link the app can open", outcome: "attributedWithoutLink", requests: 1, delivers: false)
        noLink.script.match = attributed(link: false)
        rows.append(noLink)
        var unsupported = Row(name: "a backend without install matching", outcome: "organic", requests: 1, delivers: false)
        unsupported.script.match = .failed(DeepLinkError(.unsupported, "none", backend: backend))
        rows.append(unsupported)
        var rejected = Row(
            name: "the key refused on an earlier launch", outcome: "failed unauthorized", requests: 0, delivers: false, published: false)
        rejected.record.rejectedCredentials = 0
        rows.append(rejected)
        var newKey = Row(name: "a new key since the refusal", outcome: "attributed", requests: 1, delivers: true)
        newKey.record.rejectedCredentials = 7
        newKey.record.matchLaunches = 3
        rows.append(newKey)
        var spent = Row(
            name: "the match tried on every allowed launch", outcome: "failed network", requests: 0, delivers: false, published: false)
        spent.record.matchLaunches = 3
        rows.append(spent)
        var lowConfidence = Row(name: "a match below the minimum confidence", outcome: "attributed", requests: 1, delivers: false)
        lowConfidence.setup.minimumConfidence = 95
        rows.append(lowConfidence)
        var off = Row(name: "deferred deep links off", outcome: "attributed", requests: 1, delivers: false)
        off.setup.deferredDeepLinks = false
        rows.append(off)
        var noTracking = Row(name: "no tracking allowed, a backend that only matches", outcome: "organic", requests: 0, delivers: false)
        noTracking.allowsFingerprint = false
        rows.append(noTracking)
        var noTrackingReport = Row(
            name: "no tracking allowed, a backend that names the install in its report", outcome: "attributed", requests: 1, delivers: true)
        noTrackingReport.setup.needsInstallReport = true
        noTrackingReport.allowsFingerprint = false
        rows.append(noTrackingReport)
        var existing = Row(name: "an existing user, skipped", outcome: "existingUser", requests: 0, delivers: false)
        existing.start = .start(launch(.update(from: AppVersion(version: "0.9", build: nil)), existingUser: true), previousInstallID: "old")
        rows.append(existing)
        var existingReport = Row(
            name: "an existing user of a backend that names the install only in its match", outcome: "attributed", requests: 1,
            delivers: false)
        existingReport.setup.needsInstallReport = true
        existingReport.start = .start(
            launch(.update(from: AppVersion(version: "0.9", build: nil)), existingUser: true), previousInstallID: nil)
        rows.append(existingReport)
        var asNew = Row(name: "an existing user treated as new", outcome: "attributed", requests: 1, delivers: true)
        asNew.setup.existingUsers = .treatAsNew
        asNew.start = .start(launch(.update(from: AppVersion(version: "0.9", build: nil)), existingUser: true), previousInstallID: nil)
        rows.append(asNew)
        var delivered = Row(name: "a deferred link delivered by the previous SDK", outcome: "attributed", requests: 1, delivers: false)
        delivered.record.deferredLinkDelivered = true
        rows.append(delivered)
        var clip = Row(name: "an App Clip", outcome: "failed unsupported", requests: 0, delivers: false, published: false)
        clip.setup.processKind = .appClip
        rows.append(clip)
        var extensionRow = Row(
            name: "an extension after the app decided", outcome: "organic", requests: 0, delivers: false, published: false)
        extensionRow.setup.processKind = .appExtension
        extensionRow.record.matched = .organic(nil)
        rows.append(extensionRow)
        return rows
    }()

    @Test("the install table: in every ordering, the row's outcome, requests and delivery", arguments: rows)
    func installTable(_ row: Row) {
        var world = World(setup: row.setup, script: row.script, record: row.record)
        world.allowsFingerprint = row.allowsFingerprint
        world.pending = [row.start]
        let (ends, problems) = Self.run(world)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        for end in ends {
            #expect(Self.kind(end.decided.last) == row.outcome)
            #expect(end.requests.count == row.requests)
            #expect(end.delivered.count == (row.delivers ? 1 : 0))
            #expect(end.published.isEmpty == !row.published)
            // An outcome reached by the match (or a fresh decision) is stored, but for a failure
            // to retry and the time-out.
            if row.published, !row.outcome.hasPrefix("failed") { #expect(end.record.matched != nil) }
        }
    }

    @Test("the tracking prompt answered while the pasteboard is read: the match is decided on the answer, not on what held at start()")
    func trackingAnsweredMeanwhile() {
        for allowed in [true, false] {
            var world = World(setup: .init(backend: Self.backend, hasPasteboardCheck: true), script: Script())
            world.allowsFingerprint = !allowed
            world.pending = [Self.newInstall]
            world.fire(0)  // start
            world.fire(0)  // the record
            #expect(world.pending.count == 1)  // the pasteboard, being read
            world.allowsFingerprint = allowed
            let (ends, problems) = Self.run(world)
            #expect(problems.isEmpty)
            for end in ends {
                #expect(end.requests.count == (allowed ? 1 : 0))
                #expect(Self.kind(end.decided.last) == (allowed ? "attributed" : "organic"))
            }
        }
    }

    @Test("a late answer after the time-out replaces it, marked late, and is delivered once")
    func lateAnswer() {
        var world = World(setup: .init(backend: Self.backend), script: Script())
        world.pending = [Self.newInstall]
        let ends = Self.run(world).ends
        let late = ends.filter { Self.isTimedOut($0.decided.first) }
        #expect(!late.isEmpty)
        for end in late {
            #expect(end.decided.count == 2)
            #expect(end.decided.last?.attribution?.isLate == true)
            #expect(end.delivered == [Self.matchedURL])
        }
    }

    @Test("an offer after a delivered deferred link is refused, and one before the outcome is kept for the run")
    func offers() {
        var steps = Steps(setup: .init(backend: Self.backend))
        var record = InstallRecord()
        let paste = CertainLink(url: Self.pastedURL, source: .pasteboard)
        // Before start(): kept, taken.
        let before = steps.handle(.offered(paste), record: record)
        guard case .save(let kept)? = before.first else {
            Issue.record("not kept: \(before)")
            return
        }
        #expect(kept.certainLink == paste)
        #expect(before.contains { if case .answerOffer(true) = $0 { true } else { false } })
        // A second one is refused: the install has its certain link.
        record = kept
        let second = steps.handle(.offered(CertainLink(url: Self.clipURL, source: .pasteboard)), record: record)
        #expect(second.contains { if case .answerOffer(false) = $0 { true } else { false } })
        #expect(!second.contains { if case .save = $0 { true } else { false } })
        // After a delivered one: refused.
        record.matched = .organic(nil)
        record.deferredLinkDelivered = true
        let after = steps.handle(.offered(paste), record: record)
        #expect(after.contains { if case .answerOffer(false) = $0 { true } else { false } })
        // Resolved after another delivery meanwhile: not delivered.
        let resolved = steps.handle(.offeredResolved(paste, Self.link(Self.pastedURL)), record: record)
        #expect(!resolved.contains { if case .deliver = $0 { true } else { false } })
    }

    // MARK: - The launch

    /// The launch's steps, answered from a list of reads in turn; what they decided from.
    static func decideLaunch(setup: Steps.Setup, reads: [Event]) -> (decided: [Steps.Action], waits: Int, appStoreAsked: Int) {
        var steps = Steps(setup: setup)
        var reads = reads
        var queue = steps.decideLaunch()
        var decided: [Steps.Action] = []
        var waits = 0
        var asked = 0
        while !queue.isEmpty {
            let action = queue.removeFirst()
            let event: Event?
            switch action {
            case .readHistory, .readMarker:
                event = reads.isEmpty ? nil : reads.removeFirst()
            case .waitForProtectedData:
                waits += 1
                event = .protectedData(available: true)
            case .askAppStore:
                asked += 1
                event = .appStoreAnswered(.reinstall)
            case .decideLaunch, .launchWithoutHistory:
                decided.append(action)
                event = nil
            default:
                event = nil
            }
            if let event { queue += steps.handle(event, record: InstallRecord()) }
        }
        return (decided, waits, asked)
    }

    static func inputs(_ action: Steps.Action?) -> Steps.LaunchInputs? {
        if case .decideLaunch(let inputs)? = action { return inputs }
        return nil
    }

    static func history(_ processLaunch: UUID = UUID()) -> LaunchHistory {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        return LaunchHistory(
            firstSeen: now, launchCount: 1, lastProcessLaunch: processLaunch, lastKind: .firstInstall,
            recent: [.init(date: now, version: AppVersion(version: "1.0", build: "1"))],
            backends: [.init(id: backend, joinedExistingUser: false)])
    }

    @Test("a history unreadable while locked is never decided on: the launch waits, reads again, and decides from what it reads")
    func lockedHistory() {
        let stored = Self.history()
        let result = Self.decideLaunch(
            setup: .init(backend: Self.backend),
            reads: [.historyUnreadable(locked: true), .historyUnreadable(locked: true), .historyRead(stored, CheckedSDKs())])
        #expect(result.waits == 2)
        #expect(result.decided.count == 1)
        #expect(Self.inputs(result.decided.first)?.stored == stored)
    }

    @Test("a history that stays unreadable with protected data available is a relaunch with nothing stored")
    func failingHistory() {
        let result = Self.decideLaunch(setup: .init(backend: Self.backend), reads: [.historyUnreadable(locked: false)])
        #expect(result.waits == 0)
        guard case .launchWithoutHistory? = result.decided.first else {
            Issue.record("decided \(result.decided)")
            return
        }
    }

    @Test("the wait for protected data given up (a shutdown) decides a relaunch, never a first install")
    func givenUp() {
        var steps = Steps(setup: .init(backend: Self.backend))
        _ = steps.decideLaunch()
        #expect(steps.handle(.historyUnreadable(locked: true), record: InstallRecord()).count == 1)
        let actions = steps.handle(.protectedData(available: false), record: InstallRecord())
        guard case .launchWithoutHistory? = actions.first else {
            Issue.record("decided \(actions)")
            return
        }
    }

    @Test("the App Store's record is asked once, kept across a locked marker, and the history read again after it")
    func appStoreThenLockedMarker() {
        let result = Self.decideLaunch(
            setup: .init(backend: Self.backend, asksAppStore: true, hasMarker: true),
            reads: [
                .historyRead(nil, CheckedSDKs()),
                // After the App Store's answer: read again, still none.
                .historyRead(nil, CheckedSDKs()),
                // The marker is there, but the record told already: nothing waits.
                .markerRead(.unreadable, locked: true),
            ])
        #expect(result.appStoreAsked == 1)
        #expect(result.waits == 0)
        #expect(Self.inputs(result.decided.first)?.appStore == .reinstall)
    }

    @Test("a marker unreadable while locked, with no history and no App Store record, waits and is read again")
    func lockedMarker() {
        let result = Self.decideLaunch(
            setup: .init(backend: Self.backend, hasMarker: true),
            reads: [
                .historyRead(nil, CheckedSDKs()), .markerRead(.unreadable, locked: true),
                .historyRead(nil, CheckedSDKs()), .markerRead(.present, locked: false),
            ])
        #expect(result.waits == 1)
        #expect(Self.inputs(result.decided.first)?.marker == .present)
    }

    @Test("a marker unreadable with protected data available is taken as absent (and decided on), never waited for forever")
    func failingMarker() {
        let result = Self.decideLaunch(
            setup: .init(backend: Self.backend, hasMarker: true),
            reads: [.historyRead(nil, CheckedSDKs()), .markerRead(.unreadable, locked: false)])
        #expect(result.waits == 0)
        #expect(Self.inputs(result.decided.first)?.marker == .unreadable)
    }

    @Test("the marker is not read again by another client of the same process launch")
    func markerOncePerProcess() {
        let processLaunch = UUID()
        let result = Self.decideLaunch(
            setup: .init(backend: Self.backend, hasMarker: true, processLaunch: processLaunch),
            reads: [.historyRead(Self.history(processLaunch), CheckedSDKs())])
        #expect(Self.inputs(result.decided.first)?.marker == .absent)
        let other = Self.decideLaunch(
            setup: .init(backend: Self.backend, hasMarker: true, processLaunch: UUID()),
            reads: [.historyRead(Self.history(processLaunch), CheckedSDKs()), .markerRead(.present, locked: false)])
        #expect(Self.inputs(other.decided.first)?.marker == .present)
    }
}
