import Foundation
import LinkRelay
import Testing

@testable import LinkRelayServerCore
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerTestSupport

/// The API's answers (``WireTypes/all``) and `openapi.json` checked against each other field by
/// field: each type's example, every field set, is written as the server writes it and read
/// against its schema. A field the description lacks, a field of the description the type does
/// not answer, a required field left out, or a field of the wrong JSON type fails, naming its
/// path (`LinkRow.deep_link_path`).
@Suite("Wire types against the OpenAPI description")
struct WireTypeTests {
    static func schemas() throws -> [String: Any] {
        let document = try OpenAPITests.document()
        let components = try #require(document["components"] as? [String: Any])
        return try #require(components["schemas"] as? [String: Any])
    }

    /// The problems of `value` against `schema`, each naming where it is.
    static func problems(_ value: JSONValue, _ schema: [String: Any], at path: String, in schemas: [String: Any]) -> [String] {
        // `$ref`: the component; `allOf`: every part's properties and requirements together.
        if let reference = schema["$ref"] as? String {
            let name = String(reference.split(separator: "/").last ?? "")
            guard let target = schemas[name] as? [String: Any] else { return ["\(path): no schema \(name)"] }
            return problems(value, target, at: path, in: schemas)
        }
        if let parts = schema["allOf"] as? [[String: Any]] {
            var merged: [String: Any] = ["type": "object"]
            var properties: [String: Any] = [:]
            var required: [String] = []
            for part in parts {
                var part = part
                if let reference = part["$ref"] as? String {
                    part = schemas[String(reference.split(separator: "/").last ?? "")] as? [String: Any] ?? [:]
                }
                properties.merge(part["properties"] as? [String: Any] ?? [:]) { first, _ in first }
                required += part["required"] as? [String] ?? []
            }
            merged["properties"] = properties
            merged["required"] = required
            return problems(value, merged, at: path, in: schemas)
        }
        if let options = schema["oneOf"] as? [[String: Any]] ?? schema["anyOf"] as? [[String: Any]] {
            return options.contains { problems(value, $0, at: path, in: schemas).isEmpty }
                ? [] : ["\(path): matches none of the description's alternatives"]
        }
        let types: [String] = (schema["type"] as? [String]) ?? (schema["type"] as? String).map { [$0] } ?? []
        let kind = jsonType(value)
        guard types.isEmpty || types.contains(kind) || (kind == "integer" && types.contains("number")) else {
            return ["\(path): \(kind), described as \(types.joined(separator: " or "))"]
        }
        switch value {
        case .object(let object):
            guard let properties = schema["properties"] as? [String: Any] else { return [] }  // a free-form object
            var found: [String] = []
            for key in object.keys.sorted() {
                guard let property = properties[key] as? [String: Any] else {
                    found.append("\(path).\(key): answered, not described")
                    continue
                }
                found += problems(object[key]!, property, at: "\(path).\(key)", in: schemas)
            }
            for key in properties.keys.sorted() where object[key] == nil {
                let required = (schema["required"] as? [String] ?? []).contains(key)
                found.append("\(path).\(key): described\(required ? " as required" : ""), not answered")
            }
            return found
        case .array(let array):
            guard let items = schema["items"] as? [String: Any] else { return [] }
            return array.enumerated().flatMap { problems($0.element, items, at: "\(path)[\($0.offset)]", in: schemas) }
        default:
            return []
        }
    }

    static func jsonType(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    @Test("each answer's example, every field set, is its schema field by field, both ways", arguments: WireTypes.all.map(\.schema))
    func answerMatchesSchema(name: String) throws {
        let type = try #require(WireTypes.all.first { $0.schema == name })
        let schemas = try Self.schemas()
        let schema = try #require(schemas[type.schema] as? [String: Any], "no schema \(type.schema) in openapi.json")
        let written = try JSONParser.parse(Array(ServerHTTP.encoded(type.example)))
        #expect(Self.problems(written, schema, at: type.schema, in: schemas) == [])
    }

    @Test("an answer written by hand on a hot path (the install, a resolve) is the JSON Foundation writes of its type, value for value")
    func handWrittenAgrees() throws {
        let fast = WireTypes.all.filter { $0.example.json != nil }
        #expect(fast.map { $0.schema }.sorted() == ["InstallAnswer", "ResolvedLink"])
        for type in fast {
            let written = try JSONParser.parse(Array(ServerHTTP.encoded(type.example)))
            #expect(type.example.json == written, "\(type.schema)")
        }
        // And for the values a real answer has: an organic install, a link with empty fields.
        var organic = InstallAnswer.example
        organic.deepLinkData = nil
        organic.clickToken = nil
        organic.clientReportedIp = nil
        #expect(organic.json == (try JSONParser.parse(Array(ServerHTTP.encoded(organic)))))
        var bare = WireTypes.exampleLink
        bare.deepLinkPath = ""
        bare.appScheme = nil
        let resolved = ResolvedLink(bare, at: Date(timeIntervalSince1970: 0))
        #expect(resolved.json == (try JSONParser.parse(Array(ServerHTTP.encoded(resolved)))))
    }

    @Test("every schema a 2xx JSON answer of the description names is the schema of a wire type")
    func everyAnswerIsTyped() throws {
        let document = try OpenAPITests.document()
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var named: Set<String> = []
        for (path, operations) in paths where path != "/openapi.json" {
            for case let operation as [String: Any] in operations.values {
                for (status, answer) in operation["responses"] as? [String: Any] ?? [:] where status.hasPrefix("2") {
                    let content = (answer as? [String: Any])?["content"] as? [String: Any] ?? [:]
                    for (type, body) in content where type.hasPrefix("application/json") {
                        let schema = (body as? [String: Any])?["schema"] as? [String: Any] ?? [:]
                        let reference = (schema["$ref"] as? String) ?? ((schema["items"] as? [String: Any])?["$ref"] as? String)
                        named.insert(reference.map { String($0.split(separator: "/").last ?? "") } ?? "inline at \(path)")
                    }
                }
            }
        }
        let typed = Set(WireTypes.all.map { $0.schema })
        #expect(named.subtracting(typed).sorted() == [])
        #expect(named.count >= 17)
    }

    @Test("the check finds a field the description lacks, one it has that the answer lacks, and a field of the wrong type")
    func checkFindsDifferences() throws {
        let schemas = try Self.schemas()
        let schema = try #require(schemas["DestinationHosts"] as? [String: Any])
        #expect(
            Self.problems(["mode": "any", "hosts": [], "extra": 1], schema, at: "D", in: schemas) == [
                "D.extra: answered, not described"
            ])
        #expect(Self.problems(["mode": "any"], schema, at: "D", in: schemas) == ["D.hosts: described as required, not answered"])
        #expect(Self.problems(["mode": 3, "hosts": ["a"]], schema, at: "D", in: schemas) == ["D.mode: integer, described as string"])
    }
}

extension WireTypeTests {
    @Test(
        "the landing page's icon, as described, is an https URL with a host: what the server takes (the fuzzer sent \"https://\", which it refuses)"
    )
    func iconPattern() throws {
        let request = try #require(Self.schemas()["LandingPageRequest"] as? [String: Any])
        let icon = try #require((request["properties"] as? [String: Any])?["appIconUrl"] as? [String: Any])
        let pattern = try NSRegularExpression(pattern: try #require(icon["pattern"] as? String))
        func described(_ text: String) -> Bool {
            pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        #expect(!described("https://") && !described("http://acme.example/i.png"))
        #expect(described("https://acme.example/i.png") && described("HTTPS://acme.example/i.png"))
    }
}
