import Foundation
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The QR encoder, proved by a real decoder: every symbol rendered as SVG, rasterised by
/// `rsvg-convert` (Debian's librsvg2-bin) and read by `zbarimg` (zbar-tools) must give back the
/// exact URL, at every level, from the shortest link to the longest one can be, and up to each
/// level's capacity in version 40.
@Suite("QR codes")
struct QRCodeTests {
    static let rsvg = "/usr/bin/rsvg-convert"
    static let zbar = "/usr/bin/zbarimg"

    /// The longest share URL a link can have: https, a 253-character host, a port, a template
    /// slug of 64 and a code of 20.
    static let longestLink: String = {
        let label = String(repeating: "a", count: 63)
        let host = [label, label, label, String(repeating: "b", count: 61)].joined(separator: ".")
        return "https://\(host):65535/\(String(repeating: "t", count: 64))/\(String(repeating: "C", count: 20))"
    }()

    /// 52 URLs from 14 characters to the longest link, of the characters links use.
    static let urls: [String] = {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
        var urls: [String] = []
        for index in 0..<51 {
            let length = 14 + (longestLink.utf8.count - 14) * index / 50
            var url = index % 2 == 0 ? "https://go.acme.app/" : "http://l.example/p/"
            var seed = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 &+ 1
            while url.utf8.count < length {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                url.append(alphabet[Int(seed >> 58)])
            }
            urls.append(String(url.prefix(max(length, 14))))
        }
        return urls + [longestLink, "https://go.acme.app/spring?utm_source=news%20letter&lr_click=AbC123xyz_-"]
    }()

    static func run(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try ChildProcess.run(path, arguments)
    }

    /// What zbarimg reads in `code` rendered as SVG and rasterised at 4 pixels a module.
    static func decode(_ code: QRCode, in folder: String, name: String) throws -> String? {
        let svg = folder + "/\(name).svg"
        let png = folder + "/\(name).png"
        try code.svg(pixels: (code.size + 8) * 4).write(toFile: svg, atomically: true, encoding: .utf8)
        guard try run(rsvg, ["-o", png, svg]).status == 0 else { return nil }
        let read = try run(zbar, ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", png])
        guard read.status == 0, read.output.hasSuffix("\n") else { return nil }
        return String(read.output.dropLast())
    }

    @Test("52 URLs at every level, and each level's capacity in version 40, decode to the exact bytes with zbarimg")
    func decodesWithARealDecoder() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.rsvg), FileManager.default.isExecutableFile(atPath: Self.zbar) else {
            // In CI a missing decoder is a missing install step, not a reason to skip.
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("zbarimg or rsvg-convert is missing in CI") }
            print("skipped: rsvg-convert or zbarimg is missing (apt-get install librsvg2-bin zbar-tools); .ci/run installs them")
            return
        }
        let folder = try Scratch()
        var versions: Set<Int> = []
        for level in QRCode.Level.allCases {
            var payloads = Self.urls
            // The most the level holds: version 40.
            let capacity = QRCode.capacity(level: level)
            payloads.append("https://go.acme.app/" + String(repeating: "x", count: capacity - 20))
            for (index, url) in payloads.enumerated() {
                let code = try QRCode(text: url, level: level)
                versions.insert(code.version)
                #expect(
                    try Self.decode(code, in: folder.path, name: "\(level.rawValue)\(index)") == url,
                    "\(level) \(url.utf8.count) bytes, version \(code.version)")
            }
        }
        #expect(versions.contains(1) && versions.contains(40) && versions.count >= 20, "\(versions.sorted())")
    }

    @Test("the smallest version that holds the bytes; one byte more than version 40 holds is refused, saying how many fit")
    func capacities() throws {
        #expect(QRCode.capacity(level: .low) == 2953 && QRCode.capacity(level: .medium) == 2331)
        #expect(QRCode.capacity(level: .quartile) == 1663 && QRCode.capacity(level: .high) == 1273)
        // Version 1 holds 17 bytes at L and 7 at H (byte mode).
        #expect(try QRCode(bytes: Array(repeating: 0x41, count: 17), level: .low).version == 1)
        #expect(try QRCode(bytes: Array(repeating: 0x41, count: 18), level: .low).version == 2)
        #expect(try QRCode(bytes: Array(repeating: 0x41, count: 7), level: .high).version == 1)
        #expect(try QRCode(bytes: [], level: .medium).size == 21)
        for level in QRCode.Level.allCases {
            let capacity = QRCode.capacity(level: level)
            #expect(try QRCode(bytes: Array(repeating: 0x41, count: capacity), level: level).version == 40)
            #expect(throws: QRCode.TooLong(bytes: capacity + 1, capacity: capacity)) {
                try QRCode(bytes: Array(repeating: 0x41, count: capacity + 1), level: level)
            }
        }
    }

    @Test("the alignment patterns' centres, from the standard's annex E")
    func alignment() {
        #expect(QRCode.alignmentPositions(1) == [])
        #expect(QRCode.alignmentPositions(2) == [6, 18])
        #expect(QRCode.alignmentPositions(7) == [6, 22, 38])
        #expect(QRCode.alignmentPositions(32) == [6, 34, 60, 86, 112, 138])
        #expect(QRCode.alignmentPositions(40) == [6, 30, 58, 86, 114, 142, 170])
    }
}
