import Foundation
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage
import Logging

/// swift-log's lines as JSON, one object per line on standard error (`--log-format json`), as
/// the access log writes its own: `{"time":"2026-11-29T08:00:00.123Z","type":"log",
/// "level":"info","label":"linkrelay.server","message":"…"}` and the logger's metadata, each
/// value as text, under `"metadata"`. A message never holds a key or a request's values (the
/// server's rule for every log line); this handler only changes their shape.
package struct JSONLogHandler: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    private let label: String
    private let output: @Sendable ([UInt8]) -> Void
    private let clock: any LinkRelayClock

    /// A handler for `label`, writing each line to `output` (standard error unless given).
    package init(label: String, clock: any LinkRelayClock = SystemClock(), output: (@Sendable ([UInt8]) -> Void)? = nil) {
        self.label = label
        self.clock = clock
        self.output = output ?? AccessLog.standardError
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var object: [String: JSONValue] = [
            "time": .string(ServerHTTP.timestamp(clock.currentDate)), "type": .string("log"), "level": .string(event.level.rawValue),
            "label": .string(label), "message": .string(event.message.description),
        ]
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        if !merged.isEmpty { object["metadata"] = .object(merged.mapValues { .string($0.description) }) }
        var bytes: [UInt8] = []
        JSONText.write(.object(object), into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        // One write per line: a line is never interleaved with another thread's.
        output(bytes)
    }
}
