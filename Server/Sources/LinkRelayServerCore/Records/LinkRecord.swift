import Foundation
import LinkRelay

/// A link as stored: where it sends a browser, what the app receives, and how long a click on
/// it may attribute an install.
package struct LinkRecord: Sendable, Hashable, Codable {
    /// A random identifier (a UUID, as LinkForty's `linkId`).
    package var id: String
    /// The project that owns it.
    package var projectID: String
    /// A template's slug for links of the form `/{templateSlug}/{shortCode}`; empty for `/{shortCode}`.
    package var templateSlug: String
    /// The link's code, the last path segment.
    package var shortCode: String
    /// Where a browser without the app goes when nothing more specific applies.
    package var originalURL: String
    /// The in-app path (`/product/42`).
    package var deepLinkPath: String?
    /// The app's URL scheme (`acmeshop`).
    package var appScheme: String?
    /// The App Store page.
    package var iosAppStoreURL: String?
    /// The Play Store page.
    package var androidAppStoreURL: String?
    /// The web page for devices without the app.
    package var webFallbackURL: String?
    /// `source`, `medium`, `campaign`, `term`, `content`.
    package var utmParameters: [String: String]
    /// What the app receives with the link; any JSON values.
    package var deepLinkParameters: [String: JSONValue]
    /// How many hours after a click an install may still be attributed to it (1…2160).
    package var attributionWindowHours: Int
    /// Whether the link answers at all.
    package var isActive: Bool
    /// When it stops answering.
    package var expiresAt: Date?
    /// When it was created.
    package var createdAt: Date
    /// The template it was made from.
    package var templateID: String?
    /// A title for people (and the preview's title when ``ogTitle`` is not set).
    package var title: String?
    /// A description for people (and the preview's when ``ogDescription`` is not set).
    package var description: String?
    /// The app's universal link: where an iPhone goes first.
    package var iosUniversalLink: String?
    /// The app's Android App Link.
    package var androidAppLink: String?
    /// Who may follow it: `{"countries": [...], "devices": ["ios","android","web"], "languages": [...]}`;
    /// an empty object for everyone.
    package var targetingRules: [String: JSONValue]
    /// The link preview scrapers read (Open Graph).
    package var ogTitle: String?
    /// The preview's description.
    package var ogDescription: String?
    /// The preview's image.
    package var ogImageURL: String?
    /// Whether the redirect adds `lf_click=<click id>` to web targets.
    package var appendClickID: Bool
    /// The app's user who asked for the link, for the SDK's de-duplication.
    package var externalUserID: String?
    /// The hash of the creating request's content: the same request from the same user gets
    /// the same link back (`deduplicated: true`).
    package var dedupeKey: String?
    /// Whether an iPhone without the app gets the pasteboard landing page (a button that copies
    /// the link with its click token, then opens the App Store) instead of going to the store
    /// at once; `nil` as the project says (``LandingPageSettings``).
    package var landingPage: Bool?

    /// A link; see each property.
    package init(
        id: String = UUID().uuidString.lowercased(), projectID: String, templateSlug: String = "", shortCode: String, originalURL: String,
        deepLinkPath: String? = nil, appScheme: String? = nil, iosAppStoreURL: String? = nil, androidAppStoreURL: String? = nil,
        webFallbackURL: String? = nil, utmParameters: [String: String] = [:], deepLinkParameters: [String: JSONValue] = [:],
        attributionWindowHours: Int = 168, isActive: Bool = true, expiresAt: Date? = nil, createdAt: Date, templateID: String? = nil,
        title: String? = nil, description: String? = nil, iosUniversalLink: String? = nil, androidAppLink: String? = nil,
        targetingRules: [String: JSONValue] = [:], ogTitle: String? = nil, ogDescription: String? = nil, ogImageURL: String? = nil,
        appendClickID: Bool = false, externalUserID: String? = nil, dedupeKey: String? = nil, landingPage: Bool? = nil
    ) {
        self.landingPage = landingPage
        self.id = id
        self.projectID = projectID
        self.templateSlug = templateSlug
        self.shortCode = shortCode
        self.originalURL = originalURL
        self.deepLinkPath = deepLinkPath
        self.appScheme = appScheme
        self.iosAppStoreURL = iosAppStoreURL
        self.androidAppStoreURL = androidAppStoreURL
        self.webFallbackURL = webFallbackURL
        self.utmParameters = utmParameters
        self.deepLinkParameters = deepLinkParameters
        self.attributionWindowHours = min(max(attributionWindowHours, 1), 2160)
        self.isActive = isActive
        self.expiresAt = expiresAt?.storedPrecision
        self.createdAt = createdAt.storedPrecision
        self.templateID = templateID
        self.title = title
        self.description = description
        self.iosUniversalLink = iosUniversalLink
        self.androidAppLink = androidAppLink
        self.targetingRules = targetingRules
        self.ogTitle = ogTitle
        self.ogDescription = ogDescription
        self.ogImageURL = ogImageURL
        self.appendClickID = appendClickID
        self.externalUserID = externalUserID
        self.dedupeKey = dedupeKey
    }

    /// Whether the link answers at `date`: active and not expired.
    package func isLive(at date: Date) -> Bool {
        isActive && (expiresAt.map { $0 > date } ?? true)
    }

    /// `active`, `inactive` or `expired` at `date`, as the dashboard and the command line show it.
    package func status(at date: Date) -> String {
        !isActive ? "inactive" : isLive(at: date) ? "active" : "expired"
    }

    /// `{base}/{code}` or `{base}/{template}/{code}`: the address people are given.
    package func shareURL(on base: URL) -> URL {
        base.appendingPathComponent((templateSlug.isEmpty ? "" : templateSlug + "/") + shortCode)
    }

    /// The places the redirect may send a person (an SDK key's link only to the project's
    /// destination hosts, ``DestinationHosts``; ``LinkDraft`` names them as the API does).
    package var destinationURLs: [String?] {
        [originalURL, webFallbackURL, iosAppStoreURL, androidAppStoreURL, iosUniversalLink, androidAppLink]
    }
}

/// A tap on a link, with what the device told about itself (the `fp_*` parameters a landing
/// page or an SDK adds) and the network it came from.
package struct ClickRecord: Sendable, Hashable, Codable {
    /// A random identifier (a UUIDv7, so the newest sort last).
    package var id: String
    /// The link tapped.
    package var linkID: String
    /// Its project.
    package var projectID: String
    /// When.
    package var clickedAt: Date
    /// The device: its public address and network, the `User-Agent` header, `fp_tz`, `fp_lang`
    /// (else the first `Accept-Language`), `fp_sw` and `fp_sh`.
    package var device: DeviceSignals
    /// `ios`, `android` or `web`, from the user agent.
    package var platform: DevicePlatform?
    /// Whether the user agent is a crawler's: never a match candidate.
    package var isBot: Bool
    /// Where the tap came from, for the link's analytics.
    package var source: ClickSource

    /// Whether `userAgent` is a crawler's or a link-preview fetcher's, as the server classifies
    /// the clicks it records.
    package static func isBot(userAgent: String?) -> Bool {
        Fingerprint.isBot(userAgent)
    }

    /// A click; see each property.
    package init(
        id: String? = nil, linkID: String, projectID: String, clickedAt: Date, device: DeviceSignals, platform: DevicePlatform?,
        isBot: Bool,
        source: ClickSource = ClickSource()
    ) {
        self.id = id ?? RecordID.timeOrdered(at: clickedAt)
        self.linkID = linkID
        self.projectID = projectID
        self.clickedAt = clickedAt.storedPrecision
        self.device = device
        self.platform = platform
        self.isBot = isBot
        self.source = source
    }
}

/// Where a tap came from, as far as the request tells: what a link's analytics count it by.
package struct ClickSource: Sendable, Hashable, Codable {
    /// The host of the page the link was on (`Referer`'s host only: its path and query may hold
    /// anything), lowercased; `nil` without one.
    package var referrerHost: String?
    /// The country (ISO 3166-1 alpha-2, `DE`), from the header the proxy in front sets
    /// (``ServerConfiguration/countryHeader``); `nil` where unknown.
    package var country: String?
    /// The tap's `utm_source`, else its link's; `nil` without one.
    package var utmSource: String?

    /// A source; see each property.
    package init(referrerHost: String? = nil, country: String? = nil, utmSource: String? = nil) {
        self.referrerHost = referrerHost
        self.country = country
        self.utmSource = utmSource
    }

    /// `Referer`'s host: an http(s) URL's host of letters, digits, `-` and `.`, at most 253
    /// characters, lowercased; `nil` for anything else.
    package static func referrerHost(_ header: String?) -> String? {
        guard let header, header.utf8.count <= 4096, let url = URL(string: header), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host?.lowercased(), DestinationHosts.isValidPattern(host),
            !host.hasPrefix("*.")
        else { return nil }
        return host
    }

    /// A country code as a proxy sends it: two letters (upper-cased); `XX` (unknown) and `T1`
    /// (Tor) and anything else are `nil`.
    package static func country(_ header: String?) -> String? {
        guard let header, header.utf8.count == 2 else { return nil }
        let code = header.uppercased()
        guard code.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) }), code != "XX" else { return nil }
        return code
    }

    /// A `utm_source`: trimmed, in Unicode's composed form (NFC: `é` typed either way is one
    /// value, and one daily-count row), at most 100 characters counted as Unicode scalars (so at
    /// most 400 bytes; counted as grapheme clusters, `E` and 12,000 combining marks was "one
    /// character" of 24,001 bytes), no control characters; `nil` otherwise.
    package static func utmSource(_ value: String?) -> String? {
        guard let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines), trimmed.utf8.count <= 4 * maxUTMSourceLength else {
            return nil
        }
        let value = trimmed.precomposedStringWithCanonicalMapping
        guard !value.isEmpty, TextLimit.fits(value, characters: maxUTMSourceLength),
            !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return value
    }

    /// The most characters (Unicode scalars) a `utm_source` keeps.
    static let maxUTMSourceLength = 100
}
