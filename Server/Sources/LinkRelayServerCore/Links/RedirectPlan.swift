import Foundation
import LinkRelay

/// A tap on a link as the redirect decides it: what the request says, read once by the HTTP
/// layer (`RedirectTap(request)` there), so the decision is a function of values.
package struct RedirectTap: Sendable, Hashable {
    /// The device's platform, from its user agent.
    package var platform: DevicePlatform
    /// Whether the user agent is a crawler or a link-preview fetcher.
    package var isBot: Bool
    /// Whether it is an app's own browser (Instagram, Facebook, Google…), where a store often
    /// cannot open.
    package var inAppBrowser: Bool
    /// The first language of `Accept-Language`, two letters lower-cased.
    package var language: String?
    /// The country the proxy in front names (`CF-IPCountry`, `X-Country-Code`), lower-cased.
    package var country: String?
    /// Whether the URL carries what the deferred match compares (`fp_*`) or says a browser sent
    /// none (`lf_fp`): the collecting page was passed.
    package var collected: Bool
    /// Whether the browser runs no script (`lf_fp=0`): it cannot copy to the pasteboard.
    package var scriptless: Bool

    /// A tap; see each property.
    package init(
        platform: DevicePlatform, isBot: Bool = false, inAppBrowser: Bool = false, language: String? = nil, country: String? = nil,
        collected: Bool = true, scriptless: Bool = false
    ) {
        self.platform = platform
        self.isBot = isBot
        self.inAppBrowser = inAppBrowser
        self.language = language
        self.country = country
        self.collected = collected
        self.scriptless = scriptless
    }

    /// The user-agent tokens of apps' own browsers.
    package static let inAppTokens = ["gsa/", "fban", "fbav", "instagram", "twitter", "linkedin", "micromessenger", "outlook"]
}

/// What the redirect does with a live link, decided without HTTP: first whether the tap is a
/// click at all (``first(_:_:)``), then, with the click stored, where it goes
/// (``destination(_:_:clickID:recorded:projectLandingPage:)``).
package enum RedirectPlan {
    /// Before a click is stored.
    package enum First: Sendable, Hashable {
        /// The link's targeting rules leave this device out: not found, as Core answers.
        case notFound
        /// A crawler: the link's preview, its click stored as a bot's.
        case preview
        /// A phone whose browser has not yet said what the match compares: the collecting
        /// page, no click.
        case collect
        /// A click: store it, then ``destination(_:_:clickID:recorded:projectLandingPage:)``.
        case click
    }

    /// Where a stored click goes.
    package enum Destination: Sendable, Hashable {
        /// The pasteboard landing page, whose button copies the link with a click token, then
        /// opens `store`.
        case landingPage(store: String)
        /// The page that tries the app's `scheme`, then goes to `fallback` after 1.5 s.
        case interstitial(scheme: String, fallback: String?)
        /// A `302` to `url`.
        case redirect(String)
        /// Nowhere to go: the link's preview page.
        case preview
    }

    /// Whether `tap` is a click on `link`, a crawler's, a phone's first request, or left out.
    package static func first(_ link: LinkRecord, _ tap: RedirectTap) -> First {
        if tap.isBot { return .preview }
        guard isTargeted(link.targetingRules, tap) else { return .notFound }
        return tap.platform != .web && !tap.collected ? .collect : .click
    }

    /// Whether the click may get the landing page, so the project's landing page settings are
    /// needed (its default, the app's name and icon): an iPhone without the app on its way to
    /// the store, its click recorded, the link not turning the page off, a browser that can copy.
    package static func mayShowLandingPage(_ link: LinkRecord, _ tap: RedirectTap, recorded: Bool) -> Bool {
        landingStore(link, tap, recorded: recorded) != nil
    }

    /// Where the click `clickID` on `link` goes.
    /// - Parameters:
    ///   - recorded: whether the click was stored (a landing page's token names it).
    ///   - projectLandingPage: the project's setting, read when ``mayShowLandingPage(_:_:recorded:)``.
    package static func destination(
        _ link: LinkRecord, _ tap: RedirectTap, clickID: String, recorded: Bool, projectLandingPage: Bool?
    ) -> Destination {
        if let store = landingStore(link, tap, recorded: recorded), link.landingPage ?? projectLandingPage ?? false {
            return .landingPage(store: store)
        }
        let targets = targets(link, tap)
        // Store pages are left as they are: the parameters mean nothing there.
        let stores = [link.iosAppStoreURL, link.androidAppStoreURL].compactMap { $0 }
        let web = targets.fallback.map { stores.contains($0) ? $0 : decorated($0, link: link, clickID: clickID) }
        if let scheme = targets.scheme { return .interstitial(scheme: scheme, fallback: web) }
        return web.map(Destination.redirect) ?? .preview
    }

    /// The store an iPhone without the app would go to, when the landing page may show instead:
    /// no universal link (it would have opened the app), a store page, the click recorded, the
    /// link not turning the page off, a browser that runs script.
    static func landingStore(_ link: LinkRecord, _ tap: RedirectTap, recorded: Bool) -> String? {
        guard tap.platform == .ios, recorded, nonEmpty(link.iosUniversalLink) == nil, link.landingPage != false, !tap.scriptless
        else { return nil }
        return nonEmpty(link.iosAppStoreURL)
    }

    /// Where a device goes: the app's scheme URL to try (for the interstitial), then the URL to
    /// go to (directly, or after the try).
    package static func targets(_ link: LinkRecord, _ tap: RedirectTap) -> (scheme: String?, fallback: String?) {
        let original = nonEmpty(link.originalURL)
        let web = nonEmpty(link.webFallbackURL) ?? original
        guard tap.platform != .web else { return (nil, web) }
        let appLink = tap.platform == .ios ? link.iosUniversalLink : link.androidAppLink
        if let appLink = nonEmpty(appLink) { return (nil, appLink) }
        let store = nonEmpty(tap.platform == .ios ? link.iosAppStoreURL : link.androidAppStoreURL)
        // In an app's own browser the store often cannot open: the web page first there, the
        // store first elsewhere (Core's order).
        let fallback = tap.inAppBrowser ? (nonEmpty(link.webFallbackURL) ?? store ?? original) : (store ?? web)
        // A stored scheme is checked again: a link made before schemes were checked cannot run script.
        if let scheme = nonEmpty(link.appScheme), LinkRules.isValidScheme(scheme), let path = nonEmpty(link.deepLinkPath) {
            var components = URLComponents()
            components.scheme = scheme
            components.host = ""
            // The path as text: URLComponents encodes what needs it (setting an already-encoded
            // path that is not valid would stop the process).
            components.path = path.hasPrefix("/") ? path : "/" + path
            let items = link.deepLinkParameters.sorted { $0.key < $1.key }.compactMap { name, value in
                value.scalarDescription.map { URLQueryItem(name: name, value: $0) }
            }
            if !items.isEmpty { components.queryItems = items }
            // `scheme:///path` → `scheme://path`, the form apps register.
            let text = components.string.map { $0.replacingOccurrences(of: "\(scheme):///", with: "\(scheme)://") }
            return (text, fallback)
        }
        return (nil, fallback)
    }

    /// An http(s) target with the link's `utm_*`, its parameters and `lf_click` added (values
    /// already on the target win).
    package static func decorated(_ target: String, link: LinkRecord, clickID: String) -> String {
        guard var components = URLComponents(string: target), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else { return target }
        var items = components.queryItems ?? []
        let present = Set(items.map(\.name))
        var added: [URLQueryItem] = link.utmParameters.sorted { $0.key < $1.key }.compactMap { key, value in
            value.isEmpty ? nil : URLQueryItem(name: "utm_\(key)", value: value)
        }
        added += link.deepLinkParameters.sorted { $0.key < $1.key }.compactMap { name, value in
            value.scalarDescription.map { URLQueryItem(name: name, value: $0) }
        }
        if link.appendClickID { added.append(URLQueryItem(name: "lf_click", value: clickID)) }
        items += added.filter { !present.contains($0.name) }
        components.queryItems = items.isEmpty ? nil : items
        return components.string ?? target
    }

    /// Whether the link's targeting rules (devices, languages, countries) take `tap`; a country
    /// rule takes a tap whose country nobody named.
    package static func isTargeted(_ rules: [String: JSONValue], _ tap: RedirectTap) -> Bool {
        func list(_ name: String) -> [String]? {
            guard case .array(let items)? = rules[name], !items.isEmpty else { return nil }
            return items.compactMap { $0.stringValue?.lowercased() }
        }
        if let devices = list("devices"), !devices.contains(tap.platform.rawValue) { return false }
        if let languages = list("languages") {
            guard let primary = tap.language, languages.contains(where: { $0.prefix(2) == primary }) else { return false }
        }
        if let countries = list("countries"), let country = tap.country, !countries.contains(country) { return false }
        return true
    }

    static func nonEmpty(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
}
