import Foundation
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `linkrelay-server` binary as an operator starts it: every failure before serving is one
/// line on standard error and exit status 1, with nothing made that should not be, and what is
/// ignored is said.
@Suite("Starting the server")
struct StartupTests {
    @Test("a hand-made LINKRELAY_ADMIN_KEY: one line saying the shape a key has, exit 1, no database made, the value never printed")
    func handMadeKey() async throws {
        let folder = try Scratch()
        let result = try await Binary.run(["serve", "--port", "0"], environment: ["LINKRELAY_ADMIN_KEY": "mysecret123"], in: folder.path)
        #expect(result.status == 1)
        #expect(
            result.errorLines == [
                "linkrelay-server: LINKRELAY_ADMIN_KEY is not an admin key: it must look like lr_admin_<8 hex>_<32 letters or digits> (make one with `linkrelay-server keys generate`)."
            ])
        #expect(!result.output.contains("mysecret123") && !result.error.contains("mysecret123"))
        #expect(try folder.files() == [])
    }

    @Test(
        "the binary copied without its resources folder: one line naming the folder, exit 1, nothing made, with and without the dashboard")
    func withoutResources() async throws {
        let folder = try Scratch()
        let copy = URL(fileURLWithPath: folder.path).appendingPathComponent("linkrelay-server")
        try FileManager.default.copyItem(at: try Binary.url(), to: copy)
        for flags in [["--no-dashboard"], []] {
            let process = try ChildProcess(
                copy, ["serve", "--port", "0", "--database", "sqlite:links.sqlite"] + flags, directory: URL(fileURLWithPath: folder.path),
                error: .pipe)
            let printed = String(decoding: process.error?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            let ending = process.waitUntilExit()
            // Killed by a trap before: SIGILL, "could not load resource bundle".
            #expect(!ending.signaled)
            #expect(ending.status == 1)
            #expect(
                printed.split(separator: "\n").map(String.init) == [
                    "linkrelay-server: The server's resources are missing: \(copy.deletingLastPathComponent().path)/\(ServerResources.api.folderName) (openapi.json, the redirect's pages) must be beside the binary; an install is the binary and its LinkRelayServer_*.resources folders."
                ])
            #expect(try folder.files() == ["linkrelay-server"])
        }
    }

    @Test("the resources are found beside the binary, and a folder without them is named")
    func locatingResources() throws {
        for resources in ServerResources.all {
            #expect((try? resources.folder.get()) != nil)
            let empty = try Scratch()
            guard case .failure(let error) = resources.locate(in: [URL(fileURLWithPath: empty.path)]) else {
                Issue.record("found \(resources.target)'s resources in an empty folder")
                return
            }
            #expect(error.description.contains(empty.path + "/" + resources.folderName))
        }
    }

    @Test("a port already in use: one line naming it, exit 1, no project or key made")
    func portInUse() async throws {
        let folder = try Scratch()
        let first = try await Binary.start(["serve", "--port", "0", "--database", "sqlite:one.sqlite"], in: folder.path)
        let port = try await first.port()
        let result = try await Binary.run(["serve", "--port", String(port), "--database", "sqlite:two.sqlite"], in: folder.path)
        #expect(result.status == 1)
        #expect(
            result.errorLines == [
                "linkrelay-server: Cannot listen on 127.0.0.1:\(port): the address is already in use (another server? choose another with --port)."
            ])
        #expect(!(try folder.files().contains("two.sqlite")), "nothing made before the port was known to be free")
        #expect(await first.stop() == 0)
    }

    @Test("two servers on one SQLite file: the second refuses to start, and the first serves on")
    func oneProcessPerFile() async throws {
        let folder = try Scratch()
        let first = try await Binary.start(["serve", "--port", "0", "--database", "sqlite:shared.sqlite"], in: folder.path)
        _ = try await first.port()
        let second = try await Binary.run(["serve", "--port", "0", "--database", "sqlite:shared.sqlite"], in: folder.path)
        #expect(second.status == 1)
        #expect(
            second.errorLines == [
                "linkrelay-server: Another linkrelay-server is serving shared.sqlite: one process per SQLite file (use PostgreSQL for several)."
            ])
        // The CLI's other commands still run beside it.
        let stats = try await Binary.run(["stats", "--database", "sqlite:shared.sqlite"], in: folder.path)
        #expect(stats.status == 0 && stats.output.hasPrefix("projects 1,"))
        #expect(await first.stop() == 0)
    }

    @Test(
        "issue 63, 13: a database deleted after it was set up is not made again empty: the start refuses in one line naming the marker, and makes nothing"
    )
    func deletedDatabase() async throws {
        let folder = try Scratch()
        let first = try await Binary.start(["serve", "--port", "0", "--no-access-log"], in: folder.path)
        _ = try await first.port()
        #expect(await first.stop() == 0)
        #expect(try folder.files().contains("linkrelay.sqlite.setup"))
        for name in try folder.files() where name.hasPrefix("linkrelay.sqlite") && name != "linkrelay.sqlite.setup" {
            try FileManager.default.removeItem(atPath: folder.path + "/" + name)
        }
        let again = try await Binary.run(["serve", "--port", "0"], in: folder.path)
        #expect(again.status == 1)
        #expect(
            again.errorLines == [
                "linkrelay-server: The database linkrelay.sqlite is missing, but linkrelay.sqlite.setup says one was set up here: restore it from a backup (Server/scripts/restore), or delete that file to start an empty database."
            ])
        #expect(try folder.files() == ["linkrelay.sqlite.setup"], "nothing made")
        try FileManager.default.removeItem(atPath: folder.path + "/linkrelay.sqlite.setup")
        let fresh = try await Binary.start(["serve", "--port", "0", "--no-access-log"], in: folder.path)
        _ = try await fresh.port()
        #expect(await fresh.stop() == 0)
        #expect(try folder.files().contains("linkrelay.sqlite"))
    }

    @Test("a database whose folder does not exist says so; keys, links and stats never make an empty database where they run")
    func missingDatabase() async throws {
        let folder = try Scratch()
        let serve = try await Binary.run(["serve", "--port", "0", "--database", "sqlite:nowhere/db.sqlite"], in: folder.path)
        #expect(serve.status == 1)
        #expect(
            serve.errorLines == [
                "linkrelay-server: Cannot open the SQLite database at nowhere/db.sqlite: the folder \(folder.path)/nowhere does not exist."
            ])
        for command in [
            ["keys", "create"], ["keys", "list"], ["stats"], ["keys", "revoke", "key_x"], ["links", "list"], ["stats", "--link", "x"],
        ] {
            let result = try await Binary.run(command, in: folder.path)
            #expect(result.status == 1, "\(command)")
            #expect(result.error.contains("There is no database at linkrelay.sqlite"), "\(command): \(result.error)")
        }
        #expect(try folder.files() == [])
    }

    @Test("LINKRELAY_ADMIN_KEY on a database set up before: said at start, as it is not one of its keys; a known one is not")
    func ignoredKey() async throws {
        let folder = try Scratch()
        let setUp = try await Binary.start(["serve", "--port", "0"], in: folder.path)
        _ = try await setUp.port()
        #expect(await setUp.stop() == 0)
        let generated = try await Binary.run(["keys", "generate"], in: folder.path).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let unknown = try await Binary.start(["serve", "--port", "0"], environment: ["LINKRELAY_ADMIN_KEY": generated], in: folder.path)
        _ = try await unknown.port()
        #expect(await unknown.stop() == 0)
        #expect(unknown.error.contains("LINKRELAY_ADMIN_KEY is set but is not an admin key of this database"))
        #expect(!unknown.error.contains(generated) && !unknown.output.contains(generated))

        let created = try await Binary.run(["keys", "create", "--scope", "admin"], in: folder.path)
        let known = created.output.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let knownRun = try await Binary.start(["serve", "--port", "0"], environment: ["LINKRELAY_ADMIN_KEY": known], in: folder.path)
        _ = try await knownRun.port()
        #expect(await knownRun.stop() == 0)
        #expect(!knownRun.error.contains("LINKRELAY_ADMIN_KEY"))
    }

    @Test("keys list has a header; keys revoke takes the id, the prefix keys list shows, or the whole key")
    func keysCommands() async throws {
        let folder = try Scratch()
        let setUp = try await Binary.start(["serve", "--port", "0"], in: folder.path)
        _ = try await setUp.port()
        #expect(await setUp.stop() == 0)
        var secrets: [String] = []
        for name in ["a", "b", "c"] {
            let created = try await Binary.run(["keys", "create", "--name", name], in: folder.path)
            secrets.append(created.output.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "")
        }
        let list = try await Binary.run(["keys", "list"], in: folder.path).output.split(separator: "\n").map(String.init)
        #expect(
            list.first?.split(separator: " ", omittingEmptySubsequences: true) == ["ID", "PREFIX", "SCOPE", "STATUS", "CREATED", "NAME"])
        #expect(list.count == 5, "the header, the first start's admin key and three SDK keys")
        guard let rowA = list.first(where: { $0.hasSuffix("  a") }) else {
            Issue.record("no row for a: \(list)")
            return
        }
        let columns = rowA.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        for (index, argument) in [columns[0], columns[1], secrets[2]].enumerated() {
            let revoked = try await Binary.run(["keys", "revoke", argument], in: folder.path)
            #expect(revoked.status == 0, "\(argument): \(revoked.error)")
            #expect(!revoked.output.contains(secrets[2]) && !revoked.error.contains(secrets[2]))
            _ = index
        }
        let after = try await Binary.run(["keys", "list"], in: folder.path).output
        #expect(after.split(separator: "\n").filter { $0.contains("revoked") }.count == 2, "a (twice) and c")
        let unknown = try await Binary.run(["keys", "revoke", "lr_sdk_00000000"], in: folder.path)
        #expect(
            unknown.status == 1
                && unknown.errorLines == [
                    "linkrelay-server: No key lr_sdk_00000000 in this database (`linkrelay-server keys list` shows them)."
                ])
    }
}

extension StartupTests {
    @Test("at a soft open-file limit of 256, 400 idle connections leave health answering: the server raises its limit at start")
    func openFiles() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit") else {
            print("skipped: no prlimit (util-linux) here; OpenFileLimit's own test covers the arithmetic")
            return
        }
        let folder = try Scratch()
        let server = try await Binary.start(
            ["serve", "--port", "0", "--no-access-log"], in: folder.path, launcher: ["/usr/bin/prlimit", "--nofile=256:4096"])
        let port = try await server.port()
        var idle: [Int32] = []
        defer { for socket in idle { close(socket) } }
        for _ in 0..<400 {
            guard let socket = RawHTTP.connect(port: port) else { break }
            idle.append(socket)
        }
        #expect(idle.count == 400)
        let answer = RawHTTP.get("/api/sdk/v1/health", port: port)
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
        #expect(await server.stop() == 0)
        #expect(OpenFileLimit.connectionLimit(for: 1024) == 896 && OpenFileLimit.connectionLimit(for: 100) == 16)
    }
}

extension StartupTests {
    @Test(
        "under a hard limit of 1,024 open files, 1,000 idle connections to the metrics port and 1,100 to the API's leave health and metrics answering, and the server exits cleanly"
    )
    func hardLimit() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit") else {
            print("skipped: no prlimit (util-linux) here; ConnectionBudgetTests cover the choice of connection")
            return
        }
        // This process holds 2,100 sockets.
        var own = rlimit()
        getrlimit(OpenFileLimitForTests.resource, &own)
        if own.rlim_cur < 4096, own.rlim_max >= 4096 {
            own.rlim_cur = 4096
            setrlimit(OpenFileLimitForTests.resource, &own)
        }
        let folder = try Scratch()
        let server = try await Binary.start(
            ["serve", "--port", "0", "--metrics-port", "0", "--no-access-log"], in: folder.path,
            launcher: ["/usr/bin/prlimit", "--nofile=1024:1024"])
        let port = try await server.port()
        let metricsPort = try await server.printed { output, error in
            (output + error).split(separator: "\n").first(where: { $0.contains("Metrics at http://") })
                .flatMap { $0.split(separator: ":").last?.prefix(while: \.isNumber) }.flatMap { Int($0) }
        }
        var idle: [Int32] = []
        defer { for socket in idle { close(socket) } }
        for (count, target) in [(1000, metricsPort), (1100, port)] {
            for _ in 0..<count {
                guard let socket = RawHTTP.connect(port: target) else { break }
                idle.append(socket)
            }
        }
        #expect(idle.count == 2100)
        for attempt in 1...5 {
            let health = RawHTTP.get("/api/sdk/v1/health", port: port)
            #expect(health.hasPrefix("HTTP/1.1 200"), "health, attempt \(attempt): \(health.prefix(200))")
            let metrics = RawHTTP.get("/metrics", port: metricsPort)
            #expect(metrics.hasPrefix("HTTP/1.1 200"), "metrics, attempt \(attempt): \(metrics.prefix(200))")
        }
        #expect(await server.stop() == 0, "\(server.error.suffix(2000))")
        #expect(OpenFileLimit.connectionLimit(for: 1024, metrics: true) == 880)
    }
}

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
