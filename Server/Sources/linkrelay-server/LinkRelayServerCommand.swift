import ArgumentParser
import Foundation
import Hummingbird
@_spi(Backend) import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import Logging

/// `linkrelay-server`: the self-hostable backend that speaks LinkForty's SDK protocol.
@main
struct LinkRelayServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "linkrelay-server",
        abstract: "The LinkRelay Server: links, deferred matches and events, on SQLite or PostgreSQL.",
        // The SDK's version: the server and the SDK are released together, from one source.
        version: LinkRelayVersion.string,
        subcommands: [Serve.self, Migrate.self, Keys.self, Links.self, Stats.self],
        defaultSubcommand: Serve.self)
}

struct DatabaseOption: ParsableArguments {
    @Option(name: .customLong(S.database.name), help: S.database.argumentHelp) var database: String?

    /// The database `--database` names, else `LINKRELAY_DATABASE`, else `sqlite:linkrelay.sqlite`.
    func location() throws -> DatabaseLocation {
        let text = database ?? ProcessInfo.processInfo.environment[S.database.environmentVariable] ?? S.database.defaultText ?? ""
        guard let location = DatabaseLocation(text) else {
            throw ValidationError("\(S.database.flag) takes sqlite:PATH or postgres://user:password@host:port/database.")
        }
        return location
    }

    /// Runs `body` with the store, migrated to this server's schema, and closes it on every
    /// path; a failure is one line on standard error and exit status 1. `create` `false`: a
    /// missing SQLite file is an error (commands that read or change a database never make an
    /// empty one where they happen to run).
    func withStore<T>(create: Bool = false, _ body: (any ServerStore) async throws -> T) async throws -> T {
        let logger = Logger(label: "linkrelay.server")
        return try await failingInOneLine {
            try await using(try location(), create: create, logger: logger) { store in
                let applied = try await store.migrate()
                if !applied.isEmpty { logger.info("Applied schema versions \(applied.map(String.init).joined(separator: ", ")).") }
                return try await body(store)
            }
        }
    }
}

/// Runs `body` with the store at `location` running (``ServerStore/withRunning(_:)``), closed on
/// every path, so a failure leaves no connection open.
func using<T>(_ location: DatabaseLocation, create: Bool, logger: Logger, _ body: (any ServerStore) async throws -> T) async throws -> T {
    try await location.open(create: create, logger: logger).withRunning { try await body($0) }
}

/// Runs `body`; an error it throws (other than the argument parser's own) is printed as one line,
/// `linkrelay-server: <what is wrong>`, on standard error, and the command exits with status 1.
/// No backtrace, no type names: the line says what to change.
func failingInOneLine<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ValidationError {
        throw error
    } catch let error as ExitCode {
        throw error
    } catch {
        let message = String(describing: error)
        FileHandle.standardError.write(Data("linkrelay-server: \(message)\n".utf8))
        throw ExitCode.failure
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Brings the database's schema up to date, then exits.")

    @OptionGroup var database: DatabaseOption

    func run() async throws {
        let applied = try await failingInOneLine {
            try await using(try database.location(), create: true, logger: Logger(label: "linkrelay.server")) { try await $0.migrate() }
        }
        print(
            applied.isEmpty
                ? "The schema is up to date (version \(Migration.latestVersion))."
                : "Applied versions \(applied.map(String.init).joined(separator: ", ")).")
    }
}

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints how many projects, links, clicks, installs and events the database holds; with --link, one link's numbers.")

    @OptionGroup var database: DatabaseOption
    @Flag(name: .long, help: "As JSON.") var json = false
    @Option(
        name: .long,
        help: "A link (its code, template/code or id): its clicks by day, platform, country, referrer and utm_source, and its installs.")
    var link: String?
    @Option(name: .long, help: "With --link: the days counted (1…365).") var days = 30
    @Option(help: "The project; default the first.") var project: String?

    func validate() throws {
        guard (1...365).contains(days) else { throw ValidationError("--days must be from 1 to 365.") }
    }

    func run() async throws {
        if let link {
            print(
                try await database.withStore { store in
                    let found = try await LinkCommands.require(link, project: try await Links.project(project, in: store), in: store)
                    let now = Date()
                    let from = now.addingTimeInterval(-Double(days) * 86_400)
                    let clicks = try await store.clickSummary(project: found.projectID, link: found.id, from: from, to: now)
                    let installs = try await store.installSummary(project: found.projectID, link: found.id, from: from, to: now)
                    return LinkCommands.stats(found, clicks: clicks, installs: installs, days: days)
                })
            return
        }
        let counts = try await database.withStore { try await $0.counts() }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(counts), as: UTF8.self))
        } else {
            print(
                "projects \(counts.projects), links \(counts.links), clicks \(counts.clicks), installs \(counts.installs), events \(counts.events)"
            )
        }
    }
}

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Creates, lists and revokes API keys.", subcommands: [Create.self, List.self, Revoke.self, Generate.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Makes a key and prints it once.")
        @OptionGroup var database: DatabaseOption
        @Option(help: "sdk (install, resolve, events, share links) or admin (everything).") var scope: KeyScope = .sdk
        @Option(help: "A name for people (at most 100 characters).") var name = "key"
        @Option(help: "The project; default the first.") var project: String?

        func validate() throws {
            guard TextLimit.fits(name, characters: APIKeys.maxNameLength) else {
                throw ValidationError("--name takes at most \(APIKeys.maxNameLength) characters.")
            }
        }

        func run() async throws {
            let issued = try await database.withStore { store in
                let first = try await store.projects().first?.id
                guard let projectID = project ?? first else {
                    throw StartupError("There is no project yet: start the server once on this database (it makes one).")
                }
                let issued = APIKeys.issue(project: projectID, scope: scope, name: name, at: Date())
                try await store.insertKey(issued.record)
                return issued
            }
            print("\(issued.record.id) \(scope.rawValue) \(name) (shown once, store it now):\n  \(issued.secret)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists a project's keys (prefixes only, never a secret).")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The project; default the first.") var project: String?

        func run() async throws {
            let keys = try await database.withStore { store -> [APIKeyRecord] in
                let first = try await store.projects().first?.id
                guard let projectID = project ?? first else { return [] }
                return try await store.keys(project: projectID)
            }
            print(Self.table(keys))
        }

        /// The keys as a table with a header, columns aligned.
        static func table(_ keys: [APIKeyRecord]) -> String {
            let rows =
                [["ID", "PREFIX", "SCOPE", "STATUS", "CREATED", "NAME"]]
                + keys.map { key in
                    [
                        key.id, key.prefix + "…", key.scope.rawValue, key.revokedAt == nil ? "active" : "revoked",
                        key.createdAt.formatted(Date.ISO8601FormatStyle()), key.name,
                    ]
                }
            let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
            return rows.map { row in
                row.enumerated().map { column, text in
                    column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                }.joined(separator: "  ")
            }.joined(separator: "\n")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revokes a key at once.")
        @OptionGroup var database: DatabaseOption
        @Argument(help: "The key: its id (key_…), its prefix (lr_sdk_1a2b3c4d, as `keys list` shows it), or the whole key.")
        var key: String

        func run() async throws {
            let id = try await database.withStore { store -> String in
                guard let id = try await Self.id(of: key, in: store), try await store.revokeKey(id: id, at: Date()) else {
                    // Never the whole key back: its prefix at most.
                    throw StartupError(
                        "No key \(APIKeys.prefix(of: key) ?? String(key.prefix(24))) in this database (`linkrelay-server keys list` shows them)."
                    )
                }
                return id
            }
            print("Revoked \(id).")
        }

        /// The id of the key `text` names: an id, a prefix (with or without the `…` that `keys
        /// list` prints), or a whole key.
        static func id(of text: String, in store: any ServerStore) async throws -> String? {
            let trimmed = text.hasSuffix("…") ? String(text.dropLast()) : text
            if trimmed.hasPrefix("key_") { return trimmed }
            let prefix = APIKeys.prefix(of: trimmed) ?? trimmed
            return try await store.key(prefix: prefix)?.id
        }
    }

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Prints a new admin key for LINKRELAY_ADMIN_KEY; stores nothing.")

        func run() {
            print(APIKeys.issue(project: "", scope: .admin, name: "", at: Date()).secret)
        }
    }
}

extension KeyScope: ExpressibleByArgument {}

/// Writes a line to standard output at once: unbuffered, so a supervisor reading a pipe or a
/// file sees the first start's key and the listening address as they happen.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
