#if canImport(SwiftUI)
    import LinkRelay
    import SwiftUI

    /// Where the app can go.
    enum Route: Hashable {
        case product(id: String)
        case cart(coupon: String?)
        case wallet
    }

    /// Turns delivered links into navigation. It listens from its creation, so a link that
    /// opened the app (cold start) is waiting for it, never lost.
    @MainActor
    final class Router: ObservableObject {
        @Published var path: [Route] = []
        /// A link held until the user signs in.
        @Published var signInRequested = false

        /// Subscribes at once; the router lives as long as the app.
        init(client: DeepLinkClient) {
            let events = client.events()
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
                if let route = Self.route(for: link) { path = [route] }
            case .authenticationRequired:
                signInRequested = true
            case .pendingLinkDropped:
                signInRequested = false
            case .install, .failure:
                break
            }
        }

        /// The route for a link: the same for a universal link, a custom-scheme link and a
        /// deferred link, whichever provider resolved it.
        static func route(for link: DeepLink) -> Route? {
            switch link.pathSegments.first {
            case "product", "products":
                return link.pathSegments.dropFirst().first.map { .product(id: $0) }
            case "cart":
                return .cart(coupon: link.parameters["coupon"])
            case "wallet":
                return .wallet
            default:
                return nil
            }
        }
    }
#endif
