import Foundation
@_spi(Backend) import LinkRelay

/// Reads what LinkForty's iOS SDK left in the app's `UserDefaults` (linkforty.md §7.2), for an app
/// that replaces that SDK with LinkRelay:
///
/// | Key | What LinkRelay does with it |
/// |---|---|
/// | `com.linkforty.sdk.installId` | kept as the install id: a LinkForty backend sends its events under it, and asks no install match |
/// | `com.linkforty.sdk.installData` | the deferred link that SDK delivered, for reference: never delivered again |
/// | `com.linkforty.sdk.firstLaunch` | `true` means the SDK had launched: the app ran before |
///
/// Its event queue lived in memory only, so there are no unsent events to import. Nothing is
/// changed or removed. ``LinkFortyBackend`` runs this importer by default; name it in
/// `DeepLinkClient.Configuration.previousSDKs` when the app moves from LinkForty's SDK to another
/// provider.
public struct LinkFortySDKImporter: PreviousSDKImporter {
    /// The keys LinkForty's SDK writes.
    public static let installIDKey = "com.linkforty.sdk.installId"
    /// The stored deep-link data of the last attributed install.
    public static let installDataKey = "com.linkforty.sdk.installData"
    /// `true` once the SDK's install report succeeded.
    public static let launchedKey = "com.linkforty.sdk.firstLaunch"

    /// The base URL the deferred link's short URL is built on (the SDK's `baseURL`).
    public var baseURL: URL?

    /// An importer; `baseURL` builds the stored deferred link's URL (else it is left out).
    public init(baseURL: URL? = nil) {
        self.baseURL = baseURL
    }

    public var provider: BackendID { .linkForty }

    public func read(_ storage: PreviousSDKStorage) -> SDKImport? {
        let installID = storage.string(forKey: Self.installIDKey).flatMap { $0.isEmpty ? nil : $0 }
        let launched = storage.bool(forKey: Self.launchedKey) ?? false
        let data = storage.data(forKey: Self.installDataKey)
        guard installID != nil || launched || data != nil else { return nil }
        var link: DeepLink?
        if let data, let base = baseURL, data.count <= 1 << 20,
            let decoded = try? JSONDecoder().decode(LinkFortyLinkData.self, from: data)
        {
            link = LinkFortyMapping.deferredLink(decoded, parameters: decoded.customParameters, base: base)
        }
        return SDKImport(sdk: PreviousSDK(provider: .linkForty, installID: installID, deferredLink: link))
    }
}
