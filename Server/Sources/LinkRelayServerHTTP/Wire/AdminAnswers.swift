import Foundation
import LinkRelay
import LinkRelayServerCore

/// `GET /api/analytics/overview` and `GET /api/analytics/links/{id}`: clicks in Core's shape
/// (`Unknown` for a platform or country not known), with the referrers, `utm_source`s and
/// installs besides; the overview adds the top links, one link's its `linkId`.
package struct Analytics: WireAnswer {
    package struct DayCount: Encodable, Sendable {
        package var date: String
        package var clicks: Int
    }

    package struct PlatformCount: Encodable, Sendable {
        package var platform: String
        package var clicks: Int
    }

    package struct CountryCount: Encodable, Sendable {
        package var countryCode: String
        package var country: String
        package var clicks: Int
    }

    package struct ReferrerCount: Encodable, Sendable {
        package var referrer: Nullable<String>
        package var clicks: Int
    }

    package struct SourceCount: Encodable, Sendable {
        package var utmSource: Nullable<String>
        package var clicks: Int
    }

    package struct MethodCount: Encodable, Sendable {
        package var method: Nullable<String>
        package var installs: Int
    }

    package struct Installs: Encodable, Sendable {
        package var total: Int
        package var attributed: Int
        package var organic: Int
        package var byMethod: [MethodCount]

        /// Installs by method, with the attributed and organic totals.
        package init(_ methods: [NamedCount]) {
            total = methods.reduce(0) { $0 + $1.count }
            organic = methods.filter { $0.name == AttributionMethod.none.rawValue }.reduce(0) { $0 + $1.count }
            attributed = total - organic
            byMethod = methods.map { MethodCount(method: Nullable($0.name), installs: $0.count) }
        }
    }

    package struct TopLink: Encodable, Sendable {
        package var id: String
        package var shortCode: Nullable<String>
        package var title: Nullable<String>
        package var originalUrl: Nullable<String>
        package var totalClicks: Int
        package var uniqueClicks: Int

        /// `entry`'s counts, with its link when it still exists.
        package init(_ entry: LinkClicks, link: LinkRecord?) {
            id = entry.linkID
            shortCode = Nullable(link?.shortCode)
            title = Nullable(link?.title)
            originalUrl = Nullable(link?.originalURL)
            totalClicks = entry.clicks
            uniqueClicks = entry.uniqueClicks
        }
    }

    package var days: Int
    package var from: Date
    package var to: Date
    package var totalClicks: Int
    package var uniqueClicks: Int
    /// The link, for one link's analytics.
    package var linkId: String?
    package var clicksByDate: [DayCount]
    package var clicksByPlatform: [PlatformCount]
    package var clicksByCountry: [CountryCount]
    package var clicksByReferrer: [ReferrerCount]
    package var clicksByUtmSource: [SourceCount]
    package var installs: Installs
    /// The most clicked links, for the overview.
    package var topLinks: [TopLink]?

    /// `clicks` and `installs` over the last `days` days, `from` to `to`.
    package init(days: Int, from: Date, to: Date, clicks: ClickSummary, installs: [NamedCount]) {
        self.days = days
        self.from = from
        self.to = to
        totalClicks = clicks.total
        uniqueClicks = clicks.unique
        clicksByDate = clicks.byDay.map { DayCount(date: Timestamp.date(ofDay: $0.day), clicks: $0.clicks) }
        clicksByPlatform = clicks.byPlatform.map { PlatformCount(platform: $0.name ?? "Unknown", clicks: $0.count) }
        clicksByCountry = clicks.byCountry.map {
            CountryCount(countryCode: $0.name ?? "Unknown", country: $0.name ?? "Unknown", clicks: $0.count)
        }
        clicksByReferrer = clicks.byReferrer.map { ReferrerCount(referrer: Nullable($0.name), clicks: $0.count) }
        clicksByUtmSource = clicks.byUTMSource.map { SourceCount(utmSource: Nullable($0.name), clicks: $0.count) }
        self.installs = Installs(installs)
    }

    package static let schema = "Analytics"
    package static let example: Analytics = {
        let clicks = ClickSummary(
            total: 3, unique: 2, byDay: [(day: 20_600, clicks: 3)], byPlatform: [NamedCount(name: "ios", count: 3)],
            byCountry: [NamedCount(name: "FR", count: 3)], byReferrer: [NamedCount(name: nil, count: 3)],
            byUTMSource: [NamedCount(name: "mail", count: 3)],
            topLinks: [LinkClicks(linkID: WireTypes.exampleLink.id, clicks: 3, uniqueClicks: 2)])
        var answer = Analytics(
            days: 30, from: Date(timeIntervalSince1970: 1_777_400_000), to: Date(timeIntervalSince1970: 1_780_000_000), clicks: clicks,
            installs: [NamedCount(name: "fingerprint", count: 1), NamedCount(name: "none", count: 1)])
        answer.linkId = WireTypes.exampleLink.id
        answer.topLinks = clicks.topLinks.map { TopLink($0, link: WireTypes.exampleLink) }
        return answer
    }()
}

/// `POST /api/templates`: the template made, its fields named as the request names them.
package struct TemplateAnswer: WireAnswer {
    package var id: String
    package var projectId: String
    package var slug: String
    package var name: String
    package var iosAppStoreUrl: String?
    package var androidAppStoreUrl: String?
    package var webFallbackUrl: String?
    package var createdAt: Date

    /// `template` as answered.
    package init(_ template: TemplateRecord) {
        id = template.id
        projectId = template.projectID
        slug = template.slug
        name = template.name
        iosAppStoreUrl = template.iosAppStoreURL
        androidAppStoreUrl = template.androidAppStoreURL
        webFallbackUrl = template.webFallbackURL
        createdAt = template.createdAt
    }

    package static let schema = "Template"
    package static let example = TemplateAnswer(
        TemplateRecord(
            projectID: "p", slug: "k3m9x2qa", name: "Spring", iosAppStoreURL: "https://apps.apple.com/app/id1",
            androidAppStoreURL: "https://play.google.com/store/apps/details?id=com.acme", webFallbackURL: "https://acme.example",
            createdAt: Date(timeIntervalSince1970: 1_780_000_000)))
}

/// `POST /api/apps`: the app registered.
package struct AppAnswer: WireAnswer {
    package var id: String
    package var projectId: String
    package var platform: String
    package var identifier: String
    /// An iOS app's paths (empty for the others).
    package var paths: [String]
    /// An Android app's certificates' SHA-256 fingerprints (empty for the others).
    package var certificateFingerprints: [String]
    package var createdAt: Date

    /// `app` as answered.
    package init(_ app: AppRecord) {
        id = app.id
        projectId = app.projectID
        platform = app.platform.rawValue
        identifier = app.identifier
        paths = app.paths
        certificateFingerprints = app.certificateFingerprints
        createdAt = app.createdAt
    }

    package static let schema = "App"
    package static let example = AppAnswer(
        AppRecord(
            projectID: "p", platform: .ios, identifier: "ABCDE12345.com.acme.shop", paths: ["/*"],
            createdAt: Date(timeIntervalSince1970: 1_780_000_000)))
}

/// `GET /api/installs/{id}`: one install as stored.
package struct InstallDetails: WireAnswer {
    package struct Device: Encodable, Sendable {
        package var ip: Nullable<String>
        package var networkPrefix: Nullable<String>
        package var userAgent: Nullable<String>
        package var timezone: Nullable<String>
        package var language: Nullable<String>
        package var screenWidth: Nullable<Int>
        package var screenHeight: Nullable<Int>
    }

    package var id: String
    package var linkId: Nullable<String>
    package var clickId: Nullable<String>
    package var attributed: Bool
    package var attributionMethod: String
    package var confidenceScore: Int
    package var matchedFactors: [String]
    package var installedAt: Date
    package var platform: Nullable<String>
    package var platformVersion: Nullable<String>
    package var deviceId: Nullable<String>
    package var attributionWindowHours: Nullable<Int>
    package var deepLinkData: [String: JSONValue]
    package var fingerprintHash: String
    package var appleAdsToken: Nullable<String>
    package var device: Device

    /// `install` as stored.
    package init(_ install: InstallRecord) {
        id = install.id
        linkId = Nullable(install.linkID)
        clickId = Nullable(install.clickID)
        attributed = install.method != .none
        attributionMethod = install.method.rawValue
        confidenceScore = install.confidence
        matchedFactors = install.matchedFactors
        installedAt = install.installedAt
        platform = Nullable(install.platform?.rawValue)
        platformVersion = Nullable(install.platformVersion)
        deviceId = Nullable(install.deviceID)
        attributionWindowHours = Nullable(install.attributionWindowHours)
        deepLinkData = install.deepLinkData
        fingerprintHash = install.fingerprintHash
        appleAdsToken = Nullable(install.appleAdsToken)
        let signals = install.device
        device = Device(
            ip: Nullable(signals.ip), networkPrefix: Nullable(signals.networkPrefix), userAgent: Nullable(signals.userAgent),
            timezone: Nullable(signals.timezone), language: Nullable(signals.language), screenWidth: Nullable(signals.screenWidth),
            screenHeight: Nullable(signals.screenHeight))
    }

    package static let schema = "Install"
    package static let example = InstallDetails(WireTypes.exampleInstall)
}

/// `GET`/`PUT /api/destination-hosts`: `{"mode", "hosts"}` (``DestinationHosts``).
package struct DestinationHostsAnswer: WireAnswer {
    package var mode: String
    package var hosts: [String]

    package init(_ hosts: DestinationHosts) {
        mode = hosts.mode.rawValue
        self.hosts = hosts.hosts
    }

    package static let schema = "DestinationHosts"
    package static let example = DestinationHostsAnswer(DestinationHosts(mode: .listed, hosts: ["acme.example", "*.acme.example"]))
}

/// `GET`/`PUT /api/landing-page`: `{"enabled", "appName", "appIconUrl"}`.
package struct LandingPageAnswer: WireAnswer {
    package var enabled: Bool
    package var appName: Nullable<String>
    package var appIconUrl: Nullable<String>

    package init(_ settings: LandingPageSettings) {
        enabled = settings.enabled
        appName = Nullable(settings.appName)
        appIconUrl = Nullable(settings.appIconURL)
    }

    package static let schema = "LandingPage"
    package static let example = LandingPageAnswer(
        LandingPageSettings(enabled: true, appName: "Acme Shop", appIconURL: "https://acme.example/icon.png"))
}

/// `/.well-known/apple-app-site-association` (``AppAssociations/apple(_:)``).
package struct AppleAppSiteAssociationFile: WireAnswer {
    package var file: JSONValue

    package init(_ apps: [AppRecord]) {
        file = AppAssociations.apple(apps)
    }

    package func encode(to encoder: any Encoder) throws {
        try file.encode(to: encoder)
    }

    package static let schema = "AppleAppSiteAssociation"
    package static let example = AppleAppSiteAssociationFile([
        AppRecord(projectID: "p", platform: .ios, identifier: "ABCDE12345.com.acme.shop", paths: ["/*"], createdAt: Date()),
        AppRecord(projectID: "p", platform: .appClip, identifier: "ABCDE12345.com.acme.shop.Clip", createdAt: Date()),
    ])
}

/// `/.well-known/assetlinks.json` (``AppAssociations/android(_:)``).
package struct AssetLinksFile: WireAnswer {
    package var statements: [JSONValue]

    package init(_ apps: [AppRecord]) {
        statements = AppAssociations.android(apps)
    }

    package func encode(to encoder: any Encoder) throws {
        try statements.encode(to: encoder)
    }

    package static let schema = "AssetLinks"
    package static let example = AssetLinksFile([
        AppRecord(
            projectID: "p", platform: .android, identifier: "com.acme.shop",
            certificateFingerprints: [Array(repeating: "AB", count: 32).joined(separator: ":")], createdAt: Date())
    ])
}
