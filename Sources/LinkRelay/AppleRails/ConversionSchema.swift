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

    /// The one of `low`, `medium` and `high` that this value is: how a system framework's own
    /// coarse value is picked.
    func pick<Value>(low: Value, medium: Value, high: Value) -> Value {
        switch self {
        case .low: low
        case .medium: medium
        case .high: high
        }
    }

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
    /// The rules, in any order: the install's values.
    public let rules: [ConversionRule]
    /// The rules of a re-engagement (iOS 18's AdAttributionKit: an ad opened the installed app
    /// through a universal link, ``DeepLink/isAdReengagement``): counted from that open, in
    /// windows of their own, and written as re-engagement values only. Empty: re-engagements get
    /// no values of their own, and the install's values go to both kinds of postback (the
    /// system's default).
    public let reengagementRules: [ConversionRule]

    /// A schema of `rules` (and `reengagementRules` for ad re-engagements), counting revenue in
    /// `currency`.
    ///
    /// - Throws: ``DeepLinkError`` `.invalidConfiguration` naming the rule: a fine value outside
    ///   0…63, a count below 1, an empty event name, a negative or NaN amount, no window, or a
    ///   currency that is not three letters.
    public init(currency: String = "USD", rules: [ConversionRule], reengagementRules: [ConversionRule] = []) throws {
        let code = currency.uppercased()
        guard code.count == 3, code.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) }) else {
            throw DeepLinkError(
                .invalidConfiguration, "A conversion schema's currency must be a three-letter ISO 4217 code; got '\(currency)'.")
        }
        try Self.check(rules, named: "Conversion rule")
        try Self.check(reengagementRules, named: "Re-engagement rule")
        self.currency = code
        self.rules = rules
        self.reengagementRules = reengagementRules
    }

    private init(checkedCurrency currency: String, rules: [ConversionRule]) {
        self.currency = currency
        self.rules = rules
        self.reengagementRules = []
    }

    /// The schema a re-engagement's values follow: its rules, this currency.
    var reengagement: ConversionSchema {
        ConversionSchema(checkedCurrency: currency, rules: reengagementRules)
    }

    /// Whether re-engagements have values of their own.
    var separatesReengagement: Bool { !reengagementRules.isEmpty }

    private static func check(_ rules: [ConversionRule], named kind: String) throws {
        for (index, rule) in rules.enumerated() {
            func refuse(_ why: String) -> DeepLinkError {
                DeepLinkError(.invalidConfiguration, "\(kind) \(index + 1): \(why).")
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
