import Foundation

/// AdAttributionKit's and SKAdNetwork 4's coarse conversion value, in their order.
public enum CoarseConversionValue: Int, Sendable, Hashable, Codable, Comparable, CaseIterable, CustomStringConvertible {
    /// The lowest: what an install has before any rule is met.
    case low
    /// Between.
    case medium
    /// The highest.
    case high

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// `low`, `medium` or `high`.
    public var description: String {
        switch self {
        case .low: "low"
        case .medium: "medium"
        case .high: "high"
        }
    }
}

/// One of the three postback windows of an install, timed from its first launch: each sends
/// its own postback with the value written last in it (the first window with the fine value,
/// the others with the coarse value only).
public enum PostbackWindow: Int, Sendable, Hashable, Codable, CaseIterable, Comparable, CustomStringConvertible {
    /// Days 0 to 2 after the first launch: fine and coarse values.
    case first
    /// Days 3 to 7: the coarse value.
    case second
    /// Days 8 to 35: the coarse value.
    case third

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// When the window ends, in seconds after the first launch (2, 7 and 35 days).
    public var end: TimeInterval {
        switch self {
        case .first: 2 * 86_400
        case .second: 7 * 86_400
        case .third: 35 * 86_400
        }
    }

    /// The window `elapsed` seconds after the first launch falls in (a clock set back counts
    /// as the first launch); `nil` once the last has ended.
    public init?(elapsed: TimeInterval) {
        guard let window = Self.allCases.first(where: { max(elapsed, 0) < $0.end }) else { return nil }
        self = window
    }

    /// `1`, `2` or `3`.
    public var description: String { "\(rawValue + 1)" }
}

/// A conversion value: the fine value (0…63, sent in the first window only) and the coarse one.
public struct ConversionValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// 0…63.
    public var fine: Int
    /// Low, medium or high.
    public var coarse: CoarseConversionValue

    /// A value as described (`fine` clamped to 0…63).
    public init(fine: Int, coarse: CoarseConversionValue) {
        self.fine = min(max(fine, 0), ConversionSchema.maximumFineValue)
        self.coarse = coarse
    }

    /// The lowest value: what the first launch writes.
    public static let lowest = ConversionValue(fine: 0, coarse: .low)

    /// Each part the greater of the two: a value never decreases within a window.
    func raised(to other: ConversionValue) -> ConversionValue {
        ConversionValue(fine: max(fine, other.fine), coarse: max(coarse, other.coarse))
    }

    /// `12/medium`.
    public var description: String { "\(fine)/\(coarse)" }
}

/// One rule of a ``ConversionSchema``: what an install did in a window, and the value (and
/// lock) that earns.
public struct ConversionRule: Sendable, Hashable {
    /// What the install did within the current window.
    public enum Condition: Sendable, Hashable {
        /// An event of this name tracked at least `count` times.
        case event(String, count: Int)
        /// Revenue in the schema's currency tracked, at least this much in all.
        case revenue(atLeast: Decimal)
    }

    /// What the install did.
    public var condition: Condition
    /// The fine value it earns in the first window (0…63), if any.
    public var fine: Int?
    /// The coarse value it earns, if any.
    public var coarse: CoarseConversionValue?
    /// Whether reaching it locks the window: the value written then is final, and the system
    /// sends the window's postback early.
    public var locksWindow: Bool
    /// The windows it applies in.
    public var windows: Set<PostbackWindow>

    /// A rule met when the event `name` was tracked at least `count` times in the window.
    public static func event(
        _ name: String, count: Int = 1, fine: Int? = nil, coarse: CoarseConversionValue? = nil, locksWindow: Bool = false,
        in windows: Set<PostbackWindow> = Set(PostbackWindow.allCases)
    ) -> ConversionRule {
        ConversionRule(condition: .event(name, count: count), fine: fine, coarse: coarse, locksWindow: locksWindow, windows: windows)
    }

    /// A rule met when the revenue tracked in the window (in the schema's currency) reaches
    /// `amount`.
    public static func revenue(
        atLeast amount: Decimal, fine: Int? = nil, coarse: CoarseConversionValue? = nil, locksWindow: Bool = false,
        in windows: Set<PostbackWindow> = Set(PostbackWindow.allCases)
    ) -> ConversionRule {
        ConversionRule(condition: .revenue(atLeast: amount), fine: fine, coarse: coarse, locksWindow: locksWindow, windows: windows)
    }
}

/// How an app's events and revenue become conversion values, declared once
/// (``DeepLinkClient/Configuration/conversionValues``) and applied on every
/// ``DeepLinkClient/track(_:properties:)`` and ``DeepLinkClient/trackRevenue(amount:currency:properties:)``.
///
/// In each postback window the value is, part by part, the greatest that the rules met in that
/// window earn (events counted and revenue summed within the window); a rule without a fine
/// (coarse) value leaves that part to the others. It never decreases within a window, and
/// nothing is written after a rule that locks it.
///
/// ```swift
/// let schema = try ConversionSchema(currency: "EUR", rules: [
///     .event("signup", fine: 4, coarse: .low),
///     .event("level_complete", count: 3, fine: 8, coarse: .medium),
///     .revenue(atLeast: 1, fine: 32, coarse: .high),
///     .revenue(atLeast: 20, fine: 63, coarse: .high, locksWindow: true),
/// ])
/// ```
public struct ConversionSchema: Sendable, Hashable {
    /// The greatest fine value.
    public static let maximumFineValue = 63

    /// The currency whose revenue ``ConversionRule/Condition/revenue(atLeast:)`` counts (an
    /// ISO 4217 code); revenue in another is not counted.
    public let currency: String
    /// The rules, in any order.
    public let rules: [ConversionRule]

    /// A schema of `rules`, counting revenue in `currency`.
    ///
    /// - Throws: ``DeepLinkError`` `.invalidConfiguration` naming the rule: a fine value outside
    ///   0…63, a count below 1, an empty event name, a negative or NaN amount, no window, or a
    ///   currency that is not three letters.
    public init(currency: String = "USD", rules: [ConversionRule]) throws {
        let code = currency.uppercased()
        guard code.count == 3, code.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) }) else {
            throw DeepLinkError(.invalidConfiguration, "A conversion schema's currency must be a three-letter ISO 4217 code; got '\(currency)'.")
        }
        for (index, rule) in rules.enumerated() {
            func refuse(_ why: String) -> DeepLinkError {
                DeepLinkError(.invalidConfiguration, "Conversion rule \(index + 1): \(why).")
            }
            if let fine = rule.fine, !(0...Self.maximumFineValue).contains(fine) { throw refuse("the fine value \(fine) is not in 0…63") }
            if rule.windows.isEmpty { throw refuse("it applies in no window") }
            switch rule.condition {
            case .event(let name, let count):
                if name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { throw refuse("the event has no name") }
                if count < 1 { throw refuse("the count \(count) is below 1") }
            case .revenue(let amount):
                if !amount.isFinite || amount < 0 { throw refuse("the amount must be zero or more") }
            }
        }
        self.currency = code
        self.rules = rules
    }

    /// The value and lock the rules earn in `window` for what was tracked in it.
    func earned(in window: PostbackWindow, counts: [String: Int], revenue: Decimal) -> (value: ConversionValue, locks: Bool) {
        var value = ConversionValue.lowest
        var locks = false
        for rule in rules where rule.windows.contains(window) {
            let met =
                switch rule.condition {
                case .event(let name, let count): counts[name, default: 0] >= count
                case .revenue(let amount): revenue >= amount
                }
            guard met else { continue }
            value = value.raised(to: ConversionValue(fine: rule.fine ?? 0, coarse: rule.coarse ?? .low))
            locks = locks || rule.locksWindow
        }
        return (value, locks)
    }

    /// The event names the rules count: only these are kept.
    var countedEvents: Set<String> {
        Set(rules.compactMap { if case .event(let name, _) = $0.condition { name } else { nil } })
    }
}

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
struct ConversionValueState: Sendable, Hashable, Codable {
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
/// a schema applied on every tracked event, written through one system framework.
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
    private func conversionAccount() async -> ConversionValueState? {
        if let known = conversions.account { return known }
        let store = launchHistoryStore()
        if let stored = store.load(ConversionValueState.self, forKey: ConversionValueState.key, logger: logger) {
            conversions.account = stored
            return stored
        }
        _ = await launch()
        // Another call may have made it meanwhile.
        if let known = conversions.account { return known }
        guard let history = store.load(LaunchHistory.self, forKey: LaunchHistory.key, logger: logger) else { return nil }
        let account = ConversionValueState(firstLaunch: history.firstSeen, eligible: history.backends.first?.joinedExistingUser == false)
        keep(account)
        return account
    }

    private func keep(_ account: ConversionValueState) {
        guard account != conversions.account else { return }
        conversions.account = account
        launchHistoryStore().save(account, forKey: ConversionValueState.key, logger: logger)
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
        let error = failure as NSError
        let message =
            "The system refused conversion value \(update.value) for postback window \(update.window) (\(error.domain) \(error.code)). "
            + "Outside an install from an ad on the App Store this is expected (SKANErrorDomain 10); reported once per install, and tried again with the next event."
        logger.warning("\(message)")
        publish(.failure(DeepLinkError(.rejected, message, backend: backend.id)))
    }
}

/// The client's conversion-value account and its chain of writes.
struct ConversionValuesState {
    var account: ConversionValueState?
    var writes: Task<Void, Never>?
    /// How many writes are under way: while one is, an unaccepted value is not sent again.
    var inFlight = 0
}
