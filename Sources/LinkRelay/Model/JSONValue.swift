import Foundation

/// Any JSON value, as a provider sent it.
///
/// LinkRelay keeps provider payloads it has no dedicated field for in ``DeepLink/metadata`` as
/// `JSONValue`s, so nothing a provider sends is lost and nothing is typed as `Any`.
///
/// ```swift
/// if case .string(let tier)? = link.metadata["tier"] { … }
/// let value: JSONValue = ["price": 9.99, "tags": ["sale", "new"], "gift": true]
/// ```
///
/// Whole numbers decode as ``int(_:)``; numbers with a fraction or an exponent as
/// ``double(_:)``.
public enum JSONValue: Sendable, Hashable {
    /// JSON's `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number (no fraction, no exponent) that fits in `Int`.
    case int(Int)
    /// A number with a fraction or an exponent.
    case double(Double)
    /// A string.
    case string(String)
    /// An array, in order.
    case array([JSONValue])
    /// An object; its keys are unordered.
    case object([String: JSONValue])

    /// The string, if this value is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// A readable string for scalar values (`"42"`, `"true"`, `"9.5"`), the string itself for a
    /// string, and `nil` for `null`, arrays and objects.
    public var scalarDescription: String? {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        case .null, .array, .object: nil
        }
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // The most common shapes first: each failed attempt builds a DecodingError, which costs
        // far more than the decoding itself. JSON's types do not overlap, so the order changes
        // no result.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Not a JSON value")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
