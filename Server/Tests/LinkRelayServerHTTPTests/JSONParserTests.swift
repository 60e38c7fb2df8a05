import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The request bodies' JSON reader: what Foundation reads, it reads the same; what is not JSON,
/// or nests past 32 levels, is a 400 that says why.
@Suite("JSON bodies")
struct JSONParserTests {
    static func parse(_ text: String) throws(JSONParser.Failure) -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    @Test("values as JSONValue: whole numbers as int, fractions and exponents as double, escapes and surrogate pairs")
    func values() throws {
        #expect(
            try Self.parse(#" {"a": [1, -0, 2.5, 1e2, -12345678901234567890, true, false, null, "x"]} "#) == [
                "a": [1, 0, 2.5, 100.0, .double(Double("-12345678901234567890")!), true, false, nil, "x"]
            ])
        #expect(try Self.parse(#""\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00 é""#) == .string("\"\\/\u{8}\u{c}\n\r\té😀 é"))
        #expect(try Self.parse(#"{"k": 1, "k": 2}"#) == ["k": 2], "a repeated key keeps its last value")
        #expect(try Self.parse("9223372036854775807") == .int(Int.max))
        #expect(try Self.parse("[]") == [] && Self.parse("{}") == [:])
    }

    @Test(
        "not JSON: each refused with its reason",
        arguments: [
            ("", "ends"), ("{", "ends"), ("[1,]", "value was expected"), ("{\"a\":1,}", "member name"), ("01", "after the JSON value"),
            ("1.", "fraction"), ("1e", "exponent"), ("-", "no digits"), ("+1", "value was expected"), ("tru", "value was expected"),
            ("\"\\x\"", "unknown escape"), ("\"\\ud800\"", "surrogate"), ("\"\\udc00x\"", "surrogate"), ("\"\\u12\"", "hex"),
            ("\"a\u{1}\"", "control"), ("1e999", "out of range"), ("{\"a\" 1}", "':'"), ("[1 2]", "','"), ("NaN", "value was expected"),
            ("{} {}", "after the JSON value"), ("\"abc", "inside a string"),
        ])
    func refused(_ text: String, _ reason: String) {
        #expect {
            try Self.parse(text)
        } throws: { error in
            (error as? JSONParser.Failure)?.reason.contains(reason) == true
        }
    }

    @Test("invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }
    }

    @Test("32 levels are read, 33 are refused, and 500 are refused at the 33rd without reading on")
    func depth() throws {
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        _ = try Self.parse(nested(32))
        _ = try Self.parse(String(repeating: "{\"a\":", count: 31) + "[]" + String(repeating: "}", count: 31))
        #expect(throws: JSONParser.Failure(reason: "objects and arrays nest deeper than 32 levels", offset: 32)) {
            try Self.parse(nested(33))
        }
        #expect(throws: JSONParser.Failure(reason: "objects and arrays nest deeper than 32 levels", offset: 32)) {
            try Self.parse(String(repeating: nested(500), count: 63))
        }
    }

    @Test("the same values as Foundation's JSONDecoder on 500 generated documents (seeded)")
    func differential() throws {
        var generator = SeededGenerator(seed: 48)
        for _ in 0..<500 {
            let value = Self.randomValue(depth: 0, &generator)
            let encoded = try JSONEncoder().encode(value)
            let foundation = try JSONDecoder().decode(JSONValue.self, from: encoded)
            #expect(try JSONParser.parse(Array(encoded)) == foundation, "\(String(decoding: encoded, as: UTF8.self))")
        }
    }

    static func randomValue(depth: Int, _ generator: inout SeededGenerator) -> JSONValue {
        let alphabet = Array("aé\"\\/\n\t😀 z\u{0}\u{1F}0")
        switch Int.random(in: 0..<(depth > 4 ? 5 : 7), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0..<63, using: &generator))
        case 3: return .double(Double.random(in: -1e6...1e6, using: &generator).rounded(.towardZero) + 0.5)
        case 4:
            return .string(String((0..<Int.random(in: 0..<12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
        case 5: return .array((0..<Int.random(in: 0..<5, using: &generator)).map { _ in randomValue(depth: depth + 1, &generator) })
        default:
            var object: [String: JSONValue] = [:]
            for index in 0..<Int.random(in: 0..<5, using: &generator) { object["k\(index)"] = randomValue(depth: depth + 1, &generator) }
            return .object(object)
        }
    }

    @Test(
        "a body nested deeper than 32 is a 400 on every endpoint that reads one, and a link's parameters are never stored as {}",
        arguments: TestEngine.available)
    func deepBodies(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let deep = String(repeating: "{\"a\":", count: 40) + "1" + String(repeating: "}", count: 40)
            try await world.app().test(.live) { client in
                for (path, key, body) in [
                    ("/api/sdk/v1/links", world.adminKey, #"{"deepLinkParameters": "# + deep + "}"),
                    ("/api/sdk/v1/install", world.sdkKey, #"{"userAgent": "x", "extra": "# + deep + "}"),
                    ("/api/sdk/v1/event", world.sdkKey, #"{"installId": "x", "eventName": "e", "eventData": "# + deep + "}"),
                    ("/api/links", world.adminKey, String(repeating: "[", count: 500) + String(repeating: "]", count: 500)),
                ] {
                    try await client.execute(
                        uri: path, method: .post, headers: HTTPTest.headers(key: key, json: true), body: ByteBuffer(string: body)
                    ) { response async throws in
                        #expect(response.status == .badRequest, "\(path)")
                        #expect(String(buffer: response.body).contains("nest deeper than 32"), "\(path): \(String(buffer: response.body))")
                    }
                }
            }
            #expect(try await world.store.counts().links == 0)
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing document can be found again.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
