#if canImport(SwiftUI)
    import LinkRelay
    import SwiftUI

    struct RootView: View {
        @EnvironmentObject private var navigation: Navigation

        var body: some View {
            NavigationStack(path: $navigation.path) {
                OnboardingView()
                    .navigationDestination(for: Route.self) { route in
                        switch route {
                        case .product(let id): Text("Product \(id)")
                        case .reviews(let id): Text("Reviews of product \(id)")
                        case .cart(let coupon): Text("Cart" + (coupon.map { " with \($0)" } ?? ""))
                        case .wallet: WalletView()
                        }
                    }
            }
            .sheet(isPresented: $navigation.signInRequested) {
                SignInView()
            }
            .alert(
                "This link isn't available in the app", isPresented: .constant(navigation.unmatched != nil),
                presenting: navigation.unmatched
            ) { _ in
                Button("OK") { navigation.unmatched = nil }
            } message: { link in
                Text(link.url.absoluteString)
            }
        }
    }

    /// First-launch onboarding that knows how the user arrived: a campaign's deferred link gets
    /// a tailored welcome; an organic install the usual one.
    struct OnboardingView: View {
        @Environment(\.linkRelayClient) private var client
        @State private var welcome = "Welcome to Acme"

        var body: some View {
            Text(welcome)
                .task {
                    guard let client else { return }
                    switch await client.installOutcome() {
                    case .attributed(let link, _):
                        welcome = "Welcome! Your \(link.campaign?.name ?? "invitation") is waiting."
                    case .attributedWithoutLink, .organic, .failed, .timedOut, .existingUser:
                        welcome = "Welcome to Acme"
                    }
                }
        }
    }

    /// Behind sign-in: LinkRelay holds a wallet link until the user signs in, then delivers it.
    struct WalletView: View {
        var body: some View { Text("Wallet") }
    }

    struct SignInView: View {
        @Environment(\.linkRelayClient) private var client
        @Environment(\.dismiss) private var dismiss

        var body: some View {
            VStack {
                Button("Sign in") {
                    Task {
                        // … your sign-in …
                        await client?.completePendingLink()  // the held link is delivered now
                        dismiss()
                    }
                }
                Button("Not now", role: .cancel) {
                    Task {
                        await client?.cancelPendingLink()
                        dismiss()
                    }
                }
            }
        }
    }
#endif
