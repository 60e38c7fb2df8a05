import Foundation

/// What the provider said about this install: whether it was matched to a click, how, and how
/// sure it is.
public struct InstallAttribution: Sendable, Hashable, Codable {
    /// How sure the provider is of a match, normalised to a score from 0 to 100 and a level.
    public struct Confidence: Sendable, Hashable, Codable {
        /// Coarse confidence, as providers that report levels use them.
        public enum Level: String, Sendable, Hashable, Codable, Comparable {
            /// `low`, `medium` or `high`, in that order (`low < high`).
            case low, medium, high

            public static func < (lhs: Level, rhs: Level) -> Bool {
                lhs.rank < rhs.rank
            }

            private var rank: Int {
                switch self {
                case .low: 0
                case .medium: 1
                case .high: 2
                }
            }
        }

        /// 0 (no confidence) to 100 (certain).
        public let score: Int
        /// The provider's level, or one derived from the score.
        public let level: Level

        /// A score the provider reports on 0…100; values outside are clamped. The level is
        /// `high` from 70 (the threshold fingerprint matchers commonly use), `medium` from 40,
        /// `low` below.
        public init(score: Int) {
            let clamped = min(max(score, 0), 100)
            self.score = clamped
            self.level = clamped >= 70 ? .high : clamped >= 40 ? .medium : .low
        }

        /// A probability the provider reports on 0…1.
        public init(fraction: Double) {
            let value = fraction.isFinite ? fraction : 0
            self.init(score: Int((min(max(value, 0), 1) * 100).rounded()))
        }

        /// A level the provider reports without a score; the score is the level's midpoint
        /// (high 85, medium 55, low 20).
        public init(level: Level) {
            self.level = level
            switch level {
            case .high: score = 85
            case .medium: score = 55
            case .low: score = 20
            }
        }

        /// Both, as a provider that reports both says them; the score is clamped to 0…100.
        public init(score: Int, level: Level) {
            self.score = min(max(score, 0), 100)
            self.level = level
        }
    }

    /// How the install was matched.
    public enum Method: String, Sendable, Hashable, Codable {
        /// Probabilistic: device and network signals compared with those of a click.
        case fingerprint
        /// Deterministic: an identifier known to both sides (a vendor or advertising id, a
        /// click id handed through the store).
        case deviceIdentifier
        /// Certain: the tapped link itself, read from the pasteboard with the user's consent
        /// (``CertainLink/Source/pasteboard``).
        case pasteboard
        /// Certain: the App Clip's invocation URL, handed to the full app through the App Group
        /// (``CertainLink/Source/appClip``).
        case appClip
        /// Not matched.
        case none
    }

    /// The provider's identifier for this install, if it issues one.
    public var installID: String?
    /// Whether the install was matched to a click.
    public var isAttributed: Bool
    /// How sure the provider is, if it says.
    public var confidence: Confidence?
    /// The signals that matched (`ip`, `user_agent`, `timezone`, …), as the provider names them.
    public var matchedFactors: [String]
    /// How the install was matched.
    public var method: Method
    /// When the matched click happened, if the provider says.
    public var clickedAt: Date?
    /// The provider's id of the matched link, if it says: also when the match carries no link
    /// the app can open (``InstallOutcome/attributedWithoutLink(_:)``).
    public var linkID: String?
    /// True when the provider answered after ``DeepLinkClient/Configuration`` 's install-match
    /// deadline had passed: the outcome was already reported as timed out, and this result was
    /// delivered anyway.
    public var isLate: Bool

    /// An attribution as a provider reports it.
    public init(
        installID: String? = nil,
        isAttributed: Bool,
        confidence: Confidence? = nil,
        matchedFactors: [String] = [],
        method: Method,
        clickedAt: Date? = nil,
        linkID: String? = nil,
        isLate: Bool = false
    ) {
        self.installID = installID
        self.isAttributed = isAttributed
        self.confidence = confidence
        self.matchedFactors = matchedFactors
        self.method = method
        self.clickedAt = clickedAt
        self.linkID = linkID
        self.isLate = isLate
    }

    /// An install the provider did not match to any click.
    public static func organic(installID: String? = nil) -> InstallAttribution {
        InstallAttribution(installID: installID, isAttributed: false, method: .none)
    }
}
