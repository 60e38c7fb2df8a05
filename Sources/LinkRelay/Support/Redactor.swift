import Foundation

/// Removes secrets from text before it reaches a log line or an error message.
///
/// Two passes: every known secret (the backend's API keys) is replaced wherever it appears,
/// also percent-encoded; then values that are secret by their name are replaced even when the
/// key is not known (`Bearer …`, `api_key=…`, `private_key=…`, `"apiKey":"…"`).
struct Redactor: Sendable {
    static let mask = "[redacted]"

    private let secrets: [String]

    init(secrets: [String]) {
        // Longest first, so a secret that contains another is replaced whole. Very short
        // values are not treated as secrets: replacing "a" everywhere would destroy the text.
        let usable = Set(secrets.filter { $0.count >= 4 })
        var expanded = usable
        for secret in usable {
            if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
                expanded.insert(encoded)
            }
        }
        self.secrets = expanded.sorted { $0.count > $1.count }
    }

    private static let secretNames = [
        "api_key", "apikey", "api-key", "private_key", "privatekey", "secret", "token",
        "access_token", "client_secret", "password",
    ]

    func redact(_ text: String) -> String {
        var result = text
        for secret in secrets where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: Redactor.mask)
        }
        return Redactor.redactNamedValues(in: result)
    }

    /// Replaces the value after `Bearer `, after `name=` in a query and after `"name":` in JSON,
    /// for the secret names above (case-insensitive).
    static func redactNamedValues(in text: String) -> String {
        let lower = text.lowercased()
        guard lower.contains("bearer") || secretNames.contains(where: { lower.contains($0) })
        else { return text }
        var output = ""
        output.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            if let valueStart = secretValueStart(in: text, at: index) {
                output += text[index..<valueStart]
                output += mask
                index = endOfValue(in: text, from: valueStart)
            } else {
                output.append(text[index])
                index = text.index(after: index)
            }
        }
        return output
    }

    /// If a secret's name starts at `index`, where its value starts.
    private static func secretValueStart(in text: String, at index: String.Index) -> String.Index? {
        let rest = text[index...]
        if rest.prefix(7).lowercased() == "bearer " {
            return text.index(index, offsetBy: 7)
        }
        // A name must not continue a longer word: "tokenize" or "my_token" are not secrets.
        if index > text.startIndex {
            let previous = text[text.index(before: index)]
            if previous.isLetter || previous.isNumber || previous == "_" { return nil }
        }
        for name in secretNames {
            guard rest.count > name.count,
                rest.prefix(name.count).lowercased() == name
            else { continue }
            var cursor = text.index(index, offsetBy: name.count)
            if text[cursor] == "\"" { cursor = text.index(after: cursor) }
            while cursor < text.endIndex, text[cursor] == " " { cursor = text.index(after: cursor) }
            guard cursor < text.endIndex, text[cursor] == "=" || text[cursor] == ":" else { continue }
            cursor = text.index(after: cursor)
            while cursor < text.endIndex, text[cursor] == " " || text[cursor] == "\"" {
                cursor = text.index(after: cursor)
            }
            return cursor
        }
        return nil
    }

    private static func endOfValue(in text: String, from start: String.Index) -> String.Index {
        var cursor = start
        while cursor < text.endIndex {
            let character = text[cursor]
            if character == "&" || character == "\"" || character == "," || character == " "
                || character == "\n" || character == "}" || character == ";"
            {
                break
            }
            cursor = text.index(after: cursor)
        }
        return cursor
    }
}

extension DeepLinkError {
    /// The same error with every secret removed from its message.
    func redacted(by redactor: Redactor) -> DeepLinkError {
        var copy = self
        copy.message = redactor.redact(message)
        return copy
    }
}
