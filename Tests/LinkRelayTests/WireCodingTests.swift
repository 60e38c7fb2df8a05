import Foundation
import LinkRelayWire
import Testing

@testable import LinkRelay

@Suite("SHA-256")
struct SHA256Tests {
    @Test(
        "the FIPS 180-4 vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            ("The quick brown fox jumps over the lazy dog", "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"),
        ])
    func vectors(_ input: String, _ expected: String) {
        #expect(SHA256Digest.hex(Data(input.utf8)) == expected)
    }

    @Test("a million a's, and lengths around the 55/56/64-byte padding boundaries")
    func longAndBoundaries() {
        #expect(
            SHA256Digest.hex(Data(repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(
            SHA256Digest.hex(Data(repeating: UInt8(ascii: "a"), count: 55))
                == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(
            SHA256Digest.hex(Data(repeating: UInt8(ascii: "a"), count: 56))
                == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(
            SHA256Digest.hex(Data(repeating: UInt8(ascii: "a"), count: 64))
                == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }
}

@Suite("gzip")
struct GzipTests {
    static let samples: [Data] = [
        Data(), Data("a".utf8), Data(repeating: 0x41, count: 70_000),
        Data(#"{"api_key":"phc_x","batch":[{"event":"Deep Link Opened","properties":{"campaign_key":"X7kdi5Yq9"}}]}"#.utf8),
        Data((0..<50_000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }),
        Data(String(repeating: "Deep Link Opened, Deep Link Completed, ", count: 500).utf8),
    ]

    @Test("round trip", arguments: samples)
    func roundTrip(_ data: Data) throws {
        #expect(try Gzip.decompress(Gzip.compress(data)) == data)
    }

    @Test("repetitive JSON compresses")
    func compresses() {
        let data = Data(String(repeating: #"{"event":"Deep Link Opened"},"#, count: 200).utf8)
        #expect(Gzip.compress(data).count < data.count / 10)
    }

    @Test("a wrong checksum, a truncated body and non-gzip are decoding errors; a bomb is refused")
    func corruption() throws {
        var compressed = Gzip.compress(Data("hello, world".utf8))
        compressed[compressed.count - 6] ^= 0xff
        #expect((try? Gzip.decompress(compressed)) == nil)
        let whole = Gzip.compress(Data(repeating: 7, count: 10_000))
        let error = #expect(throws: DeepLinkError.self) { try Gzip.decompress(whole.prefix(whole.count - 12)) }
        #expect(error?.code == .decoding)
        #expect((try? Gzip.decompress(Data("not gzip at all, not at all".utf8))) == nil)
        let bomb = #expect(throws: DeepLinkError.self) { try Gzip.decompress(Gzip.compress(Data(count: 100_000)), maximumSize: 1000) }
        #expect(bomb?.code == .responseTooLarge)
    }

    static let systemGzip: String? = {
        #if os(macOS) || os(Linux)
            ["/usr/bin/gzip", "/bin/gzip"].first { FileManager.default.isExecutableFile(atPath: $0) }
        #else
            nil
        #endif
    }()

    @Test("interoperates with the system's gzip, both ways", .enabled(if: systemGzip != nil))
    func systemInterop() throws {
        let gzip = try #require(Self.systemGzip)
        let data =
            Data(String(repeating: "LinkRelay talks gzip with Paylisher. ", count: 300).utf8) + Data((0..<4000).map { UInt8($0 % 251) })
        #expect(try run(gzip, ["-dc"], input: Gzip.compress(data)) == data)
        for level in ["-1", "-9"] {
            #expect(try Gzip.decompress(run(gzip, ["-c", level], input: data)) == data)
        }
    }

    private func run(_ tool: String, _ arguments: [String], input: Data) throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputFile = directory.appendingPathComponent("in")
        try input.write(to: inputFile)
        #if os(macOS) || os(Linux)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments + [inputFile.path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return output
        #else
            // No processes on iOS (the suite also runs on a simulator): no system gzip there.
            throw CocoaError(.featureUnsupported)
        #endif
    }
}

@Suite("ISO8601Timestamp against Foundation's formatter", .timeLimit(.minutes(1)))
struct ISO8601TimestampTests {
    /// Dates from 1970 to 2100 with milliseconds, the same every run.
    static let dates: [Date] = {
        var state: UInt64 = 0x1234_5678_9ABC_DEF0
        return (0..<2000).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let milliseconds = Int64(state >> 22) % 4_102_444_800_000
            return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        } + [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 951_782_400), Date(timeIntervalSince1970: 4_107_542_399.999)]
    }()

    @Test("writes what ISO8601DateFormatter writes, with and without milliseconds")
    func writes() {
        let whole = ISO8601DateFormatter()
        whole.timeZone = TimeZone(identifier: "UTC")
        let fractional = ISO8601DateFormatter()
        fractional.timeZone = TimeZone(identifier: "UTC")
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let mismatches = Self.dates.filter { date in
            ISO8601Timestamp.string(from: date) != whole.string(from: date)
                || ISO8601Timestamp.string(from: date, fractional: true) != fractional.string(from: date)
        }
        #expect(mismatches.isEmpty, "first: \(mismatches.first.map { "\($0.timeIntervalSince1970)" } ?? "")")
    }

    @Test("reads back what it writes, to the millisecond")
    func roundTrips() {
        let mismatches = Self.dates.filter { date in
            guard let back = ISO8601Timestamp.parse(ISO8601Timestamp.string(from: date, fractional: true)) else { return true }
            return abs(back.timeIntervalSince1970 - (date.timeIntervalSince1970 * 1000).rounded() / 1000) > 0.0005
        }
        #expect(mismatches.isEmpty)
    }

    @Test(
        "offsets, lower-case letters and any number of fraction digits",
        arguments: [
            ("2026-03-02T08:05:00Z", 1_772_438_700.0), ("2026-03-02T09:05:00+01:00", 1_772_438_700.0),
            ("2026-03-02T00:05:00-0800", 1_772_438_700.0), ("2026-03-02t08:05:00z", 1_772_438_700.0),
            ("2026-03-02T08:05:00.5Z", 1_772_438_700.5), ("2026-03-02T08:05:00.123456Z", 1_772_438_700.123456),
            ("2024-02-29T23:59:59Z", 1_709_251_199.0),
        ])
    func reads(_ text: String, _ expected: Double) throws {
        let date = try #require(ISO8601Timestamp.parse(text))
        #expect(abs(date.timeIntervalSince1970 - expected) < 0.000_001)
    }

    @Test(
        "refuses what is not an RFC 3339 date-time",
        arguments: [
            "", "2026-03-02", "2026-03-02T08:05:00", "2026-02-30T08:05:00Z", "2025-02-29T08:05:00Z", "2026-13-01T00:00:00Z",
            "2026-03-02T24:00:00Z", "2026-03-02T08:60:00Z", "2026-03-02T08:05:00.Z", "2026-03-02T08:05:00Zjunk",
            "2026-03-02 08:05:00Z", "20260302T080500Z", "2026-03-02T08:05:00+5:00", "twenty-twenty-six",
        ])
    func refuses(_ text: String) {
        #expect(ISO8601Timestamp.parse(text) == nil)
    }
}

@Suite("PercentEncodingSet against Foundation", .timeLimit(.minutes(1)))
struct PercentEncodingSetTests {
    @Test("encodes exactly as addingPercentEncoding does with the same characters allowed", arguments: ["", "/", "/?:@"])
    func matchesFoundation(_ extra: String) {
        let set = PercentEncodingSet(unreservedPlus: extra)
        let foundation = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~" + extra)
        let samples = [
            "plain", "a b+c&d=e#f?g/h:i@j", "café crème", "商品/1", "emoji 🎉 ok", "100%", "%zz", "Etc/GMT+5",
            "https://abc.limelink.org/link/s?x=1&y=a+b", "\u{0}\u{7F}\u{80}", String((32..<127).map { Character(UnicodeScalar($0)!) }),
        ]
        for sample in samples {
            #expect(set.encode(sample) == sample.addingPercentEncoding(withAllowedCharacters: foundation), "\(sample)")
        }
    }

    @Test(
        "percentDecoded answers what removingPercentEncoding answers",
        arguments: [
            "plain", "a%20b", "caf%C3%A9", "%E5%95%86%E5%93%81", "100%", "%zz", "a%2", "%FF", "%C3", "a+b", "%2F%2f", "",
        ])
    func decodesAsFoundation(_ sample: String) {
        #expect(sample.percentDecoded == sample.removingPercentEncoding)
    }
}

@Suite("WireJSON against JSONDecoder", .timeLimit(.minutes(1)))
struct WireJSONTests {
    @Test(
        "reads what JSONDecoder reads, to the same values",
        arguments: [
            #"{"a":1,"b":-2.5,"c":"x","d":true,"e":null,"f":[1,"2",{"g":[]}],"h":{}}"#,
            #"  [ 1e2 , 0 , -0 , 3.0e-2 , 9223372036854775807 , 9223372036854775808 ]  "#,
            #"{"s":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t","u":"商品 ✓"}"#,
            #""just a string""#, "42", "null",
        ])
    func readsAsFoundation(_ text: String) throws {
        let data = Data(text.utf8)
        #expect(try WireJSON.parse(data) == JSONDecoder().decode(JSONValue.self, from: data))
    }

    @Test(
        "refuses what is not JSON, with where and why",
        arguments: [
            "", "[1,]", "{\"a\":1}x", "[\"\\ud800\"]", "[\"\\udc00\"]", "\"a\u{01}b\"", "\"open", "{\"a\" 1}", "[01]", "[1.]",
            "[.5]", "[1e]", "tru", "{'a':1}", "[\"\\x\"]", String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
        ])
    func refuses(_ text: String) {
        #expect(throws: WireJSON.SyntaxError.self) { try WireJSON.parse(Data(text.utf8)) }
    }

    @Test("refuses a string that is not UTF-8")
    func refusesInvalidUTF8() {
        #expect(throws: WireJSON.SyntaxError.self) { try WireJSON.parse(Data([0x22, 0xFF, 0xFE, 0x22])) }
    }

    private struct Sample: Decodable, Equatable {
        var int: Int
        var small: UInt8?
        var double: Double
        var text: String?
        var list: [String]
        var nested: [String: JSONValue]?
    }

    @Test(
        "decodes Decodable types as JSONDecoder does: integral numbers, the first duplicate, missing and mismatched keys",
        arguments: [
            #"{"int":1.0,"small":255,"double":1,"list":["a"],"nested":{"x":[1,{"y":null}]}}"#,
            #"{"int":1e2,"small":null,"double":-0.5,"text":"t","list":[],"int":7}"#,
            #"{"int":1.5,"double":1,"list":[]}"#,
            #"{"int":1,"small":300,"double":1,"list":[]}"#,
            #"{"int":1,"double":"1","list":[]}"#,
            #"{"double":1,"list":[]}"#,
            #"{"int":1,"double":1,"list":[1]}"#,
        ])
    func decodesAsFoundation(_ text: String) {
        let data = Data(text.utf8)
        let ours = try? WireJSON.decode(Sample.self, from: data)
        let foundation = try? JSONDecoder().decode(Sample.self, from: data)
        #expect(ours == foundation)
    }
}
