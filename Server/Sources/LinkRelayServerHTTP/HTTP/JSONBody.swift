import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage
import NIOCore

/// A request's JSON object, read within a size limit, and its fields, each checked with a
/// `400` naming the field when it is not what the endpoint takes.
///
/// More forgiving than LinkForty Core where Core is wrong: a `null` is an absent value (Core
/// answers a `null` optional with a 500, which its SDKs then retry three times), and a bad
/// field is a `400` (Core's validation failures are 500s).
package struct JSONBody {
    /// The largest body an SDK endpoint reads: 64 KiB.
    package static let sdkLimit = 64 * 1024

    let object: [String: JSONValue]

    /// The body of `request` as a JSON object, read by ``JSONParser`` (linear in its size, nested
    /// at most 32 deep).
    /// - Throws: ``APIError`` 413 beyond `limit` bytes, 400 when it is not a JSON object or nests
    ///   deeper.
    static func read(_ request: Request, limit: Int = sdkLimit, timeout: Duration = defaultTimeout) async throws -> JSONBody {
        let buffer: ByteBuffer
        do {
            buffer = try await collect(request, limit: limit, timeout: timeout)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "The body is larger than \(limit) bytes.")
        }
        guard buffer.readableBytes > 0 else { throw APIError(.badRequest, "The body is empty; a JSON object is expected.") }
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(buffer: buffer))
        } catch {
            throw APIError(.badRequest, "The body is not JSON: \(error.reason) (at byte \(error.offset)).")
        }
        guard case .object(let object) = value else { throw APIError(.badRequest, "The body is not a JSON object.") }
        return JSONBody(object: object)
    }

    /// How long a whole body may take to arrive: 10 seconds. The idle timeout closes a connection
    /// that stops sending; this one ends a body sent a byte at a time, which never stops.
    static let defaultTimeout: Duration = .seconds(10)

    /// The body, whole, within `timeout`.
    /// - Throws: ``APIError`` 408 past it.
    package static func collect(_ request: Request, limit: Int, timeout: Duration) async throws -> ByteBuffer {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await request.body.collect(upTo: limit) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let buffer = try await group.next() ?? nil else {
                throw APIError(.requestTimeout, "The body did not arrive within \(timeout.components.seconds) seconds.")
            }
            return buffer
        }
    }

    /// A field's value, `nil` when absent or `null`.
    private func value(_ name: String) -> JSONValue? {
        guard let value = object[name], value != .null else { return nil }
        return value
    }

    /// A string of at most `maxLength` bytes of UTF-8 (at least one character when `required`).
    /// Bytes, not characters: a character may be any number of combining marks, so a limit in
    /// characters bounds nothing that is stored.
    func string(_ name: String, required: Bool = false, maxLength: Int = 256) throws -> String? {
        guard let value = value(name) else {
            if required { throw APIError.field(name, "is required (a string)") }
            return nil
        }
        guard case .string(let text) = value else { throw APIError.field(name, "must be a string") }
        if required, text.isEmpty { throw APIError.field(name, "must not be empty") }
        // Characters as JSON Schema counts them (Unicode scalars), so the API's description says
        // the limit exactly.
        guard TextLimit.fits(text, characters: maxLength) else { throw APIError.field(name, "is longer than \(maxLength) characters") }
        return text
    }

    /// A whole number within `range` (a JSON number with no fraction).
    func integer(_ name: String, in range: ClosedRange<Int>, required: Bool = false) throws -> Int? {
        guard let value = value(name) else {
            if required { throw APIError.field(name, "is required (a number)") }
            return nil
        }
        let number: Int
        switch value {
        case .int(let integer): number = integer
        case .double(let double) where double.isFinite && double.rounded() == double && abs(double) < 1e15: number = Int(double)
        default: throw APIError.field(name, "must be a whole number")
        }
        guard range.contains(number) else { throw APIError.field(name, "must be between \(range.lowerBound) and \(range.upperBound)") }
        return number
    }

    /// A JSON object.
    func object(_ name: String) throws -> [String: JSONValue]? {
        guard let value = value(name) else { return nil }
        guard case .object(let object) = value else { throw APIError.field(name, "must be an object") }
        return object
    }

    /// An object whose values are all strings (of at most `maxLength`), keys among `keys` when given.
    func stringMap(_ name: String, keys: Set<String>? = nil, maxLength: Int = 2048) throws -> [String: String]? {
        guard let object = try object(name) else { return nil }
        var result: [String: String] = [:]
        for (key, value) in object {
            if let keys, !keys.contains(key) {
                throw APIError.field(name, "has an unknown key '\(key.prefix(40))' (allowed: \(keys.sorted().joined(separator: ", ")))")
            }
            if value == .null { continue }
            guard case .string(let text) = value, TextLimit.fits(text, characters: maxLength) else {
                throw APIError.field(name, "must hold strings of at most \(maxLength) characters")
            }
            result[key] = text
        }
        return result
    }

    /// A boolean.
    func bool(_ name: String) throws -> Bool? {
        guard let value = value(name) else { return nil }
        guard case .bool(let flag) = value else { throw APIError.field(name, "must be true or false") }
        return flag
    }

    /// An absolute `http`/`https` URL of at most 2,048 characters (``LinkRules/checkWebURL(_:of:)``).
    func webURL(_ name: String, required: Bool = false) throws -> String? {
        guard let text = try string(name, required: required, maxLength: LinkRules.url) else { return nil }
        try LinkCreation.checked { () throws(LinkFieldError) in try LinkRules.checkWebURL(text, of: name) }
        return text
    }

    /// An ISO 8601 date (`2026-03-02T08:05:00Z`, with or without a fraction, `Z` or an offset).
    func date(_ name: String) throws -> Date? {
        guard let text = try string(name, maxLength: 64) else { return nil }
        guard let date = ServerHTTP.parseTimestamp(text) else {
            throw APIError.field(name, "must be an ISO 8601 date (2026-03-02T08:05:00Z)")
        }
        return date
    }
}

extension APIError {
    /// 400 for the field `name`: `{"error": "<name> <problem>.", "field": "<name>"}`.
    package static func field(_ name: String, _ problem: String) -> APIError {
        APIError(.badRequest, "\(name) \(problem).", field: name)
    }
}
