#if canImport(SwiftUI)
    import SwiftUI

    /// Forwards `onOpenURL` and universal links to a client, and puts the client in the
    /// environment. The rules live in ``DeepLinkClient/forward(_:)->Bool``; this only translates.
    @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, *)
    struct LinkRelayModifier: ViewModifier {
        let client: DeepLinkClient

        func body(content: Content) -> some View {
            content
                .onOpenURL { url in
                    client.forward(.url(url))
                }
                .onContinueUserActivity(IncomingLink.browsingWebActivityType) { activity in
                    client.forward(.activity(type: activity.activityType, webpageURL: activity.webpageURL))
                }
                .environment(\.linkRelayClient, client)
        }
    }

    @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, *)
    extension View {
        /// Sends the links this view's scene receives (`onOpenURL`, and universal links through
        /// `onContinueUserActivity(NSUserActivityTypeBrowsingWeb)`) to `client`, and makes the
        /// client available as `@Environment(\.linkRelayClient)`.
        ///
        /// ```swift
        /// WindowGroup {
        ///     ContentView().linkRelay(client)
        /// }
        /// ```
        public func linkRelay(_ client: DeepLinkClient) -> some View {
            modifier(LinkRelayModifier(client: client))
        }
    }

    private struct LinkRelayClientKey: EnvironmentKey {
        static let defaultValue: DeepLinkClient? = nil
    }

    extension EnvironmentValues {
        /// The client set by ``SwiftUI/View/linkRelay(_:)``, or `nil`.
        public var linkRelayClient: DeepLinkClient? {
            get { self[LinkRelayClientKey.self] }
            set { self[LinkRelayClientKey.self] = newValue }
        }
    }
#endif
