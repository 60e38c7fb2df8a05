/// How the server bounds the length of text it is given: in Unicode scalars, as JSON Schema
/// counts a string's characters (so the API's description states the limit exactly), which also
/// bounds its bytes (at most 4 of UTF-8 each). Never in grapheme clusters (Swift's `count`): one
/// letter and 6,000 combining marks are one of those, and a "one-character" key name stored
/// 18,001 bytes.
package enum TextLimit {
    /// Whether `text` holds at most `characters` Unicode scalars (so at most 4 × `characters`
    /// bytes of UTF-8), read no further than past the limit.
    package static func fits(_ text: some StringProtocol, characters: Int) -> Bool {
        guard text.utf8.count > characters else { return true }
        var scalars = 0
        for _ in text.unicodeScalars {
            scalars += 1
            if scalars > characters { return false }
        }
        return true
    }
}
