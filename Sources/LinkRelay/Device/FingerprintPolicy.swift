import Foundation

/// Whether the user has allowed this app to track them (App Tracking Transparency), asked each
/// time the client would send the device's signals. `SystemTrackingAuthorization` on Apple
/// platforms (`ATTrackingManager`); a double in tests.
public protocol TrackingAuthorizationSource: Sendable {
    /// Whether tracking is authorized now (`ATTrackingManager.trackingAuthorizationStatus` is
    /// `.authorized`). Not determined, denied and restricted are `false`.
    func isTrackingAuthorized() -> Bool
}

/// When the client sends the device's signals a fingerprint match uses
/// (``DeepLinkClient/Configuration/fingerprinting``).
///
/// Apple: "Regardless of whether a user gives your app permission to track, fingerprinting is
/// not allowed." A deferred deep link by fingerprint matches the signals of the install (its IP
/// address, which the provider's server sees, the user agent, and what the adapter adds: the
/// time zone, languages, screen size, device model, the vendor or advertising identifier) to
/// those of a click. ``whenTrackingAuthorized`` sends none of them unless the user allowed
/// tracking: certain links (the pasteboard, an App Clip, a paste), the Apple Ads token and
/// conversion values still work, and links are still resolved.
public struct FingerprintPolicy: Sendable {
    let authorization: (any TrackingAuthorizationSource)?

    /// Always: the install match and link resolution send the device's signals (the default,
    /// as every provider's own SDK does).
    public static let always = FingerprintPolicy(authorization: nil)

    /// Only while `source` says the user has allowed tracking.
    public static func whenTrackingAuthorized(by source: any TrackingAuthorizationSource) -> FingerprintPolicy {
        FingerprintPolicy(authorization: source)
    }

    /// Only while the user has allowed tracking, as `ATTrackingManager` says; where there is no
    /// App Tracking Transparency (Linux), never.
    public static let whenTrackingAuthorized = FingerprintPolicy(authorization: systemAuthorization)

    /// Whether the signals may be sent now.
    var allowsFingerprint: Bool {
        authorization?.isTrackingAuthorized() ?? true
    }

    private static let systemAuthorization: any TrackingAuthorizationSource = {
        #if canImport(AppTrackingTransparency)
            return SystemTrackingAuthorization()
        #else
            return NoTrackingAuthorization()
        #endif
    }()
}

/// Where there is no App Tracking Transparency: never authorized.
struct NoTrackingAuthorization: TrackingAuthorizationSource {
    func isTrackingAuthorized() -> Bool { false }
}

extension DeviceInfo {
    /// This device without the signals a fingerprint match uses: no screen, languages, model,
    /// family, region, calendar or identifiers. The platform, OS and app versions, the app's
    /// name, the time zone (events' timestamps use it) and whether it is a simulator stay.
    public func withholdingFingerprint() -> DeviceInfo {
        var device = self
        device.screen = nil
        device.preferredLanguages = []
        device.deviceModel = nil
        device.deviceFamily = nil
        device.regionCode = nil
        device.calendarIdentifier = nil
        device.vendorID = nil
        device.advertisingID = nil
        return device
    }
}
