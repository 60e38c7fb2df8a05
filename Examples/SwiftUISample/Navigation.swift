#if canImport(SwiftUI)
    import LinkRelay
    import SwiftUI

    /// Where the app can go.
    enum Route: Hashable, Sendable {
        case product(id: Int)
        case reviews(productID: Int)
        case cart(coupon: String?)
        case wallet
    }

    /// The app's links, declared once. Both URL forms, deferred links and every provider route
    /// the same: the router matches path segments, not URLs.
    enum AppLinks {
        static let router: DeepLinkRouter<Route> = {
            do {
                return try DeepLinkRouter<Route> {
                    LinkRoute("/products/:id") { try .product(id: $0.capture("id")) }
                    LinkRoute("/products/:id/reviews") { try .reviews(productID: $0.capture("id")) }
                    LinkRoute("/cart") { .cart(coupon: $0.query("coupon")) }
                    LinkRoute("/wallet", requiresAuthentication: true) { _ in .wallet }
                }
            } catch {
                preconditionFailure("The app's routes are invalid: \(error)")
            }
        }()

        /// The navigation stack a route opens: reviews sit on top of their product.
        static func stack(for route: Route) -> [Route] {
            switch route {
            case .reviews(let id): [.product(id: id), .reviews(productID: id)]
            default: [route]
            }
        }
    }

    /// Turns delivered links into navigation. It listens from its creation, so a link that
    /// opened the app (cold start) is waiting for it, never lost.
    @MainActor
    final class Navigation: ObservableObject {
        /// The `NavigationStack`'s path.
        @Published var path: [Route] = []
        /// A link held until the user signs in.
        @Published var signInRequested = false
        /// A link no route matched: shown as a notice instead of being dropped.
        @Published var unmatched: DeepLink?

        /// Subscribes at once; the navigation lives as long as the app.
        init(client: DeepLinkClient) {
            let events = client.linkEvents()
            Task { [weak self] in
                for await event in events {
                    self?.apply(event)
                }
            }
        }

        private func apply(_ event: DeepLinkEvent) {
            switch event {
            case .link(let link):
                signInRequested = false
                if let route = AppLinks.router.route(link) {
                    path = AppLinks.stack(for: route)
                } else {
                    unmatched = link
                }
            case .authenticationRequired:
                signInRequested = true
            case .pendingLinkDropped:
                signInRequested = false
            case .install, .failure:
                break
            }
        }
    }
#endif
