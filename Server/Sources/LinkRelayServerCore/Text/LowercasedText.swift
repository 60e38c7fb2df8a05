/// A header's text, lower-cased (ASCII) once, searched as bytes: `String.contains(_:)` with a
/// string goes through Foundation's `CFStringFind` on Linux, and the user-agent checks of a
/// redirect took a fifth of its CPU that way (measured with `perf` under `wrk`).
package struct LowercasedText {
    package let bytes: [UInt8]

    package init(_ text: String?) {
        bytes = (text ?? "").utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    }

    package var isEmpty: Bool { bytes.isEmpty }

    /// Whether `token` (lower-case ASCII) occurs in the text: compared in place, neither copied.
    package func contains(_ token: String) -> Bool {
        var token = token
        return token.withUTF8 { needle in
            guard let first = needle.first else { return true }
            guard needle.count <= bytes.count else { return false }
            return bytes.withUnsafeBufferPointer { haystack in
                var start = 0
                let last = haystack.count - needle.count
                while start <= last {
                    if haystack[start] == first {
                        var index = 1
                        while index < needle.count, haystack[start + index] == needle[index] { index += 1 }
                        if index == needle.count { return true }
                    }
                    start += 1
                }
                return false
            }
        }
    }

    /// Whether any of `tokens` occurs in the text.
    package func containsAny(_ tokens: [String]) -> Bool {
        tokens.contains { contains($0) }
    }
}
