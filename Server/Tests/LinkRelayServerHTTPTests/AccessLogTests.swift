import Foundation
import LinkRelay
import LinkRelayTesting
import Logging
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// The access log gathers lines and writes them a block at a time: when a block fills, every
/// interval of its clock, and when the server stops; each line after its time in UTC.
@Suite("Access log")
struct AccessLogTests {
    /// What the log wrote, block by block.
    final class Written: Sendable {
        private let blocks = Mutex<[String]>([])
        private let stream = AsyncStream.makeStream(of: Void.self)
        var all: [String] { blocks.withLock { $0 } }
        var output: @Sendable ([UInt8]) -> Void {
            { bytes in
                self.blocks.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) }
                self.stream.continuation.yield()
            }
        }
        /// Returns once the next block is written.
        func next() async {
            var iterator = stream.stream.makeAsyncIterator()
            _ = await iterator.next()
        }
    }

    @Test(
        "UTC times to the millisecond, whatever the date: 1970, a leap day, before 1970, the last second of 9999, a clock past it (or before 1900) or not finite"
    )
    func times() {
        let cases: [(TimeInterval, String)] = [
            (0, "1970-01-01T00:00:00.000Z"), (1_709_164_800.5, "2024-02-29T00:00:00.500Z"), (1_800_000_000.123, "2027-01-15T08:00:00.123Z"),
            (-1.25, "1969-12-31T23:59:58.750Z"), (253_402_300_799, "9999-12-31T23:59:59.000Z"), (1e300, "9999-12-31T23:59:59.000Z"),
            (-1e300, "1900-01-01T00:00:00.000Z"), (.nan, "1970-01-01T00:00:00.000Z"), (.infinity, "1970-01-01T00:00:00.000Z"),
        ]
        for (seconds, expected) in cases {
            let written = Written()
            let log = AccessLog(clock: ManualClock(date: Date(timeIntervalSince1970: seconds)), output: written.output)
            log.record("ACCESS x")
            log.flush()
            #expect(written.all == [expected + " ACCESS x\n"], "\(seconds)")
        }
    }

    @Test("lines gather until a block is full; the block is written whole, in order")
    func blocks() {
        let written = Written()
        let log = AccessLog(blockSize: 100, clock: ManualClock(), output: written.output)
        log.record("first")
        log.record("second")
        #expect(written.all.isEmpty)
        log.record("third: " + String(repeating: "x", count: 40))
        #expect(
            written.all.count == 1
                && written.all[0].components(separatedBy: "\n").map { $0.dropFirst(25) } == [
                    "first", "second", "third: " + String(repeating: "x", count: 40), "",
                ])
        log.flush()
        #expect(written.all.count == 1, "nothing left to write")
    }

    @Test("run writes what gathered every interval of its clock, and the rest when the server stops")
    func interval() async throws {
        let clock = ManualClock()
        let written = Written()
        let log = AccessLog(interval: 0.2, clock: clock, output: written.output)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await log.run() }
            await clock.waitForSleepers(count: 1)
            log.record("one")
            clock.advance(by: 0.2)
            await written.next()
            #expect(written.all.count == 1 && written.all[0].hasSuffix(" one\n"))
            await clock.waitForSleepers(count: 1)
            log.record("two")
            group.cancelAll()
            try await group.waitForAll()
        }
        #expect(written.all.count == 2 && written.all[1].hasSuffix(" two\n"), "written as it stopped")
    }

    @Test("a request's line as text: client, key prefix, method and route, status, bytes, milliseconds; what is missing is a dash")
    func textLine() {
        let written = Written()
        let log = AccessLog(clock: ManualClock(date: Date(timeIntervalSince1970: 1_800_000_000.123)), output: written.output)
        log.record(
            AccessEntry(
                client: "203.0.113.7", keyPrefix: "lr_sdk_0badbeef", method: "GET", route: "/{code}", status: 302, bytes: nil,
                duration: .microseconds(1_450)))
        log.record(
            AccessEntry(
                client: nil, keyPrefix: nil, method: "POST", route: "/api/sdk/v1/install", status: 200, bytes: 431, duration: .seconds(2)))
        log.flush()
        #expect(
            written.all == [
                "2027-01-15T08:00:00.123Z ACCESS 203.0.113.7 lr_sdk_0badbeef \"GET /{code}\" 302 - 1.5 ms\n"
                    + "2027-01-15T08:00:00.123Z ACCESS - - \"POST /api/sdk/v1/install\" 200 431 2000.0 ms\n"
            ])
    }

    @Test("JSON lines: one object per line with every field; text from a client is escaped and cannot end the line or the object")
    func jsonLines() throws {
        let written = Written()
        let log = AccessLog(format: .json, clock: ManualClock(date: Date(timeIntervalSince1970: 1_800_000_000.123)), output: written.output)
        log.record(
            AccessEntry(
                client: "203.0.113.7", keyPrefix: "lr_sdk_0badbeef", method: "GET", route: "/{code}", status: 302, bytes: nil,
                duration: .microseconds(1_450)))
        log.record(
            AccessEntry(client: "a\"b\nc\\", keyPrefix: nil, method: "POST", route: "(unmatched)", status: 404, bytes: 57, duration: .zero))
        log.flush()
        let lines = written.all.joined().split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines[2].isEmpty)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["time"] as? String == "2027-01-15T08:00:00.123Z" && first["type"] as? String == "access")
        #expect(first["client"] as? String == "203.0.113.7" && first["key"] as? String == "lr_sdk_0badbeef")
        #expect(first["method"] as? String == "GET" && first["route"] as? String == "/{code}" && first["status"] as? Int == 302)
        #expect(first["bytes"] is NSNull && (first["ms"] as? Double) == 1.5)
        let second = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(
            second["client"] as? String == "a\"b\nc\\" && second["key"] is NSNull && second["bytes"] as? Int == 57
                && (second["ms"] as? Double) == 0)
    }

    @Test(
        "the server's other log lines as JSON: one object per line, its level, label, message and metadata; a newline in a message stays inside it"
    )
    func jsonLogHandler() throws {
        let written = Written()
        var logger = Logger(label: "linkrelay.server") {
            JSONLogHandler(label: $0, clock: ManualClock(date: Date(timeIntervalSince1970: 1_800_000_000.5)), output: written.output)
        }
        logger[metadataKey: "engine"] = "sqlite"
        logger.info("Applied schema versions 12, 13.")
        logger.debug("not at the default level")
        logger.error("two\nlines \"quoted\"", metadata: ["pass": "retention"])
        #expect(written.all.count == 2 && written.all.allSatisfy { $0.hasSuffix("}\n") && $0.dropLast().firstIndex(of: "\n") == nil })
        let first = try #require(try JSONSerialization.jsonObject(with: Data(written.all[0].utf8)) as? [String: Any])
        #expect(
            first["time"] as? String == "2027-01-15T08:00:00.500Z" && first["type"] as? String == "log"
                && first["level"] as? String == "info")
        #expect(first["label"] as? String == "linkrelay.server" && first["message"] as? String == "Applied schema versions 12, 13.")
        #expect(first["metadata"] as? [String: String] == ["engine": "sqlite"])
        let second = try #require(try JSONSerialization.jsonObject(with: Data(written.all[1].utf8)) as? [String: Any])
        #expect(
            second["message"] as? String == "two\nlines \"quoted\""
                && second["metadata"] as? [String: String] == ["engine": "sqlite", "pass": "retention"])
    }

    @Test("an interval or a block size out of range is clamped")
    func bounds() {
        #expect(AccessLog(interval: 0).interval == 0.01 && AccessLog(interval: -5).interval == 0.01)
        #expect(
            AccessLog(interval: .infinity).interval == 1 && AccessLog(interval: .nan).interval == 1
                && AccessLog(interval: 1e9).interval == 60)
        #expect(AccessLog(blockSize: 0).blockSize == 1 && AccessLog(blockSize: .max).blockSize == 1 << 20)
    }
}
