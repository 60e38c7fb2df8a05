import Foundation

/// One setting of `linkrelay-server serve`, declared once: its flag (`--idle-timeout`), its
/// environment variable (`LINKRELAY_IDLE_TIMEOUT`), the values it takes, its default, its line
/// in `--help` and its row in `Docs/Configuration.md`. The command's flags, the check of a
/// value from either source, the clamp a configuration applies and the documentation's table
/// (`ServeSettings.markdownTable`, which a test compares with the file) all read it.
package struct ServeSetting: Sendable, Hashable {
    /// What a setting holds and how its value is read.
    package enum Kind: Sendable, Hashable {
        /// A whole number in `range`, or `alsoAllowed` (`0`: forever, no limit).
        case integer(ClosedRange<Int>, alsoAllowed: Int?)
        /// On or off: `--name`, `--no-name`; in the environment `true`/`false`, `1`/`0`, `yes`/`no`,
        /// `on`/`off`.
        case flag
        /// Text: an address, a URL, a name.
        case text
        /// Text given several times (`--trusted-proxy A --trusted-proxy B`); in the environment,
        /// separated by commas.
        case list

        /// A whole number in `range`, or `alsoAllowed`.
        static func integer(_ range: ClosedRange<Int>, or alsoAllowed: Int? = nil) -> Kind {
            .integer(range, alsoAllowed: alsoAllowed)
        }
    }

    /// The flag's name without its dashes (`idle-timeout`).
    package let name: String
    package let kind: Kind
    /// The value when neither the flag nor the variable gives one; `nil` for none, or for a
    /// default worked out at start (``defaultDescription`` says how).
    package let defaultValue: Value?
    /// The default as the documentation says it: `` `30` ``, `on`, `none`, or how it is worked out.
    package let defaultDescription: String

    /// A setting; see each property. `defaultDescription` is made from `default` unless given.
    init(name: String, kind: Kind, default: Value?, defaultDescription: String? = nil, help: String, details: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = `default`
        self.defaultDescription =
            defaultDescription
            ?? {
                switch `default` {
                case .integer(let number)?: "`\(number)`"
                case .flag(let on)?: on ? "on" : "off"
                case .text(let text)?: "`\(text)`"
                case .list(let items)?: items.isEmpty ? "none" : items.map { "`\($0)`" }.joined(separator: ", ")
                case nil: "none"
                }
            }()
        self.help = help
        self.details = details
    }

    /// An integer setting's default (`0` when it has none).
    package var defaultInteger: Int {
        if case .integer(let number)? = defaultValue { number } else { 0 }
    }

    /// A flag's default.
    package var defaultFlag: Bool {
        if case .flag(let on)? = defaultValue { on } else { false }
    }

    /// A text setting's default.
    package var defaultText: String? {
        if case .text(let text)? = defaultValue { text } else { nil }
    }
    /// One line for `--help`.
    package let help: String
    /// The documentation's text for it.
    package let details: String

    /// `--idle-timeout`.
    package var flag: String { "--" + name }

    /// `LINKRELAY_IDLE_TIMEOUT`.
    package var environmentVariable: String {
        "LINKRELAY_" + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    /// The values an integer setting takes, as a sentence's end (`1…3600`, `0 or 90…36500`,
    /// `2 or more`).
    package var accepted: String {
        guard case .integer(let range, let alsoAllowed) = kind else { return "" }
        let span = range.upperBound >= 1_000_000 ? "\(range.lowerBound) or more" : "\(range.lowerBound)…\(range.upperBound)"
        return alsoAllowed.map { "\($0) or \(span)" } ?? span
    }

    /// `value` if this integer setting takes it.
    /// - Parameter source: where it came from, for the message (the flag, or the variable).
    /// - Throws: ``SettingError`` saying which values it takes.
    package func checked(_ value: Int, from source: String) throws(SettingError) -> Int {
        guard case .integer(let range, let alsoAllowed) = kind else { return value }
        guard range.contains(value) || value == alsoAllowed else {
            throw SettingError("\(source) takes \(accepted), not \(value).")
        }
        return value
    }

    /// `value` brought into this integer setting's range (for a value that did not come through
    /// the command line: a test's, a library caller's).
    package func clamped(_ value: Int) -> Int {
        guard case .integer(let range, let alsoAllowed) = kind, value != alsoAllowed else { return value }
        return min(max(value, range.lowerBound), range.upperBound)
    }

    /// `duration` brought into this integer setting's range, read as seconds.
    package func clamped(_ duration: Duration) -> Duration {
        guard case .integer(let range, _) = kind else { return duration }
        return min(max(duration, .seconds(range.lowerBound)), .seconds(range.upperBound))
    }

    /// The value the environment gives this setting, read as its kind; `nil` when the variable
    /// is not set.
    /// - Throws: ``SettingError`` naming the variable when its text is not a value of the kind.
    package func value(in environment: [String: String]) throws(SettingError) -> Value? {
        guard let text = environment[environmentVariable] else { return nil }
        switch kind {
        case .integer:
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw SettingError("\(environmentVariable) takes a whole number (\(accepted)), not \"\(text.prefix(40))\".")
            }
            return .integer(try checked(number, from: environmentVariable))
        case .flag:
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "1", "true", "yes", "on": return .flag(true)
            case "0", "false", "no", "off": return .flag(false)
            default: throw SettingError("\(environmentVariable) takes true or false, not \"\(text.prefix(40))\".")
            }
        case .text: return .text(text)
        case .list: return .list(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
    }

    /// A value read from the environment.
    package enum Value: Sendable, Hashable {
        case integer(Int)
        case flag(Bool)
        case text(String)
        case list([String])
    }
}

/// A setting's value that is not one it takes, in a sentence naming where it came from.
package struct SettingError: Error, Sendable, Hashable, CustomStringConvertible {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
