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
    @Option(name: .long, help: "The address to listen on.") var host = "127.0.0.1"
    @Option(name: .long, help: "The port; 0 for any free port.") var port = 8080
    @Flag(
        name: .long,
        help: "Take the client's address from X-Forwarded-For, and the origin from X-Forwarded-Proto/-Host (behind your own proxy).")
    var trustProxy = false
    @Option(
        name: .long,
        help:
            "With --trust-proxy: a network (CIDR) of proxies before the one the server is reached from (a load balancer, a CDN), whose X-Forwarded-For entries are skipped; repeatable. Default: none (the client is the entry the proxy in front appended)."
    )
    var trustedProxy: [String] = []
    @Option(name: .long, help: "The origin share links are made on (https://go.acme.app); default: each request's own.")
    var publicURL: String?
    @Option(name: .long, help: "Distinct devices in one network from which its address weighs half in the deferred match (at least 2).")
    var sharedNetworkDevices = 20
    @Option(
        name: .long,
        help:
            "Hours after a click within which a fingerprint may match it (1…2160; the link's shorter window still applies; 2160 behaves as LinkForty Core)."
    )
    var fingerprintWindowHours = 24
    @Flag(
        inversion: .prefixedNo,
        help:
            "Take a tap from the install's exact address first (a household's router), the network's score only without one; --no-address-first compares /24s alone, as LinkForty Core."
    )
    var addressFirst = true
    @Flag(
        name: .long,
        help:
            "With the address first: score an IPv4 install without a tap from its address against its /24 (off: an IPv4 /24 is an ISP's neighbours; IPv6 installs are always scored against their /64)."
    )
    var ipv4NetworkMatch = false
    @Option(
        name: .long,
        help:
            "The fewest distinct devices clicking from one address within 10 minutes that make it a sprayer, whose clicks there never attribute, when they are also 3 times the address's own rate (at least 2; an hour and four hours are judged too)."
    )
    var sprayerDevices = 3
    @Flag(
        name: .long, help: "Let private and loopback addresses match (trying deferred links on one machine or a LAN; never in production).")
    var matchPrivateNetworks = false
    @Flag(
        name: .long,
        help: "Keep events of installs another server made (moving an app from LinkForty): the install is adopted, unattributed.")
    var adoptUnknownInstalls = false
    @Option(name: .long, help: "Days clicks are kept (at least 90, the longest attribution window); 0 keeps them forever.")
    var keepClicksDays = 90
    @Option(name: .long, help: "Seconds a connection may stay idle before it is closed (1…3600).")
    var idleTimeout = 30
    @Option(
        name: .long,
        help:
            "Clicks one address may have recorded a minute; past it links still answer, the clicks are not stored. 0: no limit (a load test from one address)."
    )
    var clicksPerAddress = 120
    @Option(name: .long, help: "Seconds a request's whole body may take to arrive (1…300); past it, 408.")
    var bodyTimeout = 10
    @Option(
        name: .long,
        help:
            "The most connections open at once; at it, the longest-idle one is closed for a new client (default and ceiling: the open-file limit, raised at start, less 128 kept for the database and 16 for the metrics listener)."
    )
    var maxConnections: Int?
    @Option(
        name: .long,
        help:
            "Seconds a link read by its code is kept in this process for the next taps (0…3600; 0: every tap reads the database). A code not found is kept 1 s."
    )
    var linkCacheSeconds = 60
    @Flag(inversion: .prefixedNo, help: "One line per request in the log (client, method, path without its query, status, bytes, time).")
    var accessLog = true
    @Option(
        name: .long,
        help:
            "With --trust-proxy: the header in which your proxy names the client's country (CF-IPCountry behind Cloudflare), for the links' analytics."
    )
    var countryHeader: String?
    @Flag(
        inversion: .prefixedNo,
        help: "The web dashboard at /dashboard (sign-in with an admin key). Default: on when listening on loopback, off otherwise.")
    var dashboard: Bool?
    @Option(
        name: .long,
        help: "Serve Prometheus metrics at /metrics on this port, a listener apart from the API's (0: any free port). Default: no metrics.")
    var metricsPort: Int?
    @Option(name: .long, help: "The address the metrics listener binds (with --metrics-port).")
    var metricsHost = "127.0.0.1"
    @Option(name: .long, help: "How log lines are written on standard error: text, or json (one object per line, the access lines too).")
    var logFormat: LogFormat = .text

    func validate() throws {
        if let publicURL {
            guard let url = URL(string: publicURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ValidationError("--public-url takes an absolute http or https URL, such as https://go.acme.app.")
            }
        }
        for network in trustedProxy where IPNetwork(network) == nil {
            throw ValidationError("--trusted-proxy takes a network such as 10.0.0.0/8 or fd00::/8, not \(network).")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port takes 0…65535.") }
        if let metricsPort {
            guard (0...65535).contains(metricsPort) else { throw ValidationError("--metrics-port takes 0…65535.") }
            guard metricsPort == 0 || metricsPort != port else {
                throw ValidationError("--metrics-port needs a port of its own, not --port's.")
            }
        }
        guard sharedNetworkDevices >= 2 else { throw ValidationError("--shared-network-devices takes 2 or more.") }
        guard sprayerDevices >= 2 else { throw ValidationError("--sprayer-devices takes 2 or more.") }
        guard (1...2160).contains(fingerprintWindowHours) else { throw ValidationError("--fingerprint-window-hours takes 1…2160.") }
        guard clicksPerAddress >= 0 else { throw ValidationError("--clicks-per-address takes 0 (no limit) or more.") }
        guard (1...300).contains(bodyTimeout) else { throw ValidationError("--body-timeout takes 1…300 seconds.") }
        if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections takes 1 or more.") }
        guard (1...3600).contains(idleTimeout) else { throw ValidationError("--idle-timeout takes 1…3600 seconds.") }
        guard (0...3600).contains(linkCacheSeconds) else { throw ValidationError("--link-cache-seconds takes 0…3600.") }
        if let countryHeader {
            guard ServerConfiguration.headerName(countryHeader) != nil else {
                throw ValidationError("--country-header takes a header name, such as CF-IPCountry.")
            }
            guard trustProxy else {
                throw ValidationError("--country-header needs --trust-proxy: only your own proxy's header is believed.")
            }
        }
        guard keepClicksDays == 0 || (90...36_500).contains(keepClicksDays) else {
            throw ValidationError(
                "--keep-clicks-days takes 0 (forever) or 90…36500: a click younger than 90 days may still match an install.")
        }
    }

    func run() async throws {
        if logFormat == .json { LoggingSystem.bootstrap { JSONLogHandler(label: $0) } }
        var logger = Logger(label: "linkrelay.server")
        logger.logLevel = .info
        try await failingInOneLine {
            // An install is the binary and its resources folders: without one, no start.
            for resources in ServerResources.all { _ = try resources.folder.get() }
            let (providedKey, source) = try Self.providedKey(ProcessInfo.processInfo.environment)
            // Everything that can be checked before a file is made or a row written is.
            if let providedKey {
                try Bootstrap.validate(
                    providedKey, from: source == "LINKRELAY_ADMIN_KEY" ? source : "The key in the file LINKRELAY_ADMIN_KEY_FILE names")
            }
            let location = try database.location()
            if port != 0 { try await ListenCheck.ensureAvailable(host: host, port: port) }
            // The store is a service of the application's group: it opens here, runs with the
            // group and closes after the HTTP server and the retention job.
            let store = try await location.open(create: true, serving: true, logger: logger)
            try await serve(store: store, location: location, providedKey: providedKey, keySource: source, logger: logger)
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
        store: any ServerStore, location: DatabaseLocation, providedKey: String?, keySource: String, logger: Logger
    ) async throws {
        let lock: DatabaseLock?
        if case .sqlite(let path) = location, path != ":memory:" { lock = try DatabaseLock(sqlitePath: path) } else { lock = nil }
        defer { withExtendedLifetime(lock) {} }
        let fileLimit = OpenFileLimit.raise()
        let configuration = ServerConfiguration(
            host: host, port: port, trustProxy: trustProxy,
            trustedProxies: trustedProxy.compactMap(IPNetwork.init), publicBaseURL: publicURL.flatMap(URL.init(string:)),
            matcher: DeferredMatcher(
                sharedNetworkDevices: sharedNetworkDevices, fingerprintWindowHours: fingerprintWindowHours,
                matchesAddressFirst: addressFirst,
                scoresIPv4Networks: ipv4NetworkMatch, sprayerDevices: sprayerDevices), matchPrivateNetworks: matchPrivateNetworks,
            adoptUnknownInstalls: adoptUnknownInstalls, clickRetention: keepClicksDays == 0 ? nil : TimeInterval(keepClicksDays) * 86_400,
            idleTimeout: .seconds(idleTimeout), accessLog: accessLog,
            maximumConnections: min(maxConnections ?? .max, OpenFileLimit.connectionLimit(for: fileLimit, metrics: metricsPort != nil)),
            bodyTimeout: .seconds(bodyTimeout),
            clicksPerAddressPerMinute: clicksPerAddress, countryHeader: countryHeader.flatMap(ServerConfiguration.headerName),
            dashboard: dashboard ?? ServerConfiguration.isLoopback(host), metrics: metricsPort == nil ? .off : .prometheus(),
            metricsAddress: metricsPort.map { (metricsHost, $0) }, logFormat: logFormat)
        if configuration.dashboard {
            logger.info("The dashboard is at /dashboard (sign in with an admin key).")
        } else if dashboard == nil {
            logger.info("The dashboard is off: the server listens on \(host), not loopback. --dashboard turns it on.")
        }
        if matchPrivateNetworks {
            logger.warning("--match-private-networks: private and loopback addresses match. Never use it in production.")
        }
        let linkCache = Duration.seconds(linkCacheSeconds)
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

extension LogFormat: ExpressibleByArgument {}
