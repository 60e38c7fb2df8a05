import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// A stock-keeping code, to show a capture of the app's own `LosslessStringConvertible` type.
struct SKU: LosslessStringConvertible, Hashable, Sendable {
    let code: String
    init?(_ description: String) {
        guard description.hasPrefix("SKU-"), description.count == 7, description.dropFirst(4).allSatisfy(\.isNumber) else { return nil }
        code = description
    }
    var description: String { code }
}

enum AppRoute: Hashable, Sendable {
    case home, products, newArrivals, wallet
    case product(Int)
    case productBySlug(String)
    case reviews(Int)
    case review(Int, Int)
    case campaignApply(String, ref: String?)
    case help([String])
    case helpTopic(String)
    case order(UUID)
    case sku(SKU)
    case search(String, page: Int?)
}

/// One row of the routing table: a URL and the route it must give (`nil`: unmatched).
struct RouteCase: CustomTestStringConvertible, Sendable {
    let url: String
    let route: AppRoute?
    var testDescription: String { "\(url) → \(route.map { "\($0)" } ?? "unmatched")" }
}

@Suite("DeepLinkRouter", .timeLimit(.minutes(1)))
struct RouterTests {
    static func makeRouter(caseSensitive: Bool = false) throws -> DeepLinkRouter<AppRoute> {
        try DeepLinkRouter<AppRoute>(caseSensitive: caseSensitive) {
            // Declared in no particular order: precedence does not depend on it, except
            // among patterns of equal rank (the two :id / :slug captures below).
            LinkRoute("/help/*") { .help($0.rest) }
            LinkRoute("/help/:topic") { try .helpTopic($0.capture("topic")) }
            LinkRoute("/products/:id") { try .product($0.capture("id")) }
            LinkRoute("/products/:slug") { try .productBySlug($0.capture("slug")) }
            LinkRoute("/products/new") { _ in .newArrivals }
            LinkRoute("/products") { _ in .products }
            LinkRoute("/products/:id/reviews") { try .reviews($0.capture("id")) }
            LinkRoute("/products/:id/reviews/:reviewID") { try .review($0.capture("id"), $0.capture("reviewID")) }
            LinkRoute("/campaigns/:slug/apply") { try .campaignApply($0.capture("slug"), ref: $0.query("ref")) }
            LinkRoute("/wallet", requiresAuthentication: true) { _ in .wallet }
            LinkRoute("/orders/:orderID") { try .order($0.capture("orderID")) }
            LinkRoute("/sku/:code") { try .sku($0.capture("code")) }
            LinkRoute("/search") { try .search($0.requiredQuery("q"), page: $0.query("page", as: Int.self)) }
            LinkRoute("/") { _ in .home }
        }
    }

    static let orderID = UUID(uuidString: "6D92078A-8246-4BA4-AE5B-76104861E7DC")!

    static let cases: [RouteCase] = [
        // Both URL forms route the same.
        RouteCase(url: "myapp://products/42", route: .product(42)),
        RouteCase(url: "https://go.acme.app/products/42", route: .product(42)),
        RouteCase(url: "myapp://products", route: .products),
        RouteCase(url: "https://go.acme.app/products", route: .products),
        RouteCase(url: "myapp://wallet", route: .wallet),
        RouteCase(url: "https://go.acme.app/wallet", route: .wallet),
        RouteCase(url: "myapp://", route: .home),
        RouteCase(url: "https://go.acme.app", route: .home),
        RouteCase(url: "https://go.acme.app/", route: .home),
        // Literals beat captures; typed captures fall through to the next pattern.
        RouteCase(url: "myapp://products/new", route: .newArrivals),
        RouteCase(url: "https://go.acme.app/products/new", route: .newArrivals),
        RouteCase(url: "myapp://products/summer-dress", route: .productBySlug("summer-dress")),
        RouteCase(url: "myapp://products/42abc", route: .productBySlug("42abc")),
        RouteCase(url: "myapp://products/99999999999999999999", route: .productBySlug("99999999999999999999")),
        RouteCase(url: "myapp://products/-7", route: .product(-7)),
        // Nested routes and conversions that fail.
        RouteCase(url: "myapp://products/42/reviews", route: .reviews(42)),
        RouteCase(url: "https://go.acme.app/products/42/reviews", route: .reviews(42)),
        RouteCase(url: "myapp://products/42/reviews/7", route: .review(42, 7)),
        RouteCase(url: "myapp://products/abc/reviews", route: nil),
        RouteCase(url: "myapp://products/42/reviews/latest", route: nil),
        RouteCase(url: "myapp://products/42/reviews/7/more", route: nil),
        // Trailing and repeated slashes are ignored.
        RouteCase(url: "https://go.acme.app/products/42/", route: .product(42)),
        RouteCase(url: "https://go.acme.app//products///42//reviews/", route: .reviews(42)),
        RouteCase(url: "myapp:///products/42", route: .product(42)),
        // Percent-encoded segments are decoded before matching; captures keep their case.
        RouteCase(url: "https://go.acme.app/products/caf%C3%A9", route: .productBySlug("café")),
        RouteCase(url: "https://go.acme.app/products/a%2Fb", route: .productBySlug("a/b")),
        RouteCase(url: "https://go.acme.app/%70roducts/42", route: .product(42)),
        RouteCase(url: "myapp://products/Summer-Dress", route: .productBySlug("Summer-Dress")),
        // Literals match regardless of case (documented); the host of an app-scheme link too.
        RouteCase(url: "myapp://Products/42", route: .product(42)),
        RouteCase(url: "https://go.acme.app/PRODUCTS/NEW", route: .newArrivals),
        RouteCase(url: "MYAPP://WALLET", route: .wallet),
        // Query captures.
        RouteCase(url: "myapp://campaigns/spring/apply?ref=mail", route: .campaignApply("spring", ref: "mail")),
        RouteCase(url: "https://go.acme.app/campaigns/spring/apply", route: .campaignApply("spring", ref: nil)),
        RouteCase(url: "myapp://campaigns/spring%20sale/apply?ref=a+b", route: .campaignApply("spring sale", ref: "a+b")),
        RouteCase(url: "myapp://campaigns/spring%20sale/apply?ref=a%20b", route: .campaignApply("spring sale", ref: "a b")),
        RouteCase(url: "myapp://search?q=shoes&page=2", route: .search("shoes", page: 2)),
        RouteCase(url: "myapp://search?q=shoes", route: .search("shoes", page: nil)),
        RouteCase(url: "myapp://search?q=shoes&page=two", route: nil),
        RouteCase(url: "myapp://search?page=2", route: nil),
        // UUID and custom captures.
        RouteCase(url: "myapp://orders/6D92078A-8246-4BA4-AE5B-76104861E7DC", route: .order(orderID)),
        RouteCase(url: "myapp://orders/6d92078a-8246-4ba4-ae5b-76104861e7dc", route: .order(orderID)),
        RouteCase(url: "myapp://orders/not-a-uuid", route: nil),
        RouteCase(url: "myapp://sku/SKU-123", route: .sku(SKU("SKU-123")!)),
        RouteCase(url: "myapp://sku/123", route: nil),
        // Wildcards: zero or more segments, after captures and literals.
        RouteCase(url: "myapp://help", route: .help([])),
        RouteCase(url: "myapp://help/faq", route: .helpTopic("faq")),
        RouteCase(url: "myapp://help/faq/returns", route: .help(["faq", "returns"])),
        RouteCase(url: "https://go.acme.app/help/a/b/c", route: .help(["a", "b", "c"])),
        // No route.
        RouteCase(url: "myapp://wallet/cards", route: nil),
        RouteCase(url: "https://go.acme.app/unknown", route: nil),
        RouteCase(url: "myapp://campaigns/spring", route: nil),
    ]

    @Test("routes", arguments: cases)
    func routes(_ row: RouteCase) throws {
        let router = try Self.makeRouter()
        let link = try LinkParser.parse(row.url).deepLink(provider: "in-memory", resolution: .server)
        #expect(router.route(link) == row.route)
    }

    @Test("the table covers at least 40 links")
    func tableSize() {
        #expect(Self.cases.count >= 40)
    }

    @Test("precedence: literal, then capture, then wildcard, then declaration order; longer before its prefix")
    func precedence() throws {
        let router = try Self.makeRouter()
        // By segment kinds only (different literals never match the same link): literal before
        // capture before wildcard, a longer pattern before its prefix, then declaration order.
        #expect(
            router.patterns == [
                "/products/new", "/products/:id/reviews/:reviewID", "/products/:id/reviews", "/campaigns/:slug/apply", "/help/:topic",
                "/products/:id", "/products/:slug", "/orders/:orderID", "/sku/:code", "/products", "/wallet", "/search", "/help/*", "/",
            ])
        // Declaration order decides between equals: the other way round, every product is a slug.
        let slugsFirst = try DeepLinkRouter<AppRoute> {
            LinkRoute("/products/:slug") { try .productBySlug($0.capture("slug")) }
            LinkRoute("/products/:id") { try .product($0.capture("id")) }
        }
        #expect(slugsFirst.route(.fixture(path: "/products/42")) == .productBySlug("42"))
    }

    @Test(
        "an exact route beats a trailing wildcard that matches zero segments, in either declaration order",
        arguments: [false, true])
    func exactBeatsEmptyWildcard(_ wildcardFirst: Bool) throws {
        let exact = LinkRoute<String>("/anything") { _ in "exact" }
        let wildcard = LinkRoute<String>("/anything/*") { "wildcard \($0.rest)" }
        let home = LinkRoute<String>("/") { _ in "home" }
        let catchAll = LinkRoute<String>("/*") { "catch-all \($0.rest)" }
        let router = try DeepLinkRouter<String>(
            routes: wildcardFirst ? [catchAll, wildcard, exact, home] : [home, exact, wildcard, catchAll])
        #expect(router.route(.fixture(path: "/anything")) == "exact")
        #expect(router.route(.fixture(path: "/anything/")) == "exact")
        #expect(router.route(.fixture(path: "/anything/more")) == "wildcard [\"more\"]")
        #expect(router.route(.fixture(path: "/")) == "home")
        #expect(router.route(.fixture(path: "/elsewhere")) == "catch-all [\"elsewhere\"]")
        #expect(router.patterns == ["/anything", "/anything/*", "/", "/*"])
    }

    @Test("dot segments are resolved before matching, as the web server at that URL would: '..' cannot reach past the root")
    func dotSegments() throws {
        let router = try Self.makeRouter()
        #expect(router.route(.fixture(path: "/a/../products/42")) == .product(42))
        #expect(router.route(.fixture(path: "/products/./42")) == .product(42))
        #expect(router.route(.fixture(path: "/../../wallet")) == .wallet)
        // The sign-in hold sees the same path: a link dressed as a product still needs sign-in.
        #expect(router.requiresAuthentication(.fixture(path: "/products/../wallet")))
        #expect(router.route(.fixture(path: "/products/42/..")) == .products)
        // Through the real parser: Foundation keeps the dot segments; the router resolves them.
        let parsed = try LinkParser.parse(url("https://go.acme.app/help/faq/../../products/7"))
        #expect(parsed.pathSegments == ["help", "faq", "..", "..", "products", "7"])
        #expect(router.route(parsed.deepLink(provider: "test", resolution: .server)) == .product(7))
    }

    @Test("case-sensitive routers compare literals exactly")
    func caseSensitive() throws {
        let router = try Self.makeRouter(caseSensitive: true)
        #expect(router.route(.fixture(path: "/products/42")) == .product(42))
        #expect(router.route(.fixture(path: "/Products/42")) == nil)
        // Patterns that differ only in case are then distinct, not duplicates.
        let both = try DeepLinkRouter<String>(caseSensitive: true) {
            LinkRoute("/Promo") { _ in "upper" }
            LinkRoute("/promo") { _ in "lower" }
        }
        #expect(both.route(.fixture(path: "/Promo")) == "upper")
        #expect(both.route(.fixture(path: "/promo")) == "lower")
    }

    @Test(
        "duplicates and malformed patterns are refused when the router is built",
        arguments: [
            ["/products/:id", "/products/:id"],
            ["/products/:id", "products/:id/"],
            ["/Products/:id", "/products/:id"],
            ["/help/*", "//help/*"],
            ["/a/*/b"], ["/a/:"], ["/a/:x/:x"], ["/a/b*"], ["/a/:id-x"], ["/a/a:b"], ["/):object"], ["/x/b:"],
        ])
    func refused(_ patterns: [String]) {
        let error = #expect(throws: DeepLinkError.self) {
            _ = try DeepLinkRouter<Int>(routes: patterns.map { LinkRoute($0) { _ in 1 } })
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains(patterns.last!) == true)
    }

    @Test("the same shape with differently named captures is a deliberate fallback, not a duplicate")
    func fallbackIsAllowed() throws {
        let router = try DeepLinkRouter<String> {
            LinkRoute("/p/:id") { "id \(try $0.capture("id", as: Int.self))" }
            LinkRoute("/p/:name") { "name \(try $0.capture("name", as: String.self))" }
        }
        #expect(router.route(.fixture(path: "/p/3")) == "id 3")
        #expect(router.route(.fixture(path: "/p/x")) == "name x")
    }

    @Test("an app-scheme destination is routed first, then the link's path, then a web destination")
    func destinations() throws {
        let router = try Self.makeRouter()
        // LimeLink: the short link's own path is its code; its uri is the route.
        let short = DeepLink.fixture(path: "/link/summer", destination: URL(string: "myapp://products/42"))
        #expect(router.route(short) == .product(42))
        // The app-scheme destination wins over a path that also matches.
        let both = DeepLink.fixture(path: "/products/7", destination: URL(string: "myapp://products/42/reviews"))
        #expect(router.route(both) == .reviews(42))
        // A destination that matches nothing leaves the path.
        let strange = DeepLink.fixture(path: "/products/7", destination: URL(string: "myapp://nowhere"))
        #expect(router.route(strange) == .product(7))
        // A web destination (the page for users without the app) comes after the path.
        let web = DeepLink.fixture(path: "/products/7", destination: URL(string: "https://acme.example/products/42"))
        #expect(router.route(web) == .product(7))
        let webOnly = DeepLink.fixture(path: "/Xk9_2bQz", destination: URL(string: "https://acme.example/products/42"))
        #expect(router.route(webOnly) == .product(42))
    }

    @Test("a catch-all never hides a real route in the link's path or its destination")
    func catchAll() throws {
        let router = try DeepLinkRouter<String> {
            LinkRoute("/*") { "fallback \($0.segments.joined(separator: "/"))" }
            LinkRoute("/products/:id") { "product \(try $0.capture("id", as: Int.self))" }
        }
        let short = DeepLink.fixture(path: "/link/summer", destination: URL(string: "myapp://products/42"))
        #expect(router.route(short) == "product 42")
        let promo = DeepLink.fixture(path: "/products/7", destination: URL(string: "myapp://promo"))
        #expect(router.route(promo) == "product 7")
        // Neither has a real route: the catch-all takes the app-scheme destination first.
        let neither = DeepLink.fixture(path: "/link/summer", destination: URL(string: "myapp://promo/spring"))
        #expect(router.route(neither) == "fallback promo/spring")
    }

    @Test("captures and mismatches say what they are")
    func mismatch() throws {
        let link = DeepLink.fixture(path: "/products/abc", parameters: ["page": "x"])
        let match = RouteMatch(link: link, segments: ["products", "abc"], captures: ["id": "abc"], rest: [])
        #expect(throws: RouteMatch.Mismatch(name: "id", reason: "is not a valid Int: 'abc'")) { try match.capture("id", as: Int.self) }
        #expect(throws: RouteMatch.Mismatch(name: "slug", reason: "is not a capture of this pattern")) {
            try match.capture("slug", as: String.self)
        }
        #expect(throws: RouteMatch.Mismatch.self) { try match.query("page", as: Int.self) }
        #expect(try match.query("missing", as: Int.self) == nil)
        #expect(throws: RouteMatch.Mismatch(name: "missing", reason: "is missing from the query")) {
            try match.requiredQuery("missing", as: String.self)
        }
    }

    @Test("a route declared requiresAuthentication feeds the client's sign-in hold")
    func authentication() async throws {
        let router = try Self.makeRouter()
        #expect(router.requiresAuthentication(.fixture(path: "/wallet")))
        #expect(!router.requiresAuthentication(.fixture(path: "/products/42")))
        #expect(!router.requiresAuthentication(.fixture(path: "/wallet/cards")))  // no route, no hold

        let client = makeClient(LocalBackend(.init(schemes: ["myapp"]))) { configuration in
            configuration.authenticationRule = { router.requiresAuthentication($0) }
        }
        let events = client.linkEvents()
        client.handle(URL(string: "myapp://wallet")!)
        client.handle(URL(string: "myapp://products/42")!)
        let received = await events.prefixArray(2)
        guard case .authenticationRequired(let held) = received[0] else {
            Issue.record("expected the wallet link to be held, got \(received[0])")
            return
        }
        #expect(held.pathSegments == ["wallet"])
        #expect(received[1].link?.pathSegments == ["products", "42"])
        await client.shutdown()
    }

    @Test("client.routes(router) delivers every link, matched or not, in order")
    func stream() async throws {
        let router = try Self.makeRouter()
        let client = makeClient(LocalBackend(.init(schemes: ["myapp"])))
        let routed = client.routes(router)
        for text in ["myapp://products/42", "myapp://nowhere/at/all", "myapp://wallet", "myapp://help/a/b"] {
            client.handle(URL(string: text)!)
        }
        var received: [RoutedLink<AppRoute>] = []
        for await item in routed {
            received.append(item)
            if received.count == 4 { break }
        }
        await client.shutdown()
        #expect(received.map(\.route) == [.product(42), nil, .wallet, .help(["a", "b"])])
        #expect(received[1] == .unmatched(received[1].link))
        #expect(received[1].link.pathSegments == ["nowhere", "at", "all"])
    }
}
