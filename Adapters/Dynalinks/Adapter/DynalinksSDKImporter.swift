import Foundation
@_spi(Backend) import LinkRelay

/// Reads what Dynalinks' iOS SDK left in the app's `UserDefaults` (dynalinks.md §5.2), for an app
/// that replaces that SDK with LinkRelay:
///
/// | Key | What LinkRelay does with it |
/// |---|---|
/// | `com.dynalinks.deferredDeepLinkChecked` | `true`: the SDK ran its deferred check, so the app ran before |
/// | `com.dynalinks.deferredDeepLinkResult` | the matched deferred result the SDK cached: kept for reference (``/LinkRelay/PreviousSDK/deferredLink``), never delivered again |
///
/// Dynalinks' SDK keeps no install id and no event queue. Nothing is changed or removed.
/// ``DynalinksBackend`` runs this importer by default; name it in
/// `DeepLinkClient.Configuration.previousSDKs` when the app moves from Dynalinks' SDK to another
/// provider.
public struct DynalinksSDKImporter: PreviousSDKImporter {
    /// `true` once the SDK's deferred check was done (or skipped).
    public static let checkedKey = "com.dynalinks.deferredDeepLinkChecked"
    /// The cached matched result: the wire's `DeepLinkResult` as JSON.
    public static let resultKey = "com.dynalinks.deferredDeepLinkResult"

    /// The project's link domain, for a cached link known only by its path.
    public var projectHost: String?

    /// An importer; `projectHost` places a cached link known only by its path.
    public init(projectHost: String? = nil) {
        self.projectHost = projectHost
    }

    public var provider: BackendID { .dynalinks }

    public func read(_ storage: PreviousSDKStorage) -> SDKImport? {
        // The SDK writes `false` only in reset(): a flag that is there, either way, says it ran.
        let checked = storage.hasValue(forKey: Self.checkedKey)
        let data = storage.data(forKey: Self.resultKey)
        guard checked || data != nil else { return nil }
        var link: DeepLink?
        if let data, data.count <= 1 << 20, let result = try? JSONDecoder().decode(DynalinksResult.self, from: data) {
            link = DynalinksMapping.installMatch(result, projectHost: projectHost).link
        }
        return SDKImport(sdk: PreviousSDK(provider: .dynalinks, deferredLink: link))
    }
}
