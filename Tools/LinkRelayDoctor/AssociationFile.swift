import Foundation
import LinkRelay

/// An `apple-app-site-association` file's `applinks` section, in both of Apple's forms, and
/// the rules iOS uses to decide whether a URL opens the app.
///
/// Read as iOS reads it: a UTF-8 byte-order mark is skipped, `applinks.defaults` sets each
/// component's `caseSensitive` and `percentEncoded`, `substitutionVariables` and the built-in
/// `$(lang)` and `$(region)` stand for their values, `details` may be an array or (an old form)
/// an object keyed by app ID. What iOS would ignore is ignored and reported in ``findings``
/// (an unknown component key, a `?` object with a value that is not a string, an entry with
/// neither `components` nor `paths`), as are mistakes that break the file (a non-empty legacy
/// `apps` array, a malformed app ID).
public struct AssociationFile: Sendable, Equatable {
    /// Apple's limit on the file's size (uncompressed).
    public static let maximumSize = 128 * 1024
    /// Above this size the doctor warns: the file is close to Apple's limit.
    public static let recommendedSize = 100 * 1024

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
        /// `caseSensitive` (default true, or `applinks.defaults`).
        public var caseSensitive: Bool
        /// `percentEncoded` (default true, or `applinks.defaults`): patterns are compared with
        /// the URL as written.
        public var percentEncoded: Bool
        /// How the rule was written, for messages.
        public var written: String
        /// Where it stands: `component #3`, `path #1` (numbered from 1 within its entry).
        public var place: String
        /// The file's `substitutionVariables`: `$(name)` in a pattern matches any of the values.
        public var variables: [String: [String]]

        public enum Query: Sendable, Equatable {
            case whole(String)
            case items([String: String])
        }

        /// A rule, as a `components` entry writes it.
        public init(
            path: String?, query: Query? = nil, fragment: String? = nil, exclude: Bool = false, caseSensitive: Bool = true,
            percentEncoded: Bool = true, written: String, place: String = "", variables: [String: [String]] = [:]
        ) {
            self.path = path
            self.query = query
            self.fragment = fragment
            self.exclude = exclude
            self.caseSensitive = caseSensitive
            self.percentEncoded = percentEncoded
            self.written = written
            self.place = place
            self.variables = variables
        }
    }

    /// Something in the file iOS ignores or refuses, with how to fix it.
    public struct Finding: Sendable, Equatable {
        /// `.warning` for what iOS ignores, `.failure` for what breaks the file.
        public var status: Check.Status
        public var message: String
        public var fix: String
    }

    public var details: [Detail]
    /// Whether the file has `applinks.apps` (needed by iOS 12 and earlier with the legacy form).
    public var hasAppsKey: Bool
    /// Whether the file starts with a UTF-8 byte-order mark (skipped, as iOS may skip it).
    public var hasByteOrderMark: Bool
    /// `applinks.substitutionVariables`.
    public var substitutionVariables: [String: [String]]
    /// `appclips.apps`: the App Clips this domain may invoke (`TEAMID.bundle.id.Clip`); `nil`
    /// when the file has no `appclips` section.
    public var appClipIDs: [String]?
    /// What iOS ignores or refuses in the file, in file order.
    public var findings: [Finding]

    /// Reads a file's bytes.
    ///
    /// - Throws: ``DoctorError`` when the bytes are not a JSON object with `applinks.details`.
    public init(data: Data) throws {
        var findings: [Finding] = []
        func note(_ status: Check.Status, _ message: String, fix: String) {
            findings.append(Finding(status: status, message: message, fix: fix))
        }
        let bom = data.starts(with: [0xEF, 0xBB, 0xBF])
        if bom {
            note(
                .warning, "The file starts with a UTF-8 byte-order mark; iOS may read it, some versions may not.",
                fix: "Save the file as UTF-8 without a byte-order mark.")
        }
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: bom ? data.dropFirst(3) : data)
        } catch {
            throw DoctorError("The association file is not valid JSON (\(Self.describe(error))).")
        }
        guard case .object(let top) = root else { throw DoctorError("The association file is not a JSON object.") }
        guard case .object(let applinks)? = top["applinks"] else {
            throw DoctorError("The association file has no \"applinks\" object, so it associates no links.")
        }
        // Entries: an array, or an object keyed by app ID (an early form iOS still reads).
        var entries: [(place: String, keyedID: String?, value: JSONValue)] = []
        switch applinks["details"] {
        case .array(let list)?:
            entries = list.enumerated().map { ("applinks.details[\($0)]", nil, $1) }
        case .object(let keyed)?:
            entries = keyed.keys.sorted().map { ("applinks.details[\"\($0)\"]", $0, keyed[$0]!) }
        default:
            throw DoctorError("\"applinks\" has no \"details\" array.")
        }
        if entries.isEmpty {
            note(
                .warning, "applinks.details is empty, so no app is associated with this domain.",
                fix: "Add an entry with your app ID and its components.")
        }
        switch applinks["apps"] {
        case nil: hasAppsKey = false
        case .array(let apps)?:
            hasAppsKey = true
            if !apps.isEmpty {
                note(
                    .failure, "applinks.apps must be an empty array; it lists \(apps.count) value\(apps.count == 1 ? "" : "s").",
                    fix: "Write \"apps\": [] (or leave it out with the components form).")
            }
        default:
            hasAppsKey = true
            note(.failure, "applinks.apps must be an array.", fix: "Write \"apps\": [].")
        }
        // Defaults for every component, and the substitution variables.
        var defaults = (caseSensitive: true, percentEncoded: true)
        if case .object(let given)? = applinks["defaults"] {
            if case .bool(let flag)? = given["caseSensitive"] { defaults.caseSensitive = flag }
            if case .bool(let flag)? = given["percentEncoded"] { defaults.percentEncoded = flag }
        }
        var variables: [String: [String]] = [:]
        if case .object(let given)? = applinks["substitutionVariables"] {
            for (name, value) in given {
                guard case .array(let values) = value else {
                    note(
                        .warning, "substitutionVariables.\(name) is not an array of strings; iOS ignores it.",
                        fix: "Write \"\(name)\": [\"value\", …].")
                    continue
                }
                variables[name] = values.compactMap(\.stringValue)
            }
        }
        substitutionVariables = variables
        hasByteOrderMark = bom
        // The App Clips this domain invokes (and whose link can cross to the full app).
        switch top["appclips"] {
        case nil:
            appClipIDs = nil
        case .object(let appclips)?:
            if case .array(let apps)? = appclips["apps"] {
                let ids = apps.compactMap(\.stringValue)
                if ids.count < apps.count {
                    note(
                        .failure, "appclips.apps lists a value that is not a string.",
                        fix: "List App Clip ids as strings: \"apps\": [\"TEAMID.bundle.id.Clip\"].")
                }
                for id in ids where !Self.isWellFormed(appID: id) {
                    note(
                        .failure,
                        "appclips.apps lists \"\(id)\", which is not TEAMID.bundle.id (a 10-character team ID, a dot, the App Clip's bundle ID).",
                        fix: "Write the App Clip's id as it appears in the developer account, e.g. ABCDE12345.com.example.app.Clip.")
                }
                appClipIDs = ids
            } else {
                note(
                    .failure, "appclips must be an object with an \"apps\" array.",
                    fix: "Write \"appclips\": {\"apps\": [\"TEAMID.bundle.id.Clip\"]}.")
                appClipIDs = []
            }
        default:
            note(
                .failure, "appclips must be an object with an \"apps\" array.",
                fix: "Write \"appclips\": {\"apps\": [\"TEAMID.bundle.id.Clip\"]}.")
            appClipIDs = []
        }

        var details: [Detail] = []
        for (place, keyedID, value) in entries {
            guard case .object(let entry) = value else {
                note(.failure, "\(place) is not an object.", fix: "Each entry is {\"appIDs\": […], \"components\": […]}.")
                continue
            }
            var appIDs: [String] = keyedID.map { [$0] } ?? []
            if case .array(let ids)? = entry["appIDs"] { appIDs += ids.compactMap(\.stringValue) }
            if let id = entry["appID"]?.stringValue { appIDs.append(id) }
            if appIDs.isEmpty {
                note(
                    .failure, "\(place) names no app (\"appIDs\", or the legacy \"appID\").", fix: "Add \"appIDs\": [\"TEAMID.bundle.id\"]."
                )
            }
            for id in appIDs where !Self.isWellFormed(appID: id) {
                note(
                    .failure,
                    "\(place) lists the app ID \"\(id)\", which is not TEAMID.bundle.id (a 10-character team ID, a dot, the bundle ID).",
                    fix: "Write the app ID as it appears in the developer account, e.g. ABCDE12345.com.example.app.")
            }
            let owner = appIDs.first ?? "no app"
            if case .array(let components)? = entry["components"] {
                var rules: [Rule] = []
                for (index, component) in components.enumerated() {
                    let at = "\(place).components[\(index)]"
                    if let rule = Self.rule(
                        component, at: at, place: "component #\(index + 1) of \(owner)", defaults: defaults, variables: variables,
                        note: note)
                    {
                        rules.append(rule)
                    }
                }
                details.append(Detail(appIDs: appIDs, rules: rules, isLegacy: false))
            } else if case .array(let paths)? = entry["paths"] {
                let rules = paths.compactMap(\.stringValue).enumerated().map {
                    Self.legacyRule($1, place: "path #\($0 + 1) of \(owner)", variables: variables)
                }
                details.append(Detail(appIDs: appIDs, rules: rules, isLegacy: true))
            } else {
                note(
                    .warning, "\(place) has neither \"components\" nor \"paths\", so it matches no link.",
                    fix: "Add \"components\": [{\"/\": \"/*\"}] (or the paths your links use).")
                details.append(Detail(appIDs: appIDs, rules: [], isLegacy: false))
            }
        }
        self.details = details
        self.findings = findings
    }

    /// Whether `id` is `TEAMID.bundle.id`: ten letters or digits, a dot, a bundle ID.
    public static func isWellFormed(appID id: String) -> Bool {
        let parts = id.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            return false
        }
        return !parts[1].isEmpty
            && parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "*") }
    }

    /// Whether an entry's app ID `listed` is the app `wanted`: the same app ID, or, when `wanted`
    /// is a bundle ID alone (no team ID in front), any team's app with that bundle ID.
    public static func appID(_ listed: String, isApp wanted: String) -> Bool {
        if listed == wanted { return true }
        guard !isWellFormed(appID: wanted), isWellFormed(appID: listed) else { return false }
        return listed.split(separator: ".", maxSplits: 1).last.map(String.init) == wanted
    }

    /// The rules for `appID` (a full app ID, or a bundle ID alone), from every entry that names it.
    public func rules(for appID: String) -> [Rule]? {
        let entries = details.filter { $0.appIDs.contains { Self.appID($0, isApp: appID) } }
        return entries.isEmpty ? nil : entries.flatMap(\.rules)
    }

    /// What iOS does with `url` for `appID`: the app opens it, a rule excludes it, or nothing
    /// matches (Safari opens it).
    public func verdict(for url: URL, appID: String) -> Verdict {
        decision(for: url, appID: appID).verdict
    }

    /// The verdict and the rule that decided it (`nil` when no rule matched).
    public func decision(for url: URL, appID: String) -> (verdict: Verdict, rule: Rule?) {
        guard let rules = rules(for: appID) else { return (.appNotListed, nil) }
        for rule in rules where rule.matches(url) {
            return (rule.exclude ? .excluded(by: rule.written) : .opensApp(by: rule.written), rule)
        }
        return (.noMatch, nil)
    }

    public enum Verdict: Sendable, Equatable {
        case opensApp(by: String)
        case excluded(by: String)
        case noMatch
        case appNotListed
    }

    // MARK: - Reading rules

    /// The keys a component may have.
    static let componentKeys: Set<String> = ["/", "?", "#", "exclude", "comment", "caseSensitive", "percentEncoded"]

    private static func rule(
        _ value: JSONValue, at path: String, place: String, defaults: (caseSensitive: Bool, percentEncoded: Bool),
        variables: [String: [String]], note: (Check.Status, String, String) -> Void
    ) -> Rule? {
        guard case .object(let component) = value else {
            note(.warning, "\(path) is not an object; iOS ignores it.", "Write each component as {\"/\": \"/path/*\"}.")
            return nil
        }
        for key in component.keys.sorted() where !componentKeys.contains(key) {
            let suggestion = componentKeys.first { Self.closeTo(key, $0) }
            note(
                .warning, "\(path) has the unknown key \"\(key)\"\(suggestion.map { " (a typo for \"\($0)\"?)" } ?? ""); iOS ignores it.",
                "Use only \"/\", \"?\", \"#\", \"exclude\", \"caseSensitive\", \"percentEncoded\" and \"comment\".")
        }
        var pathPattern: String?
        switch component["/"] {
        case nil: pathPattern = nil
        case .string(let pattern)?: pathPattern = pattern
        default:
            note(
                .warning, "\(path)[\"/\"] is not a string; iOS ignores the component.",
                "Write the path pattern as a string, e.g. \"/products/*\".")
            return nil
        }
        var query: Rule.Query?
        switch component["?"] {
        case .string(let pattern)?: query = .whole(pattern)
        case .object(let items)?:
            let strings = items.compactMapValues(\.stringValue)
            if strings.count == items.count {
                query = .items(strings)
            } else {
                note(
                    .warning,
                    "\(path)[\"?\"] has a value that is not a string; iOS ignores the whole query dictionary, so any query matches.",
                    "Write every query value as a string pattern, e.g. {\"id\": \"?*\"}.")
            }
        case nil: query = nil
        default:
            note(
                .warning, "\(path)[\"?\"] is neither a string nor an object; iOS ignores it.",
                "Write the query as \"name=*\" or {\"name\": \"*\"}.")
        }
        func flag(_ key: String, default value: Bool) -> Bool {
            switch component[key] {
            case nil: return value
            case .bool(let flag)?: return flag
            default:
                note(.warning, "\(path)[\"\(key)\"] is not true or false; iOS ignores it.", "Write \"\(key)\": true or false.")
                return value
            }
        }
        let written = component.keys.sorted().compactMap { key -> String? in
            guard key != "comment", let value = component[key] else { return nil }
            return "\"\(key)\": \(Self.text(value))"
        }
        return Rule(
            path: pathPattern, query: query, fragment: component["#"]?.stringValue, exclude: flag("exclude", default: false),
            caseSensitive: flag("caseSensitive", default: defaults.caseSensitive),
            percentEncoded: flag("percentEncoded", default: defaults.percentEncoded), written: "{" + written.joined(separator: ", ") + "}",
            place: place, variables: variables)
    }

    private static func legacyRule(_ path: String, place: String, variables: [String: [String]]) -> Rule {
        let exclude = path.hasPrefix("NOT ")
        let pattern = exclude ? String(path.dropFirst(4)) : path
        return Rule(
            path: pattern, query: nil, fragment: nil, exclude: exclude, caseSensitive: true, percentEncoded: true, written: "\"\(path)\"",
            place: place, variables: variables)
    }

    /// Whether `key` is one edit (a letter missing, added, changed, or two swapped) from `known`.
    static func closeTo(_ key: String, _ known: String) -> Bool {
        let a = Array(key.lowercased()), b = Array(known.lowercased())
        guard a != b, abs(a.count - b.count) <= 1, b.count > 1 else { return a == b && key != known }
        if a.count == b.count {
            let differing = a.indices.filter { a[$0] != b[$0] }
            if differing.count == 1 { return true }
            return differing.count == 2 && differing[1] == differing[0] + 1 && a[differing[0]] == b[differing[1]]
                && a[differing[1]] == b[differing[0]]
        }
        let (short, long) = a.count < b.count ? (a, b) : (b, a)
        var i = 0
        while i < short.count, short[i] == long[i] { i += 1 }
        return Array(short[i...]) == Array(long[(i + 1)...])
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
    ///
    /// As Apple's matcher: a path pattern ending in `/*` also matches the path without it
    /// (`/issue/*` matches `/issue`); a path pattern without a leading `/` is read with one; a
    /// query item named in a `?` object must match at every occurrence (a missing item reads as
    /// an empty value).
    public func matches(_ url: URL) -> Bool {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        if var pattern = self.path {
            if !pattern.hasPrefix("/"), !pattern.hasPrefix("*") { pattern = "/" + pattern }
            let raw = (percentEncoded ? components?.percentEncodedPath : components?.path) ?? ""
            let path = raw.isEmpty ? "/" : raw
            let matched =
                matchesPattern(pattern, path)
                || (pattern.hasSuffix("/*") && matchesPattern(String(pattern.dropLast(2)), path))
            guard matched else { return false }
        }
        switch query {
        case nil:
            break
        case .whole(let pattern)?:
            let query = (percentEncoded ? components?.percentEncodedQuery : components?.query) ?? ""
            guard matchesPattern(pattern, query) else { return false }
        case .items(let patterns)?:
            let items = components?.queryItems ?? []
            for (name, pattern) in patterns {
                let values = items.filter { $0.name == name }.map { $0.value ?? "" }
                for value in values.isEmpty ? [""] : values {
                    guard matchesPattern(pattern, value) else { return false }
                }
            }
        }
        if let pattern = fragment {
            let fragment = (percentEncoded ? components?.percentEncodedFragment : components?.fragment) ?? ""
            guard matchesPattern(pattern, fragment) else { return false }
        }
        return true
    }

    private func matchesPattern(_ pattern: String, _ text: String) -> Bool {
        guard pattern.contains("$(") else { return Self.wildcard(pattern, matches: text, caseSensitive: caseSensitive) }
        return Self.wildcard(pattern, matches: text, caseSensitive: caseSensitive, variables: variables)
    }

    /// The built-in substitution variables: `$(lang)`, the ISO 639 language codes (615), and
    /// `$(region)`, the two-letter ISO 3166 region codes (261). The lists are the doctor's own, so
    /// they are the same on every platform and deployment target.
    public static let builtInVariables: [String: [String]] = [
        "lang": ISOCodes.languages,
        "region": ISOCodes.regions,
    ]

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

    private enum Token {
        case character(Character)
        case one
        case any
        case oneOf([[Character]])
    }

    /// Apple's patterns with substitution variables: `$(name)` matches any of the variable's
    /// values (the file's `substitutionVariables`, else the built-in `lang` and `region`); an
    /// unknown name is matched as written. Every (token, position) pair is decided once, so the
    /// work is bounded by the pattern's length times the text's times the values tried.
    public static func wildcard(_ pattern: String, matches text: String, caseSensitive: Bool, variables: [String: [String]]) -> Bool {
        func fold(_ string: String) -> [Character] { Array(caseSensitive ? string : string.lowercased()) }
        var tokens: [Token] = []
        var rest = Substring(pattern)
        while let first = rest.first {
            if rest.hasPrefix("$("), let close = rest.firstIndex(of: ")") {
                let name = String(rest[rest.index(rest.startIndex, offsetBy: 2)..<close])
                if let values = variables[name] ?? builtInVariables[name] {
                    tokens.append(.oneOf(values.map(fold)))
                    rest = rest[rest.index(after: close)...]
                    continue
                }
            }
            switch first {
            case "*": tokens.append(.any)
            case "?": tokens.append(.one)
            default: tokens.append(contentsOf: fold(String(first)).map(Token.character))
            }
            rest = rest.dropFirst()
        }
        let characters = fold(text)
        var memo: [Int: Bool] = [:]
        func match(_ p: Int, _ t: Int) -> Bool {
            if p == tokens.count { return t == characters.count }
            let key = p * (characters.count + 1) + t
            if let known = memo[key] { return known }
            let result: Bool
            switch tokens[p] {
            case .any: result = match(p + 1, t) || (t < characters.count && match(p, t + 1))
            case .one: result = t < characters.count && match(p + 1, t + 1)
            case .character(let c): result = t < characters.count && characters[t] == c && match(p + 1, t + 1)
            case .oneOf(let values):
                result = values.contains { value in
                    t + value.count <= characters.count && characters[t..<(t + value.count)].elementsEqual(value)
                        && match(p + 1, t + value.count)
                }
            }
            memo[key] = result
            return result
        }
        return match(0, 0)
    }
}

/// A problem with one of the doctor's inputs, in words a developer can act on.
public struct DoctorError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
