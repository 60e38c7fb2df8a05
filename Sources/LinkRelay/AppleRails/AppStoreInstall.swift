import Foundation

/// What the App Store's signed record of the app says about this install: StoreKit 2's
/// `AppTransaction` (iOS 16 and later), with the date this copy was installed on the device.
///
/// The record belongs to the App Store account, not to the device: it outlives deleting the
/// app, erasing the device and moving to a new one, where a Keychain marker does not.
public struct AppStoreInstall: Sendable, Hashable {
    /// Where the record was signed. Only ``production`` records decide a launch's kind: in
    /// Xcode and in the sandbox (TestFlight too) the original purchase is made up.
    public enum Environment: Sendable, Hashable {
        /// The App Store.
        case production
        /// The App Store's sandbox: TestFlight, and development builds signed in to a sandbox
        /// account.
        case sandbox
        /// A StoreKit configuration file in Xcode.
        case xcode
        /// An environment this version of LinkRelay does not know, by its name.
        case other(String)
    }

    /// Where the record was signed.
    public var environment: Environment
    /// When the account first got the app (its first download, or its purchase).
    public var originalPurchaseDate: Date
    /// The app version the account first got: on iOS its build (`CFBundleVersion`), on macOS
    /// its marketing version.
    public var originalAppVersion: String
    /// Whether ``originalAppVersion`` is a build (`CFBundleVersion`), which
    /// ``AppStoreInstallCheck/firstBuildWithLinkRelay`` is compared with: on iOS, not where the
    /// app runs on a Mac (Mac Catalyst, an iPhone or iPad app on a Mac), where StoreKit gives
    /// the marketing version and the comparison would say nothing true.
    public var originalAppVersionIsBuild: Bool
    /// When this copy of the app was installed on this device, where the system says (the
    /// creation date of the app's `Library` folder, which an update keeps and a reinstall
    /// makes anew); `nil` when unknown. A date at or before 1970, or later than now, counts as
    /// unknown.
    public var installedOnDevice: Date?

    /// A record as described.
    public init(
        environment: Environment, originalPurchaseDate: Date, originalAppVersion: String, installedOnDevice: Date? = nil,
        originalAppVersionIsBuild: Bool = true
    ) {
        self.originalAppVersionIsBuild = originalAppVersionIsBuild
        self.environment = environment
        self.originalPurchaseDate = originalPurchaseDate
        self.originalAppVersion = originalAppVersion
        self.installedOnDevice = installedOnDevice
    }
}

extension AppStoreInstall {
    /// `date` as an install date: `nil` when unknown, at or before 1970 (a file system that
    /// reports no date), or later than `now` (a clock set wrong).
    static func knownInstallDate(_ date: Date?, now: Date) -> Date? {
        guard let date, date.timeIntervalSince1970 > 0, date <= now else { return nil }
        return date
    }
}

/// What the system gave when asked for the App Store's record of the app.
public enum AppStoreInstallResult: Sendable, Hashable {
    /// A record whose signature StoreKit verified.
    case verified(AppStoreInstall)
    /// A record StoreKit could not verify (a tampered device or receipt), with StoreKit's
    /// reason. It decides nothing.
    case unverified(reason: String)
    /// No record: iOS 15 (no `AppTransaction`), a platform without StoreKit, or the system's
    /// error (no network on a first request), with the reason.
    case unavailable(reason: String)
}

/// Where the App Store's record comes from: StoreKit's `AppTransaction` on iOS
/// (`SystemAppStoreInstallSource`), a double in tests. A small protocol so the rule that reads
/// it is tested on every platform.
public protocol AppStoreInstallSource: Sendable {
    /// The App Store's record of the app, or why there is none. May wait on the network; the
    /// client bounds the wait (``AppStoreInstallCheck/timeout``).
    func appStoreInstall() async -> AppStoreInstallResult
}

/// The launch kind from the App Store's own record of the app (``DeepLinkClient/Configuration/appStoreInstall``).
///
/// On the first launch LinkRelay sees on a device (no launch history), the client asks the
/// source once, waiting at most ``timeout`` on its clock. The record's original purchase belongs
/// to the Apple account, not to the device (a second phone, a reinstall a year ago), so the age
/// of this copy's container decides first:
///
/// - this copy was installed more than a day (``redownloadMargin``) ago: the app was on this
///   device before LinkRelay first ran (an update into LinkRelay, or an app installed long ago
///   and opened now), never a reinstall by the record. With ``firstBuildWithLinkRelay`` set
///   and the account's first build older than it, it is an update into LinkRelay,
///   ``AppLaunch/Kind/update(from:)`` from an unknown version, and the user counts as an
///   existing one (``DeepLinkClient/Configuration/existingUsers``); otherwise the
///   ``InstallMarker`` decides;
/// - this copy was installed within the last day and the account got the app at least a day
///   before it: ``AppLaunch/Kind/reinstall``, whatever the Keychain says (it is lost on a new
///   or erased device);
/// - otherwise, with an unknown install date, or with no verified App Store record (iOS 15,
///   Xcode, the sandbox and TestFlight, a failed verification, a late answer): the marker
///   decides, as without this check.
///
/// A reinstall is matched as a first install is, so a deferred link is never lost to this
/// rule. Links never wait for it; only ``DeepLinkClient/launch()`` (and so
/// ``DeepLinkClient/start()``) does, once per device.
public struct AppStoreInstallCheck: Sendable {
    /// Where the record comes from.
    public var source: any AppStoreInstallSource
    /// How long, in seconds on the client's clock, the first launch waits for the record.
    /// Default 1 s. At most 5 s (larger values and `.infinity` count as 5 s); `0`, negative
    /// values and NaN: the record is not asked for.
    public var timeout: TimeInterval
    /// The first build (`CFBundleVersion`) of the app that ships LinkRelay, to recognise users
    /// who had the app before it: `nil` (the default) when every build has it, or to leave
    /// them to the marker. Builds compare as dot-separated numbers (`"500"`, `"2.3.1"`).
    public var firstBuildWithLinkRelay: String?

    /// The longest wait ``timeout`` allows.
    public static let maximumTimeout: TimeInterval = 5
    /// How much earlier than this copy's install the account must have got the app for the
    /// launch to count as a reinstall: one day, so that a slow download is not one.
    public static let redownloadMargin: TimeInterval = 86_400

    /// Records from `source`, waited for at most `timeout` seconds.
    public init(source: any AppStoreInstallSource, timeout: TimeInterval = 1, firstBuildWithLinkRelay: String? = nil) {
        self.source = source
        self.timeout = timeout
        self.firstBuildWithLinkRelay = firstBuildWithLinkRelay
    }

    /// The values the client runs with: ``timeout`` clamped to 0…``maximumTimeout``.
    func clamped() -> AppStoreInstallCheck {
        AppStoreInstallCheck(
            source: source, timeout: min(timeout.clampedDuration, Self.maximumTimeout), firstBuildWithLinkRelay: firstBuildWithLinkRelay)
    }

    /// The kind of a launch with no history that `record` decides, or `nil` when the marker
    /// decides.
    func kind(for record: AppStoreInstall, now: Date) -> AppLaunch.Kind? {
        guard record.environment == .production,
            let installed = AppStoreInstall.knownInstallDate(record.installedOnDevice, now: now)
        else { return nil }
        if installed < now - Self.redownloadMargin {
            // This copy was here before LinkRelay first ran: never a reinstall by the record,
            // whatever the account did on other devices or earlier installs.
            if let first = firstBuildWithLinkRelay, record.originalAppVersionIsBuild,
                Self.build(record.originalAppVersion, isBefore: first) == true
            {
                return .update(from: AppVersion(version: nil, build: nil))
            }
            return nil
        }
        // A fresh container: a reinstall when the account had the app a day before it.
        return record.originalPurchaseDate < installed - Self.redownloadMargin ? .reinstall : nil
    }

    /// Whether the system may be asked for the record in this build: not in a simulator, not in
    /// a debug build, and not with a sandbox receipt (TestFlight, development), where
    /// `AppTransaction.shared` can show an Apple Account sign-in and its answer (sandbox or
    /// Xcode) decides nothing anyway.
    static func asksSystem(receiptName: String?, isSimulator: Bool, isDebugBuild: Bool) -> Bool {
        !isSimulator && !isDebugBuild && receiptName != "sandboxReceipt"
    }

    /// Whether build `a` comes before build `b`, comparing dot-separated numbers (a missing
    /// part counts as 0); `nil` when either is not such a number.
    static func build(_ a: String, isBefore b: String) -> Bool? {
        func parts(_ text: String) -> [UInt64]? {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { UInt64($0) }
            return parts.isEmpty || parts.contains(nil) ? nil : parts.compactMap { $0 }
        }
        guard let x = parts(a), let y = parts(b) else { return nil }
        for index in 0..<max(x.count, y.count) {
            let (p, q) = (index < x.count ? x[index] : 0, index < y.count ? y[index] : 0)
            if p != q { return p < q }
        }
        return false
    }
}

extension AppStoreInstallCheck {
    /// The default: the App Store's record where StoreKit 2 may have it (iOS), none elsewhere.
    static let platformDefault: AppStoreInstallCheck? = {
        #if canImport(StoreKit) && os(iOS)
            return .system
        #else
            return nil
        #endif
    }()
}

extension DeepLinkClient {
    /// The App Store's record for a launch with no history, when ``Configuration/appStoreInstall``
    /// is set: asked once per process off the caller's thread, waited for at most its timeout;
    /// `nil` when it is late, unverified or missing (the marker decides then).
    func appStoreInstall() async -> AppStoreInstall? {
        guard let check = configuration.appStoreInstall, check.timeout > 0 else { return nil }
        let source = check.source
        let timeout = check.timeout
        let result: AppStoreInstallResult
        do {
            // StoreKit may wait on the network, and may not come back.
            result = try await askSystem(for: "The App Store's record", within: timeout, on: clock) { await source.appStoreInstall() }
        } catch {
            logger.info("The App Store's record of the app did not come within \(timeout) s; the install marker decides this launch.")
            return nil
        }
        switch result {
        case .verified(let record):
            if record.environment != .production {
                logger.debug(
                    "The App Store's record is from \(record.environment), not the App Store; the install marker decides this launch.")
            }
            return record
        case .unverified(let reason):
            logger.warning("The App Store's record of the app failed verification (\(reason)); the install marker decides this launch.")
        case .unavailable(let reason):
            logger.debug("No App Store record of the app (\(reason)); the install marker decides this launch.")
        }
        return nil
    }
}
