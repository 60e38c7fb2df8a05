#if canImport(UIKit) && !os(watchOS)
    import UIKit

    /// Forwarding helpers for UIKit's app and scene delegates. Each translates UIKit's types into
    /// ``IncomingLink`` and calls ``DeepLinkClient/forward(_:)->Bool``; each says what was claimed, so an app
    /// with several link handlers can give the rest to the next one. No swizzling: call them from
    /// your delegate methods.
    ///
    /// ```swift
    /// func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options: UIScene.ConnectionOptions) {
    ///     client.forward(options)                  // a cold start's links
    /// }
    /// func scene(_ scene: UIScene, openURLContexts contexts: Set<UIOpenURLContext>) {
    ///     client.forward(contexts)
    /// }
    /// func scene(_ scene: UIScene, continue activity: NSUserActivity) {
    ///     client.forward(activity)
    /// }
    /// ```
    extension DeepLinkClient {
        /// For `application(_:open:options:)`: whether the URL was claimed.
        @MainActor
        @discardableResult
        public func forward(openURL url: URL) -> Bool {
            forward(.url(url))
        }

        /// For `application(_:continue:restorationHandler:)` and `scene(_:continue:)`: whether the
        /// activity carried a link that was claimed (only `NSUserActivityTypeBrowsingWeb` does).
        @MainActor
        @discardableResult
        public func forward(_ userActivity: NSUserActivity) -> Bool {
            forward(.activity(type: userActivity.activityType, webpageURL: userActivity.webpageURL))
        }

        /// For `scene(_:openURLContexts:)`: the contexts that were not claimed.
        @MainActor
        @discardableResult
        public func forward(_ urlContexts: Set<UIOpenURLContext>) -> Set<UIOpenURLContext> {
            let contexts = Array(urlContexts)
            let claimed = forward(contexts.map { IncomingLink.url($0.url) })
            return Set(zip(contexts, claimed).filter { !$0.1 }.map(\.0))
        }

        /// For `scene(_:willConnectTo:options:)`, the cold start: its URL contexts, then its user
        /// activities. Returns those that were not claimed.
        @MainActor
        @discardableResult
        public func forward(
            _ connectionOptions: UIScene.ConnectionOptions
        ) -> (urlContexts: Set<UIOpenURLContext>, userActivities: Set<NSUserActivity>) {
            let contexts = Array(connectionOptions.urlContexts)
            let activities = Array(connectionOptions.userActivities)
            let claimed = forward(
                contexts.map { IncomingLink.url($0.url) }
                    + activities.map { IncomingLink.activity(type: $0.activityType, webpageURL: $0.webpageURL) })
            let unclaimedContexts = zip(contexts, claimed.prefix(contexts.count)).filter { !$0.1 }.map(\.0)
            let unclaimedActivities = zip(activities, claimed.dropFirst(contexts.count)).filter { !$0.1 }.map(\.0)
            return (Set(unclaimedContexts), Set(unclaimedActivities))
        }
    }
#endif
