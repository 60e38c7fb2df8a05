import Foundation

/// A conversion value to write for a window.
public struct ConversionValueUpdate: Sendable, Hashable {
    /// The window it is for.
    public var window: PostbackWindow
    /// The value.
    public var value: ConversionValue
    /// Whether it ends the window (the value is final; the postback is sent early).
    public var locksWindow: Bool
    /// The frameworks to write it to: all of them for a new value; for a value written again,
    /// those that did not accept it (a writer throwing ``ConversionWriteFailure`` names them).
    public var frameworks: Set<ConversionFramework>
    /// The postbacks it is for (AdAttributionKit on iOS 18, `PostbackUpdate.conversionTypes`):
    /// both by default, as the system has it; `[.install]` for the install's values of a
    /// schema with ``ConversionSchema/reengagementRules``, `[.reengagement]` for a
    /// re-engagement's (which only AdAttributionKit on iOS 18 takes).
    public var conversionTypes: Set<PostbackConversionType>

    /// An update as described.
    public init(
        window: PostbackWindow, value: ConversionValue, locksWindow: Bool,
        frameworks: Set<ConversionFramework> = Set(ConversionFramework.allCases),
        conversionTypes: Set<PostbackConversionType> = Set(PostbackConversionType.allCases)
    ) {
        self.window = window
        self.value = value
        self.locksWindow = locksWindow
        self.frameworks = frameworks
        self.conversionTypes = conversionTypes
    }

    /// Whether it is a re-engagement's value only.
    public var isReengagementOnly: Bool { conversionTypes == [.reengagement] }

    /// The fine value to write where the OS has no coarse values and no windows (before iOS
    /// 16.1: SKAdNetwork's `updatePostbackConversionValue(_:completionHandler:)` from 15.4,
    /// `updateConversionValue(_:)` before): the first window's fine value, `nil` in the later
    /// windows (there is only one postback there). The system takes only a rising value, and
    /// the first window's only rises.
    public var singleWindowFineValue: Int? {
        window == .first ? value.fine : nil
    }
}

/// The frameworks that did not accept an update, thrown by a ``ConversionValueWriter``: the
/// value is written again to those only (the others have it).
public struct ConversionWriteFailure: Error, Sendable, CustomStringConvertible {
    /// The frameworks that refused the value or failed.
    public var failed: Set<ConversionFramework>
    /// What the system said, by framework (its error's domain and code).
    public var reason: String

    /// A failure of `failed`, for `reason`.
    public init(failed: Set<ConversionFramework>, reason: String) {
        self.failed = failed
        self.reason = reason
    }

    public var description: String { reason }
}

/// What a conversion value counts towards: the install, or a re-engagement (an ad that opened
/// the installed app, iOS 18's AdAttributionKit).
public enum PostbackConversionType: String, Sendable, Hashable, Codable, CaseIterable {
    /// The install's postbacks.
    case install
    /// A re-engagement's postbacks.
    case reengagement
}

extension PostbackConversionType {
    /// The value for this type among the system's.
    func pick<Value>(install: Value, reengagement: Value) -> Value {
        switch self {
        case .install: install
        case .reengagement: reengagement
        }
    }
}

/// A system framework that takes conversion values.
public enum ConversionFramework: String, Sendable, Hashable, Codable, CaseIterable {
    /// AdAttributionKit (iOS 17.4 and later): `Postback.updateConversionValue`.
    case adAttributionKit
    /// SKAdNetwork: version 4's `updatePostbackConversionValue(_:coarseValue:lockWindow:)` from
    /// iOS 16.1, with one window's fine value before (``ConversionValueUpdate/singleWindowFineValue``).
    case skAdNetwork
}

/// Where conversion values go: AdAttributionKit and SKAdNetwork 4 on iOS
/// (`SystemConversionValueWriter`), a double in tests.
public protocol ConversionValueWriter: Sendable {
    /// Writes `update` through the system. Throws the system's error (outside the App Store,
    /// SKAdNetwork answers `SKANErrorDomain` code 10).
    func write(_ update: ConversionValueUpdate) async throws
}

/// The install's conversion-value account, under the key `conversion-values` in the
/// launch-history store (it belongs to the app's install, whatever the backend;
/// ``DeepLinkClient/clearData()`` keeps it). Pure: it decides what to write; the client writes.
struct ConversionAccount: Sendable, Hashable, Codable {
    static let key = "conversion-values"
    /// The last ad re-engagement's account (``firstLaunch`` is then the re-engagement's open).
    static let reengagementKey = "conversion-values-reengagement"

    /// When the install's first launch was: the windows are timed from it.
    var firstLaunch: Date
    /// Whether the install's first launch with LinkRelay was a new install (or a reinstall):
    /// only those have postbacks to fill. An existing user's windows are long over.
    var eligible: Bool
    /// The window the counts below are for.
    var window = PostbackWindow.first
    /// How often each counted event was tracked in ``window``.
    var counts: [String: Int] = [:]
    /// The revenue tracked in ``window``, in the schema's currency.
    var revenue: Decimal = 0
    /// The value decided for ``window``, if one was.
    var value: ConversionValue?
    /// Whether ``window`` is locked.
    var locked = false
    /// Whether the system has not accepted ``value`` (it is written again with the next event).
    var unwritten = false
    /// The frameworks that have not accepted ``value`` while ``unwritten`` (`nil`: all of them).
    var pendingFrameworks: Set<ConversionFramework>?
    /// Whether a write failure was reported: once per install.
    var failureReported = false

    /// Moves the account to the window `date` falls in; `false` once the windows are over.
    private mutating func enterWindow(at date: Date) -> Bool {
        guard eligible, let now = PostbackWindow(elapsed: date.timeIntervalSince(firstLaunch)) else { return false }
        if now != window {
            window = max(now, window)
            counts = [:]
            revenue = 0
            value = nil
            locked = false
            unwritten = false
            pendingFrameworks = nil
        }
        return true
    }

    /// What to write at a launch: the window's value when nothing was written in this window
    /// yet (in the first window, the lowest value: it registers the install with the system;
    /// in the second and third, the value that window's postback needs to be sent at all), or
    /// a value the system did not accept before (`retrying`: no write is under way).
    mutating func atLaunch(_ date: Date, schema: ConversionSchema, retrying: Bool) -> ConversionValueUpdate? {
        guard enterWindow(at: date) else { return nil }
        if value == nil {
            let earned = schema.earned(in: window, counts: counts, revenue: revenue)
            return decide(earned.value, locks: earned.locks)
        }
        return retrying ? unaccepted : nil
    }

    /// The value decided for the window that the system has not accepted yet.
    private var unaccepted: ConversionValueUpdate? {
        guard unwritten, let value else { return nil }
        var update = ConversionValueUpdate(window: window, value: value, locksWindow: locked)
        if let pendingFrameworks { update.frameworks = pendingFrameworks }
        return update
    }

    /// Counts an event tracked at `date` and says what to write, if anything: the value when
    /// it rose or the window locks, or the value the system did not accept before
    /// (`retrying`: no write is under way; one under way is answered first).
    mutating func record(
        _ name: String, revenue amount: ConversionEvent.Revenue?, at date: Date, schema: ConversionSchema, retrying: Bool
    ) -> ConversionValueUpdate? {
        guard enterWindow(at: date) else { return nil }
        // A locked window takes nothing more; only its final value may still be unaccepted.
        if locked { return retrying ? unaccepted : nil }
        if schema.countedEvents.contains(name) { counts[name, default: 0] &+= 1 }
        if let amount, amount.currency == schema.currency { revenue += amount.amount }
        let earned = schema.earned(in: window, counts: counts, revenue: revenue)
        let raised = value.map { $0.raised(to: earned.value) } ?? earned.value
        guard raised != value || earned.locks || (unwritten && retrying) else { return nil }
        // Only the value's owed frameworks when it is the same value written again.
        if raised == value, locked == earned.locks, let again = unaccepted { return again }
        return decide(raised, locks: earned.locks)
    }

    private mutating func decide(_ new: ConversionValue, locks: Bool) -> ConversionValueUpdate {
        value = new
        locked = locks
        unwritten = true
        pendingFrameworks = nil
        return ConversionValueUpdate(window: window, value: new, locksWindow: locks)
    }

    /// Records the system's answer to `update`, `failed` naming the frameworks that did not
    /// accept it (empty: all did): whether to report the failure (the first one of the install
    /// only).
    mutating func finished(_ update: ConversionValueUpdate, failed: Set<ConversionFramework>) -> Bool {
        if update.window == window, update.value == value {
            // Owed after this write: what was owed and not written this time, and what failed.
            // (Nothing pending yet: the update was this value's first write, to all it is for.)
            let owed = (pendingFrameworks ?? update.frameworks).subtracting(update.frameworks).union(failed)
            unwritten = !owed.isEmpty
            pendingFrameworks = unwritten ? owed : nil
        }
        guard !failed.isEmpty, !failureReported else { return false }
        failureReported = true
        return true
    }
}

/// The app's conversion values, owned by LinkRelay (``DeepLinkClient/Configuration/conversionValues``):
/// a schema applied on every tracked event, written through the system's frameworks.
public struct ConversionValues: Sendable {
    /// How events and revenue become values.
    public var schema: ConversionSchema
    /// Where the values go.
    public var writer: any ConversionValueWriter

    /// How long one write may take, in seconds on the client's clock, before it counts as
    /// failed (the value is written again with the next event).
    static let writeTimeout: TimeInterval = 10

    /// Values from `schema`, written by `writer`.
    public init(schema: ConversionSchema, writer: any ConversionValueWriter) {
        self.schema = schema
        self.writer = writer
    }
}

extension DeepLinkClient {
    /// Counts an event tracked at `date` against the schema (and a re-engagement's rules since
    /// the last one), and writes the values that rose.
    func countConversion(_ name: String, revenue: ConversionEvent.Revenue?, at date: Date) async {
        guard let conversions = configuration.conversionValues else { return }
        if var account = await conversionAccount() {
            let update = account.record(
                name, revenue: revenue, at: date, schema: conversions.schema, retrying: self.conversions.inFlight == 0)
            keep(account)
            if let update { write(installUpdate(update, schema: conversions.schema), with: conversions.writer) }
        }
        if conversions.schema.separatesReengagement, var account = reengagementAccount() {
            let update = account.record(
                name, revenue: revenue, at: date, schema: conversions.schema.reengagement, retrying: self.conversions.inFlight == 0)
            keepReengagement(account)
            if let update { write(reengagementUpdate(update), with: conversions.writer) }
        }
    }

    /// An install value, for the install's postbacks only when re-engagements have values of
    /// their own.
    private func installUpdate(_ update: ConversionValueUpdate, schema: ConversionSchema) -> ConversionValueUpdate {
        var update = update
        if schema.separatesReengagement { update.conversionTypes = [.install] }
        return update
    }

    private func reengagementUpdate(_ update: ConversionValueUpdate) -> ConversionValueUpdate {
        var update = update
        update.conversionTypes = [.reengagement]
        // Only AdAttributionKit has re-engagements.
        update.frameworks = update.frameworks.intersection([.adAttributionKit])
        return update
    }

    /// Whether `url` was handed over with an ad re-engagement's parameter (taken off then).
    func takeAdReengagement(_ url: URL) -> Bool {
        adReengagements.withLock { urls in
            guard let index = urls.firstIndex(of: url) else { return false }
            urls.remove(at: index)
            return true
        }
    }

    /// An ad re-engagement opened the app at `date`: with a schema's re-engagement rules, a
    /// re-engagement's windows start now (a later one starts them again), and its first value
    /// is written at once.
    func reengaged(at date: Date) {
        guard configuration.processKind != .appClip, let conversions = configuration.conversionValues,
            conversions.schema.separatesReengagement
        else { return }
        logger.debug("An ad re-engagement opened the app; its conversion windows start now.")
        var account = ConversionAccount(firstLaunch: date, eligible: true)
        let update = account.atLaunch(date, schema: conversions.schema.reengagement, retrying: true)
        keepReengagement(account)
        if let update { write(reengagementUpdate(update), with: conversions.writer) }
    }

    /// The last re-engagement's account, if there was one.
    private func reengagementAccount() -> ConversionAccount? {
        if let known = self.conversions.reengagement { return known }
        let stored = launchHistoryStore().load(ConversionAccount.self, forKey: ConversionAccount.reengagementKey, logger: logger)
        self.conversions.reengagement = stored
        return stored
    }

    private func keepReengagement(_ account: ConversionAccount) {
        guard account != conversions.reengagement else { return }
        conversions.reengagement = account
        launchHistoryStore().save(account, forKey: ConversionAccount.reengagementKey, logger: logger)
    }

    /// At a launch (the client's creation): the window's value when none was written in it yet
    /// (on the first launch the lowest value, which registers the install), or a value the
    /// system did not accept before.
    func conversionsAtLaunch() async {
        guard let conversions = configuration.conversionValues else { return }
        if var account = await conversionAccount() {
            let update = account.atLaunch(clock.currentDate, schema: conversions.schema, retrying: self.conversions.inFlight == 0)
            keep(account)
            if let update { write(installUpdate(update, schema: conversions.schema), with: conversions.writer) }
        }
        if conversions.schema.separatesReengagement, configuration.processKind != .appClip, var account = reengagementAccount() {
            let update = account.atLaunch(
                clock.currentDate, schema: conversions.schema.reengagement, retrying: self.conversions.inFlight == 0)
            keepReengagement(account)
            if let update { write(reengagementUpdate(update), with: conversions.writer) }
        }
    }

    /// Returns once the launch's conversion values are decided and every write asked for so far
    /// has been answered.
    func conversionWritesSettled() async {
        await conversionRegistration.withLock { $0 }?.value
        await conversions.writes?.value
    }

    /// The install's account: kept in memory after the first read; made on first need from the
    /// launch history (the first launch's date, and whether it was a new install).
    private func conversionAccount() async -> ConversionAccount? {
        // An App Clip hands its link over and nothing more: its values would be the Clip's.
        guard configuration.processKind != .appClip else { return nil }
        if let known = conversions.account { return known }
        let store = launchHistoryStore()
        if let stored = store.load(ConversionAccount.self, forKey: ConversionAccount.key, logger: logger) {
            conversions.account = stored
            return stored
        }
        _ = await launch()
        // Another call may have made it meanwhile.
        if let known = conversions.account { return known }
        guard let history = store.load(LaunchHistory.self, forKey: LaunchHistory.key, logger: logger) else { return nil }
        let account = ConversionAccount(firstLaunch: history.firstSeen, eligible: history.backends.first?.joinedExistingUser == false)
        keep(account)
        return account
    }

    private func keep(_ account: ConversionAccount) {
        guard account != conversions.account else { return }
        conversions.account = account
        launchHistoryStore().save(account, forKey: ConversionAccount.key, logger: logger)
    }

    /// Writes `update` after the writes before it, bounded by ``ConversionValues/writeTimeout``.
    private func write(_ update: ConversionValueUpdate, with writer: any ConversionValueWriter) {
        let previous = conversions.writes
        conversions.inFlight += 1
        let clock = self.clock
        conversions.writes = Task {
            await previous?.value
            var failure: (any Error)?
            do {
                try await withDeadline(
                    clock.uptime + ConversionValues.writeTimeout, on: clock,
                    timeoutError: { DeepLinkError(.timedOut, "The system did not answer within \(ConversionValues.writeTimeout) s.") },
                    operation: { try await writer.write(update) })
            } catch {
                failure = error
            }
            self.written(update, failure: failure)
        }
    }

    private func written(_ update: ConversionValueUpdate, failure: (any Error)?) {
        conversions.inFlight -= 1
        guard var account = update.isReengagementOnly ? conversions.reengagement : conversions.account else { return }
        // A failure that names its frameworks owes the value to those only; any other, to all
        // the update was for.
        let failed = failure.map { ($0 as? ConversionWriteFailure)?.failed ?? update.frameworks } ?? []
        let report = account.finished(update, failed: failed)
        if update.isReengagementOnly { keepReengagement(account) } else { keep(account) }
        guard let failure else {
            logger.debug(
                "Conversion value \(update.value) written for postback window \(update.window)\(update.locksWindow ? ", locked" : "").")
            return
        }
        guard report else { return }
        let reason =
            (failure as? DeepLinkError)?.message ?? (failure as? ConversionWriteFailure)?.reason
            ?? "\((failure as NSError).domain) \((failure as NSError).code)"
        let message =
            "The system refused conversion value \(update.value) for postback window \(update.window) (\(reason)). "
            + "Outside an install from an ad on the App Store this is expected (SKANErrorDomain 10); reported once per install, and tried again with the next event."
        logger.warning("\(message)")
        publish(.failure(DeepLinkError(.rejected, message, backend: backend.id)))
    }
}

/// The client's conversion-value account and its chain of writes.
struct ConversionWriting {
    var account: ConversionAccount?
    /// The last ad re-engagement's account (windows timed from it), with re-engagement rules.
    var reengagement: ConversionAccount?
    var writes: Task<Void, Never>?
    /// How many writes are under way: while one is, an unaccepted value is not sent again.
    var inFlight = 0
}
