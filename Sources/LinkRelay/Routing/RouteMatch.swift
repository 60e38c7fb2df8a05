import Foundation

/// What a route's pattern captured from a link, for the closure that builds the route.
///
/// ```swift
/// LinkRoute("/products/:id") { match in
///     try .product(id: match.capture("id"), color: match.query("color"))
/// }
/// ```
///
/// Reading a capture or a query parameter as a type it does not convert to throws
/// ``Mismatch``, which makes the pattern not match; the router goes on to the next one.
public struct RouteMatch: Sendable {
    /// Thrown when a capture or parameter is missing or does not convert: the pattern does not
    /// match this link.
    public struct Mismatch: Error, Sendable, Hashable, CustomStringConvertible {
        /// The capture or parameter.
        public let name: String
        /// Why it does not fit.
        public let reason: String
        public var description: String { "'\(name)' \(reason)" }
    }

    /// The link being routed.
    public let link: DeepLink
    /// The path segments matched (the link's, or its destination's).
    public let segments: [String]
    /// Each capture's text by name, percent-decoded, in the case it arrived in.
    public let captures: [String: String]
    /// What a trailing `*` matched (empty without one).
    public let rest: [String]

    /// The capture `name`, converted: `Int`, `String`, `Double`, `Bool` or any
    /// `LosslessStringConvertible` type of yours.
    ///
    /// - Throws: ``Mismatch`` when the pattern has no such capture or it does not convert.
    public func capture<Value: LosslessStringConvertible>(_ name: String, as type: Value.Type = Value.self) throws -> Value {
        guard let text = captures[name] else { throw Mismatch(name: name, reason: "is not a capture of this pattern") }
        guard let value = Value(text) else { throw Mismatch(name: name, reason: "is not a valid \(Value.self): '\(text)'") }
        return value
    }

    /// The capture `name` as a UUID (any case).
    ///
    /// - Throws: ``Mismatch`` when the pattern has no such capture or it is not a UUID.
    public func capture(_ name: String, as type: UUID.Type = UUID.self) throws -> UUID {
        guard let text = captures[name] else { throw Mismatch(name: name, reason: "is not a capture of this pattern") }
        guard let value = UUID(uuidString: text) else { throw Mismatch(name: name, reason: "is not a valid UUID: '\(text)'") }
        return value
    }

    /// The query parameter `name` (its last value), or `nil` when the link has none.
    public func query(_ name: String) -> String? {
        link.parameters[name]
    }

    /// The query parameter `name` converted, or `nil` when the link has none.
    ///
    /// - Throws: ``Mismatch`` when it is there but does not convert.
    public func query<Value: LosslessStringConvertible>(_ name: String, as type: Value.Type) throws -> Value? {
        guard let text = link.parameters[name] else { return nil }
        guard let value = Value(text) else { throw Mismatch(name: name, reason: "is not a valid \(Value.self): '\(text)'") }
        return value
    }

    /// The query parameter `name`, converted; the pattern matches only links that have it.
    ///
    /// - Throws: ``Mismatch`` when it is missing or does not convert.
    public func requiredQuery<Value: LosslessStringConvertible>(_ name: String, as type: Value.Type = Value.self) throws -> Value {
        guard let value = try query(name, as: Value.self) else { throw Mismatch(name: name, reason: "is missing from the query") }
        return value
    }
}
