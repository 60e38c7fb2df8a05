import Foundation

/// This launch of the app as LinkRelay finds it: a first install, a reinstall, an update, an
/// ordinary relaunch, or the first launch with LinkRelay of an app that was on the device
/// before (with a vendor's SDK).
///
/// ```swift
/// switch await client.launch().kind {
/// case .update(let from): showWhatsNew(since: from)
/// case .existingUser(let previousSDK): logger.info("moved from \(previousSDK.provider)")
/// case .firstInstall, .reinstall, .relaunch: break
/// }
/// ```
///
/// The history behind it belongs to the app, not to a backend: switching backends keeps it, so
/// users who had the app before are not taken for new installs (see
/// ``DeepLinkClient/Configuration/existingUsers``).
public struct AppLaunch: Sendable, Hashable, Codable {
    /// What kind of launch this is.
    public enum Kind: Sendable, Hashable, Codable {
        /// The app's first launch on this device, as far as anything stored can tell.
        case firstInstall
        /// The first launch after the app was deleted and installed again: LinkRelay's files
        /// are gone, but the App Store's record shows the account had the app at least a day
        /// before this copy was installed (``AppStoreInstallCheck``, iOS 16 and later), or a
        /// Keychain marker of an earlier install survived (Apple platforms only; see
        /// ``InstallMarker``). Install matching runs as for a new install; the provider decides
        /// whether an old click still counts.
        case reinstall
        /// The first launch of a version or build other than the last launch's. With no
        /// history, an update into the app's first build with LinkRelay that the App Store's
        /// record shows (``AppStoreInstallCheck/firstBuildWithLinkRelay``), from an unknown
        /// version and build.
        case update(from: AppVersion)
        /// A launch of the same version and build as the last one.
        case relaunch
        /// The first launch with LinkRelay of an app that ran on this device before, with the
        /// SDK named here (what it left was found by its ``PreviousSDKImporter``).
        case existingUser(previousSDK: PreviousSDK)
    }

    /// What kind of launch this is.
    public var kind: Kind
    /// The app's version and build on this launch.
    public var version: AppVersion
    /// When LinkRelay first saw the app on this device (for an app that had a vendor's SDK,
    /// the install date that SDK stored, when it stored one).
    public var firstSeen: Date
    /// How many launches LinkRelay has seen, this one included.
    public var launchCount: Int
    /// Every backend the app has run with on this device, in the order it first did; the
    /// current one is among them.
    public var backends: [BackendID]
    /// Whether the app was on this device before the current backend first ran: a user who
    /// updated to a build with another backend, or whose previous SDK was found. Such a user's
    /// install is treated as ``DeepLinkClient/Configuration/existingUsers`` says.
    public var isExistingUser: Bool

    /// A launch as described.
    public init(
        kind: Kind, version: AppVersion, firstSeen: Date, launchCount: Int, backends: [BackendID], isExistingUser: Bool
    ) {
        self.kind = kind
        self.version = version
        self.firstSeen = firstSeen
        self.launchCount = launchCount
        self.backends = backends
        self.isExistingUser = isExistingUser
    }
}

extension AppLaunch {
    /// The previous SDK found on this launch: what ``Kind/existingUser(previousSDK:)`` carries,
    /// else `nil`.
    public var previousSDK: PreviousSDK? {
        if case .existingUser(let previous) = kind { return previous }
        return nil
    }
}

extension AppLaunch.Kind: CustomStringConvertible {
    /// `first install`, `reinstall`, `update from 2.3.0 (230)`, `relaunch`, or
    /// `existing user of linkforty's SDK`.
    public var description: String {
        switch self {
        case .firstInstall: "first install"
        case .reinstall: "reinstall"
        case .update(let from): "update from \(from)"
        case .relaunch: "relaunch"
        case .existingUser(let previous): "existing user of \(previous.provider)'s SDK"
        }
    }
}

/// An app's version (`CFBundleShortVersionString`) and build (`CFBundleVersion`). Either may be
/// unknown, as on a platform without a bundle.
public struct AppVersion: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The marketing version, such as `2.3.0`.
    public var version: String?
    /// The build number, such as `230`.
    public var build: String?

    /// A version and build.
    public init(version: String?, build: String?) {
        self.version = version
        self.build = build
    }

    /// The version and build of the app on `device`.
    public init(of device: DeviceInfo) {
        self.init(version: device.appVersion, build: device.appBuild)
    }

    /// `2.3.0 (230)`; `unknown` for an unknown part.
    public var description: String {
        "\(version ?? "unknown") (\(build ?? "unknown"))"
    }
}

/// The SDK an app used before LinkRelay, and what LinkRelay kept of what it left on the device.
///
/// Nothing of the vendor's data is changed or removed: an app that goes back to that SDK finds
/// it as it was.
public struct PreviousSDK: Sendable, Hashable, Codable {
    /// The provider whose SDK it was (`BackendID.linkForty`, …).
    public var provider: BackendID
    /// The identity the SDK reported the install under (LinkForty's `installId`, Paylisher's
    /// `distinct_id`), if it stored one. A backend of the same provider goes on with it.
    public var installID: String?
    /// The deferred link the SDK had already delivered (Dynalinks' cached result, LinkForty's
    /// stored install data), for reference. It is never delivered again.
    public var deferredLink: DeepLink?
    /// When the SDK recorded the app's install, if it did.
    public var installedAt: Date?
    /// The app's version at the SDK's last launch, if it recorded it.
    public var lastVersion: AppVersion?
    /// Events the SDK had queued and not sent that were put in LinkRelay's queue, to be sent
    /// once by a backend of the same provider.
    public var importedEvents: Int
    /// Events the SDK had queued and not sent that could not be imported: the backend is
    /// another provider's (their meaning is the previous provider's), they were unreadable, or
    /// the queue was full.
    public var eventsNotImported: Int

    /// What was found of a provider's SDK.
    public init(
        provider: BackendID, installID: String? = nil, deferredLink: DeepLink? = nil, installedAt: Date? = nil,
        lastVersion: AppVersion? = nil, importedEvents: Int = 0, eventsNotImported: Int = 0
    ) {
        self.provider = provider
        self.installID = installID
        self.deferredLink = deferredLink
        self.installedAt = installedAt
        self.lastVersion = lastVersion
        self.importedEvents = importedEvents
        self.eventsNotImported = eventsNotImported
    }
}
