// A small SwiftUI app on LinkRelay: links through one modifier, a `DeepLinkRouter` driving a
// `NavigationStack` from `for await`,
// onboarding that reads the install outcome, and a wallet screen behind sign-in.
//
// Apple-only sample sources: not a package target (this repository also builds on Linux), but
// syntax-checked by `.ci/run`. Copy them into an Xcode project that depends on LinkRelay and
// LinkRelayLinkForty (iOS 16 or later, for NavigationStack). See the DocC article "Getting
// Started".
#if canImport(SwiftUI)
    import LinkRelay
    import LinkRelayLinkForty
    import SwiftUI

    @main
    struct SampleApp: App {
        /// One client for the app's lifetime, created before any link can arrive.
        private let client: DeepLinkClient
        @StateObject private var navigation: Navigation

        init() {
            let backend: any DeepLinkBackend
            do {
                backend = LinkFortyBackend(
                    try .init(baseURL: URL(string: "https://go.acme.app")!, apiKey: "lf_live_…", appSchemes: ["acme"]))
            } catch {
                // A configuration mistake is a programming error: fall back to local parsing.
                backend = LocalBackend(.init(schemes: ["acme"], hosts: ["go.acme.app"]))
            }
            var configuration = DeepLinkClient.Configuration()
            // The wallet route is declared `requiresAuthentication`: the client holds its links
            // until sign-in.
            configuration.authenticationRule = { AppLinks.router.requiresAuthentication($0) }
            #if DEBUG
                // Point a Debug build at `linkrelay-sandbox` (see "Running the Sandbox").
                if ProcessInfo.processInfo.environment["LINKRELAY_SANDBOX"] != nil {
                    configuration.transport = HostRewritingTransport(
                        hosts: ["go.acme.app"], to: URL(string: "http://127.0.0.1:8642")!)
                }
            #endif
            let client = DeepLinkClient(backend: backend, configuration: configuration)
            self.client = client
            _navigation = StateObject(wrappedValue: Navigation(client: client))
        }

        var body: some Scene {
            WindowGroup {
                RootView()
                    .environmentObject(navigation)
                    .linkRelay(client)  // onOpenURL + universal links, and \.linkRelayClient
                    .task {
                        // After the user's consent: report the install, check for a deferred link.
                        await client.start()
                    }
            }
        }
    }
#endif
