import Foundation
import Testing

@testable import LinkRelay

@Suite("SHA-256")
struct SHA256Tests {
    @Test("the FIPS 180-4 vectors", arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("The quick brown fox jumps over the lazy dog", "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"),
    ])
    func vectors(_ input: String, _ expected: String) {
        #expect(SHA256Digest.hex(Data(input.utf8)) == expected)
    }

    @Test("a million a's, and lengths around the 55/56/64-byte padding boundaries")
    func longAndBoundaries() {
        #expect(SHA256Digest.hex(Data(repeating: UInt8(ascii: "a"), count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(SHA256Digest.hex(Data(repeating: UInt8(ascii: "a"), count: 55)) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(SHA256Digest.hex(Data(repeating: UInt8(ascii: "a"), count: 56)) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(SHA256Digest.hex(Data(repeating: UInt8(ascii: "a"), count: 64)) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
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

    static let systemGzip = ["/usr/bin/gzip", "/bin/gzip"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test("interoperates with the system's gzip, both ways", .enabled(if: systemGzip != nil))
    func systemInterop() throws {
        let gzip = try #require(Self.systemGzip)
        let data = Data(String(repeating: "LinkRelay talks gzip with Paylisher. ", count: 300).utf8) + Data((0..<4000).map { UInt8($0 % 251) })
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments + [inputFile.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return output
    }
}
