import Foundation
import LinkRelay
import LinkRelaySimulatorCore

/// LinkForty Core's server, emulated from its source: install attribution with Core's matcher,
/// resolve, events, link creation (Core's `/api/links`, and Cloud's `/api/sdk/v1/links` unless
/// turned off), the browser redirect that records web clicks, and Core's error bodies
/// (`{"error":"Link not found"}`, validation failures as 500).
///
/// ```swift
/// let linkForty = simulator.addLinkForty(host: "go.acme.app")
/// let link = linkForty.createLink(shortCode: "spring", deepLinkPath: "/products/42", appScheme: "acme")
/// try linkForty.recordWebClick(url: URL(string: "https://go.acme.app/spring")!, from: StaticDeviceInfo.iPhone)
/// ```
public final class LinkFortyEmulation: ProviderEmulation, WebClickRecording {
    /// A link, as Core's `links` row holds it.
    public struct Link: Sendable, Hashable {
        /// The link's id (a lower-case UUID).
        public var id: String
        /// The short code: `https://{domain}/{shortCode}`.
        public var shortCode: String
        /// The id of the link's template, when it has one.
        public var templateID: String?
        /// The template's slug: `https://{domain}/{templateSlug}/{shortCode}`.
        public var templateSlug: String?
        /// Where a browser without the app is sent.
        public var originalURL: String
        /// The in-app path the resolve answers (`/products/42`).
        public var deepLinkPath: String?
        /// The app's URL scheme, for app-scheme destinations.
        public var appScheme: String?
        /// Where an iPhone without the app is sent.
        public var iosAppStoreURL: String?
        /// Where an Android phone without the app is sent.
        public var androidAppStoreURL: String?
        /// Where a desktop browser is sent.
        public var webFallbackURL: String?
        /// The link's UTM parameters.
        public var utmParameters: [String: String]?
        /// Custom parameters the app receives with the link.
        public var deepLinkParameters: [String: JSONValue]?
        /// How long after a click an install may be attributed to it; `nil` or 0 means 168 hours.
        public var attributionWindowHours: Int?
        /// Whether the link resolves; an inactive link is "not found".
        public var isActive: Bool
        /// When the link stops resolving.
        public var expiresAt: Date?
        /// The user the link was created for (Cloud's `externalUserId`).
        public var externalUserID: String?
    }

    /// A recorded click with its fingerprint.
    public struct Click: Sendable, Hashable {
        /// The click's id (a lower-case UUID).
        public var id: String
        /// The clicked link's ``Link/id``.
        public var linkID: String
        /// When the click happened.
        public var clickedAt: Date
        /// What the redirect collected from the browser.
        public var fingerprint: LinkFortyMatcher.Fingerprint
    }

    /// A reported install.
    public struct Install: Sendable, Hashable {
        /// The install's id, as the install answer gives it (`installId`).
        public var id: String
        /// The fingerprint the SDK reported.
        public var fingerprint: LinkFortyMatcher.Fingerprint
        /// The click it was attributed to; `nil` for an organic install.
        public var match: LinkFortyMatcher.Match?
        /// When the report arrived.
        public var receivedAt: Date
    }

    /// A received event.
    public struct Event: Sendable, Hashable {
        /// The event's id.
        public var id: String
        /// The install it was reported for.
        public var installID: String
        /// The event's name (`purchase`).
        public var name: String
        /// Its properties (`eventData`).
        public var data: [String: JSONValue]
        /// The time the SDK stamped on it, as sent.
        public var timestamp: String?
        /// When it arrived.
        public var receivedAt: Date
    }

    struct State: Sendable {
        var links: [Link] = []
        var templates: [String: String] = [:]  // id → slug
        var clicks: [Click] = []
        var installs: [Install] = []
        var events: [Event] = []
    }

    let state = Locked(State())
    /// The host links are served on (`https://<host>/<code>`).
    public let host: String
    /// Whether Cloud's `POST /api/sdk/v1/links` exists; Core answers it with 404. Default `true`.
    public let emulatesCloud: Bool
    /// The API keys the server accepts. `nil` (the default) accepts any request, as LinkForty
    /// Core does (it has no authentication); a set answers every `/api/` request without
    /// `Authorization: Bearer <one of them>` with 401 `{"error":"Unauthorized",…}`, as LinkForty
    /// Cloud does. Links themselves (`/<code>`) never need a key.
    public let apiKeys: Set<String>?
    let matcher = LinkFortyMatcher()

    /// The clock a web click is dated on when no date is given: the simulator's, for an
    /// emulation added with the simulator's `add…` method.
    public let clock: any LinkRelayClock

    /// An emulation serving links on `host`; see ``emulatesCloud`` and ``apiKeys``. Clicks
    /// recorded without a date are dated on `clock`.
    public init(host: String, emulatesCloud: Bool = true, apiKeys: Set<String>? = nil, clock: any LinkRelayClock = SystemClock()) {
        self.clock = clock
        self.host = host.lowercased()
        self.emulatesCloud = emulatesCloud
        self.apiKeys = apiKeys
    }

    // MARK: Scripting

    /// Creates a template and returns its id and 8-character slug.
    @discardableResult
    public func createTemplate(slug: String? = nil) -> (id: String, slug: String) {
        let id = UUID().uuidString.lowercased()
        let slug = slug ?? Self.randomCode(alphabet: "abcdefghijklmnopqrstuvwxyz0123456789")
        state.withLock { $0.templates[id] = slug }
        return (id, slug)
    }

    /// Creates a link; a missing or taken short code gets a random 8-character one.
    @discardableResult
    public func createLink(
        shortCode: String? = nil, templateSlug: String? = nil, originalURL: String = "https://example.com/",
        deepLinkPath: String? = nil, appScheme: String? = nil, iosAppStoreURL: String? = nil,
        androidAppStoreURL: String? = nil, webFallbackURL: String? = nil, utmParameters: [String: String]? = nil,
        deepLinkParameters: [String: JSONValue]? = nil, attributionWindowHours: Int? = 168, isActive: Bool = true,
        expiresAt: Date? = nil
    ) -> Link {
        let templateID = templateSlug.map { slug in
            state.withLock { state in
                if let existing = state.templates.first(where: { $0.value == slug })?.key { return existing }
                let id = UUID().uuidString.lowercased()
                state.templates[id] = slug
                return id
            }
        }
        return state.withLock { state in
            let link = Link(
                id: UUID().uuidString.lowercased(), shortCode: Self.uniqueCode(shortCode, in: state), templateID: templateID,
                templateSlug: templateSlug, originalURL: originalURL, deepLinkPath: deepLinkPath, appScheme: appScheme,
                iosAppStoreURL: iosAppStoreURL, androidAppStoreURL: androidAppStoreURL, webFallbackURL: webFallbackURL,
                utmParameters: utmParameters, deepLinkParameters: deepLinkParameters,
                attributionWindowHours: attributionWindowHours, isActive: isActive, expiresAt: expiresAt)
            state.links.append(link)
            return link
        }
    }

    /// Records a click on a link as the redirect would, from `fingerprint` (its `ip` included).
    public func recordClick(shortCode: String, fingerprint: LinkFortyMatcher.Fingerprint, at date: Date) {
        state.withLock { state in
            guard let link = state.links.first(where: { $0.shortCode == shortCode }) else { return }
            state.clicks.append(Click(id: UUID().uuidString.lowercased(), linkID: link.id, clickedAt: date, fingerprint: fingerprint))
        }
    }

    /// Records a web click on the link at `url` (`https://{domain}/{shortCode}` or
    /// `https://{domain}/{templateSlug}/{shortCode}`) from a phone's browser at `ip`: the
    /// fingerprint Core's redirect collects (time zone, language, and the screen in native
    /// pixels), with a Safari user agent.
    public func recordWebClick(url: URL, from device: DeviceInfo, ip: String, at date: Date) throws {
        guard let shortCode = url.path.split(separator: "/").last.map(String.init),
            links.contains(where: { $0.shortCode == shortCode })
        else { throw UnknownLinkError(provider: "LinkForty", url: url) }
        let language = device.preferredLanguages.first
        recordClick(
            shortCode: shortCode,
            fingerprint: .init(
                ip: ip, userAgent: Self.safariUserAgent, timezone: device.timeZoneIdentifier, language: language,
                screenWidth: device.screen?.pixelWidth, screenHeight: device.screen?.pixelHeight),
            at: date)
    }

    static let safariUserAgent =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"

    /// Every link, in creation order.
    public var links: [Link] { state.withLock { $0.links } }
    /// Every click, in order.
    public var clicks: [Click] { state.withLock { $0.clicks } }
    /// Every install report, in order.
    public var installs: [Install] { state.withLock { $0.installs } }
    /// Every stored event, in order.
    public var events: [Event] { state.withLock { $0.events } }

    // MARK: Codes

    static func randomCode(alphabet: String = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") -> String {
        let characters = Array(alphabet)
        return String((0..<8).map { _ in characters.randomElement() ?? "x" })
    }

    /// `requested` when free; otherwise (as Core does, silently) a random one.
    static func uniqueCode(_ requested: String?, in state: State) -> String {
        if let requested, !requested.isEmpty, !state.links.contains(where: { $0.shortCode == requested }) {
            return requested
        }
        var code = randomCode()
        while state.links.contains(where: { $0.shortCode == code }) { code = randomCode() }
        return code
    }
}

extension ProviderSimulator {
    /// Adds a LinkForty server on `host` and returns it for scripting.
    @discardableResult
    public func addLinkForty(host: String, emulatesCloud: Bool = true, apiKeys: Set<String>? = nil) -> LinkFortyEmulation {
        let emulation = LinkFortyEmulation(host: host, emulatesCloud: emulatesCloud, apiKeys: apiKeys, clock: clock)
        register(emulation, hosts: [host])
        return emulation
    }
}
