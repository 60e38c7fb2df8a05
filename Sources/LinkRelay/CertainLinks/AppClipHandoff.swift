import Foundation

/// The hand-off of an App Clip's invocation URL to the full app that replaces it
/// (``DeepLinkClient/Configuration/appClipHandoff``), through the App Group both targets
/// share.
///
/// In the App Clip, a client configured with a hand-off saves every link of its backend it
/// handles (the Clip's invocation URL arrives through ``DeepLinkClient/handle(_:)`` like any
/// universal link), the latest one kept; ``save(_:at:)`` does the same without a client. On the
/// full app's first launch the client takes the saved link, removes it from the App Group, and
/// delivers it once as the deferred link (``InstallAttribution/Method/appClip``, confidence
/// 100), instead of asking for a fingerprint match. Never on a later launch, never after
/// ``DeepLinkClient/clearData()``.
///
/// ```swift
/// configuration.appClipHandoff = AppClipHandoff(appGroup: "group.com.acme.shop")
/// ```
public struct AppClipHandoff: Sendable {
    /// Where the link is kept: a folder in the App Group's container, shared by the Clip and
    /// the app.
    public let store: any PersistentStore
    /// Whether this process is the App Clip (it saves links) rather than the full app (it
    /// takes them).
    public let isAppClip: Bool

    /// The key the link is saved under.
    static let key = "app-clip-link"

    /// A hand-off through `store` (for tests, or a container of your own); `isAppClip` says
    /// which side this process is.
    public init(store: any PersistentStore, isAppClip: Bool) {
        self.store = store
        self.isAppClip = isAppClip
    }

    /// What is saved: the link and when.
    struct Saved: Sendable, Hashable, Codable {
        var url: URL
        var savedAt: Date
    }

    /// Saves `url` for the full app, replacing a link saved before. Call it in the App Clip
    /// with the invocation URL when you do not create a client there.
    /// - Throws: the store's error (the App Group's folder could not be written).
    public func save(_ url: URL, at date: Date = Date()) throws {
        try store.setData(try JSONEncoder.linkRelay().encode(Saved(url: url, savedAt: date)), forKey: Self.key)
    }

    /// The link the App Clip saved, if any (a value that does not decode counts as none).
    func saved() -> Saved? {
        guard let data = try? store.data(forKey: Self.key) else { return nil }
        return try? JSONDecoder.linkRelay().decode(Saved.self, from: data)
    }

    /// Removes the saved link.
    func remove() throws {
        try store.removeData(forKey: Self.key)
    }
}

#if canImport(Darwin)
    extension AppClipHandoff {
        /// The hand-off through the App Group `identifier` (`group.com.acme.shop`), which the
        /// App Clip and the app both list in their App Groups entitlement: a `LinkRelay-AppClip`
        /// folder in the group's container. Whether this process is the Clip is read from its
        /// Info.plist (an App Clip has the `NSAppClip` key). `nil` when the container is not
        /// available (the entitlement is missing).
        public init?(appGroup identifier: String) {
            guard
                let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: identifier)
            else { return nil }
            let folder = container.appendingPathComponent("Library/Application Support/LinkRelay-AppClip", isDirectory: true)
            self.init(
                store: FileStore(directory: folder),
                isAppClip: Bundle.main.object(forInfoDictionaryKey: "NSAppClip") != nil)
        }
    }
#endif
