import Foundation
import LinkRelay
import LinkRelaySimulatorCore
import LinkRelayWire

/// The error bodies of a Fastify server with zod schemas (LinkForty Core): body-parser errors
/// are 400, schema failures 500 (the parse happens outside the handlers' try/catch), unknown
/// routes 404.
enum FastifyErrors {
    /// A request Fastify refuses before any handler runs, with its response.
    struct Rejection: Error {
        let response: HTTPResponse
    }

    /// The request's JSON object, or the 400/500 Fastify answers instead. (A `Result`, not a
    /// typed throw: the iOS type-check's Swift 5.10 standard library crashes the compiler on
    /// typed throws, and this module is then only checked by its declarations.)
    static func jsonBody(_ request: HTTPRequest) -> Result<[String: JSONValue], Rejection> {
        guard let body = request.body, !body.isEmpty else {
            return .failure(
                Rejection(
                    response: .json(
                        [
                            "statusCode": 400, "code": "FST_ERR_CTP_EMPTY_JSON_BODY", "error": "Bad Request",
                            "message": "Body cannot be empty when content-type is set to 'application/json'",
                        ], status: 400)))
        }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: body) else {
            return .failure(
                Rejection(
                    response: .json(
                        [
                            "statusCode": 400, "code": "FST_ERR_CTP_INVALID_JSON_BODY", "error": "Bad Request",
                            "message": "Body is not valid JSON",
                        ], status: 400)))
        }
        guard case .object(let object) = value else {
            return .failure(Rejection(response: validation([ZodSchema.Issue(path: "", expected: "object", received: value.kind)])))
        }
        return .success(object)
    }

    static func validation(_ issues: [ZodSchema.Issue]) -> HTTPResponse {
        let rendered: JSONValue = .array(
            issues.map { issue in
                [
                    "code": "invalid_type", "expected": .string(issue.expected), "received": .string(issue.received),
                    "path": .array(issue.path.isEmpty ? [] : [.string(issue.path)]),
                    "message": .string(
                        issue.received == "undefined" ? "Required" : "Expected \(issue.expected), received \(issue.received)"),
                ]
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let message = (try? encoder.encode(rendered)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        return .json(["statusCode": 500, "error": "Internal Server Error", "message": .string(message)], status: 500)
    }

    static func routeNotFound(method: HTTPMethod, path: String) -> HTTPResponse {
        .json(["message": .string("Route \(method.rawValue):\(path) not found"), "error": "Not Found", "statusCode": 404], status: 404)
    }
}

/// Just enough of zod to reproduce Core's schema checks: required and optional fields by kind;
/// `null` is never accepted for an optional field.
struct ZodSchema {
    enum Kind {
        case string, number, object, uuid, datetime, url
    }

    struct Issue {
        var path: String
        var expected: String
        var received: String
    }

    var required: [String: Kind]
    var optional: [String: Kind]

    func validate(_ body: [String: JSONValue]) -> [Issue] {
        var issues: [Issue] = []
        for (key, kind) in required.sorted(by: { $0.key < $1.key }) {
            guard let value = body[key] else {
                issues.append(Issue(path: key, expected: Self.expected(kind), received: "undefined"))
                continue
            }
            if !Self.accepts(kind, value) { issues.append(Issue(path: key, expected: Self.expected(kind), received: value.kind)) }
        }
        for (key, kind) in optional.sorted(by: { $0.key < $1.key }) {
            guard let value = body[key] else { continue }
            if !Self.accepts(kind, value) { issues.append(Issue(path: key, expected: Self.expected(kind), received: value.kind)) }
        }
        return issues
    }

    private static func expected(_ kind: Kind) -> String {
        switch kind {
        case .string, .uuid, .datetime, .url: "string"
        case .number: "number"
        case .object: "object"
        }
    }

    private static func accepts(_ kind: Kind, _ value: JSONValue) -> Bool {
        switch (kind, value) {
        case (.string, .string): return true
        case (.number, .int), (.number, .double): return true
        case (.object, .object): return true
        case (.uuid, .string(let text)): return UUID(uuidString: text) != nil
        case (.datetime, .string(let text)): return text.hasSuffix("Z") && ISO8601Timestamp.parse(text) != nil
        case (.url, .string(let text)): return URL(string: text)?.scheme != nil && URL(string: text)?.host != nil
        default: return false
        }
    }
}

extension JSONValue {
    /// zod's name for the value's type.
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    var intValue: Int? {
        switch self {
        case .int(let value): value
        case .double(let value): Int(exactly: value)
        default: nil
        }
    }

    var objectValue: [String: JSONValue]? {
        if case .object(let object) = self { return object }
        return nil
    }
}
