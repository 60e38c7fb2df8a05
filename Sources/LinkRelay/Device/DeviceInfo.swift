import Foundation

/// What providers build install fingerprints from. Unknown values are `nil`, never invented:
/// on Linux, for example, there is no screen.
///
/// An advertising identifier is present only when the app supplies one (after its own App
/// Tracking Transparency prompt).
public struct DeviceInfo: Sendable, Hashable, Codable {
    /// A screen's size in points and its scale (pixels per point).
    public struct Screen: Sendable, Hashable, Codable {
        /// Width in points.
        public var width: Double
        /// Height in points.
        public var height: Double
        /// Native pixels per point (2 or 3 on current iPhones).
        public var scale: Double

        /// A screen of `width` × `height` points at `scale`.
        public init(width: Double, height: Double, scale: Double) {
            self.width = width
            self.height = height
            self.scale = scale
        }

        /// Width in native pixels (points × scale), rounded; 0 for NaN, and `Int`'s bounds for
        /// values beyond them.
        public var pixelWidth: Int { (width * scale).rounded().saturatingInt }
        /// Height in native pixels (points × scale), rounded; 0 for NaN, and `Int`'s bounds for
        /// values beyond them.
        public var pixelHeight: Int { (height * scale).rounded().saturatingInt }
    }

    /// The main screen, or `nil` when unknown.
    public var screen: Screen?
    /// The operating system's name (`iOS`, `macOS`, `Linux`).
    public var osName: String
    /// The operating system's version (`17.4.1`).
    public var osVersion: String
    /// The hardware model identifier (`iPhone15,2`), if known.
    public var deviceModel: String?
    /// The device family as `UIDevice.model` names it (`iPhone`, `iPad`, `iPod touch`), if
    /// known. ``SystemDeviceInfo`` reads `UIDevice.model` where UIKit exists; adapters that need
    /// a family and find none derive it from ``deviceModel`` (``family(ofModel:)``).
    public var deviceFamily: String?
    /// The time zone identifier (`Europe/Berlin`).
    public var timeZoneIdentifier: String
    /// The user's preferred languages, most preferred first (`["de-DE", "en-US"]`).
    public var preferredLanguages: [String]
    /// The region code (`DE`), if known.
    public var regionCode: String?
    /// The user's calendar as Foundation names it (`gregorian`, `buddhist`, `islamicCivil`), if
    /// known.
    public var calendarIdentifier: String?
    /// The app's marketing version (`CFBundleShortVersionString`), if known.
    public var appVersion: String?
    /// The app's build number (`CFBundleVersion`), if known.
    public var appBuild: String?
    /// The app's name as the user sees it (`CFBundleDisplayName`, else `CFBundleName`), if known.
    public var appName: String?
    /// The identifier for vendor, if known.
    public var vendorID: UUID?
    /// The advertising identifier, only when the app supplied it.
    public var advertisingID: UUID?
    /// True on a simulator.
    public var isSimulator: Bool

    /// Device information; unknown values stay `nil`.
    public init(
        screen: Screen? = nil, osName: String, osVersion: String, deviceModel: String? = nil, deviceFamily: String? = nil,
        timeZoneIdentifier: String, preferredLanguages: [String], regionCode: String? = nil,
        calendarIdentifier: String? = nil, appVersion: String? = nil, appBuild: String? = nil, appName: String? = nil,
        vendorID: UUID? = nil, advertisingID: UUID? = nil,
        isSimulator: Bool = false
    ) {
        self.screen = screen
        self.osName = osName
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.deviceFamily = deviceFamily
        self.timeZoneIdentifier = timeZoneIdentifier
        self.preferredLanguages = preferredLanguages
        self.regionCode = regionCode
        self.calendarIdentifier = calendarIdentifier
        self.appVersion = appVersion
        self.appBuild = appBuild
        self.appName = appName
        self.vendorID = vendorID
        self.advertisingID = advertisingID
        self.isSimulator = isSimulator
    }
}

extension DeviceInfo {
    /// The family `UIDevice.model` reports for a model identifier: `iPad…` is `iPad`, `iPod…`
    /// `iPod touch`, `iPhone…` `iPhone`; any other identifier is returned as it is, and `nil`
    /// stays `nil`.
    public static func family(ofModel model: String?) -> String? {
        guard let model else { return nil }
        if model.hasPrefix("iPad") { return "iPad" }
        if model.hasPrefix("iPod") { return "iPod touch" }
        if model.hasPrefix("iPhone") { return "iPhone" }
        return model
    }
}

/// Collects ``DeviceInfo``. The client asks once, on first need, and reuses the answer.
public protocol DeviceInfoProvider: Sendable {
    /// The device as it is now; the client calls this once, on first need.
    func deviceInfo() async -> DeviceInfo
}
