import Foundation

/// A conversion value to write for a window.
public struct ConversionValueUpdate: Sendable, Hashable {
    /// The window it is for.
    public var window: PostbackWindow
    /// The value.
    public var value: ConversionValue
    /// Whether it ends the window (the value is final; the postback is sent early).
    public var locksWindow: Bool

    /// An update as described.
    public init(window: PostbackWindow, value: ConversionValue, locksWindow: Bool) {
        self.window = window
        self.value = value
        self.locksWindow = locksWindow
    }
}

/// A system framework that takes conversion values.
public enum ConversionFramework: Sendable, Hashable, CaseIterable {
    /// AdAttributionKit (iOS 17.4 and later): `Postback.updateConversionValue`.
    case adAttributionKit
    /// SKAdNetwork 4 (iOS 16.1 and later): `SKAdNetwork.updatePostbackConversionValue`.
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
        }
        return true
    }

    /// What to write at a launch: the lowest value in the first window when nothing was
    /// written yet (it registers the install with the system), or a value the system did not
    /// accept before (`retrying`: no write is under way).
    mutating func atLaunch(_ date: Date, schema: ConversionSchema, retrying: Bool) -> ConversionValueUpdate? {
        guard enterWindow(at: date) else { return nil }
        if value == nil, window == .first {
            let earned = schema.earned(in: window, counts: counts, revenue: revenue)
            return decide(earned.value, locks: earned.locks)
        }
        return retrying ? unaccepted : nil
    }

    /// The value decided for the window that the system has not accepted yet.
    private var unaccepted: ConversionValueUpdate? {
        guard unwritten, let value else { return nil }
        return ConversionValueUpdate(window: window, value: value, locksWindow: locked)
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
        return decide(raised, locks: earned.locks)
    }

    private mutating func decide(_ new: ConversionValue, locks: Bool) -> ConversionValueUpdate {
        value = new
        locked = locks
        unwritten = true
        return ConversionValueUpdate(window: window, value: new, locksWindow: locks)
    }

    /// Records the system's answer to `update`: whether to report the failure (the first
    /// one of the install only).
    mutating func finished(_ update: ConversionValueUpdate, failed: Bool) -> Bool {
        if update.window == window, update.value == value { unwritten = failed }
        guard failed, !failureReported else { return false }
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
    /// Counts an event tracked at `date` against the schema, and writes the value when it rose.
    func countConversion(_ name: String, revenue: ConversionEvent.Revenue?, at date: Date) async {
        guard let conversions = configuration.conversionValues, var account = await conversionAccount() else { return }
        let update = account.record(name, revenue: revenue, at: date, schema: conversions.schema, retrying: self.conversions.inFlight == 0)
        keep(account)
        if let update { write(update, with: conversions.writer) }
    }

    /// At a launch: the first launch's lowest value (it registers the install), or a value the
    /// system did not accept before.
    func conversionsAtLaunch() async {
        guard let conversions = configuration.conversionValues, var account = await conversionAccount() else { return }
        let update = account.atLaunch(clock.currentDate, schema: conversions.schema, retrying: self.conversions.inFlight == 0)
        keep(account)
        if let update { write(update, with: conversions.writer) }
    }

    /// Returns once every conversion-value write asked for so far has been answered.
    func conversionWritesSettled() async {
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
        guard var account = conversions.account else { return }
        let report = account.finished(update, failed: failure != nil)
        keep(account)
        guard let failure else {
            logger.debug("Conversion value \(update.value) written for postback window \(update.window)\(update.locksWindow ? ", locked" : "").")
            return
        }
        guard report else { return }
        let reason = (failure as? DeepLinkError)?.message ?? "\((failure as NSError).domain) \((failure as NSError).code)"
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
    var writes: Task<Void, Never>?
    /// How many writes are under way: while one is, an unaccepted value is not sent again.
    var inFlight = 0
}
