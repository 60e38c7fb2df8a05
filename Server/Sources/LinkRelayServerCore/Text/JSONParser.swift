import LinkRelay

/// A request body's JSON, read in one pass over its bytes: each value's first byte says what it
/// is, so the work is linear in the body's size whatever its shape, and nesting is bounded before
/// anything deeper is read.
///
/// Foundation's `JSONDecoder` cannot be used for a body a client writes: `JSONValue`'s `Decodable`
/// conformance must try each type in turn, and every failed try builds an error with the whole
/// coding path, so a 61 KiB body of arrays nested 500 deep cost 47 seconds of CPU (issue 48, §4.1).
///
/// Strict RFC 8259: one value, surrounded by whitespace only; strings valid UTF-8 with no raw
/// control characters; `\u` escapes paired into scalars (a lone surrogate is refused); numbers
/// in JSON's grammar (whole numbers that fit `Int` are ``JSONValue/int(_:)``, the rest
/// ``JSONValue/double(_:)``, refused when not finite). A repeated key keeps its last value.
package struct JSONParser {
    /// Why a body is not JSON, and where.
    package struct Failure: Error, Equatable {
        /// What is wrong, for the client.
        package var reason: String
        /// The byte offset it was found at.
        package var offset: Int
    }

    /// The deepest nesting of arrays and objects a body may have. A link's parameters, a
    /// template, an event's data are a few levels deep; 32 leaves room and refuses a bomb.
    package static let maxDepth = 32

    private let bytes: [UInt8]
    private var index = 0
    private let maxDepth: Int

    /// Reads `bytes` as one JSON value nested at most `maxDepth` deep.
    package static func parse(_ bytes: [UInt8], maxDepth: Int = JSONParser.maxDepth) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: max(maxDepth, 1))
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    private init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func failure(_ reason: String) -> Failure {
        Failure(reason: reason, offset: index)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw failure("the body ends where a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("a value was expected")
        }
    }

    private mutating func literal(_ word: String) throws(Failure) {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, bytes[index..<(index + expected.count)].elementsEqual(expected) else {
            throw failure("a value was expected")
        }
        index += expected.count
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maxDepth else { throw failure("objects and arrays nest deeper than \(maxDepth) levels") }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw failure("the body ends inside an object") }
            guard bytes[index] == UInt8(ascii: "\"") else { throw failure("a member name (a string) was expected") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("':' was expected after a member name") }
            index += 1
            skipWhitespace()
            members[key] = try value(depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw failure("the body ends inside an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw failure("',' or '}' was expected in an object")
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maxDepth else { throw failure("objects and arrays nest deeper than \(maxDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw failure("the body ends inside an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw failure("',' or ']' was expected in an array")
            }
        }
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        // The common case: no escapes, so the bytes are the string (checked as UTF-8 once).
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            guard bytes[index] >= 0x20 else { throw failure("a string holds a raw control character") }
            index += 1
        }
        guard index < bytes.count else { throw failure("the body ends inside a string") }
        var scalars = [UInt8](bytes[start..<index])
        while bytes[index] != UInt8(ascii: "\"") {
            // An escape.
            index += 1
            guard index < bytes.count else { throw failure("the body ends inside a string") }
            let escaped = bytes[index]
            index += 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escaped)
            case UInt8(ascii: "b"): scalars.append(0x08)
            case UInt8(ascii: "f"): scalars.append(0x0C)
            case UInt8(ascii: "n"): scalars.append(0x0A)
            case UInt8(ascii: "r"): scalars.append(0x0D)
            case UInt8(ascii: "t"): scalars.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800...0xDBFF).contains(code) {
                    guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw failure("a \\u escape is half of a surrogate pair")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw failure("a \\u escape is half of a surrogate pair") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(code) {
                    throw failure("a \\u escape is half of a surrogate pair")
                }
                guard let scalar = Unicode.Scalar(code) else { throw failure("a \\u escape is not a character") }
                scalars.append(contentsOf: UTF8.encode(scalar)!)
            default:
                throw failure("a string has an unknown escape")
            }
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                guard bytes[index] >= 0x20 else { throw failure("a string holds a raw control character") }
                scalars.append(bytes[index])
                index += 1
            }
            guard index < bytes.count else { throw failure("the body ends inside a string") }
        }
        index += 1
        guard let text = String(validating: scalars, as: UTF8.self) else { throw failure("a string is not valid UTF-8") }
        return text
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("a \\u escape needs four hex digits") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            code = code << 4 | UInt32(digit)
            index += 1
        }
        return code
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw failure("a number has no digits") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            throw failure("a number has no digits")
        }
        var whole = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            whole = false
            index += 1
            guard digits() > 0 else { throw failure("a number's fraction has no digits") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            whole = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("a number's exponent has no digits") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if whole, let integer = Int(text) { return .int(integer) }
        guard let double = Double(text), double.isFinite else { throw failure("a number is out of range") }
        return .double(double)
    }
}
