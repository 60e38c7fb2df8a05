import Foundation

#if canImport(UIKit)
    import UIKit
#endif

/// The device's real information: UIKit on iOS, tvOS and visionOS (screen read on the main
/// actor), and `ProcessInfo`, `Locale`, `TimeZone` and the bundle everywhere.
///
/// ```swift
/// // After your App Tracking Transparency prompt, if the user allowed tracking:
/// configuration.deviceInfo = SystemDeviceInfo(advertisingID: { ASIdentifierManager.shared().advertisingIdentifier })
/// ```
public struct SystemDeviceInfo: DeviceInfoProvider {
    private let advertisingID: @Sendable () async -> UUID?

    /// - Parameter advertisingID: returns the advertising identifier when the app has consent;
    ///   by default there is none.
    public init(advertisingID: @escaping @Sendable () async -> UUID? = { nil }) {
        self.advertisingID = advertisingID
    }

    public func deviceInfo() async -> DeviceInfo {
        var info = DeviceInfo(
            osName: Self.osName,
            osVersion: Self.osVersion(ProcessInfo.processInfo.operatingSystemVersion),
            deviceModel: Self.hardwareModel(),
            timeZoneIdentifier: TimeZone.current.identifier,
            preferredLanguages: Locale.preferredLanguages,
            regionCode: Self.regionCode(),
            calendarIdentifier: "\(Calendar.current.identifier)",
            appVersion: Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String,
            appBuild: Bundle.main.object(forInfoDictionaryKey: "CFBundleVersion") as? String,
            appName: Self.appName(),
            advertisingID: await advertisingID(),
            isSimulator: Self.isSimulator)
        #if canImport(UIKit) && !os(watchOS)
            let uikit = await Self.uikitValues()
            info.screen = uikit.screen
            info.osVersion = uikit.osVersion
            info.vendorID = uikit.vendorID
            info.deviceFamily = uikit.family
        #endif
        return info
    }

    #if canImport(UIKit) && !os(watchOS)
        /// UIKit's values, read on the main actor as UIKit requires.
        @MainActor
        private static func uikitValues() -> (screen: DeviceInfo.Screen?, osVersion: String, vendorID: UUID?, family: String) {
            var screen: DeviceInfo.Screen?
            #if !os(visionOS)
                let main = UIScreen.main
                screen = DeviceInfo.Screen(
                    width: Double(main.bounds.width), height: Double(main.bounds.height), scale: Double(main.scale))
            #endif
            return (screen, UIDevice.current.systemVersion, UIDevice.current.identifierForVendor, UIDevice.current.model)
        }
    #endif

    static let osName: String = {
        #if os(iOS)
            "iOS"
        #elseif os(macOS)
            "macOS"
        #elseif os(tvOS)
            "tvOS"
        #elseif os(watchOS)
            "watchOS"
        #elseif os(visionOS)
            "visionOS"
        #elseif os(Linux)
            "Linux"
        #else
            "unknown"
        #endif
    }()

    static let isSimulator: Bool = {
        #if targetEnvironment(simulator)
            true
        #else
            false
        #endif
    }()

    /// `major.minor.patch`, always three parts.
    static func osVersion(_ version: OperatingSystemVersion) -> String {
        "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
    }

    static func regionCode() -> String? {
        if #available(iOS 16, macOS 13, tvOS 16, watchOS 9, *) {
            return Locale.current.region?.identifier
        }
        return Locale.current.regionCode
    }

    /// `CFBundleDisplayName`, else `CFBundleName`, from the main bundle.
    static func appName(in bundle: Bundle = .main) -> String? {
        let names = ["CFBundleDisplayName", "CFBundleName"].compactMap { bundle.object(forInfoDictionaryKey: $0) as? String }
        return names.first { !$0.isEmpty }
    }

    /// `utsname.machine`: `iPhone15,2` on a device; on a simulator, the simulated model.
    static func hardwareModel() -> String? {
        if let simulated = ProcessInfo.processInfo.environment["SIMULATOR_MODEL_IDENTIFIER"] { return simulated }
        var system = utsname()
        guard uname(&system) == 0 else { return nil }
        let model = withUnsafeBytes(of: &system.machine) { buffer in
            String(decoding: buffer.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return model.isEmpty ? nil : model
    }
}
