import Foundation
import LinkRelay

/// Where the example shop app can go.
public enum ShopRoute: Hashable, Sendable, CustomStringConvertible {
    case product(String)
    case sale(String)
    case cart(coupon: String?)
    case wallet
    case home

    public var description: String {
        switch self {
        case .product(let id): "product \(id)"
        case .sale(let name): "sale \(name)"
        case .cart(let coupon): "cart" + (coupon.map { " (coupon \($0))" } ?? "")
        case .wallet: "wallet"
        case .home: "home"
        }
    }
}

/// The example app's routes, declared once. The router reads the app-scheme destination when
/// the provider gives one (LimeLink's `uri`), and the link's path; a link that names its screen
/// in parameters instead (`route=product&productId=42`, as LinkForty's deep-link parameters
/// can) is routed by the catch-all, which runs only when no other route matches.
public enum ShopRoutes {
    public static let router: DeepLinkRouter<ShopRoute> = {
        do {
            return try DeepLinkRouter<ShopRoute> {
                LinkRoute("/product/:id") { try .product($0.capture("id")) }
                LinkRoute("/sale/:name") { try .sale($0.capture("name")) }
                LinkRoute("/cart/*") { .cart(coupon: $0.query("coupon")) }
                LinkRoute("/wallet/*", requiresAuthentication: true) { _ in .wallet }
                LinkRoute("/*") { match in
                    switch match.query("route") {
                    case "product": try .product(match.requiredQuery("productId"))
                    case "sale": try .sale(match.requiredQuery("sale"))
                    default: .home
                    }
                }
            }
        } catch {
            preconditionFailure("The shop's routes are invalid: \(error)")
        }
    }()

    /// The route for `link`: every link routes somewhere, home at worst.
    public static func route(_ link: DeepLink) -> ShopRoute {
        router.route(link) ?? .home
    }
}

/// What opening a URL did in the example app.
public enum ShopOpening: Hashable, Sendable, CustomStringConvertible {
    case shown(ShopRoute)
    case signInRequired(ShopRoute)
    case refused(String)
    case notOurs

    public var description: String {
        switch self {
        case .shown(let route): "shows \(route)"
        case .signInRequired(let route): "asks to sign in for \(route)"
        case .refused(let reason): "refused: \(reason)"
        case .notOurs: "not one of its links"
        }
    }
}

/// The example app's link handling, written once against ``DeepLinkClient`` only: whichever
/// backend the client was created with, this code does not change. Used from one task, as an
/// app's navigation is.
public struct ShopApp {
    public let client: DeepLinkClient
    private var events: AsyncStream<DeepLinkEvent>.Iterator

    /// Subscribes at once, so nothing that arrives before the first launch is missed.
    public init(client: DeepLinkClient) {
        self.client = client
        self.events = client.linkEvents().makeAsyncIterator()
    }

    /// The first launch: starts the client and returns the outcome, with the route of the link
    /// that brought the user, if one did.
    public mutating func launch() async -> (outcome: InstallOutcome, route: ShopRoute?) {
        await client.start()
        let outcome = await client.installOutcome()
        if case .attributed(let link, _) = outcome { return (outcome, ShopRoutes.route(link)) }
        return (outcome, nil)
    }

    /// Opens a URL as the system would hand it over, and returns what the app did.
    public mutating func open(_ url: URL) async -> ShopOpening {
        guard client.handle(url) else { return .notOurs }
        while let event = await nextEvent() {
            switch event {
            case .link(let link) where link.origin != .deferred: return .shown(ShopRoutes.route(link))
            case .authenticationRequired(let link): return .signInRequired(ShopRoutes.route(link))
            case .failure(let error): return .refused(error.code.description)
            default: continue  // the install outcome and the deferred link were handled at launch
            }
        }
        return .refused("the client shut down")
    }

    /// After sign-in: the held link, shown.
    public mutating func signedIn() async -> ShopRoute? {
        guard await client.completePendingLink() != nil else { return nil }
        while let event = await nextEvent() {
            if case .link(let link) = event, link.origin != .deferred { return ShopRoutes.route(link) }
        }
        return nil
    }

    /// Creates a share link to product 42 and says what became of it: not offered (the
    /// provider creates no links: `capabilities` has no `.linkCreation`), or the link created.
    public func shareProduct() async -> String {
        guard client.capabilities.contains(.linkCreation) else { return "not offered by this provider" }
        do {
            let created = try await client.createLink(LinkRequest(deepLinkPath: "/product/42", title: "Product 42"))
            return "created \(created.url.host ?? "")\(created.url.path)"
        } catch {
            return "failed: \(error)"
        }
    }

    /// Tracks a purchase and says what became of it: not offered (the provider takes no
    /// events: `capabilities` has no `.eventTracking`, and `trackRevenue` would do nothing),
    /// sent (the provider accepted it: nothing waits in the queue after the flush), or still
    /// queued.
    public func purchase(amount: Decimal) async -> String {
        guard client.capabilities.contains(.eventTracking) else { return "not offered by this provider" }
        do {
            try await client.trackRevenue(amount: amount, currency: "EUR")
            await client.flushEvents()
            let waiting = await client.queuedEventCount
            return waiting == 0 ? "sent" : "queued (\(waiting) waiting)"
        } catch {
            return "failed: \(error)"
        }
    }

    private mutating func nextEvent() async -> DeepLinkEvent? {
        await events.next()
    }
}
