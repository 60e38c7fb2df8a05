import ArgumentParser
import Foundation
import Hummingbird
@_spi(Backend) import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import Logging

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Runs the server (the default).")

    @OptionGroup var database: DatabaseOption
    // Each flag is declared in ServeSettings (its name, the values it takes, its default, its
    // environment variable, its help); a flag left out is read from the environment, then the
    // default (`settings()`).
    @Option(name: .customLong(S.host.name), help: S.host.argumentHelp) var host: String?
    @Option(name: .customLong(S.port.name), help: S.port.argumentHelp) var port: Int?
    @Flag(name: .customLong(S.trustProxy.name), inversion: .prefixedNo, help: S.trustProxy.argumentHelp) var trustProxy: Bool?
    @Option(name: .customLong(S.trustedProxy.name), help: S.trustedProxy.argumentHelp) var trustedProxy: [String] = []
    @Option(name: .customLong(S.publicURL.name), help: S.publicURL.argumentHelp) var publicURL: String?
    @Option(name: .customLong(S.sharedNetworkDevices.name), help: S.sharedNetworkDevices.argumentHelp) var sharedNetworkDevices: Int?
    @Option(name: .customLong(S.fingerprintWindowHours.name), help: S.fingerprintWindowHours.argumentHelp)
    var fingerprintWindowHours: Int?
    @Flag(name: .customLong(S.addressFirst.name), inversion: .prefixedNo, help: S.addressFirst.argumentHelp) var addressFirst: Bool?
    @Flag(name: .customLong(S.ipv4NetworkMatch.name), inversion: .prefixedNo, help: S.ipv4NetworkMatch.argumentHelp)
    var ipv4NetworkMatch: Bool?
    @Option(name: .customLong(S.sprayerDevices.name), help: S.sprayerDevices.argumentHelp) var sprayerDevices: Int?
    @Flag(name: .customLong(S.matchPrivateNetworks.name), inversion: .prefixedNo, help: S.matchPrivateNetworks.argumentHelp)
    var matchPrivateNetworks: Bool?
    @Flag(name: .customLong(S.adoptUnknownInstalls.name), inversion: .prefixedNo, help: S.adoptUnknownInstalls.argumentHelp)
    var adoptUnknownInstalls: Bool?
    @Option(name: .customLong(S.keepClicksDays.name), help: S.keepClicksDays.argumentHelp) var keepClicksDays: Int?
    @Option(name: .customLong(S.idleTimeout.name), help: S.idleTimeout.argumentHelp) var idleTimeout: Int?
    @Option(name: .customLong(S.clicksPerAddress.name), help: S.clicksPerAddress.argumentHelp) var clicksPerAddress: Int?
    @Option(name: .customLong(S.bodyTimeout.name), help: S.bodyTimeout.argumentHelp) var bodyTimeout: Int?
    @Option(name: .customLong(S.maxConnections.name), help: S.maxConnections.argumentHelp) var maxConnections: Int?
    @Option(name: .customLong(S.linkCacheSeconds.name), help: S.linkCacheSeconds.argumentHelp) var linkCacheSeconds: Int?
    @Flag(name: .customLong(S.accessLog.name), inversion: .prefixedNo, help: S.accessLog.argumentHelp) var accessLog: Bool?
    @Option(name: .customLong(S.countryHeader.name), help: S.countryHeader.argumentHelp) var countryHeader: String?
    @Flag(name: .customLong(S.dashboard.name), inversion: .prefixedNo, help: S.dashboard.argumentHelp) var dashboard: Bool?
    @Option(name: .customLong(S.metricsPort.name), help: S.metricsPort.argumentHelp) var metricsPort: Int?
    @Option(name: .customLong(S.metricsHost.name), help: S.metricsHost.argumentHelp) var metricsHost: String?
    @Option(name: .customLong(S.logFormat.name), help: S.logFormat.argumentHelp) var logFormat: String?

    /// Where a setting left off the command line is looked for.
    var environment: [String: String] { ProcessInfo.processInfo.environment }

    func validate() throws {
        _ = try settings()
    }

    /// The settings in force: each flag given, else its environment variable, else its default;
    /// each checked by its declaration, then against the others.
    /// - Throws: `ValidationError` naming the flag or the variable and what it takes.
    func settings() throws -> Settings {
        do {
            return try Settings(self, reader: SettingReader(environment: environment))
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let settings = try settings()
        if settings.logFormat == .json { LoggingSystem.bootstrap { JSONLogHandler(label: $0) } }
        var logger = Logger(label: "linkrelay.server")
        logger.logLevel = .info
        try await failingInOneLine {
            // An install is the binary and its resources folders: without one, no start.
            for resources in ServerResources.all { _ = try resources.folder.get() }
            _ = try RedirectPages.shipped.get()
            let (providedKey, source) = try Self.providedKey(ProcessInfo.processInfo.environment)
            // Everything that can be checked before a file is made or a row written is.
            if let providedKey {
                try Bootstrap.validate(
                    providedKey, from: source == "LINKRELAY_ADMIN_KEY" ? source : "The key in the file LINKRELAY_ADMIN_KEY_FILE names")
            }
            let location = try database.location()
            if settings.port != 0 { try await ListenCheck.ensureAvailable(host: settings.host, port: settings.port) }
            // The store is a service of the application's group: it opens here, runs with the
            // group and closes after the HTTP server and the retention job.
            let store = try await location.open(create: true, serving: true, logger: logger)
            try await serve(
                settings, store: store, location: location, providedKey: providedKey, keySource: source, logger: logger)
        }
    }

    /// Locks an SQLite file (one serving process per file) and serves until SIGTERM or SIGINT:
    /// the store, the retention job and the HTTP server are the services of one group; before
    /// the first request the schema is migrated and the first start's project and key are made.
    /// The first start's admin key: `LINKRELAY_ADMIN_KEY`, or the file `LINKRELAY_ADMIN_KEY_FILE`
    /// names (a systemd credential, a container's secret; its last newline dropped), and which
    /// variable gave it. Both set is an error, as is a file that cannot be read.
    static func providedKey(_ environment: [String: String]) throws -> (key: String?, source: String) {
        let direct = environment["LINKRELAY_ADMIN_KEY"]
        guard let path = environment["LINKRELAY_ADMIN_KEY_FILE"] else { return (direct, "LINKRELAY_ADMIN_KEY") }
        guard direct == nil else { throw StartupError("LINKRELAY_ADMIN_KEY and LINKRELAY_ADMIN_KEY_FILE are both set: set one.") }
        // A key is 58 bytes; a file far larger is not one (and is not read whole).
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.read(upToCount: 4096) ?? Data() else {
            throw StartupError("LINKRELAY_ADMIN_KEY_FILE names \(path), which cannot be read.")
        }
        try? handle.close()
        var text = String(decoding: data, as: UTF8.self)
        while text.last == "\n" || text.last == "\r" { text.removeLast() }
        return (text, "LINKRELAY_ADMIN_KEY_FILE")
    }

    private func serve(
        _ settings: Settings, store: any ServerStore, location: DatabaseLocation, providedKey: String?, keySource: String,
        logger: Logger
    ) async throws {
        let lock: DatabaseLock?
        if case .sqlite(let path) = location, path != ":memory:" { lock = try DatabaseLock(sqlitePath: path) } else { lock = nil }
        defer { withExtendedLifetime(lock) {} }
        let fileLimit = OpenFileLimit.raise()
        let configuration = settings.configuration(fileLimit: fileLimit)
        if configuration.dashboard {
            logger.info("The dashboard is at /dashboard (sign in with an admin key).")
        } else if settings.dashboard == nil {
            logger.info("The dashboard is off: the server listens on \(settings.host), not loopback. --dashboard turns it on.")
        }
        if settings.matchPrivateNetworks {
            logger.warning("--match-private-networks: private and loopback addresses match. Never use it in production.")
        }
        let linkCache = Duration.seconds(settings.linkCacheSeconds)
        let (host, port) = (settings.host, settings.port)
        let app = ServerApplication.application(
            store: store, configuration: configuration, logger: logger, runningStore: true,
            setUp: { try await Self.setUp(store, providedKey: providedKey, keySource: keySource, linkCache: linkCache, logger: logger) }
        ) { channel in
            say("LinkRelay Server listening on http://\(host):\(channel.localAddress?.port ?? port) (\(location))")
        }
        do {
            try await app.runService()
        } catch {
            // The port taken between the check and the bind is said as the check says it.
            throw ListenCheck.described(error, host: host, port: port)
        }
    }

    /// Migrates, makes the first start's project and key, and checks the database takes a write.
    private static func setUp(
        _ store: any ServerStore, providedKey: String?, keySource: String, linkCache: Duration, logger: Logger
    ) async throws {
        let applied = try await store.migrate()
        store.setLinkCacheTTL(linkCache)
        if !applied.isEmpty { logger.info("Applied schema versions \(applied.map(String.init).joined(separator: ", ")).") }
        let learned = try await store.learnStoredDestinationHosts()
        if learned > 0 {
            logger.notice(
                "SDK-key links now go only to the hosts your links use (learned for \(learned) project\(learned == 1 ? "" : "s")): review them with GET /api/destination-hosts or the dashboard's Keys page."
            )
        }
        switch try await Bootstrap.run(store: store, providedKey: providedKey, at: Date()) {
        case .alreadySetUp(providedKeyIsKnown: false):
            logger.warning(
                "LINKRELAY_ADMIN_KEY is set but is not an admin key of this database: the variable is read only on a first start, and this database was set up before. Requests with it get 401; make an admin key with `linkrelay-server keys create --scope admin`."
            )
        case .alreadySetUp:
            break
        case .created(let project, let key, let secret):
            if let secret {
                say("First start: made project \(project.id) and its admin key (shown once, store it now):\n  \(secret)")
            } else {
                say("First start: made project \(project.id) with the admin key from \(keySource) (\(key.prefix)…).")
            }
        }
        if let problem = await store.writeProblem(at: Date()) {
            throw StartupError("The database cannot be written (\(problem)); the server does not serve what it cannot record.")
        }
    }
}
