import Foundation

/// Every setting of `linkrelay-server serve`, in the order `Docs/Configuration.md` lists them.
package enum ServeSettings {
    package static let host = ServeSetting(
        name: "host", kind: .text, default: .text("127.0.0.1"),
        help: "The address to listen on.",
        details: "The address to listen on. `0.0.0.0` for every interface.")

    package static let port = ServeSetting(
        name: "port", kind: .integer(0...65535), default: .integer(8080),
        help: "The port; 0 for any free port.",
        details: "The port; `0` for any free one (the line `LinkRelay Server listening on …` names it).")

    package static let database = ServeSetting(
        name: "database", kind: .text, default: .text("sqlite:linkrelay.sqlite"),
        help: "sqlite:PATH or postgres://user:password@host:port/database.",
        details: """
            `sqlite:PATH` (the file is made when missing; `sqlite::memory:` for a database that lives as long as the process) or \
            `postgres://user:password@host:port/database[?sslmode=disable|prefer|require]` (`sslmode` defaults to `disable` on a loopback \
            host, `prefer` elsewhere). The password never appears in the log.
            """)

    package static let trustProxy = ServeSetting(
        name: "trust-proxy", kind: .flag, default: .flag(false),
        help: "Take the client's address from X-Forwarded-For, and the origin from X-Forwarded-Proto/-Host (behind your own proxy).",
        details: """
            Behind your own reverse proxy: the client's address comes from `X-Forwarded-For` (see [Behind a proxy](#behind-a-proxy)), and \
            share links use `X-Forwarded-Proto` and `X-Forwarded-Host`. Without a proxy in front, leave it off: a client could claim any \
            address.
            """)

    package static let trustedProxy = ServeSetting(
        name: "trusted-proxy", kind: .list, default: .list([]),
        help: """
            With --trust-proxy: a network (CIDR) of proxies before the one the server is reached from (a load balancer, a CDN), whose \
            X-Forwarded-For entries are skipped; repeatable. Without one, the client is the entry the proxy in front appended.
            """,
        details: """
            With `--trust-proxy`: a network (`10.0.1.0/24`, `fd00::/8`, a CDN's range) of proxies *before* the one the server is reached \
            from (a load balancer in front of nginx, a CDN), whose `X-Forwarded-For` entries are skipped; repeat it for several. Without \
            it the client is the entry the proxy in front appended.
            """)

    package static let publicURL = ServeSetting(
        name: "public-url", kind: .text, default: nil, defaultDescription: "the request's origin",
        help: "The origin share links are made on (https://go.acme.app).",
        details: """
            The origin share links are made on (`https://go.acme.app`). Set it when the server is reached under another name than its \
            links.
            """)

    package static let sharedNetworkDevices = ServeSetting(
        name: "shared-network-devices", kind: .integer(2...1_000_000), default: .integer(20),
        help: "Distinct devices in one network from which its address weighs half in the deferred match (at least 2).",
        details: """
            From how many distinct devices seen in one network in the last 7 days (within their clicks' windows; among the network's \
            newest 2,000 clicks) the network weighs half in the deferred match: a tap from the install's own address then matches at 70 \
            instead of 90, and a network score (IPv6, or with `--ipv4-network-match`) needs more of the fingerprint. At least 2. See [The \
            deferred match](DeferredMatch.md#crowded-networks).
            """)

    package static let fingerprintWindowHours = ServeSetting(
        name: "fingerprint-window-hours", kind: .integer(1...2160), default: .integer(24),
        help: """
            Hours after a click within which a fingerprint may match it (1…2160; the link's shorter window still applies; 2160 behaves as \
            LinkForty Core).
            """,
        details: """
            The oldest click (in hours) a fingerprint may match, whatever the link's window; the link's shorter window still applies. \
            1…2160; `2160` behaves as LinkForty Core (the link's window alone). See [The deferred match](DeferredMatch.md).
            """)

    package static let keepClicksDays = ServeSetting(
        name: "keep-clicks-days", kind: .integer(90...36_500, or: 0), default: .integer(90),
        help: "Days clicks are kept (at least 90, the longest attribution window); 0 keeps them forever.",
        details: """
            Clicks older than this are deleted hourly (on PostgreSQL a whole day's partition at once, then the rest 10,000 at a time; see \
            [Operations](Operations.md#how-big-it-grows)), so the click store stays bounded by traffic over the longest attribution \
            window. At least 90 (a younger click may still match an install); `0` keeps clicks forever. Installs and events are never \
            deleted.
            """)

    package static let accessLog = ServeSetting(
        name: "access-log", kind: .flag, default: .flag(true),
        help: "One line per request in the log (client, method, path without its query, status, bytes, time).",
        details: """
            One line per request on standard error: `<UTC time> ACCESS <client> <key prefix> \"<METHOD> <route>\" <status> <bytes> <ms> \
            ms`, with the route's pattern (`/{code}`, `/api/links/{id}`; `(unmatched)` for none), never the path (a link's code, a tap's \
            query) or a key's secret part; `-` for what is missing. Written in blocks of 16 KiB or every 0.2 s. See \
            [Operations](Operations.md#what-to-watch).
            """)

    package static let logFormat = ServeSetting(
        name: "log-format", kind: .text, default: .text("text"),
        help: "How log lines are written on standard error: text, or json (one object per line, the access lines too).",
        details: """
            `json`: every log line on standard error is one JSON object, the access lines \
            (`{\"time\",\"type\":\"access\",\"client\",\"key\",\"method\",\"route\",\"status\",\"bytes\",\"ms\"}`) and the others \
            (`{\"time\",\"type\":\"log\",\"level\",\"label\",\"message\",\"metadata\"}`), for a collector that reads fields.
            """)

    package static let metricsPort = ServeSetting(
        name: "metrics-port", kind: .integer(0...65535), default: nil, defaultDescription: "none (no metrics)",
        help: "Serve Prometheus metrics at /metrics on this port, a listener apart from the API's (0: any free port).",
        details: """
            Serve Prometheus metrics at `GET /metrics` on this port, a listener apart from the API's (`0`: any free port; the log names \
            it). It keeps at most 16 connections, each closed after 20 idle seconds, the longest idle first when a 17th arrives. See \
            [Operations](Operations.md#metrics). The API's port never serves them.
            """)

    package static let metricsHost = ServeSetting(
        name: "metrics-host", kind: .text, default: .text("127.0.0.1"),
        help: "The address the metrics listener binds (with --metrics-port).",
        details: "The address the metrics listener binds. Keep it on loopback or a private network: a scrape needs no key.")

    package static let clicksPerAddress = ServeSetting(
        name: "clicks-per-address", kind: .integer(0...1_000_000_000), default: .integer(120),
        help: """
            Clicks one address may have recorded a minute; past it links still answer, the clicks are not stored. 0: no limit (a load test \
            from one address).
            """,
        details: """
            Clicks one address may have recorded a minute (a token bucket per IPv4 address, or per IPv6 /64, which one subscriber holds \
            whole; a minute's worth at most). Past it the link still answers (the person reaches the destination) but the click is not \
            stored, and the answer carries `X-LinkRelay-Click-Recorded: false`. What it costs: behind a carrier-grade NAT many phones \
            share one address, so past 120 taps a minute from one such address the extra taps cannot attribute installs (on such an \
            address a fingerprint match is near chance anyway). `0`: no limit (a load test from one address). One client wrote about 4,000 \
            clicks a second before, each kept 90 days.
            """)

    package static let bodyTimeout = ServeSetting(
        name: "body-timeout", kind: .integer(1...300), default: .integer(10),
        help: "Seconds a request's whole body may take to arrive (1…300); past it, 408.",
        details: """
            Seconds a request's whole body may take to arrive (1…300); past it, `408`. The idle timeout ends a client that stops sending; \
            this ends one that sends a byte at a time.
            """)

    package static let maxConnections = ServeSetting(
        name: "max-connections", kind: .integer(1...1_048_576), default: nil,
        defaultDescription: """
            the open-file limit less 128, less 16 with `--metrics-port`
            """,
        help: """
            The most connections open at once; at it, the longest-idle one is closed for a new client (at most the open-file limit, raised \
            at start, less 128 kept for the database and 16 for the metrics listener).
            """,
        details: """
            The most connections open at once; at it, the connection idle the longest is closed for the next client (never one in a \
            request), and when every one is busy the next waits in the listen backlog. At start the server raises its soft open-file limit \
            to the hard one (at most 1,048,576), so the common soft limit of 1,024 no longer caps it, and keeps 128 files for the \
            database, the log and the process, and 16 for the metrics listener's own connections, whatever the limit: 880 connections \
            under a hard limit of 1,024. A larger value is lowered to that.
            """)

    package static let addressFirst = ServeSetting(
        name: "address-first", kind: .flag, default: .flag(true),
        help: """
            Take a tap from the install's exact address first (a household's router), the network's score only without one; \
            --no-address-first compares /24s alone, as LinkForty Core.
            """,
        details: """
            Take the newest agreeing tap from the install's exact address first (factor `address`); without one an IPv6 install is scored \
            against its /64 and an IPv4 install stays organic (see `--ipv4-network-match`). Off: networks alone, as LinkForty Core. See \
            [The deferred match](DeferredMatch.md#the-exact-address-first).
            """)

    package static let ipv4NetworkMatch = ServeSetting(
        name: "ipv4-network-match", kind: .flag, default: .flag(false),
        help: """
            With the address first: score an IPv4 install without a tap from its address against its /24 (off: an IPv4 /24 is an ISP's \
            neighbours; IPv6 installs are always scored against their /64).
            """,
        details: """
            With the address first: an IPv4 install without a tap from its own address is scored against its /24, as LinkForty Core does. \
            Off, it stays organic: on dense households the /24 added 97 wrong attributions to 34 and no right one \
            ([RESULTS](../Benchmarks/RESULTS.md)). Turn it on where your users' IPv4 addresses change within a /24 between a tap and the \
            first launch (some carriers' NAT pools).
            """)

    package static let sprayerDevices = ServeSetting(
        name: "sprayer-devices", kind: .integer(2...1_000_000), default: .integer(3),
        help: """
            The fewest distinct devices clicking from one address within 10 minutes that make it a sprayer, whose clicks there never \
            attribute, when they are also 3 times the address's own rate (at least 2; an hour and four hours are judged too).
            """,
        details: """
            The fewest distinct devices (user agent, time zone, language, screen) clicking from one address within 10 minutes that make it \
            a sprayer, whose clicks in that span never attribute; they must also be 3 times the address's own rate over the fingerprint's \
            day, and an hour (this + 2) and four hours (3 × this) are judged too. At least 2. What it costs: 3 different phones tapping \
            your links from one quiet address within ten minutes stay organic. See [The deferred match](DeferredMatch.md#sprayers).
            """)

    package static let linkCacheSeconds = ServeSetting(
        name: "link-cache-seconds", kind: .integer(0...3600), default: .integer(60),
        help: """
            Seconds a link read by its code is kept in this process for the next taps (0…3600; 0: every tap reads the database). A code \
            not found is kept 1 s.
            """,
        details: """
            How long a link read by its short code is kept in the process for the next taps (0…3600; `0`: every tap reads the database). A \
            code that was not found is kept 1 s, so a link made through another process on the same PostgreSQL is served within a second; \
            the process's own new links at once. The same time applies to links kept by id for the install's candidates and deferred link; \
            a network's crowd is reused for a minute of install time (none with `0`).
            """)

    package static let countryHeader = ServeSetting(
        name: "country-header", kind: .text, default: nil,
        help: """
            With --trust-proxy: the header in which your proxy names the client's country (CF-IPCountry behind Cloudflare), for the links' \
            analytics.
            """,
        details: """
            With `--trust-proxy`: the header in which your proxy names the client's country (`CF-IPCountry` behind Cloudflare; nginx with \
            GeoIP can set one), kept with each click for the links' analytics (two letters; `XX` and `T1` count as unknown). Without it no \
            click has a country: this server carries no geolocation database. Refused without `--trust-proxy`: a client could send the \
            header itself.
            """)

    package static let dashboard = ServeSetting(
        name: "dashboard", kind: .flag, default: nil, defaultDescription: "on when `--host` is loopback, off otherwise",
        help: "The web dashboard at /dashboard (sign-in with an admin key).",
        details: """
            The web dashboard at `/dashboard` (see the README's *Dashboard*): sign-in with an admin key, sessions in the database. Behind \
            your own proxy on a public address, turn it on with `--dashboard` and use `--public-url https://…` so its cookie is Secure. \
            The code `dashboard` is reserved: no link can take it.
            """)

    package static let idleTimeout = ServeSetting(
        name: "idle-timeout", kind: .integer(1...3600), default: .integer(30),
        help: "Seconds a connection may stay idle before it is closed (1…3600).",
        details: "Seconds a connection may stay idle (between requests, or within a stalled request body) before it is closed; 1…3600.")

    package static let adoptUnknownInstalls = ServeSetting(
        name: "adopt-unknown-installs", kind: .flag, default: .flag(false),
        help: "Keep events of installs another server made (moving an app from LinkForty): the install is adopted, unattributed.",
        details: """
            An event naming an install the server does not know (a UUID, made by the server the app used before) is kept, and the install \
            taken as the project's, unattributed (`attributionMethod` `adopted`). For moving an app from LinkForty: its existing users' \
            events are not lost. Off, such an event is a `404` (as Core).
            """)

    package static let matchPrivateNetworks = ServeSetting(
        name: "match-private-networks", kind: .flag, default: .flag(false),
        help: "Let private and loopback addresses match (trying deferred links on one machine or a LAN; never in production).",
        details: """
            Private and loopback addresses take part in the deferred match, each /24 its own network: for trying deferred links with the \
            Simulator and its Safari on one Mac, or on a LAN. Never in production (every phone behind a home router shares `192.168.1`); \
            the server logs a warning when it is on.
            """)

    /// Every setting, in the documentation's order.
    package static let all: [ServeSetting] = [
        host, port, database, trustProxy, trustedProxy, publicURL, sharedNetworkDevices, fingerprintWindowHours, keepClicksDays, accessLog,
        logFormat, metricsPort, metricsHost, clicksPerAddress, bodyTimeout, maxConnections, addressFirst, ipv4NetworkMatch, sprayerDevices,
        linkCacheSeconds, countryHeader, dashboard, idleTimeout, adoptUnknownInstalls, matchPrivateNetworks,
    ]

    /// The table of `Docs/Configuration.md`'s `serve` section: each setting's flag, environment
    /// variable, default and text.
    package static let markdownTable: String = {
        var lines = ["| Option | Environment | Default | What it does |", "|---|---|---|---|"]
        for setting in all {
            let flag = setting.kind == .flag ? "`\(setting.flag)` / `--no-\(setting.name)`" : "`\(setting.flag)`"
            lines.append(
                "| \(flag) | `\(setting.environmentVariable)` | \(setting.defaultDescription) | \(setting.details.replacingOccurrences(of: "|", with: "\\|")) |"
            )
        }
        return lines.joined(separator: "\n")
    }()
}
