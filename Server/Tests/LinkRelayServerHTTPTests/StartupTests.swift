import Foundation
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

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
