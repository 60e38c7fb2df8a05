import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

/// Every provider's emulation (``emulations``) on one ``/LinkRelaySimulatorCore/ProviderSimulator``, with the routing and the admin
/// API that the `linkrelay-sandbox` server puts on a real socket. It is independent of any HTTP
/// server: the server hands each request to ``handle(_:)`` and sends back what it answers.
///
/// A request reaches a provider in one of three ways, tried in this order:
/// 1. **Path prefix**: `/linkforty/…`, `/limelink/…`, `/dynalinks/…`, `/paylisher/…`. The
///    prefix is removed and the provider sees the request on its API host (or on the
///    `X-Forwarded-Host`, when that is one of the provider's hosts). For adapters that take a
///    base URL.
/// 2. **`X-Forwarded-Host`**, as ``/LinkRelay/HostRewritingTransport`` sets it: for providers whose hosts
///    are fixed (LimeLink's project hosts, Paylisher's short-link hosts).
/// 3. **`Host`**, when it is a provider's host (a device whose DNS points a provider's name at
///    the sandbox).
///
/// `/_admin/…` is the admin API (see ``/LinkRelaySimulatorCore/SandboxControl``); anything else is a 404 that says how
/// to route.
public final class Sandbox: SandboxControl, EmulationDirectory {
    /// What the server does with a request.
    public enum Outcome: Sendable, Hashable {
        /// Send this response.
        case respond(HTTPResponse)
        /// Send a response's headers and part of its body, then close the connection (the
        /// ``/LinkRelaySimulatorCore/ProviderSimulator/Fault/drop`` fault, an outage).
        case closeMidResponse
    }

    /// One request, handled.
    public struct Exchange: Sendable, Hashable {
        /// What the sandbox did with the request.
        public var outcome: Outcome
        /// Who answered: a provider's name, `admin`, or `none`.
        public var handler: String
        /// The URL the provider's emulation saw, when one did.
        public var routedURL: URL?
    }

    /// The hosts and keys this sandbox was started with, every provider's defaults filled in.
    public let settings: SandboxSettings
    /// The simulator the emulations run in (faults, client IP, received requests).
    public let simulator: ProviderSimulator
    private let served: [Served]
    private let address = Locked(URL(string: "http://127.0.0.1:8642")!)

    /// A sandbox with `settings`, running delays and stamping times on `clock`. Responses are
    /// not size-limited here: an oversized-body fault reaches the client, which must refuse it.
    /// It keeps the last `requestHistoryLimit` requests for `GET /_admin/requests`, and serves
    /// `emulations` (default: every provider's, ``emulations``).
    public init(
        settings: SandboxSettings = SandboxSettings(), clock: any LinkRelayClock = SystemClock(), requestHistoryLimit: Int = 1_000,
        emulations: [any SandboxEmulation.Type] = Sandbox.emulations
    ) {
        var settings = settings
        for emulation in emulations { settings.fill(emulation.sandboxSettings) }
        self.settings = settings
        let simulator = ProviderSimulator(clock: clock, maximumResponseSize: .max, requestHistoryLimit: requestHistoryLimit)
        self.simulator = simulator
        served = emulations.map { Served($0, settings: settings, simulator: simulator) }
    }

    /// The running emulation of type `type` (see ``/LinkRelaySimulatorCore/EmulationDirectory``).
    public func emulation<Emulation: SandboxEmulation>(_ type: Emulation.Type) -> Emulation {
        guard let emulation = served.lazy.compactMap({ $0.emulation as? Emulation }).first else {
            preconditionFailure("This sandbox does not serve \(type).")
        }
        return emulation
    }

    /// The address the sandbox is reached at, for ``describe()``; the server sets it once it
    /// listens. Default `http://127.0.0.1:8642`.
    public var baseURL: URL {
        get { address.withLock { $0 } }
        set { address.withLock { $0 = newValue } }
    }

    // MARK: Serving

    /// Handles one request as it arrived: `request.url` is `http://{Host}{path}?{query}`.
    public func handle(_ request: HTTPRequest) async -> Exchange {
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
        let path = components?.percentEncodedPath ?? request.url.path
        if path == "/_admin" || path.hasPrefix("/_admin/") {
            let response = await admin(request, path: String(path.dropFirst("/_admin".count)))
            return Exchange(outcome: .respond(response), handler: "admin", routedURL: nil)
        }
        guard let (provider, routed) = route(request, path: path, query: components?.percentEncodedQuery) else {
            let routes = served.map { "/\($0.name.rawValue)" }.joined(separator: ", ")
            let message =
                "Nothing is served here. Prefix the path with a provider (\(routes)), send X-Forwarded-Host with a provider's host (HostRewritingTransport does), or see GET /_admin."
            return Exchange(outcome: .respond(Self.json(SandboxAPI.Failure(error: message), status: 404)), handler: "none", routedURL: nil)
        }
        do {
            let response = try await simulator.send(routed)
            return Exchange(outcome: .respond(response), handler: provider, routedURL: routed.url)
        } catch {
            // A dropped connection, an outage, or a delay cut short: the connection closes.
            return Exchange(outcome: .closeMidResponse, handler: provider, routedURL: routed.url)
        }
    }

    /// The request as a provider sees it (`https://{provider host}{path}`), and the provider's
    /// name; `nil` when no provider is addressed.
    private func route(_ request: HTTPRequest, path: String, query: String?) -> (String, HTTPRequest)? {
        let forwarded = request.headers["X-Forwarded-Host"].map(Self.hostName)
        var host: String?
        var providerPath = path
        var name: String?
        for provider in served {
            let prefix = "/" + provider.name.rawValue
            guard path == prefix || path.hasPrefix(prefix + "/") else { continue }
            providerPath = String(path.dropFirst(prefix.count))
            host = forwarded.flatMap { HostPattern.matches($0, anyOf: provider.hosts) ? $0 : nil } ?? provider.apiHost
            name = provider.name.rawValue
            break
        }
        if host == nil {
            guard let candidate = forwarded ?? request.headers["Host"].map(Self.hostName), simulator.serves(host: candidate) else {
                return nil
            }
            host = candidate
            name = served.first { HostPattern.matches(candidate, anyOf: $0.hosts) }?.name.rawValue
        }
        guard let host, let name,
            let url = URL(string: "https://\(host)\(providerPath.isEmpty ? "/" : providerPath)\(query.map { "?" + $0 } ?? "")")
        else { return nil }
        var routed = request
        routed.url = url
        for header in ["X-Forwarded-Host", "X-Forwarded-Proto", "Host"] { routed.headers[header] = nil }
        return (name, routed)
    }

    /// `shop.limelink.org:443` → `shop.limelink.org`.
    private static func hostName(_ value: String) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed.hasPrefix("[") { return String(trimmed.prefix { $0 != "]" }.dropFirst()) }
        return String(trimmed.prefix { $0 != ":" })
    }

    // MARK: Admin API

    private func admin(_ request: HTTPRequest, path: String) async -> HTTPResponse {
        let segments = path.split(separator: "/").map(String.init)
        do {
            switch (request.method, segments.count) {
            case (.get, 0):
                // The address the caller used, so the base URLs work from where it is.
                let address = request.headers["Host"].flatMap { URL(string: "http://\($0)") } ?? baseURL
                return Self.json(description(baseURL: address))
            case (.put, 1) where segments[0] == "faults":
                try await setFault(try Self.decode(SandboxAPI.FaultRule.self, from: request.body ?? Data()))
                return HTTPResponse(status: 204)
            case (.delete, 1) where segments[0] == "faults":
                try await clearFaults()
                return HTTPResponse(status: 204)
            case (.put, 1) where segments[0] == "client-ip":
                try await setClientIP(try Self.decode(SandboxAPI.ClientIP.self, from: request.body ?? Data()).ip)
                return HTTPResponse(status: 204)
            case (.get, 1) where segments[0] == "requests":
                return try requestPage(request)
            case (_, 2):
                guard let provider = served.first(where: { $0.name.rawValue == segments[0] }) else { break }
                return try admin(request, provider: provider, resource: segments[1])
            default:
                break
            }
        } catch let failure as SandboxAPI.Failure {
            return Self.json(failure, status: 400)
        } catch {
            return Self.json(SandboxAPI.Failure(error: "\(error)"), status: 400)
        }
        return Self.json(
            SandboxAPI.Failure(error: "No admin route \(request.method) /_admin\(path). See the README's Sandbox section."), status: 404)
    }

    private func admin(_ request: HTTPRequest, provider: Served, resource: String) throws -> HTTPResponse {
        switch (request.method, resource) {
        case (.post, "links"):
            try Self.createLink(on: provider.emulation, json: request.body ?? Data())
            return HTTPResponse(status: 201)
        case (.post, "clicks"):
            try recordWebClick(try Self.decode(SandboxAPI.WebClick.self, from: request.body ?? Data()), on: provider)
            return HTTPResponse(status: 201)
        case (.get, "events"):
            return Self.json(provider.emulation.sandboxEvents)
        default:
            return Self.json(
                SandboxAPI.Failure(error: "No admin route \(request.method) /_admin/\(provider.name.rawValue)/\(resource)."), status: 404)
        }
    }

    private static func createLink<Emulation: SandboxEmulation>(on emulation: Emulation, json: Data) throws {
        try emulation.createLink(try decode(Emulation.AdminLink.self, from: json))
    }

    private static func createLink<Emulation: SandboxEmulation>(on emulation: Emulation, _ link: any SandboxAdminLink) throws {
        guard let link = link as? Emulation.AdminLink else {
            throw SandboxAPI.Failure(error: "\(type(of: link)) is not a link body of \(Emulation.sandboxProvider).")
        }
        try emulation.createLink(link)
    }

    private func recordWebClick(_ click: SandboxAPI.WebClick, on provider: Served) throws {
        do {
            try provider.emulation.recordWebClick(click, ip: click.ip ?? simulator.clientIP, at: simulator.clock.currentDate)
        } catch {
            throw SandboxAPI.Failure(error: "\(error)")
        }
    }

    private func served(_ provider: SandboxProvider) throws -> Served {
        guard let served = served.first(where: { $0.name == provider }) else {
            throw SandboxAPI.Failure(error: "The sandbox serves no provider \(provider).")
        }
        return served
    }

    private static func decode<Body: Decodable>(_ type: Body.Type, from body: Data) throws -> Body {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch {
            throw SandboxAPI.Failure(error: "The body is not a valid \(type): \(error)")
        }
    }

    /// `GET /_admin/requests[?after=N][&limit=M]`: the kept requests after sequence number `N`
    /// (default 0), at most `M` (default and most: the history limit), as a JSON array; the
    /// headers say where the next page starts, how many were received in all, and how many
    /// after `N` are no longer kept.
    private func requestPage(_ request: HTTPRequest) throws -> HTTPResponse {
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func number(_ name: String, default value: Int) throws -> Int {
            guard let text = items.first(where: { $0.name == name })?.value else { return value }
            guard let parsed = Int(text), parsed >= 0 else {
                throw SandboxAPI.Failure(error: "'\(name)' must be a whole number, 0 or more; got '\(text)'.")
            }
            return parsed
        }
        let historyLimit = simulator.requestHistoryLimit
        let page = simulator.requests(
            after: try number("after", default: 0), limit: min(try number("limit", default: historyLimit), historyLimit))
        var response = Self.json(page.requests)
        response.headers["X-Sandbox-Next-After"] = String(page.nextAfter)
        response.headers["X-Sandbox-Received"] = String(page.received)
        response.headers["X-Sandbox-Dropped"] = String(page.dropped)
        return response
    }

    static func json<Body: Encodable>(_ body: Body, status: Int = 200) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(body)) ?? Data("{}".utf8)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: data)
    }

    private func description(baseURL: URL) -> SandboxAPI.Description {
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        return SandboxAPI.Description(
            baseURL: baseURL, settings: settings,
            providers: served.map { provider in
                .init(name: provider.name, baseURL: URL(string: base + "/" + provider.name.rawValue) ?? baseURL, hosts: provider.hostList)
            })
    }

    // MARK: SandboxControl, in process

    public func describe() async throws -> SandboxAPI.Description {
        description(baseURL: baseURL)
    }

    public func createLink<Link: SandboxAdminLink>(_ link: Link) async throws {
        try Self.createLink(on: try served(Link.sandboxProvider).emulation, link)
    }

    public func recordWebClick(_ click: SandboxAPI.WebClick, on provider: SandboxProvider) async throws {
        try recordWebClick(click, on: try served(provider))
    }

    public func receivedEvents(_ provider: SandboxProvider) async throws -> [SandboxAPI.ReceivedEvent] {
        try served(provider).emulation.sandboxEvents
    }

    public func setFault(_ rule: SandboxAPI.FaultRule) async throws {
        simulator.setFault(rule.fault, method: rule.method, host: rule.host, path: rule.path, times: rule.times)
    }

    public func clearFaults() async throws {
        simulator.clearFaults()
    }

    public func setClientIP(_ ip: String) async throws {
        simulator.clientIP = ip
    }

    public func receivedRequests() async throws -> [HTTPRequest] {
        simulator.requests
    }
}

/// One provider as the sandbox serves it: its running emulation and where it is reached.
private struct Served: Sendable {
    let name: SandboxProvider
    let apiHost: String
    /// In the emulation's order, for the description.
    let hostList: [String]
    let hosts: Set<String>
    let emulation: any SandboxEmulation

    init(_ type: any SandboxEmulation.Type, settings: SandboxSettings, simulator: ProviderSimulator) {
        name = type.sandboxProvider
        apiHost = type.apiHost(in: settings)
        hostList = type.hosts(in: settings)
        hosts = Set(hostList)
        emulation = type.add(to: simulator, settings: settings)
    }
}
