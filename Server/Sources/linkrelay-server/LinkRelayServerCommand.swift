import ArgumentParser
import Foundation
import Hummingbird
import LinkRelayServer
import Logging

/// `linkrelay-server`: the self-hostable backend that speaks LinkForty's SDK protocol.
@main
struct LinkRelayServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "linkrelay-server",
        abstract: "The LinkRelay Server: links, deferred matches and events, on SQLite or PostgreSQL.",
        subcommands: [Serve.self, Migrate.self, Keys.self, Stats.self],
        defaultSubcommand: Serve.self)
}

struct DatabaseOption: ParsableArguments {
    @Option(name: .long, help: "sqlite:PATH or postgres://user:password@host:port/database.")
    var database = "sqlite:linkrelay.sqlite"

    func location() throws -> DatabaseLocation {
        guard let location = DatabaseLocation(database) else {
            throw ValidationError("--database takes sqlite:PATH or postgres://user:password@host:port/database.")
        }
        return location
    }

    /// The store, migrated to this server's schema.
    func openStore(logger: Logger) async throws -> any ServerStore {
        let store = try await location().open(logger: logger)
        let applied = try await store.migrate()
        if !applied.isEmpty { logger.info("Applied schema versions \(applied.map(String.init).joined(separator: ", ")).") }
        return store
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Runs the server (the default).")

    @OptionGroup var database: DatabaseOption
    @Option(name: .long, help: "The address to listen on.") var host = "127.0.0.1"
    @Option(name: .long, help: "The port; 0 for any free port.") var port = 8080
    @Flag(name: .long, help: "Take the client's address from X-Forwarded-For, and the origin from X-Forwarded-Proto/-Host (behind your own proxy).")
    var trustProxy = false
    @Option(name: .long, help: "The origin share links are made on (https://go.acme.app); default: each request's own.")
    var publicURL: String?
    @Option(name: .long, help: "Distinct devices in one network from which its address weighs half in the deferred match (at least 2).")
    var sharedNetworkDevices = 20
    @Option(name: .long, help: "Hours after a click within which a fingerprint may match it (1…2160; the link's shorter window still applies; 2160 behaves as LinkForty Core).")
    var fingerprintWindowHours = 24
    @Flag(name: .long, help: "Let private and loopback addresses match (trying deferred links on one machine or a LAN; never in production).")
    var matchPrivateNetworks = false
    @Flag(name: .long, help: "Keep events of installs another server made (moving an app from LinkForty): the install is adopted, unattributed.")
    var adoptUnknownInstalls = false
    @Option(name: .long, help: "Days clicks are kept (at least 90, the longest attribution window); 0 keeps them forever.")
    var keepClicksDays = 90
    @Option(name: .long, help: "Seconds a connection may stay idle before it is closed (1…3600).")
    var idleTimeout = 30

    func validate() throws {
        if let publicURL {
            guard let url = URL(string: publicURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ValidationError("--public-url takes an absolute http or https URL, such as https://go.acme.app.")
            }
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port takes 0…65535.") }
        guard sharedNetworkDevices >= 2 else { throw ValidationError("--shared-network-devices takes 2 or more.") }
        guard (1...2160).contains(fingerprintWindowHours) else { throw ValidationError("--fingerprint-window-hours takes 1…2160.") }
        guard (1...3600).contains(idleTimeout) else { throw ValidationError("--idle-timeout takes 1…3600 seconds.") }
        guard keepClicksDays == 0 || (90...36_500).contains(keepClicksDays) else {
            throw ValidationError("--keep-clicks-days takes 0 (forever) or 90…36500: a click younger than 90 days may still match an install.")
        }
    }

    func run() async throws {
        var logger = Logger(label: "linkrelay.server")
        logger.logLevel = .info
        let location = try database.location()
        let store = try await database.openStore(logger: logger)
        switch try await Bootstrap.run(store: store, providedKey: ProcessInfo.processInfo.environment["LINKRELAY_ADMIN_KEY"], at: Date()) {
        case .alreadySetUp:
            break
        case .created(let project, let key, let secret):
            if let secret {
                say("First start: made project \(project.id) and its admin key (shown once, store it now):\n  \(secret)")
            } else {
                say("First start: made project \(project.id) with the admin key from LINKRELAY_ADMIN_KEY (\(key.prefix)…).")
            }
        }
        let configuration = ServerConfiguration(
            host: host, port: port, trustProxy: trustProxy, publicBaseURL: publicURL.flatMap(URL.init(string:)),
            matcher: DeferredMatcher(sharedNetworkDevices: sharedNetworkDevices, fingerprintWindowHours: fingerprintWindowHours), matchPrivateNetworks: matchPrivateNetworks,
            adoptUnknownInstalls: adoptUnknownInstalls, clickRetention: keepClicksDays == 0 ? nil : TimeInterval(keepClicksDays) * 86_400,
            idleTimeout: .seconds(idleTimeout))
        if matchPrivateNetworks { logger.warning("--match-private-networks: private and loopback addresses match. Never use it in production.") }
        let app = ServerApplication.application(store: store, configuration: configuration, logger: logger) { channel in
            say("LinkRelay Server listening on http://\(host):\(channel.localAddress?.port ?? port) (\(location))")
        }
        try await app.runService()
        try await store.close()
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Brings the database's schema up to date, then exits.")

    @OptionGroup var database: DatabaseOption

    func run() async throws {
        let store = try await database.location().open(logger: Logger(label: "linkrelay.server"))
        let applied = try await store.migrate()
        print(applied.isEmpty ? "The schema is up to date (version \(Migration.latestVersion))." : "Applied versions \(applied.map(String.init).joined(separator: ", ")).")
        try await store.close()
    }
}

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Prints how many projects, links, clicks, installs and events the database holds.")

    @OptionGroup var database: DatabaseOption
    @Flag(name: .long, help: "As JSON.") var json = false

    func run() async throws {
        let store = try await database.openStore(logger: Logger(label: "linkrelay.server"))
        let counts = try await store.counts()
        try await store.close()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(counts), as: UTF8.self))
        } else {
            print("projects \(counts.projects), links \(counts.links), clicks \(counts.clicks), installs \(counts.installs), events \(counts.events)")
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
        @Option(help: "A name for people.") var name = "key"
        @Option(help: "The project; default the first.") var project: String?

        func run() async throws {
            let store = try await database.openStore(logger: Logger(label: "linkrelay.server"))
            let first = try await store.projects().first?.id
            guard let projectID = project ?? first else {
                try await store.close()
                throw ValidationError("There is no project yet: start the server once (it makes one).")
            }
            let issued = APIKeys.issue(project: projectID, scope: scope, name: name, at: Date())
            try await store.insertKey(issued.record)
            try await store.close()
            print("\(issued.record.id) \(scope.rawValue) \(name) (shown once, store it now):\n  \(issued.secret)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists a project's keys (prefixes only).")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The project; default the first.") var project: String?

        func run() async throws {
            let store = try await database.openStore(logger: Logger(label: "linkrelay.server"))
            let first = try await store.projects().first?.id
            guard let projectID = project ?? first else {
                try await store.close()
                return
            }
            for key in try await store.keys(project: projectID) {
                print("\(key.id)  \(key.prefix)…  \(key.scope.rawValue)  \(key.name)\(key.revokedAt == nil ? "" : "  revoked")")
            }
            try await store.close()
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revokes a key at once.")
        @OptionGroup var database: DatabaseOption
        @Argument(help: "The key's id (key_…).") var id: String

        func run() async throws {
            let store = try await database.openStore(logger: Logger(label: "linkrelay.server"))
            let found = try await store.revokeKey(id: id, at: Date())
            try await store.close()
            guard found else { throw ValidationError("No key \(id).") }
            print("Revoked \(id).")
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
