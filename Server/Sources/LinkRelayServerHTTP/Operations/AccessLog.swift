import Foundation
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage
import ServiceLifecycle
import Synchronization

/// One line per request, written to standard error a block at a time: a line's time is made
/// once a second, without the system's time zone (which `localtime_r` looks up on the disk for
/// every line), the line kept in memory, and written when 16 KiB have gathered, every
/// ``interval``, and when the server stops. Through swift-log's stream handler each line was a
/// `write` of its own, a time-zone lookup and a lock: 15 % of the redirect's requests per second.
///
/// A line (``AccessEntry``), as text:
/// `2026-11-28T19:02:03.123Z ACCESS 203.0.113.7 lr_sdk_1a2b3c4d "GET /{code}" 302 0 1.4 ms`
/// (UTC, milliseconds; a dash for what is missing), or as JSON (``LogFormat/json``), one object
/// per line: `{"time":"…","type":"access","client":"203.0.113.7","key":"lr_sdk_1a2b3c4d",
/// "method":"GET","route":"/{code}","status":302,"bytes":0,"ms":1.4}`. A process that is killed
/// loses at most the last ``interval`` of lines; one that stops gracefully loses none.
package final class AccessLog: Service, Sendable {
    /// How often the lines gathered are written, at most.
    package let interval: TimeInterval
    /// The bytes gathered that make a write at once.
    package let blockSize: Int
    /// Text lines or JSON lines.
    package let format: LogFormat
    private let clock: any LinkRelayClock
    private let output: @Sendable ([UInt8]) -> Void
    private let state = Mutex(State())

    private struct State {
        var buffer: [UInt8] = []
        /// The whole second the cached prefix is for, and the prefix (`2026-11-28T19:02:03.`).
        var second: Int = .min
        var prefix: [UInt8] = []
    }

    /// - Parameters:
    ///   - interval: seconds between writes of what gathered (clamped to 0.01…60; not finite: 1).
    ///   - blockSize: bytes that make a write at once (clamped to 1…1 MiB).
    ///   - format: text lines (the default) or JSON lines.
    ///   - clock: the time of each line and of the writes.
    ///   - output: where a block of lines goes; standard error unless given.
    package init(
        interval: TimeInterval = 0.2, blockSize: Int = 16 * 1024, format: LogFormat = .text, clock: any LinkRelayClock = SystemClock(),
        output: (@Sendable ([UInt8]) -> Void)? = nil
    ) {
        self.format = format
        self.interval = interval.isFinite ? min(max(interval, 0.01), 60) : 1
        self.blockSize = min(max(blockSize, 1), 1 << 20)
        self.clock = clock
        self.output = output ?? Self.standardError
    }

    /// Adds a request's line at the clock's time, in ``format``; writes the block when it is full.
    package func record(_ entry: AccessEntry) {
        switch format {
        case .text:
            // Every field but the client's and the key's is the server's own text (a method is
            // an HTTP token, a route a pattern); those two are shown only when they are plain.
            let client = entry.client.flatMap { AccessEntry.isPlain($0) ? $0 : nil } ?? "-"
            let key = entry.keyPrefix.flatMap { AccessEntry.isPlain($0) ? $0 : nil } ?? "-"
            let bytes = entry.bytes.map(String.init) ?? "-"
            record(
                "ACCESS \(client) \(key) \"\(entry.method) \(entry.route)\" \(entry.status) \(bytes) \(AccessLogMiddleware.milliseconds(entry.duration)) ms"
            )
        case .json:
            let date = clock.currentDate
            state.withLock { state in
                state.buffer.append(contentsOf: #"{"time":""#.utf8)
                appendTime(date, to: &state)
                state.buffer.append(contentsOf: #"","type":"access","client":"#.utf8)
                JSONText.write(entry.client.map(JSONValue.string) ?? .null, into: &state.buffer)
                state.buffer.append(contentsOf: #","key":"#.utf8)
                JSONText.write(entry.keyPrefix.map(JSONValue.string) ?? .null, into: &state.buffer)
                state.buffer.append(contentsOf: #","method":"#.utf8)
                JSONText.write(entry.method, into: &state.buffer)
                state.buffer.append(contentsOf: #","route":"#.utf8)
                JSONText.write(entry.route, into: &state.buffer)
                state.buffer.append(
                    contentsOf: ",\"status\":\(entry.status),\"bytes\":\(entry.bytes.map(String.init) ?? "null"),\"ms\":".utf8)
                state.buffer.append(contentsOf: AccessLogMiddleware.milliseconds(entry.duration).utf8)
                state.buffer.append(contentsOf: "}\n".utf8)
                if state.buffer.count >= blockSize { flush(&state) }
            }
        }
    }

    /// Adds the text line `message` after the clock's time; writes the block when it is full.
    package func record(_ message: String) {
        let date = clock.currentDate
        state.withLock { state in
            appendTime(date, to: &state)
            state.buffer.append(contentsOf: " ".utf8)
            state.buffer.append(contentsOf: message.utf8)
            state.buffer.append(UInt8(ascii: "\n"))
            // Written under the lock, so blocks keep their order (as the stream handler wrote
            // each line under its lock).
            if state.buffer.count >= blockSize { flush(&state) }
        }
    }

    /// Writes what has gathered.
    package func flush() {
        state.withLock { flush(&$0) }
    }

    private func flush(_ state: inout State) {
        guard !state.buffer.isEmpty else { return }
        output(state.buffer)
        state.buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what gathered every ``interval`` until the server shuts down, then the rest.
    package func run() async throws {
        defer { flush() }
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    try await self.clock.sleep(for: self.interval)
                    self.flush()
                }
            }
        } catch is CancellationError {
            return
        }
    }

    /// `2026-11-28T19:02:03.123Z`, the date part made once a second.
    private func appendTime(_ date: Date, to state: inout State) {
        // The stored time's whole milliseconds (``SQLTime``, bounded there), within years
        // 1900…9999; a clock that is not finite writes 1970.
        let stored = date.timeIntervalSince1970.isFinite ? EpochMilliseconds.of(date) : 0
        let milliseconds = min(max(stored, -2_208_988_800_000), 253_402_300_799_000)
        let second = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        if second != state.second {
            state.second = second
            state.prefix = Array(Self.civilTime(second).utf8)
        }
        state.buffer.append(contentsOf: state.prefix)
        let fraction = milliseconds - second * 1000
        state.buffer.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        state.buffer.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        state.buffer.append(UInt8(ascii: "0") + UInt8(fraction % 10))
        state.buffer.append(UInt8(ascii: "Z"))
    }

    /// `YYYY-MM-DDThh:mm:ss.` for whole seconds since 1970 in UTC (through Foundation's
    /// formatter: once a second, so its cost does not count).
    static func civilTime(_ second: Int) -> String {
        String(ServerHTTP.timestamp(Date(timeIntervalSince1970: TimeInterval(second))).dropLast(4))
    }

    /// Writes `bytes` to standard error whole (a short write continued, an interruption retried).
    static func standardError(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(2, raw.baseAddress! + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

/// How the server's log lines are written: text (the default) or one JSON object per line
/// (`--log-format json`), for a collector that reads fields rather than lines.
package enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json
}

/// One request as the access log keeps it: never its path (a link's code, a tap's query), its
/// body or a key's secret part.
package struct AccessEntry: Sendable {
    /// The client's address as the deferred match sees it (``ClientAddress``), or `nil`.
    package var client: String?
    /// The public prefix of the key the request carried (`lr_sdk_1a2b3c4d`), known or not, or `nil`.
    package var keyPrefix: String?
    /// The HTTP method.
    package var method: String
    /// The route's pattern (`/{code}`, `/api/links/{id}`), `(unmatched)` for no route.
    package var route: String
    /// The answer's status.
    package var status: Int
    /// The answer's length in bytes, when known before it is sent.
    package var bytes: Int?
    /// From the request's arrival to its answer.
    package var duration: Duration

    /// An entry; see each property.
    package init(client: String?, keyPrefix: String?, method: String, route: String, status: Int, bytes: Int?, duration: Duration) {
        self.client = client
        self.keyPrefix = keyPrefix
        self.method = method
        self.route = route
        self.status = status
        self.bytes = bytes
        self.duration = duration
    }

    /// Whether `text` can stand in a text line as it is: 1…100 printable ASCII bytes, no space,
    /// quote or backslash.
    static func isPlain(_ text: String) -> Bool {
        text.utf8.count <= 100 && !text.isEmpty
            && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }
}
