import Foundation
@_spi(Backend) import LinkRelay

/// Reads what LimeLink's iOS SDK left in the app's `UserDefaults` (limelink.md §7), for an app that
/// replaces that SDK with LinkRelay.
///
/// LimeLink's SDK keeps one value: `is_first_launch`, written `false` on the first launch it saw.
/// Its presence says the app ran before. There is no install id, no cached link and no queue to
/// import. Nothing is changed or removed. ``LimeLinkBackend`` runs this importer by default; name it
/// in `DeepLinkClient.Configuration.previousSDKs` when the app moves from LimeLink's SDK to another
/// provider.
public struct LimeLinkSDKImporter: PreviousSDKImporter {
    /// The key LimeLink's SDK writes.
    public static let firstLaunchKey = "is_first_launch"

    /// An importer.
    public init() {}

    public var provider: BackendID { .limeLink }

    public func read(_ storage: PreviousSDKStorage) -> SDKImport? {
        guard storage.hasValue(forKey: Self.firstLaunchKey) else { return nil }
        return SDKImport(sdk: PreviousSDK(provider: .limeLink))
    }
}
