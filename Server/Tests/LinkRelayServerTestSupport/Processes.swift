import Foundation
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import Synchronization
import Testing

enum OpenFileLimitForTests {
    #if os(Linux)
        static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        static let resource = RLIMIT_NOFILE
    #endif
}

/// Plain sockets to a server on loopback, for what an HTTP client library hides (idle
/// connections held open by the hundred).
enum RawHTTP {
    static func connect(port: Int) -> Int32? {
        #if os(Linux)
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socket >= 0 else { return nil }
        // A connect to a full backlog, or an answer that never comes, fails in 5 s rather than
        // blocking the test for minutes.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if os(Linux)
                    Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #else
                    Darwin.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #endif
            }
        }
        guard connected == 0 else {
            close(socket)
            return nil
        }
        return socket
    }

    /// `GET path` on a new connection; the answer (up to 1 MiB), or "" on failure.
    static func get(_ path: String, port: Int, authorization: String? = nil) -> String {
        guard let socket = connect(port: port) else { return "" }
        defer { close(socket) }
        let header = authorization.map { "Authorization: \($0)\r\n" } ?? ""
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(header)Connection: close\r\n\r\n".utf8)
        guard send(socket, request, request.count, 0) == request.count else { return "" }
        // Until the server closes the connection (at most 1 MiB).
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while answer.count < 1 << 20 {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}

/// A folder of its own for one test, removed after.
final class Scratch {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-startup-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The `linkrelay-server` executable this package built, beside the test bundle.
enum Binary {
    struct Result {
        var status: Int32
        var output: String
        var error: String

        /// Standard error's lines, without log lines a test did not ask about.
        var errorLines: [String] { error.split(separator: "\n").map(String.init) }
    }

    static func url() throws -> URL {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // The test runner is `…/debug/LinkRelayServerPackageTests.xctest` (a file on Linux, a
        // bundle on macOS, whose executable is three levels further in).
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("linkrelay-server")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        throw StartupError("linkrelay-server is not built beside the tests (swift build --package-path Server builds it)")
    }

    /// Runs the binary to its end.
    static func run(_ arguments: [String], environment: [String: String] = [:], in folder: String) async throws -> Result {
        let process = try RunningServer(arguments, environment: environment, in: folder)
        let status = await process.exit()
        return Result(status: status, output: process.output, error: process.error)
    }

    /// Starts the binary (behind `launcher`, such as `prlimit …`, when given); the caller stops it.
    static func start(
        _ arguments: [String], environment: [String: String] = [:], in folder: String, launcher: [String] = []
    ) async throws -> RunningServer {
        try RunningServer(arguments, environment: environment, in: folder, launcher: launcher)
    }
}

/// A `linkrelay-server` process and what it has printed so far.
final class RunningServer: Sendable {
    private let process: ChildProcess
    /// What the process printed, and how many of its two pipes are still open.
    /// The bytes, decoded when read: a character the process wrote across two reads (ArgumentParser
    /// writes its message in pieces) is decoded whole.
    private final class Printed: Sendable {
        let state = Mutex<(output: [UInt8], error: [UInt8], open: Int)>(([], [], 2))
    }

    private let printed = Printed()
    private let changes: AsyncStream<Void>
    private let exitStatus: Task<Int32, Never>

    init(_ arguments: [String], environment: [String: String], in folder: String, launcher: [String] = []) throws {
        let executable: URL
        let all: [String]
        if let tool = launcher.first {
            executable = URL(fileURLWithPath: tool)
            all = Array(launcher.dropFirst()) + [try Binary.url().path] + arguments
        } else {
            executable = try Binary.url()
            all = arguments
        }
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "LINKRELAY_ADMIN_KEY")
        for (name, value) in environment { merged[name] = value }
        let (changes, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.changes = changes
        let process = try ChildProcess(
            executable, all, environment: merged, directory: URL(fileURLWithPath: folder), output: .pipe, error: .pipe)
        self.process = process
        let printed = self.printed
        // A thread of its own per pipe, reading until the end (blocking reads stay off the
        // tasks' threads; Foundation's readabilityHandler on Linux crashed here once).
        for (handle, isError) in [(process.output, false), (process.error, true)] {
            guard let handle else { continue }
            Thread.detachNewThread {
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    printed.state.withLock { isError ? $0.error.append(contentsOf: data) : $0.output.append(contentsOf: data) }
                    continuation.yield()
                }
                if printed.state.withLock({
                    $0.open -= 1; return $0.open
                }) == 0 {
                    continuation.finish()
                }
            }
        }
        let drained = changes
        exitStatus = Task {
            let status = await process.exit().status
            _ = drained
            return status
        }
    }

    var output: String { String(decoding: printed.state.withLock { $0.output }, as: UTF8.self) }
    var error: String { String(decoding: printed.state.withLock { $0.error }, as: UTF8.self) }

    /// The port from `LinkRelay Server listening on http://host:PORT`, once printed.
    /// - Throws: when the process ends without printing it.
    func port() async throws -> Int {
        try await printed { output, _ in
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("LinkRelay Server listening on http://") }),
                let port = line.split(separator: ":").dropFirst(2).first?.prefix(while: \.isNumber)
            else { return nil }
            return Int(port)
        }
    }

    /// What `found` reads in the output and the error printed so far, once it reads something.
    /// - Throws: when the process ends before.
    func printed<T>(_ found: (_ output: String, _ error: String) -> T?) async throws -> T {
        if let value = found(output, error) { return value }
        for await _ in changes {
            if let value = found(output, error) { return value }
        }
        throw StartupError("the server ended before printing what was expected: \(error)")
    }

    /// Sends SIGTERM and waits for the exit status.
    func stop() async -> Int32 {
        process.terminate()
        return await exit()
    }

    /// Waits for the process to end and for its pipes to be read to their end.
    func exit() async -> Int32 {
        let status = await exitStatus.value
        for await _ in changes {}
        return status
    }
}
