import Foundation
import LinkRelay

/// Provider responses decoded without Foundation's `JSONDecoder`: a single-pass reader into
/// ``JSONValue``, and a `Decoder` over it for the adapters' `Decodable` payloads.
///
/// It answers as `JSONDecoder` does where adapters can tell (integral numbers decode as
/// integers, the first of duplicate keys wins, invalid UTF-8 and lone surrogates are refused),
/// at a fraction of the cost: `JSONDecoder` builds a `DecodingError`, with its coding path and
/// message, for every lenient field that is absent or of another shape, and parses through
/// several layers; here a mismatch costs next to nothing. Nesting deeper than 256 levels is
/// refused rather than followed, so a hostile body cannot exhaust the stack.
package enum WireJSON {
    /// The error for a body that is not JSON: where, and why.
    package struct SyntaxError: Error, CustomStringConvertible {
        package let offset: Int
        package let reason: String
        package var description: String { "Not JSON at byte \(offset): \(reason)." }
    }

    /// `data` as a JSON value.
    package static func parse(_ data: Data) throws -> JSONValue {
        try data.withUnsafeBytes { raw in
            var reader = Reader(bytes: raw.bindMemory(to: UInt8.self))
            return try reader.document()
        }
    }

    /// `data` decoded as `type`, as `JSONDecoder().decode(type, from: data)` would.
    package static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        let value = try parse(data)
        return try Value(from: ValueDecoder(value: value, codingPath: []))
    }

    // MARK: - Reader

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var depth = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func fail(_ reason: String) -> SyntaxError { SyntaxError(offset: index, reason: reason) }

        mutating func document() throws -> JSONValue {
            let value = try self.value()
            skipWhitespace()
            guard index == bytes.count else { throw fail("unexpected data after the value") }
            return value
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value() throws -> JSONValue {
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw fail("unexpected character")
            }
        }

        mutating func literal(_ word: StaticString) throws {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw fail("unexpected end") }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
                throw fail("unexpected character")
            }
            index += count
        }

        mutating func enter() throws {
            depth += 1
            guard depth <= 256 else { throw fail("nested more than 256 levels deep") }
        }

        mutating func object() throws -> JSONValue {
            try enter()
            defer { depth -= 1 }
            index += 1
            var object: [String: JSONValue] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(object)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let key = try string()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                let member = try value()
                // As JSONDecoder: the first of duplicate keys wins.
                if object[key] == nil { object[key] = member }
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
                index += 1
                return .object(object)
            }
        }

        mutating func array() throws -> JSONValue {
            try enter()
            defer { depth -= 1 }
            index += 1
            var array: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(array)
            }
            while true {
                array.append(try value())
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
                index += 1
                return .array(array)
            }
        }

        mutating func string() throws -> String {
            index += 1  // the opening quote
            let start = index
            var ascii = true
            // Fast path: no escapes.
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    index += 1
                    return try text(slice, ascii: ascii)
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw fail("a control character in a string") }
                if byte >= 0x80 { ascii = false }
                index += 1
            }
            // Slow path: escapes from here on.
            var output = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return try output.withUnsafeBufferPointer { try text($0, ascii: false) }
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { throw fail("unexpected end") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
                    case UInt8(ascii: "b"): output.append(0x08)
                    case UInt8(ascii: "f"): output.append(0x0C)
                    case UInt8(ascii: "n"): output.append(0x0A)
                    case UInt8(ascii: "r"): output.append(0x0D)
                    case UInt8(ascii: "t"): output.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800...0xDBFF).contains(scalar) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                            else { throw fail("a lone surrogate") }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw fail("a lone surrogate") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00...0xDFFF).contains(scalar) {
                            throw fail("a lone surrogate")
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw fail("an invalid escape") }
                        output.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default:
                        throw fail("an invalid escape")
                    }
                default:
                    if byte < 0x20 { throw fail("a control character in a string") }
                    output.append(byte)
                    index += 1
                }
            }
            throw fail("an unterminated string")
        }

        mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count else { throw fail("unexpected end") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = bytes[index].hexDigitValue else { throw fail("an invalid \\u escape") }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        /// The string the bytes spell; invalid UTF-8 is refused, not repaired.
        func text(_ slice: UnsafeBufferPointer<UInt8>, ascii: Bool) throws -> String {
            let decoded = String(decoding: slice, as: UTF8.self)
            guard ascii || decoded.utf8.elementsEqual(slice) else { throw fail("a string that is not UTF-8") }
            return decoded
        }

        mutating func number() throws -> JSONValue {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count else { throw fail("unexpected end") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                guard digits() > 0 else { throw fail("an invalid number") }
            }
            var integral = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                integral = false
                guard digits() > 0 else { throw fail("an invalid number") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                integral = false
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw fail("an invalid number") }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if integral, let value = Int(text) { return .int(value) }
            guard let value = Double(text) else { throw fail("an invalid number") }
            // As JSONValue reads through JSONDecoder: an integral number is an integer.
            if let exact = Int(exactly: value) { return .int(exact) }
            return .double(value)
        }

        mutating func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index - start
        }
    }

    // MARK: - Decoder

    private struct PlainKey: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(stringValue: String) { self.stringValue = stringValue }
        init(intValue: Int) {
            self.stringValue = "\(intValue)"
            self.intValue = intValue
        }
    }

    private static func mismatch(_ type: Any.Type, _ path: [any CodingKey]) -> DecodingError {
        .typeMismatch(type, .init(codingPath: path, debugDescription: "Expected \(type)."))
    }

    /// `value` as a number of type `Number`, when it is one exactly.
    private static func number<Number: BinaryInteger>(_ value: JSONValue, as type: Number.Type, path: [any CodingKey]) throws -> Number {
        switch value {
        case .int(let integer):
            if let exact = Number(exactly: integer) { return exact }
        case .double(let double):
            if let exact = Number(exactly: double) { return exact }
        default: break
        }
        throw mismatch(type, path)
    }

    private static func floating(_ value: JSONValue, path: [any CodingKey]) throws -> Double {
        switch value {
        case .int(let integer): return Double(integer)
        case .double(let double): return double
        default: throw mismatch(Double.self, path)
        }
    }

    private struct ValueDecoder: Decoder {
        let value: JSONValue
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard case .object(let object) = value else { throw WireJSON.mismatch([String: Any].self, codingPath) }
            return KeyedDecodingContainer(Keyed<Key>(object: object, codingPath: codingPath))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            guard case .array(let array) = value else { throw WireJSON.mismatch([Any].self, codingPath) }
            return Unkeyed(array: array, codingPath: codingPath)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            Single(value: value, codingPath: codingPath)
        }
    }

    private struct Single: SingleValueDecodingContainer {
        let value: JSONValue
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { value == .null }
        func decode(_ type: Bool.Type) throws -> Bool {
            guard case .bool(let bool) = value else { throw WireJSON.mismatch(type, codingPath) }
            return bool
        }
        func decode(_ type: String.Type) throws -> String {
            guard case .string(let string) = value else { throw WireJSON.mismatch(type, codingPath) }
            return string
        }
        func decode(_ type: Double.Type) throws -> Double { try WireJSON.floating(value, path: codingPath) }
        func decode(_ type: Float.Type) throws -> Float { Float(try WireJSON.floating(value, path: codingPath)) }
        func decode(_ type: Int.Type) throws -> Int { try WireJSON.number(value, as: type, path: codingPath) }
        func decode(_ type: Int8.Type) throws -> Int8 { try WireJSON.number(value, as: type, path: codingPath) }
        func decode(_ type: Int16.Type) throws -> Int16 { try WireJSON.number(value, as: type, path: codingPath) }
        func decode(_ type: Int32.Type) throws -> Int32 { try WireJSON.number(value, as: type, path: codingPath) }
        func decode(_ type: Int64.Type) throws -> Int64 { try WireJSON.number(value, as: type, path: codingPath) }
        func decode(_ type: UInt.Type) throws -> UInt { try WireJSON.number(value, as: type, path: codingPath) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try WireJSON.number(value, as: type, path: codingPath) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try WireJSON.number(value, as: type, path: codingPath) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try WireJSON.number(value, as: type, path: codingPath) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try WireJSON.number(value, as: type, path: codingPath) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            // The common leaf types without a decoder of their own: adapters decode through
            // generic entry points, which would otherwise build one per field. `T` is exactly
            // the type compared, so the bit casts are identity conversions.
            if T.self == String.self { return unsafeBitCast(try decode(String.self), to: T.self) }
            if T.self == JSONValue.self { return unsafeBitCast(value, to: T.self) }
            if T.self == Int.self { return unsafeBitCast(try decode(Int.self), to: T.self) }
            if T.self == Double.self { return unsafeBitCast(try decode(Double.self), to: T.self) }
            if T.self == Bool.self { return unsafeBitCast(try decode(Bool.self), to: T.self) }
            if T.self == [String: JSONValue].self, case .object(let object) = value { return unsafeBitCast(object, to: T.self) }
            return try T(from: ValueDecoder(value: value, codingPath: codingPath))
        }
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let object: [String: JSONValue]
        let codingPath: [any CodingKey]

        var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }
        func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

        private func member(_ key: Key) throws -> JSONValue {
            guard let value = object[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value for \(key.stringValue)."))
            }
            return value
        }

        private func single(_ key: Key) throws -> Single {
            Single(value: try member(key), codingPath: codingPath + [key])
        }

        func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try single(key).decode(type) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try single(key).decode(type) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try single(key).decode(type) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try single(key).decode(type) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try single(key).decode(type) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try single(key).decode(type) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try single(key).decode(type) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try single(key).decode(type) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try single(key).decode(type) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try single(key).decode(type) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try single(key).decode(type) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try single(key).decode(type) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try single(key).decode(type) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try single(key).decode(type) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try single(key).decode(type) }

        /// One lookup instead of the default's three (`contains`, `decodeNil`, `decode`).
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let value = object[key.stringValue], value != .null else { return nil }
            return try Single(value: value, codingPath: codingPath + [key]).decode(type)
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try ValueDecoder(value: try member(key), codingPath: codingPath + [key]).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ValueDecoder(value: try member(key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            ValueDecoder(value: object["super"] ?? .null, codingPath: codingPath + [PlainKey(stringValue: "super")])
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key])
        }
    }

    private struct Unkeyed: UnkeyedDecodingContainer {
        let array: [JSONValue]
        let codingPath: [any CodingKey]
        var currentIndex = 0

        init(array: [JSONValue], codingPath: [any CodingKey]) {
            self.array = array
            self.codingPath = codingPath
        }

        var count: Int? { array.count }
        var isAtEnd: Bool { currentIndex >= array.count }

        private mutating func next() throws -> Single {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    JSONValue.self, .init(codingPath: codingPath, debugDescription: "The array has no more values."))
            }
            defer { currentIndex += 1 }
            return Single(value: array[currentIndex], codingPath: codingPath + [PlainKey(intValue: currentIndex)])
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd else { return false }
            if array[currentIndex] == .null {
                currentIndex += 1
                return true
            }
            return false
        }
        mutating func decode(_ type: Bool.Type) throws -> Bool { try next().decode(type) }
        mutating func decode(_ type: String.Type) throws -> String { try next().decode(type) }
        mutating func decode(_ type: Double.Type) throws -> Double { try next().decode(type) }
        mutating func decode(_ type: Float.Type) throws -> Float { try next().decode(type) }
        mutating func decode(_ type: Int.Type) throws -> Int { try next().decode(type) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().decode(type) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().decode(type) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().decode(type) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().decode(type) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try next().decode(type) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().decode(type) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().decode(type) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().decode(type) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().decode(type) }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            let single = try next()
            return try ValueDecoder(value: single.value, codingPath: single.codingPath).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let single = try next()
            return try ValueDecoder(value: single.value, codingPath: single.codingPath).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder {
            let single = try next()
            return ValueDecoder(value: single.value, codingPath: single.codingPath)
        }
    }
}
