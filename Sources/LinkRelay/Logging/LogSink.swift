import Foundation

#if canImport(os)
    import os
#endif

/// Where LinkRelay's log lines go.
///
/// The default (``platform(minimumLevel:)``) shows warnings and errors where a developer looks:
/// on Apple platforms unified logging (`os.Logger`, subsystem `dev.linkrelay`: Xcode's console
/// and Console.app), elsewhere standard error. One line turns on everything:
///
/// ```swift
/// var configuration = DeepLinkClient.Configuration()
/// configuration.enableDebugLogging()                 // or: configuration.logSink = .console()
/// ```
///
/// Or pass the lines to your own logger, or turn them off with ``silent``:
///
/// ```swift
/// configuration.logSink = LogSink(minimumLevel: .info) { record in
///     myLogger.log("\(record.level): \(record.message)")
/// }
/// ```
///
/// Messages reach the sink already redacted: the backend's secrets (API keys) and anything that
/// looks like a bearer token or a key-like query item are replaced with `[redacted]`.
public struct LogSink: Sendable {
    /// How much a log line matters.
    public enum Level: Int, Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
        /// `debug` (every provider call and decision), `info`, `warning` (something the app should
        /// fix) and `error`, from least to most important.
        case debug, info, warning, error

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    /// One log line.
    public struct Record: Sendable, Hashable {
        /// How much the line matters.
        public var level: Level
        /// The redacted message.
        public var message: String
        /// The backend the line concerns, if any.
        public var backend: BackendID?

        /// `[LinkRelay] level: message`, with a newline.
        var line: String { "[LinkRelay] \(level): \(message)\n" }
    }

    /// Lines below this level are not written.
    public var minimumLevel: Level
    private let write: (@Sendable (Record) -> Void)?

    /// A sink that passes every line at `minimumLevel` or above to `write`.
    public init(minimumLevel: Level = .info, _ write: @escaping @Sendable (Record) -> Void) {
        self.minimumLevel = minimumLevel
        self.write = write
    }

    private init() {
        self.minimumLevel = .error
        self.write = nil
    }

    /// Writes nothing.
    public static let silent = LogSink()

    /// The platform's log: on Apple platforms `unifiedLogging(subsystem:minimumLevel:)`,
    /// elsewhere ``standardError(minimumLevel:)``. The configuration's default, at `.warning`.
    public static func platform(minimumLevel: Level = .warning) -> LogSink {
        #if canImport(os)
            return unifiedLogging(minimumLevel: minimumLevel)
        #else
            return standardError(minimumLevel: minimumLevel)
        #endif
    }

    /// Writes `[LinkRelay] level: message` lines to standard error.
    public static func standardError(minimumLevel: Level = .info) -> LogSink {
        LogSink(minimumLevel: minimumLevel) { record in
            FileHandle.standardError.write(Data(record.line.utf8))
        }
    }

    /// Prints `[LinkRelay] level: message` lines to standard output, as `print` does: what
    /// Xcode's console shows while debugging.
    public static func console(minimumLevel: Level = .debug) -> LogSink {
        LogSink(minimumLevel: minimumLevel) { record in
            FileHandle.standardOutput.write(Data(record.line.utf8))
        }
    }

    #if canImport(os)
        /// Writes to unified logging (`os.Logger`): subsystem `subsystem`, category the backend's
        /// id (or `client`). Debug lines are `.debug`, info `.info`, warnings `.default`, errors
        /// `.error`. Messages are already redacted, so they are logged as public.
        public static func unifiedLogging(subsystem: String = "dev.linkrelay", minimumLevel: Level = .warning) -> LogSink {
            LogSink(minimumLevel: minimumLevel) { record in
                let logger = Logger(subsystem: subsystem, category: record.backend?.rawValue ?? "client")
                let type: OSLogType =
                    switch record.level {
                    case .debug: .debug
                    case .info: .info
                    case .warning: .default
                    case .error: .error
                    }
                logger.log(level: type, "\(record.message, privacy: .public)")
            }
        }
    #endif

    func accepts(_ level: Level) -> Bool {
        write != nil && level >= minimumLevel
    }

    func emit(_ record: Record) {
        write?(record)
    }
}

/// The logger the client and backends write through: a sink plus the secrets to redact.
public struct LinkRelayLogger: Sendable {
    let sink: LogSink
    let redactor: Redactor
    let backend: BackendID?

    /// A logger writing to `sink`, redacting `secrets`.
    public init(sink: LogSink, secrets: [String] = [], backend: BackendID? = nil) {
        self.sink = sink
        self.redactor = Redactor(secrets: secrets)
        self.backend = backend
    }

    /// A logger that writes nothing.
    public static let silent = LinkRelayLogger(sink: .silent)

    /// The most UTF-8 bytes of a message that reach the sink; a longer one (a hostile URL, a
    /// provider's long error) is cut there, after redaction, with its length noted.
    public static let maximumMessageBytes = 4_096

    /// Writes a line; the message is built only when the sink accepts the level. It is redacted,
    /// then cut at ``maximumMessageBytes``.
    public func log(_ level: LogSink.Level, _ message: @autoclosure () -> String) {
        guard sink.accepts(level) else { return }
        let redacted = Self.bounded(redactor.redact(message()))
        sink.emit(LogSink.Record(level: level, message: redacted, backend: backend))
    }

    /// `message`, cut at ``maximumMessageBytes`` on a character boundary, with its length noted.
    static func bounded(_ message: String) -> String {
        let utf8 = message.utf8
        guard utf8.count > maximumMessageBytes else { return message }
        var end = utf8.index(utf8.startIndex, offsetBy: maximumMessageBytes)
        // Back to the start of a scalar: continuation bytes are 0b10xxxxxx.
        while end > utf8.startIndex, utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        let kept = String(decoding: utf8[..<end], as: UTF8.self)
        return kept + "… (\(utf8.count) bytes in all)"
    }

    /// Writes a debug line.
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    /// Writes an info line.
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    /// Writes a warning line.
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    /// Writes an error line.
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
