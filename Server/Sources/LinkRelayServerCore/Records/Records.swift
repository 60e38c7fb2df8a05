import Foundation
import LinkRelay

/// A template: a slug that groups links (`/{slug}/{code}`) and the defaults its links fall back
/// to.
package struct TemplateRecord: Sendable, Hashable, Codable {
    /// A random identifier (a UUID, as LinkForty's `templateId`).
    package var id: String
    /// Its project.
    package var projectID: String
    /// The first path segment of its links: 8 characters of `a–z0–9` when made for you.
    package var slug: String
    /// A name for people.
    package var name: String
    /// The App Store page its links use when they name none.
    package var iosAppStoreURL: String?
    /// The Play Store page its links use when they name none.
    package var androidAppStoreURL: String?
    /// The web page its links use when they name none.
    package var webFallbackURL: String?
    /// When it was created.
    package var createdAt: Date

    /// A template; see each property.
    package init(
        id: String = UUID().uuidString.lowercased(), projectID: String, slug: String, name: String, iosAppStoreURL: String? = nil,
        androidAppStoreURL: String? = nil, webFallbackURL: String? = nil, createdAt: Date
    ) {
        self.id = id
        self.projectID = projectID
        self.slug = slug
        self.name = name
        self.iosAppStoreURL = iosAppStoreURL
        self.androidAppStoreURL = androidAppStoreURL
        self.webFallbackURL = webFallbackURL
        self.createdAt = createdAt.storedPrecision
    }

    /// The places a template's links fall back to, which teach the project's destination hosts.
    package var destinationURLs: [String?] { [iosAppStoreURL, androidAppStoreURL, webFallbackURL] }
}

/// An app the links open: what `/.well-known/apple-app-site-association` and
/// `/.well-known/assetlinks.json` are made of.
package struct AppRecord: Sendable, Hashable, Codable {
    /// Which store.
    package enum Platform: String, Sendable, Hashable, Codable {
        case ios
        case android
        /// An iOS App Clip (`TEAMID.bundle.id.Clip`), listed in the association file's
        /// `appclips` section so that links on the domain can invoke it.
        case appClip = "appclip"
    }

    /// A random identifier (`app_…`; made when `nil` is given).
    package var id: String
    /// Its project.
    package var projectID: String
    /// Which store.
    package var platform: Platform
    /// `TEAMID.bundle.id` on iOS; the package name on Android.
    package var identifier: String
    /// iOS: the paths the app opens (`/*` by default).
    package var paths: [String]
    /// Android: the SHA-256 fingerprints of the signing certificates (`AB:CD:…`).
    package var certificateFingerprints: [String]
    /// When it was registered.
    package var createdAt: Date

    /// An app; see each property.
    package init(
        id: String? = nil, projectID: String, platform: Platform, identifier: String,
        paths: [String] = [], certificateFingerprints: [String] = [], createdAt: Date
    ) {
        self.id = id ?? "app_" + APIKeys.randomString(16, alphabet: APIKeys.base62)
        self.projectID = projectID
        self.platform = platform
        self.identifier = identifier
        self.paths = paths
        self.certificateFingerprints = certificateFingerprints
        self.createdAt = createdAt.storedPrecision
    }
}

/// A click the deferred match may attribute an install to, with its link's window.
package struct MatchCandidate: Sendable, Hashable {
    /// The click.
    package var click: ClickRecord
    /// Its link's attribution window, in hours.
    package var windowHours: Int

    /// A candidate; see each property.
    package init(click: ClickRecord, windowHours: Int) {
        self.click = click
        self.windowHours = windowHours
    }
}

/// An install report and what the deferred match made of it.
package struct InstallRecord: Sendable, Hashable, Codable {
    /// A random identifier (a UUID: LinkForty's `installId`).
    package var id: String
    /// Its project.
    package var projectID: String
    /// The link the install is attributed to.
    package var linkID: String?
    /// The click it is attributed to.
    package var clickID: String?
    /// 0 (organic), else 70…100, LinkForty's scale.
    package var confidence: Int
    /// The factors that matched, in LinkForty's order (`ip`, `user_agent`, `timezone`, `language`, `screen`).
    package var matchedFactors: [String]
    /// `fingerprint`, `fingerprint_shared_network` (the network is shared by many devices, so
    /// its address weighed less), `none`, or `adopted` (made by another server; see
    /// ``ServerConfiguration/adoptUnknownInstalls``).
    package var method: AttributionMethod
    /// When it was reported.
    package var installedAt: Date
    /// The reporting device: its public address and network (none for an install stored before
    /// schema 7), and the `userAgent`, `timezone`, `language` and screen it reported.
    package var device: DeviceSignals
    /// The platform it reported (`iOS`, `ios` and `iPadOS` are ``DevicePlatform/ios``), `nil`
    /// when it named none the server knows.
    package var platform: DevicePlatform?
    /// The system's version.
    package var platformVersion: String?
    /// The identifier the app passed, if any.
    package var deviceID: String?
    /// LinkForty's fingerprint hash (SHA-256 of `ip|userAgent|timezone|language|width|height|platform|version`).
    package var fingerprintHash: String
    /// The window the SDK asked for (stored, not used: each link's own window decides).
    package var attributionWindowHours: Int?
    /// The deferred link's data as answered.
    package var deepLinkData: [String: JSONValue]

    /// An install; see each property.
    /// The Apple Ads attribution token the app sent (`appleAdsToken`), for an exchange with
    /// Apple's attribution API; never logged.
    package var appleAdsToken: String?

    package init(
        id: String? = nil, projectID: String, linkID: String?, clickID: String?, confidence: Int,
        matchedFactors: [String], method: AttributionMethod, installedAt: Date, device: DeviceSignals, platform: DevicePlatform?,
        platformVersion: String?, deviceID: String?, fingerprintHash: String,
        attributionWindowHours: Int?, deepLinkData: [String: JSONValue], appleAdsToken: String? = nil
    ) {
        self.id = id ?? RecordID.timeOrdered(at: installedAt)
        self.appleAdsToken = appleAdsToken
        self.projectID = projectID
        self.linkID = linkID
        self.clickID = clickID
        self.confidence = confidence
        self.matchedFactors = matchedFactors
        self.method = method
        self.installedAt = installedAt.storedPrecision
        self.device = device
        self.platform = platform
        self.platformVersion = platformVersion
        self.deviceID = deviceID
        self.fingerprintHash = fingerprintHash
        self.attributionWindowHours = attributionWindowHours
        self.deepLinkData = deepLinkData
    }
}

/// An in-app event.
package struct EventRecord: Sendable, Hashable, Codable {
    /// A random identifier (a UUID: LinkForty's `eventId`).
    package var id: String
    /// Its project.
    package var projectID: String
    /// The install that sent it.
    package var installID: String
    /// Its name (`revenue` for revenue).
    package var name: String
    /// Its data.
    package var properties: [String: JSONValue]
    /// When it happened, as the app said.
    package var occurredAt: Date
    /// When the server stored it.
    package var receivedAt: Date
    /// What makes two sends one event: the hash of the install, name, time and data. A client
    /// that retries sends the same four, so the retry is stored once.
    package var dedupeKey: String
    /// Last-click stamps (§12.7), stored as sent.
    package var attributedLinkID: String?
    /// The click the app says led to it.
    package var attributedClickID: String?
    /// When that link was opened.
    package var linkOpenedAt: Date?
    /// The app's session.
    package var sessionID: String?
    /// The SDK that sent it (`name/version`), for diagnostics.
    package var sdk: String?

    /// An event; see each property.
    package init(
        id: String? = nil, projectID: String, installID: String, name: String, properties: [String: JSONValue],
        occurredAt: Date, receivedAt: Date, dedupeKey: String, attributedLinkID: String? = nil, attributedClickID: String? = nil,
        linkOpenedAt: Date? = nil, sessionID: String? = nil, sdk: String? = nil
    ) {
        self.id = id ?? RecordID.timeOrdered(at: receivedAt)
        self.projectID = projectID
        self.installID = installID
        self.name = name
        self.properties = properties
        self.occurredAt = occurredAt.storedPrecision
        self.receivedAt = receivedAt.storedPrecision
        self.dedupeKey = dedupeKey
        self.attributedLinkID = attributedLinkID
        self.attributedClickID = attributedClickID
        self.linkOpenedAt = linkOpenedAt?.storedPrecision
        self.sessionID = sessionID
        self.sdk = sdk
    }
}

/// What storing an event did.
package enum EventOutcome: Sendable, Hashable {
    /// It is new, and stored.
    case stored(EventRecord)
    /// The same event was stored before; this is that one.
    case duplicate(of: EventRecord)

    /// The event as stored.
    package var record: EventRecord {
        switch self {
        case .stored(let record), .duplicate(of: let record): record
        }
    }
}

/// How an install was attributed: stored with it and answered as `attributionMethod`.
package enum AttributionMethod: String, Sendable, Hashable, Codable {
    /// Organic: no click matched.
    case none
    /// The install's signals matched a click (``DeferredMatcher``).
    case fingerprint
    /// Matched on a network shared by many devices, where the address weighed half.
    case fingerprintSharedNetwork = "fingerprint_shared_network"
    /// Certain: the install reported the click token of the tapped link, which the pasteboard
    /// landing page copied (``ClickTokens``).
    case pasteboard
    /// An install another server made, kept with its first event here
    /// (``ServerConfiguration/adoptUnknownInstalls``).
    case adopted
}

/// The kind of device: for a tap, read from its user agent (``Fingerprint/platform(_:)``), where
/// the redirect sends it; for an install, the platform its SDK reported (``init(reported:)``).
package enum DevicePlatform: String, Sendable, Hashable, Codable {
    case ios
    case android
    /// Anything else: a desktop, a browser that names neither.
    case web

    /// The platform an SDK reports by name, whatever its case: LinkForty's iOS SDK sends `iOS`,
    /// its React Native SDK `ios` (§14 of the protocol notes); `iPadOS` and `iPhone OS` are iOS.
    /// `nil` for a name the server does not know (the text still counts in the install's
    /// fingerprint hash, as sent).
    package init?(reported name: String?) {
        switch name?.lowercased() {
        case "ios", "ipados", "iphone os": self = .ios
        case "android": self = .android
        case "web": self = .web
        default: return nil
        }
    }
}
