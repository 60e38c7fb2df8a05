import Foundation

/// A compiled route pattern: its segments, and how it compares with others.
struct RoutePattern: Sendable {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case capture(String)
        case wildcard
    }

    /// What decides whether two patterns match the same links: the literals (folded as
    /// compared), the capture names and where they are, and the wildcard.
    struct Shape: Hashable {
        let segments: [Segment]
    }

    let segments: [Segment]
    let captureNames: [String]

    var shape: Shape { Shape(segments: segments) }

    /// Compiles `pattern`.
    ///
    /// - Throws: ``DeepLinkError`` `.invalidConfiguration` for a capture without a name, the
    ///   same capture name twice, a `*` that is not the last segment, or a segment that mixes
    ///   `:` or `*` with other text (a literal colon is written `%3A`), naming the segment.
    init(_ pattern: String, caseSensitive: Bool) throws {
        func invalid(_ reason: String) -> DeepLinkError {
            DeepLinkError(.invalidConfiguration, "The route '\(pattern)' is not a valid pattern: \(reason).")
        }
        let parts = pattern.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var segments: [Segment] = []
        var names: [String] = []
        for (index, part) in parts.enumerated() {
            if part == "*" {
                guard index == parts.count - 1 else { throw invalid("'*' may only end a pattern") }
                segments.append(.wildcard)
            } else if part.hasPrefix(":") {
                let name = String(part.dropFirst())
                guard !name.isEmpty else { throw invalid("a capture needs a name, as in ':id'") }
                guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                    throw invalid("the capture ':\(name)' may use only letters, digits and '_'")
                }
                guard !names.contains(name) else { throw invalid("the capture ':\(name)' appears twice") }
                names.append(name)
                segments.append(.capture(name))
            } else {
                guard !part.contains("*") else { throw invalid("'*' must be a segment of its own") }
                guard !part.contains(":") else {
                    throw invalid(
                        "the segment '\(part)' mixes ':' with other text; a capture is a whole segment, as in ':id' (write %3A for a literal colon)"
                    )
                }
                let literal = part.removingPercentEncoding ?? part
                segments.append(.literal(caseSensitive ? literal : Self.fold(literal)))
            }
        }
        self.segments = segments
        self.captureNames = names
    }

    /// A segment as literals compare without regard to case.
    static func fold(_ segment: String) -> String {
        // Most segments are already lower-case ASCII: skip the allocation then.
        if segment.utf8.allSatisfy({ $0 < 0x80 && !(0x41...0x5A).contains($0) }) { return segment }
        return segment.lowercased()
    }

    /// Whether `segments` match, without allocating: the count, then each literal.
    func matches(_ segments: [String], caseSensitive: Bool) -> Bool {
        if case .wildcard? = self.segments.last {
            guard segments.count >= self.segments.count - 1 else { return false }
        } else {
            guard segments.count == self.segments.count else { return false }
        }
        for (index, part) in self.segments.enumerated() {
            guard case .literal(let literal) = part else { continue }
            let segment = segments[index]
            guard segment == literal || (!caseSensitive && Self.fold(segment) == literal) else { return false }
        }
        return true
    }

    /// The captures of segments that ``matches(_:caseSensitive:)``: each by name, and what a
    /// trailing wildcard matched.
    func captures(in segments: [String]) -> (named: [String: String], rest: [String]) {
        var named: [String: String] = [:]
        var rest: [String] = []
        for (index, part) in self.segments.enumerated() {
            switch part {
            case .capture(let name): named[name] = segments[index]
            case .wildcard: rest = Array(segments[index...])
            case .literal: break
            }
        }
        return (named, rest)
    }

    /// Which of two patterns is tried first, segment by segment: a literal, then a capture, then
    /// the end of a pattern, then a wildcard. So a longer pattern goes before its prefix
    /// (`/help/faq` and `/help/:topic` before `/help`), except that a pattern that ends where
    /// the other goes on with a wildcard goes first (`/help` before `/help/*`, `/` before `/*`):
    /// an exact match beats a wildcard that matches zero segments.
    static func compareSpecificity(_ left: RoutePattern, _ right: RoutePattern) -> ComparisonResult {
        for index in 0..<max(left.segments.count, right.segments.count) {
            let rankA = rank(left.segments, index), rankB = rank(right.segments, index)
            if rankA != rankB { return rankA < rankB ? .orderedAscending : .orderedDescending }
        }
        return .orderedSame
    }

    private static func rank(_ segments: [Segment], _ index: Int) -> Int {
        guard index < segments.count else { return 2 }
        switch segments[index] {
        case .literal: return 0
        case .capture: return 1
        case .wildcard: return 3
        }
    }

    /// `segments` with dot segments resolved, as a web server resolves its path: `.` removed,
    /// `..` removing the segment before it, never past the root.
    static func resolvingDotSegments(_ segments: [String]) -> [String] {
        guard segments.contains(where: { $0 == "." || $0 == ".." }) else { return segments }
        var resolved: [String] = []
        for segment in segments {
            switch segment {
            case ".": continue
            case "..": if !resolved.isEmpty { resolved.removeLast() }
            default: resolved.append(segment)
            }
        }
        return resolved
    }
}
