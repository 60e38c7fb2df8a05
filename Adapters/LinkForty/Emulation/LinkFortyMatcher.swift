import Foundation
import LinkRelaySimulatorCore

/// LinkForty Core's install matcher (`src/lib/fingerprint.ts`), reproduced: which click an
/// install came from, by weighted fingerprint factors.
///
/// Factors, each counted only when both sides have a value: `ip` 40 (both addresses public;
/// IPv4 by /24, IPv6 by the first four groups), `user_agent` 30 (platform and browser tokens),
/// `timezone` 10, `language` 10 (first two letters), `screen` 10 (both sizes, non-zero, equal).
/// A match needs 70; the highest score wins, and on a tie the most recent click.
public struct LinkFortyMatcher: Sendable {
    /// The fingerprint of one side: a click or an install.
    public struct Fingerprint: Sendable, Hashable {
        /// The public address (`x-forwarded-for`'s first entry).
        public var ip: String?
        /// The `User-Agent`.
        public var userAgent: String?
        /// The IANA time zone (`Europe/Berlin`).
        public var timezone: String?
        /// The language (`de-DE`); its first two letters are compared.
        public var language: String?
        /// The screen's width in native pixels.
        public var screenWidth: Int?
        /// The screen's height in native pixels.
        public var screenHeight: Int?

        /// A fingerprint; a missing value is a factor that is not counted.
        public init(
            ip: String? = nil, userAgent: String? = nil, timezone: String? = nil, language: String? = nil,
            screenWidth: Int? = nil, screenHeight: Int? = nil
        ) {
            self.ip = ip
            self.userAgent = userAgent
            self.timezone = timezone
            self.language = language
            self.screenWidth = screenWidth
            self.screenHeight = screenHeight
        }
    }

    /// A click that may have led to the install.
    public struct Candidate: Sendable {
        /// The click's id.
        public var clickID: String
        /// When the click happened.
        public var clickedAt: Date
        /// The clicked link's attribution window; `nil` or 0 means 168 hours.
        public var attributionWindowHours: Int?
        /// The click's fingerprint.
        public var fingerprint: Fingerprint

        /// A click: its id, time, link window (`nil` or 0: 168 hours) and fingerprint.
        public init(clickID: String, clickedAt: Date, attributionWindowHours: Int?, fingerprint: Fingerprint) {
            self.clickID = clickID
            self.clickedAt = clickedAt
            self.attributionWindowHours = attributionWindowHours
            self.fingerprint = fingerprint
        }
    }

    /// The click an install is attributed to.
    public struct Match: Sendable, Hashable {
        /// The matched click's id.
        public var clickID: String
        /// The score out of 100 (at least ``LinkFortyMatcher/threshold``).
        public var score: Int
        /// The factors that counted: `ip`, `user_agent`, `timezone`, `language`, `screen`.
        public var matchedFactors: [String]
        /// When the matched click happened.
        public var clickedAt: Date
    }

    /// The lowest score that matches: 70.
    public static let threshold = 70
    static let maximumAgeHours = 2160.0

    /// Core's matcher.
    public init() {}

    /// The best click for `install` at `now`, or `nil` (organic).
    public func match(_ install: Fingerprint, among candidates: [Candidate], now: Date) -> Match? {
        let recent =
            candidates
            .filter { now.timeIntervalSince($0.clickedAt) <= Self.maximumAgeHours * 3600 }
            .sorted { $0.clickedAt > $1.clickedAt }
            .prefix(1000)
        var best: Match?
        for candidate in recent {
            let window = Double(candidate.attributionWindowHours.flatMap { $0 > 0 ? $0 : nil } ?? 168)
            guard now.timeIntervalSince(candidate.clickedAt) / 3600 <= window else { continue }
            let (score, factors) = Self.score(install, candidate.fingerprint)
            guard score >= Self.threshold, score > (best?.score ?? 0) else { continue }
            best = Match(clickID: candidate.clickID, score: score, matchedFactors: factors, clickedAt: candidate.clickedAt)
        }
        return best
    }

    static func score(_ install: Fingerprint, _ click: Fingerprint) -> (Int, [String]) {
        var score = 0
        var factors: [String] = []
        if let a = install.ip, let b = click.ip, IPAddressRules.sameNetwork(a, b) {
            score += 40
            factors.append("ip")
        }
        if let a = install.userAgent, let b = click.userAgent, normalise(userAgent: a) == normalise(userAgent: b) {
            score += 30
            factors.append("user_agent")
        }
        if let a = install.timezone, let b = click.timezone, a == b {
            score += 10
            factors.append("timezone")
        }
        if let a = install.language, let b = click.language, a.prefix(2).lowercased() == b.prefix(2).lowercased() {
            score += 10
            factors.append("language")
        }
        if let w1 = install.screenWidth, let h1 = install.screenHeight, let w2 = click.screenWidth,
            let h2 = click.screenHeight, w1 != 0, h1 != 0, w2 != 0, h2 != 0, w1 == w2, h1 == h2
        {
            score += 10
            factors.append("screen")
        }
        return (score, factors)
    }

    /// `"<platform>|<browser>"`, lower-cased: the first of iPhone, iPad, Android, Windows,
    /// Macintosh, Linux and the first of Chrome, Safari, Firefox, Edge, Opera; versions ignored.
    static func normalise(userAgent: String) -> String {
        func first(of tokens: [String]) -> String {
            let lower = userAgent.lowercased()
            let found = tokens.compactMap { token -> (String.Index, String)? in
                lower.range(of: token.lowercased()).map { ($0.lowerBound, token.lowercased()) }
            }
            return found.min { $0.0 < $1.0 }?.1 ?? ""
        }
        return first(of: ["iPhone", "iPad", "Android", "Windows", "Macintosh", "Linux"]) + "|"
            + first(of: ["Chrome", "Safari", "Firefox", "Edge", "Opera"])
    }

}
