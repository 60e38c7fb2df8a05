import Foundation
import LinkRelay

/// An `apple-app-site-association` file's `applinks` section, in both of Apple's forms, and
/// the rules iOS uses to decide whether a URL opens the app.
public struct AssociationFile: Sendable, Equatable {
    /// Apple's limit on the file's size (uncompressed).
    public static let maximumSize = 128 * 1024

    /// One `applinks.details` entry.
    public struct Detail: Sendable, Equatable {
        /// `appIDs` (or the legacy `appID`): `TEAMID.bundle.id`.
        public var appIDs: [String]
        /// The rules, in order; the first that matches decides.
        public var rules: [Rule]
        /// Whether the entry uses the legacy `paths` form.
        public var isLegacy: Bool
    }

    /// One rule: a `components` entry, or a legacy `paths` string.
    public struct Rule: Sendable, Equatable {
        /// The path pattern (`/` key); `nil` matches every path.
        public var path: String?
        /// The query: a pattern for the whole query, or one per item name.
        public var query: Query?
        /// The fragment pattern (`#` key); `nil` matches any.
        public var fragment: String?
        /// Whether a match keeps the URL out of the app.
        public var exclude: Bool
        /// `caseSensitive` (default true).
        public var caseSensitive: Bool
        /// `percentEncoded` (default true): patterns are compared with the URL as written.
        public var percentEncoded: Bool
        /// How the rule was written, for messages.
        public var written: String

        public enum Query: Sendable, Equatable {
            case whole(String)
            case items([String: String])
        }

        /// A rule, as a `components` entry writes it.
        public init(
            path: String?, query: Query? = nil, fragment: String? = nil, exclude: Bool = false, caseSensitive: Bool = true,
            percentEncoded: Bool = true, written: String
        ) {
            self.path = path
            self.query = query
            self.fragment = fragment
            self.exclude = exclude
            self.caseSensitive = caseSensitive
            self.percentEncoded = percentEncoded
            self.written = written
        }
    }

    public var details: [Detail]
    /// Whether the file has `applinks.apps` (needed by iOS 12 and earlier with the legacy form).
    public var hasAppsKey: Bool

    /// Reads a file's bytes.
    ///
    /// - Throws: ``DoctorError`` saying what is wrong with the JSON or its shape.
    public init(data: Data) throws {
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw DoctorError("The association file is not valid JSON (\(Self.describe(error))).")
        }
        guard case .object(let top) = root else { throw DoctorError("The association file is not a JSON object.") }
        guard case .object(let applinks)? = top["applinks"] else {
            throw DoctorError("The association file has no \"applinks\" object, so it associates no links.")
        }
        guard case .array(let details)? = applinks["details"] else {
            throw DoctorError("\"applinks\" has no \"details\" array.")
        }
        hasAppsKey = applinks["apps"] != nil
        self.details = try details.enumerated().map { index, value in
            guard case .object(let entry) = value else { throw DoctorError("applinks.details[\(index)] is not an object.") }
            var appIDs: [String] = []
            if case .array(let ids)? = entry["appIDs"] { appIDs = ids.compactMap(\.stringValue) }
            if let id = entry["appID"]?.stringValue { appIDs.append(id) }
            if case .array(let components)? = entry["components"] {
                return Detail(appIDs: appIDs, rules: try components.enumerated().map { try Self.rule($1, at: "applinks.details[\(index)].components[\($0)]") }, isLegacy: false)
            }
            if case .array(let paths)? = entry["paths"] {
                return Detail(appIDs: appIDs, rules: paths.compactMap(\.stringValue).map(Self.legacyRule), isLegacy: true)
            }
            throw DoctorError("applinks.details[\(index)] has neither \"components\" nor \"paths\".")
        }
    }

    /// The rules for `appID`, from every entry that names it.
    public func rules(for appID: String) -> [Rule]? {
        let entries = details.filter { $0.appIDs.contains(appID) }
        return entries.isEmpty ? nil : entries.flatMap(\.rules)
    }

    /// What iOS does with `url` for `appID`: the app opens it, a rule excludes it, or nothing
    /// matches (Safari opens it).
    public func verdict(for url: URL, appID: String) -> Verdict {
        guard let rules = rules(for: appID) else { return .appNotListed }
        for rule in rules where rule.matches(url) {
            return rule.exclude ? .excluded(by: rule.written) : .opensApp(by: rule.written)
        }
        return .noMatch
    }

    public enum Verdict: Sendable, Equatable {
        case opensApp(by: String)
        case excluded(by: String)
        case noMatch
        case appNotListed
    }

    // MARK: - Reading rules

    private static func rule(_ value: JSONValue, at place: String) throws -> Rule {
        guard case .object(let component) = value else { throw DoctorError("\(place) is not an object.") }
        var query: Rule.Query?
        switch component["?"] {
        case .string(let pattern)?: query = .whole(pattern)
        case .object(let items)?: query = .items(items.compactMapValues(\.stringValue))
        case nil: query = nil
        default: throw DoctorError("\(place)[\"?\"] must be a string or an object of strings.")
        }
        func flag(_ key: String, default value: Bool) throws -> Bool {
            switch component[key] {
            case nil: return value
            case .bool(let flag)?: return flag
            default: throw DoctorError("\(place)[\"\(key)\"] must be true or false.")
            }
        }
        let written = component.keys.sorted().compactMap { key -> String? in
            guard key != "comment", let value = component[key] else { return nil }
            return "\"\(key)\": \(Self.text(value))"
        }
        return Rule(
            path: component["/"]?.stringValue, query: query, fragment: component["#"]?.stringValue,
            exclude: try flag("exclude", default: false), caseSensitive: try flag("caseSensitive", default: true),
            percentEncoded: try flag("percentEncoded", default: true), written: "{" + written.joined(separator: ", ") + "}")
    }

    private static func legacyRule(_ path: String) -> Rule {
        let exclude = path.hasPrefix("NOT ")
        let pattern = exclude ? String(path.dropFirst(4)) : path
        return Rule(path: pattern, query: nil, fragment: nil, exclude: exclude, caseSensitive: true, percentEncoded: true, written: "\"\(path)\"")
    }

    private static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): "\"\(text)\""
        case .bool(let flag): flag ? "true" : "false"
        case .object(let object): "{" + object.keys.sorted().map { "\"\($0)\": \(text(object[$0]!))" }.joined(separator: ", ") + "}"
        case .int(let number): String(number)
        case .double(let number): String(number)
        case .null: "null"
        case .array(let items): "[" + items.map(text).joined(separator: ", ") + "]"
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? DecodingError, case .dataCorrupted(let context) = error {
            return context.underlyingError.map { "\($0.localizedDescription)" } ?? context.debugDescription
        }
        return "\(error)"
    }
}

extension AssociationFile.Rule {
    /// Whether `url` matches every part this rule names.
    public func matches(_ url: URL) -> Bool {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = (percentEncoded ? components?.percentEncodedPath : components?.path) ?? ""
        if let pattern = self.path, !Self.wildcard(pattern, matches: path.isEmpty ? "/" : path, caseSensitive: caseSensitive) {
            return false
        }
        switch query {
        case nil:
            break
        case .whole(let pattern)?:
            let query = (percentEncoded ? components?.percentEncodedQuery : components?.query) ?? ""
            guard Self.wildcard(pattern, matches: query, caseSensitive: caseSensitive) else { return false }
        case .items(let patterns)?:
            let items = components?.queryItems ?? []
            for (name, pattern) in patterns {
                // A missing item reads as an empty value: "*" accepts it, "?*" does not.
                let value = items.last { $0.name == name }?.value ?? ""
                guard Self.wildcard(pattern, matches: value, caseSensitive: caseSensitive) else { return false }
            }
        }
        if let pattern = fragment {
            let fragment = (percentEncoded ? components?.percentEncodedFragment : components?.fragment) ?? ""
            guard Self.wildcard(pattern, matches: fragment, caseSensitive: caseSensitive) else { return false }
        }
        return true
    }

    /// Apple's patterns: `*` matches any run of characters (`/` included, or none), `?` exactly
    /// one; everything else itself. The whole text must match.
    public static func wildcard(_ pattern: String, matches text: String, caseSensitive: Bool) -> Bool {
        let pattern = Array(caseSensitive ? pattern : pattern.lowercased())
        let text = Array(caseSensitive ? text : text.lowercased())
        // Greedy matching with backtracking to the last `*`: linear in practice, never exponential.
        var p = 0, t = 0, star = -1, mark = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "*" {
                star = p
                mark = t
                p += 1
            } else if p < pattern.count, pattern[p] == "?" || pattern[p] == text[t] {
                p += 1
                t += 1
            } else if star >= 0 {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}

/// A problem with one of the doctor's inputs, in words a developer can act on.
public struct DoctorError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
