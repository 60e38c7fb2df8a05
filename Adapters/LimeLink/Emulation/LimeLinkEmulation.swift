import Foundation
import LinkRelay
import LinkRelaySimulatorCore

/// LimeLink's servers, emulated from its SDK's protocol: the project hosts' HEAD reflecting the
/// visitor's request context, `dynamic_link` resolution by suffix (and project), the legacy
/// resolver, the deferred match against recorded web clicks by screen and OS version (each click
/// used once), and the stats endpoint.
///
/// ```swift
/// let limeLink = simulator.addLimeLink(apiKey: "lk_live_…")
/// limeLink.createLink(project: "abc123", suffix: "summer-sale", uri: "abc123app://promo/summer")
/// try limeLink.recordWebClick(url: URL(string: "https://abc123.limelink.org/link/summer-sale?utm_source=google")!, from: device)
/// ```
public final class LimeLinkEmulation: ProviderEmulation, WebClickRecording {
    /// A link: `https://{project}.limelink.org/link/{suffix}` (or `limelink.org/…/{suffix}` when
    /// `project` is `nil`) resolving to `uri`.
    public struct Link: Sendable, Hashable {
        /// The project's subdomain; `nil` for a project-less link.
        public var project: String?
        /// The link's suffix, `/link/{suffix}`.
        public var suffix: String
        /// What the link opens in the app.
        public var uri: String
    }

    /// A web click recorded for deferred matching.
    public struct Click: Sendable, Hashable {
        /// The clicked link's suffix.
        public var suffix: String
        /// The URL as tapped, query included; the deferred answer hands it back.
        public var fullRequestURL: String
        /// The screen's width in points.
        public var width: Int?
        /// The screen's height in points.
        public var height: Int?
        /// `{OS} {version}` with `_` for `.` (`iOS 17_4`), as LimeLink's page keeps it.
        public var userAgent: String
        /// The phone's public address (LimeLink's match does not use it).
        public var ip: String
        /// When the tap happened (LimeLink's match does not use it).
        public var clickedAt: Date
        /// Whether an install has taken this click already; each click matches once.
        public var consumed: Bool
    }

    /// A stats event as received (the parsed body).
    public struct StatsEvent: Sendable, Hashable {
        /// The suffix of the link the event is about.
        public var suffix: String
        /// The link's handle, when the SDK sent one.
        public var handle: String?
        /// The event's type (`first_run` or `rerun`).
        public var eventType: String
        /// The operating system the SDK reported.
        public var operatingSystem: String

        /// An event; see each property.
        public init(suffix: String, handle: String?, eventType: String, operatingSystem: String) {
            self.suffix = suffix
            self.handle = handle
            self.eventType = eventType
            self.operatingSystem = operatingSystem
        }
    }

    /// An install conversion (`event_type=setup` on a resolve).
    public struct Setup: Sendable, Hashable {
        /// The suffix the install was attributed to.
        public var suffix: String
        /// The clicked URL, when the resolve carried it.
        public var fullRequestURL: String?

        /// A conversion; see each property.
        public init(suffix: String, fullRequestURL: String?) {
            self.suffix = suffix
            self.fullRequestURL = fullRequestURL
        }
    }

    private struct State: Sendable {
        var links: [Link] = []
        var legacy: [String: String] = [:]  // "subdomain|path" → deeplinkUrl
        var clicks: [Click] = []
        var stats: [StatsEvent] = []
        var setups: [Setup] = []
    }

    private let state = Locked(State())
    /// The key stats bodies must carry as `private_key`.
    public let apiKey: String
    /// The domain links live on (`limelink.org`, so `{project}.limelink.org`).
    public let linkDomain: String
    /// The clock a web click is dated on when no date is given: the simulator's, for an
    /// emulation added with the simulator's `add…` method.
    public let clock: any LinkRelayClock

    /// LimeLink's servers for links on `linkDomain`, with stats bodies keyed `apiKey`, dating
    /// clicks recorded without a date on `clock`.
    public init(apiKey: String, linkDomain: String = "limelink.org", clock: any LinkRelayClock = SystemClock()) {
        self.clock = clock
        self.apiKey = apiKey
        self.linkDomain = linkDomain.lowercased()
    }

    // MARK: Scripting

    /// Creates a link; `project` `nil` makes a direct (project-less) link.
    public func createLink(project: String?, suffix: String, uri: String) {
        state.withLock { $0.links.append(Link(project: project?.lowercased(), suffix: suffix, uri: uri)) }
    }

    /// Makes the legacy resolver answer `deeplinkURL` for a host's first label and a path.
    public func createLegacyLink(subdomain: String, path: String, deeplinkURL: String) {
        state.withLock { $0.legacy["\(subdomain)|\(path)"] = deeplinkURL }
    }

    /// Records a tap on `url` (`https://{project}.limelink.org/link/{suffix}`, or a legacy
    /// link's URL) in a phone's browser: its screen in points and its OS version, as LimeLink's
    /// landing page collects them. LimeLink's match uses neither the address nor the time (a
    /// click waits until an install takes it); both are kept on the ``Click``.
    public func recordWebClick(url: URL, from device: DeviceInfo, ip: String, at date: Date) throws {
        let suffix: String
        if url.path.hasPrefix("/link/") {
            suffix = String(url.path.dropFirst("/link/".count))
        } else {
            suffix = url.path.split(separator: "/").last.map(String.init) ?? ""
        }
        let subdomain = url.host?.split(separator: ".").first.map(String.init) ?? ""
        let known = state.withLock { state in
            state.links.contains { $0.suffix == suffix } || state.legacy["\(subdomain)|\(url.path)"] != nil
        }
        guard known, !suffix.isEmpty else { throw UnknownLinkError(provider: "LimeLink", url: url) }
        let click = Click(
            suffix: suffix, fullRequestURL: url.absoluteString, width: device.screen.map { $0.width.saturatingInt },
            height: device.screen.map { $0.height.saturatingInt },
            userAgent: "\(device.osName) \(device.osVersion.replacingOccurrences(of: ".", with: "_"))", ip: ip, clickedAt: date,
            consumed: false)
        state.withLock { $0.clicks.append(click) }
    }

    /// Every link, in creation order.
    public var links: [Link] { state.withLock { $0.links } }
    /// Every stats event received, in order.
    public var statsEvents: [StatsEvent] { state.withLock { $0.stats } }
    /// Every install conversion, in order.
    public var setups: [Setup] { state.withLock { $0.setups } }
    /// Every recorded web click, in order, consumed ones included.
    public var clicks: [Click] { state.withLock { $0.clicks } }

    // MARK: Serving

    public func handle(_ request: ProviderSimulator.Request) -> HTTPResponse {
        let url = request.http.url
        let host = url.host?.lowercased() ?? ""
        let path = url.path
        if request.http.method == .head, host.hasSuffix("." + linkDomain) {
            return HTTPResponse(
                status: 200,
                headers: [
                    "X-Request-ID": UUID().uuidString.lowercased(), "X-User-Agent": request.http.headers["User-Agent"] ?? "LinkRelay",
                    "X-Forwarded-For": request.clientIP, "X-Referer": "https://\(host)/", "Server": "limelink-edge",
                ])
        }
        guard request.http.method == .get || request.http.method == .post else { return Self.notFound }
        let query = Self.rfc3986QueryItems(url)
        if path.hasSuffix("/api/v1/deferred-deep-link"), request.http.method == .get {
            return deferred(
                width: query["width"].flatMap { Int($0) }, height: query["height"].flatMap { Int($0) }, userAgent: query["user_agent"])
        }
        if path.hasSuffix("/api/v1/stats/event"), request.http.method == .post {
            return stats(request.http.body)
        }
        if let range = path.range(of: "/api/v1/app/dynamic_link/"), request.http.method == .get {
            let suffix = String(path[range.upperBound...])
            return resolve(suffix: suffix, fullRequestURL: query["full_request_url"], setup: query["event_type"] == "setup")
        }
        if path == "/link", request.http.method == .get {
            let key = "\(query["subdomain"] ?? "")|\(query["path"] ?? "")"
            guard let target = state.withLock({ $0.legacy[key] }) else { return Self.notFound }
            return Self.json(["deeplinkUrl": .string(target)])
        }
        return Self.notFound
    }

    private func resolve(suffix: String, fullRequestURL: String?, setup: Bool) -> HTTPResponse {
        // The project comes only from full_request_url's host.
        let clickedHost = fullRequestURL.flatMap { URL(string: $0)?.host?.lowercased() }
        let project = clickedHost.flatMap { host in
            host.hasSuffix("." + linkDomain) && host != "www." + linkDomain ? String(host.dropLast(linkDomain.count + 1)) : nil
        }
        return state.withLock { state in
            let link =
                state.links.first { $0.suffix == suffix && $0.project == project }
                ?? state.links.first { $0.suffix == suffix && (project == nil || $0.project == nil) }
            guard let link else { return Self.notFound }
            if setup { state.setups.append(Setup(suffix: suffix, fullRequestURL: fullRequestURL)) }
            return Self.json(["uri": .string(link.uri)])
        }
    }

    private func deferred(width: Int?, height: Int?, userAgent: String?) -> HTTPResponse {
        state.withLock { state in
            guard
                let index = state.clicks.lastIndex(where: {
                    !$0.consumed && $0.width == width && $0.height == height && $0.userAgent == userAgent
                })
            else {
                return Self.json(["suffix": nil, "full_request_url": nil])
            }
            state.clicks[index].consumed = true
            let click = state.clicks[index]
            return Self.json(["suffix": .string(click.suffix), "full_request_url": .string(click.fullRequestURL)])
        }
    }

    private func stats(_ body: Data?) -> HTTPResponse {
        guard let body, let value = try? JSONDecoder().decode(JSONValue.self, from: body), case .object(let object) = value,
            case .string(let key)? = object["private_key"], case .string(let suffix)? = object["suffix"],
            case .string(let eventType)? = object["event_type"], case .string(let system)? = object["operating_system"]
        else {
            return HTTPResponse.json(["message": "invalid stats event", "statusCode": 400], status: 400)
        }
        guard key == apiKey else { return HTTPResponse.json(["message": "invalid private key", "statusCode": 401], status: 401) }
        state.withLock {
            $0.stats.append(
                StatsEvent(suffix: suffix, handle: object["handle"]?.stringValue, eventType: eventType, operatingSystem: system))
        }
        return Self.json([:])
    }

    /// Query items decoded per RFC 3986: `%XX` only, a `+` stays a `+`.
    static func rfc3986QueryItems(_ url: URL) -> [String: String] {
        var items: [String: String] = [:]
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQueryItems ?? [] {
            items[item.name] = item.value?.removingPercentEncoding ?? item.value ?? ""
        }
        return items
    }

    static let notFound = HTTPResponse.json(["message": "dynamic link not found", "statusCode": 404], status: 404)

    static func json(_ value: JSONValue) -> HTTPResponse {
        var response = HTTPResponse.json(value)
        response.headers["Cache-Control"] = "no-store"
        return response
    }
}

extension ProviderSimulator {
    /// Adds LimeLink: its API and link hosts on `linkDomain` (`limelink.org`, `www.` and every
    /// project subdomain, `deep.` for the legacy resolver).
    @discardableResult
    public func addLimeLink(apiKey: String, linkDomain: String = "limelink.org") -> LimeLinkEmulation {
        let emulation = LimeLinkEmulation(apiKey: apiKey, linkDomain: linkDomain, clock: clock)
        register(emulation, hosts: [linkDomain, "*." + linkDomain])
        return emulation
    }
}
