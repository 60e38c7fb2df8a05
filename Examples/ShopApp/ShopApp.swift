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

/// The example app's router, written once: it reads the app-scheme destination when the
/// provider gives one, else the link's path, else a `route` parameter.
public struct ShopRouter: Sendable {
    public let appScheme: String

    public init(appScheme: String) {
        self.appScheme = appScheme
    }

    public func route(_ link: DeepLink) -> ShopRoute {
        var segments = link.pathSegments
        if let destination = link.destination, destination.scheme?.lowercased() == appScheme,
            let parsed = try? LinkParser.parse(destination)
        {
            segments = parsed.pathSegments
        }
        switch (segments.first, segments.count) {
        case ("product", 2): return .product(segments[1])
        case ("sale", 2): return .sale(segments[1])
        case ("cart", _): return .cart(coupon: link.parameters["coupon"])
        case ("wallet", _): return .wallet
        default: break
        }
        switch link.parameters["route"] {
        case "product": return link.parameters["productId"].map(ShopRoute.product) ?? .home
        case "sale": return link.parameters["sale"].map(ShopRoute.sale) ?? .home
        default: return .home
        }
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
    public let router: ShopRouter
    private var events: AsyncStream<DeepLinkEvent>.Iterator

    /// Subscribes at once, so nothing that arrives before the first launch is missed.
    public init(client: DeepLinkClient, appScheme: String) {
        self.client = client
        self.router = ShopRouter(appScheme: appScheme)
        self.events = client.events().makeAsyncIterator()
    }

    /// The first launch: starts the client and returns the outcome, with the route of the link
    /// that brought the user, if one did.
    public mutating func launch() async -> (outcome: InstallOutcome, route: ShopRoute?) {
        await client.start()
        let outcome = await client.installOutcome()
        if case .attributed(let link, _) = outcome { return (outcome, router.route(link)) }
        return (outcome, nil)
    }

    /// Opens a URL as the system would hand it over, and returns what the app did.
    public mutating func open(_ url: URL) async -> ShopOpening {
        guard client.handle(url) else { return .notOurs }
        while let event = await nextEvent() {
            switch event {
            case .link(let link) where link.origin != .deferred: return .shown(router.route(link))
            case .authenticationRequired(let link): return .signInRequired(router.route(link))
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
            if case .link(let link) = event, link.origin != .deferred { return router.route(link) }
        }
        return nil
    }

    /// Tracks a purchase; says whether the provider takes events.
    public func purchase(amount: Decimal) async -> String {
        do {
            try await client.trackRevenue(amount: amount, currency: "EUR")
            await client.flushEvents()
            return "sent"
        } catch let error as DeepLinkError where error.code == .unsupported {
            return "not offered by this provider"
        } catch {
            return "failed: \(error)"
        }
    }

    private mutating func nextEvent() async -> DeepLinkEvent? {
        await events.next()
    }
}
