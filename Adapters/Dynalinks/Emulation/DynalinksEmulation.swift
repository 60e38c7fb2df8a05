import Foundation
import LinkRelay
import LinkRelaySimulatorCore

/// Dynalinks' API, emulated from its SDK's protocol (its server is closed, so matching follows
/// the reference's stand-in): the Bearer client key check, the fingerprint match against web
/// clicks recorded from the same network (a score out of 100 with a consistent confidence
/// level), and link attribution by project host and path or short path.
///
/// ```swift
/// let dynalinks = simulator.addDynalinks(clientAPIKey: key, projectHost: "acme.dynalinks.app")
/// let link = dynalinks.createLink(path: "/product/shoes", url: "https://acme.example/product/shoes?color=red")
/// try dynalinks.recordWebClick(url: URL(string: "https://acme.dynalinks.app/product/shoes")!, from: device)
/// ```
public final class DynalinksEmulation: ProviderEmulation, WebClickRecording {
    /// A link of the project.
    public struct Link: Sendable, Hashable {
        /// The link's id.
        public var id: String
        /// The link's path on the project host (`/product/shoes`).
        public var path: String
        /// Its short path (`x7Gq2`), which opens the same link.
        public var shortenedPath: String
        /// The web page the link stands for; the app receives it as the destination.
        public var url: String
        /// The value the app routes on; the path when not given.
        public var deepLinkValue: String?
        /// The link's name in the dashboard.
        public var name: String?
        /// The referrer the match answer carries.
        public var referrer: String?
        /// Whether the link may be matched after an install; when `false` the match answers no link.
        public var iosDeferredDeepLinkingEnabled: Bool
    }

    /// A web click on a link's page, with what the page collected.
    public struct Click: Sendable, Hashable {
        /// The clicked link's ``Link/id``.
        public var linkID: String
        /// The phone's public address; the match requires the same network.
        public var ip: String
        /// The screen's width in CSS pixels (points).
        public var screenWidth: Int?
        /// The screen's height in CSS pixels (points).
        public var screenHeight: Int?
        /// The screen's scale.
        public var devicePixelRatio: Double?
        /// The OS version from the user agent, three parts (`17.4.1`).
        public var osVersion: String?
        /// The IANA time zone from `Intl`.
        public var timezone: String?
        /// The browser's first language.
        public var language: String?
        /// The calendar from `Intl` (`gregory`).
        public var calendar: String?
        /// When the visit happened.
        public var clickedAt: Date
    }

    private struct State: Sendable {
        var links: [Link] = []
        var clicks: [Click] = []
        var matchRequests: [JSONValue] = []
        var attributeRequests: [String] = []
    }

    private let state = Locked(State())
    /// The key requests must carry as `Authorization: Bearer …`.
    public let clientAPIKey: String
    /// The clock a web click is dated on when no date is given: the simulator's, for an
    /// emulation added with the simulator's `add…` method.
    public let clock: any LinkRelayClock
    /// The project's link host (`acme.dynalinks.app`).
    public let projectHost: String
    /// How long after a click an install can match it. Default 7 days.
    public let attributionWindow: TimeInterval

    /// Dynalinks' API for the project at `projectHost`, accepting `clientAPIKey`, matching clicks up
    /// to `attributionWindow` seconds old (default 7 days), dating clicks recorded without a date on `clock`.
    public init(
        clientAPIKey: String, projectHost: String, attributionWindow: TimeInterval = 7 * 86_400, clock: any LinkRelayClock = SystemClock()
    ) {
        self.clock = clock
        self.clientAPIKey = clientAPIKey
        self.projectHost = projectHost.lowercased()
        self.attributionWindow = attributionWindow
    }

    // MARK: Scripting

    /// Creates a link at `path` standing for `url`; a missing `shortenedPath` gets a random
    /// 6-character one, a missing `deepLinkValue` is the path.
    @discardableResult
    public func createLink(
        path: String, shortenedPath: String? = nil, url: String, deepLinkValue: String? = nil, name: String? = nil,
        referrer: String? = nil, iosDeferredDeepLinkingEnabled: Bool = true
    ) -> Link {
        let link = Link(
            id: UUID().uuidString.lowercased(), path: path, shortenedPath: shortenedPath ?? String(UUID().uuidString.prefix(6)),
            url: url, deepLinkValue: deepLinkValue ?? path, name: name, referrer: referrer,
            iosDeferredDeepLinkingEnabled: iosDeferredDeepLinkingEnabled)
        state.withLock { $0.links.append(link) }
        return link
    }

    /// Records a visit to the page of the link at `url` (its path or its shortened path) from a
    /// phone's browser at `ip`: CSS-pixel screen, `devicePixelRatio`, OS version from the user
    /// agent, `Intl` time zone and calendar, language.
    public func recordWebClick(url: URL, from device: DeviceInfo, ip: String, at date: Date) throws {
        let path = url.path
        let recorded = state.withLock { state -> Bool in
            guard
                let link = state.links.first(where: {
                    $0.path == path || $0.shortenedPath == path || "/" + $0.shortenedPath == path
                })
            else { return false }
            state.clicks.append(
                Click(
                    linkID: link.id, ip: ip, screenWidth: device.screen.map { $0.width.saturatingInt },
                    screenHeight: device.screen.map { $0.height.saturatingInt }, devicePixelRatio: device.screen?.scale,
                    osVersion: Self.threePart(device.osVersion), timezone: device.timeZoneIdentifier,
                    language: device.preferredLanguages.first,
                    calendar: device.calendarIdentifier == "gregorian" ? "gregory" : device.calendarIdentifier,
                    clickedAt: date))
            return true
        }
        guard recorded else { throw UnknownLinkError(provider: "Dynalinks", url: url) }
    }

    /// Every link, in creation order.
    public var links: [Link] { state.withLock { $0.links } }
    /// Every fingerprint match request body, in order.
    public var matchRequests: [JSONValue] { state.withLock { $0.matchRequests } }
    /// Every URL sent for attribution, in order.
    public var attributedURLs: [String] { state.withLock { $0.attributeRequests } }

    // MARK: Serving

    public func handle(_ request: ProviderSimulator.Request) -> HTTPResponse {
        guard request.http.headers["Authorization"] == "Bearer \(clientAPIKey)" else {
            return .json(["error": "Invalid client API key"], status: 401)
        }
        guard request.http.method == .post, let body = request.http.body,
            let value = try? JSONDecoder().decode(JSONValue.self, from: body), case .object(let object) = value
        else {
            return .json(["error": "Bad request"], status: 400)
        }
        if request.http.url.path.hasSuffix("/fingerprints/match") {
            guard case .object(let fingerprint)? = object["fingerprint"] else {
                return .json(["message": "fingerprint is required"], status: 400)
            }
            state.withLock { $0.matchRequests.append(value) }
            return match(fingerprint, ip: request.clientIP, at: request.receivedAt)
        }
        if request.http.url.path.hasSuffix("/links/attribute") {
            guard case .string(let text)? = object["url"] else { return .json(["message": "url is required"], status: 400) }
            state.withLock { $0.attributeRequests.append(text) }
            return attribute(text)
        }
        return .json(["error": "Not found"], status: 404)
    }

    private func match(_ fingerprint: [String: JSONValue], ip: String, at date: Date) -> HTTPResponse {
        state.withLock { state in
            var best: (score: Int, link: Link)?
            for click in state.clicks.reversed() where date.timeIntervalSince(click.clickedAt) <= attributionWindow {
                guard let link = state.links.first(where: { $0.id == click.linkID }), link.iosDeferredDeepLinkingEnabled,
                    IPAddressRules.sameNetwork(ip, click.ip)
                else { continue }
                let score = Self.score(fingerprint, click)
                if score >= 25, score > (best?.score ?? 0) { best = (score, link) }
            }
            guard let best else { return .json(["matched": false]) }
            let level = best.score >= 75 ? "high" : best.score >= 40 ? "medium" : "low"
            return .json(["matched": true, "confidence": .string(level), "match_score": .int(best.score), "link": linkJSON(best.link)])
        }
    }

    /// The stand-in weights: screen 25, OS version 20, time zone 20, language 15, pixel ratio 10,
    /// calendar 10; the network is required.
    static func score(_ fingerprint: [String: JSONValue], _ click: Click) -> Int {
        var score = 0
        if let w = fingerprint["screen_width"], let h = fingerprint["screen_height"], click.screenWidth != nil,
            w == click.screenWidth.map(JSONValue.int), h == click.screenHeight.map(JSONValue.int)
        {
            score += 25
        }
        if fingerprint["os_version"]?.stringValue == click.osVersion, click.osVersion != nil { score += 20 }
        if fingerprint["timezone"]?.stringValue == click.timezone, click.timezone != nil { score += 20 }
        if let language = fingerprint["language"]?.stringValue, let clicked = click.language,
            language.prefix(2).lowercased() == clicked.prefix(2).lowercased()
        {
            score += 15
        }
        if let ratio = click.devicePixelRatio, let sent = fingerprint["device_pixel_ratio"],
            sent == .double(ratio) || Int(exactly: ratio).map({ sent == .int($0) }) == true
        {
            score += 10
        }
        if fingerprint["calendar"]?.stringValue == click.calendar, click.calendar != nil { score += 10 }
        return min(score, 100)
    }

    private func attribute(_ text: String) -> HTTPResponse {
        guard let url = URL(string: text), url.host?.lowercased() == projectHost else { return .json(["matched": false]) }
        let path = url.path.isEmpty ? "/" : url.path
        if path == "/", let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let target = components.queryItems?.first(where: { $0.name == "link" })?.value
        {
            // An unnamed link: its destination rides in `link`.
            var link: [String: JSONValue] = ["id": .string(Self.stableID(text)), "url": .string(target), "deep_link_value": nil]
            if let title = components.queryItems?.first(where: { $0.name == "st" })?.value { link["social_title"] = .string(title) }
            if let forced = components.queryItems?.first(where: { $0.name == "efr" })?.value {
                link["enable_forced_redirect"] = .bool(forced == "true")
            }
            return .json(["matched": true, "link": .object(link)])
        }
        let found = state.withLock { state in
            state.links.first { $0.path == path || "/" + $0.shortenedPath == path }
        }
        guard let found else { return .json(["matched": false]) }
        return .json(["matched": true, "link": linkJSON(found)])
    }

    private func linkJSON(_ link: Link) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(link.id), "path": .string(link.path), "shortened_path": .string(link.shortenedPath),
            "url": .string(link.url), "full_url": .string("https://\(projectHost)\(link.path)"),
            "ios_deferred_deep_linking_enabled": .bool(link.iosDeferredDeepLinkingEnabled),
        ]
        if let value = link.deepLinkValue { object["deep_link_value"] = .string(value) }
        if let name = link.name { object["name"] = .string(name) }
        if let referrer = link.referrer { object["referrer"] = .string(referrer) }
        return .object(object)
    }

    static func threePart(_ version: String) -> String {
        var parts = version.split(separator: ".").prefix(3).map(String.init)
        while parts.count < 3 { parts.append("0") }
        return parts.joined(separator: ".")
    }

    private static func stableID(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}

extension ProviderSimulator {
    /// Adds Dynalinks: its API on `apiHost` for the project on `projectHost`.
    @discardableResult
    public func addDynalinks(clientAPIKey: String, projectHost: String, apiHost: String = "dynalinks.app") -> DynalinksEmulation {
        let emulation = DynalinksEmulation(clientAPIKey: clientAPIKey, projectHost: projectHost, clock: clock)
        register(emulation, hosts: [apiHost])
        return emulation
    }
}
