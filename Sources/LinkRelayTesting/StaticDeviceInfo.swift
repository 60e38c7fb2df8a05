import Foundation
import LinkRelay

/// A ``/LinkRelay/DeviceInfoProvider`` that always gives the same information, for tests and for
/// reproducing a user's device.
public struct StaticDeviceInfo: DeviceInfoProvider {
    /// The information it always gives.
    public let info: DeviceInfo

    /// A provider giving `info` (by default ``iPhone``).
    public init(_ info: DeviceInfo = StaticDeviceInfo.iPhone) {
        self.info = info
    }

    /// The ``/LinkRelay/DeviceInfo`` this provider was made with, every time.
    public func deviceInfo() async -> DeviceInfo { info }

    /// An iPhone 15 Pro on iOS 17.4.1 in Berlin, German first.
    public static let iPhone = DeviceInfo(
        screen: .init(width: 393, height: 852, scale: 3), osName: "iOS", osVersion: "17.4.1",
        deviceModel: "iPhone16,1", timeZoneIdentifier: "Europe/Berlin", preferredLanguages: ["de-DE", "en-US"],
        regionCode: "DE", calendarIdentifier: "gregorian", appVersion: "2.3.0", appBuild: "230",
        vendorID: UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF"))
}
