import Foundation

/// Removes secrets from text before it reaches a log line or an error message.
///
/// Two passes: every known secret (the backend's API keys) is replaced wherever it appears,
/// also percent-encoded; then values that are secret by their name are replaced even when the
/// key is not known (`Bearer …`, `api_key=…`, `private_key=…`, `"apiKey":"…"`).
struct Redactor: Sendable {
    static let mask = "[redacted]"

    /// The secrets' UTF-8 bytes, longest first.
    private let secrets: [[UInt8]]

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
        self.secrets = expanded.map { Array($0.utf8) }.sorted { $0.count > $1.count }
    }

    private static let secretNames = [
        "api_key", "apikey", "api-key", "private_key", "privatekey", "secret", "token",
        "access_token", "client_secret", "password",
    ]

    /// `text` with every secret removed: one pass over its UTF-8 bytes for the known secrets,
    /// one for the secret-named values; linear in its length.
    func redact(_ text: String) -> String {
        var bytes = Array(text.utf8)
        var changed = false
        if let replaced = Self.replacing(secrets, in: bytes) {
            bytes = replaced
            changed = true
        }
        if let replaced = Self.redactNamedValues(in: bytes) {
            bytes = replaced
            changed = true
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : text
    }

    /// `bytes` with every occurrence of one of `secrets` (longest first at each place) masked;
    /// `nil` when there is none.
    private static func replacing(_ secrets: [[UInt8]], in bytes: [UInt8]) -> [UInt8]? {
        guard !secrets.isEmpty else { return nil }
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        search: while index < bytes.count {
            for secret in secrets where bytes[index] == secret[0] && starts(with: secret, in: bytes, at: index) {
                if output.isEmpty { output.reserveCapacity(bytes.count) }
                output.append(contentsOf: bytes[copied..<index])
                output.append(contentsOf: maskBytes)
                index += secret.count
                copied = index
                continue search
            }
            index += 1
        }
        guard copied > 0 else { return nil }
        output.append(contentsOf: bytes[copied...])
        return output
    }

    private static func starts(with word: [UInt8], in bytes: [UInt8], at index: Int) -> Bool {
        guard index + word.count <= bytes.count else { return false }
        for offset in 1..<word.count where bytes[index + offset] != word[offset] { return false }
        return true
    }

    /// Replaces the value after `Bearer `, after `name=` in a query and after `"name":` in JSON,
    /// for the secret names above (ASCII case-insensitive).
    ///
    /// One pass over the UTF-8 bytes, with a bounded amount of work at each byte (the names are
    /// short and fixed), so the cost is linear in the text's length. A name must not continue a
    /// longer word (`tokenize`, `my_token`); a byte of a non-ASCII character before it counts
    /// as a word boundary, so more is redacted rather than less.
    static func redactNamedValues(in text: String) -> String {
        redactNamedValues(in: Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    /// The same on bytes; `nil` when nothing is secret.
    private static func redactNamedValues(in bytes: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        while index < bytes.count {
            // Most bytes cannot start a name: one table lookup sends them on.
            guard startsName[Int(bytes[index])], let valueStart = secretValueStart(in: bytes, at: index) else {
                index += 1
                continue
            }
            if output.isEmpty { output.reserveCapacity(bytes.count) }
            output.append(contentsOf: bytes[copied..<valueStart])
            output.append(contentsOf: maskBytes)
            index = endOfValue(in: bytes, from: valueStart)
            copied = index
        }
        guard copied > 0 else { return nil }
        output.append(contentsOf: bytes[copied...])
        return output
    }

    /// Whether a byte may start `bearer ` or a secret name, in either case.
    private static let startsName: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for word in secretNames + ["bearer "] {
            guard let first = word.utf8.first else { continue }
            table[Int(first)] = true
            table[Int(first) - 32] = true  // the upper-case letter
        }
        return table
    }()

    private static let maskBytes = Array(mask.utf8)
    private static let bearer = Array("bearer ".utf8)
    private static let secretNameBytes = secretNames.map { Array($0.utf8) }

    /// Whether `bytes` at `index` start with `word` (lower-case ASCII), in any case.
    private static func matches(_ word: [UInt8], in bytes: [UInt8], at index: Int) -> Bool {
        guard index + word.count <= bytes.count else { return false }
        for offset in 0..<word.count where asciiLowercased(bytes[index + offset]) != word[offset] {
            return false
        }
        return true
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    /// If a secret's name starts at `index`, where its value starts.
    private static func secretValueStart(in bytes: [UInt8], at index: Int) -> Int? {
        if matches(bearer, in: bytes, at: index) { return index + bearer.count }
        if index > 0, isWordByte(bytes[index - 1]) { return nil }
        for name in secretNameBytes {
            // The name must be followed by something: `token` alone at the end is a word.
            guard index + name.count < bytes.count, matches(name, in: bytes, at: index) else { continue }
            var cursor = index + name.count
            if bytes[cursor] == UInt8(ascii: "\"") { cursor += 1 }
            while cursor < bytes.count, bytes[cursor] == UInt8(ascii: " ") { cursor += 1 }
            guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: "=") || bytes[cursor] == UInt8(ascii: ":") else { continue }
            cursor += 1
            while cursor < bytes.count, bytes[cursor] == UInt8(ascii: " ") || bytes[cursor] == UInt8(ascii: "\"") {
                cursor += 1
            }
            return cursor
        }
        return nil
    }

    private static func endOfValue(in bytes: [UInt8], from start: Int) -> Int {
        var cursor = start
        while cursor < bytes.count {
            switch bytes[cursor] {
            case UInt8(ascii: "&"), UInt8(ascii: "\""), UInt8(ascii: ","), UInt8(ascii: " "), UInt8(ascii: "\n"),
                UInt8(ascii: "}"), UInt8(ascii: ";"):
                return cursor
            default:
                cursor += 1
            }
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
