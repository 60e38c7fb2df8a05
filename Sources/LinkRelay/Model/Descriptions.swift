import Foundation

// Short descriptions for `print` and string interpolation; the whole value, field by field, for
// `debugPrint`, `String(reflecting:)` and the debugger.

/// `Name(field: value, …)` with each field as `String(reflecting:)` gives it.
private func fieldDump(of value: Any, named name: String) -> String {
    let fields = Mirror(reflecting: value).children.map { child in
        "\(child.label ?? "_"): \(String(reflecting: child.value))"
    }
    return "\(name)(\(fields.joined(separator: ", ")))"
}

extension DeepLink: CustomStringConvertible, CustomDebugStringConvertible {
    /// The URL, the provider, how the link reached the app when it was deferred, and who
    /// resolved it: `https://go.acme.app/p42 (linkforty, resolved by the server)`.
    public var description: String {
        var notes = [provider.rawValue]
        if origin == .deferred { notes.append("deferred") }
        notes.append(resolution.description)
        return "\(url.absoluteString) (\(notes.joined(separator: ", ")))"
    }

    /// Every field.
    public var debugDescription: String { fieldDump(of: self, named: "DeepLink") }
}

extension DeepLink: CustomReflectable {
    /// The link's fields, as `dump` and the debugger show them (not its copy-on-write box).
    public var customMirror: Mirror {
        Mirror(self, children: Mirror(reflecting: storage.fields).children, displayStyle: .struct)
    }
}

extension DeepLink.Resolution: CustomStringConvertible {
    /// `resolved by the server`, or `parsed on the device` and why.
    public var description: String {
        switch self {
        case .server: "resolved by the server"
        case .local(let reason): "parsed on the device\(reason.explanation)"
        }
    }
}

extension DeepLink.LocalReason: CustomStringConvertible {
    /// `by design`, `the provider timed out`, `the provider does not know the link`, or
    /// `the provider failed with <code>`.
    public var description: String {
        switch self {
        case .onDevice: "by design"
        case .timedOut: "the provider timed out"
        case .notFound: "the provider does not know the link"
        case .failed(let error): "the provider failed with \(error.code)"
        }
    }

    fileprivate var explanation: String {
        if case .onDevice = self { return " by design" }
        return ": \(description)"
    }
}

extension InstallAttribution: CustomStringConvertible, CustomDebugStringConvertible {
    /// The method, the confidence and the ids: `fingerprint match, confidence 90 (high), install
    /// id inst-1`; `organic` when not attributed.
    public var description: String {
        var parts: [String] = []
        if isAttributed {
            switch method {
            case .fingerprint: parts.append("fingerprint match")
            case .deviceIdentifier: parts.append("device identifier match")
            case .pasteboard: parts.append("the tapped link, from the pasteboard")
            case .appClip: parts.append("the tapped link, from the App Clip")
            case .none: parts.append("matched")
            }
            if let confidence { parts.append("confidence \(confidence.score) (\(confidence.level))") }
        }
        if let installID { parts.append("install id \(installID)") }
        if isLate { parts.append("late") }
        return parts.isEmpty ? "organic" : parts.joined(separator: ", ")
    }

    /// Every field.
    public var debugDescription: String { fieldDump(of: self, named: "InstallAttribution") }
}

extension InstallOutcome: CustomStringConvertible, CustomDebugStringConvertible {
    /// The case and what matters: `attributed to <link>; <attribution>`, `organic; install id
    /// i-1`, `failed: <error>`, `timed out`, `existing user, no install match`.
    public var description: String {
        switch self {
        case .attributed(let link, let attribution): "attributed to \(link); \(attribution)"
        case .attributedWithoutLink(let attribution):
            "attributed to \(attribution.linkID.map { "link \($0)" } ?? "a link"), with nothing to open; \(attribution)"
        case .organic(let attribution):
            attribution.flatMap { $0.installID }.map { "organic; install id \($0)" } ?? "organic"
        case .failed(let error): "failed: \(error)"
        case .timedOut: "timed out"
        case .existingUser(let attribution):
            "existing user, no install match" + (attribution?.installID.map { "; install id \($0)" } ?? "")
        }
    }

    /// The case and every field of its values.
    public var debugDescription: String {
        switch self {
        case .attributed(let link, let attribution): "InstallOutcome.attributed(\(link.debugDescription), \(attribution.debugDescription))"
        case .attributedWithoutLink(let attribution): "InstallOutcome.attributedWithoutLink(\(attribution.debugDescription))"
        case .organic(let attribution): "InstallOutcome.organic(\(attribution.map(\.debugDescription) ?? "nil"))"
        case .failed(let error): "InstallOutcome.failed(\(String(reflecting: error)))"
        case .timedOut: "InstallOutcome.timedOut"
        case .existingUser(let attribution): "InstallOutcome.existingUser(\(attribution.map(\.debugDescription) ?? "nil"))"
        }
    }
}

extension DeepLinkEvent: CustomStringConvertible {
    /// What happened: `link <link>`, `install <outcome>`, `sign-in required for <link>`,
    /// `pending link dropped (<reason>): <link>`, `failure <error>`.
    public var description: String {
        switch self {
        case .link(let link): "link \(link)"
        case .install(let outcome): "install \(outcome)"
        case .authenticationRequired(let link): "sign-in required for \(link)"
        case .pendingLinkDropped(let link, let reason): "pending link dropped (\(reason)): \(link)"
        case .failure(let error): "failure \(error)"
        }
    }
}
