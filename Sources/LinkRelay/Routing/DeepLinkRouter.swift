import Foundation

/// Turns a ``DeepLink`` into your app's own destination type, from path patterns with typed
/// captures.
///
/// ```swift
/// enum Route: Hashable, Sendable {
///     case product(id: Int), reviews(productID: Int), campaign(slug: String), wallet, help([String])
/// }
///
/// let router = try DeepLinkRouter<Route> {
///     LinkRoute("/products/:id") { try .product(id: $0.capture("id")) }
///     LinkRoute("/products/:id/reviews") { try .reviews(productID: $0.capture("id")) }
///     LinkRoute("/campaigns/:slug/apply") { try .campaign(slug: $0.capture("slug")) }
///     LinkRoute("/wallet", requiresAuthentication: true) { _ in .wallet }
///     LinkRoute("/help/*") { .help($0.rest) }
/// }
///
/// for await routed in client.routes(router) {
///     switch routed {
///     case .matched(let route, _): navigate(to: route)
///     case .unmatched(let link): showHome(link)       // surfaced, never dropped
///     }
/// }
/// ```
///
/// **Patterns.** Segments separated by `/`: a literal (`products`), a capture (`:id`), and a
/// trailing wildcard (`*`) that matches zero or more remaining segments (``RouteMatch/rest``).
/// Leading, trailing and repeated `/` are ignored, as they are in ``DeepLink/pathSegments``.
///
/// **What is matched.** The link's ``DeepLink/pathSegments`` (already percent-decoded, so
/// `myapp://products/42` and `https://go.acme.app/products/42` route the same), and its
/// ``DeepLink/destination`` when the provider gave one, in this order:
/// 1. an app-scheme destination (`myapp://products/42`: LimeLink's `uri`, LinkForty's app scheme
///    and path, Paylisher's `scheme`, Dynalinks' absolute `deep_link_value`). It is the
///    provider's own answer to "which screen", while the link's path on a short-link host is
///    often just its code (`/link/summer`).
/// 2. the link's path segments.
/// 3. a web destination (`https://acme.com/products/42`): last, because it is usually the page
///    to show when the app is not installed, not a route.
///
/// **Precedence.** Patterns are compared segment by segment: a literal beats a capture, which
/// beats a wildcard; then the order you declared them in. The first pattern that matches and
/// whose closure returns a route wins. A closure that throws, or a capture that does not convert
/// (`:id` read as `Int` from `abc`), makes that pattern not match, and matching goes on.
///
/// **Case.** Literal segments match regardless of case (`myapp://Products/42` opens
/// `/products/:id`): the first segment of an app-scheme link is a host, which people and
/// marketing tools write in any case. Captures keep the case they arrived in. Pass
/// `caseSensitive: true` to compare literals exactly.
///
/// **Mistakes are reported when the router is built**, not when a link arrives: a malformed
/// pattern, or two patterns that match the same links with the same capture names (the second
/// could only ever run when the first's closure fails). To fall back on purpose (`:id` as `Int`,
/// else `:slug` as `String`), name the captures differently.
public struct DeepLinkRouter<Route: Sendable>: Sendable {
    private let routes: [LinkRoute<Route>]
    /// Route indices, most specific first, by a first literal segment (folded unless case
    /// sensitive), and those whose first segment is not a literal.
    private let byFirstLiteral: [String: [Int]]
    private let withoutFirstLiteral: [Int]
    /// Whether literal segments are compared exactly.
    public let caseSensitive: Bool

    /// A router over `routes`, declared with a builder.
    ///
    /// - Throws: ``DeepLinkError`` `.invalidConfiguration` naming a malformed pattern, or two
    ///   patterns that duplicate each other.
    public init(caseSensitive: Bool = false, @LinkRouteBuilder<Route> _ routes: () -> [LinkRoute<Route>]) throws {
        try self.init(caseSensitive: caseSensitive, routes: routes())
    }

    /// A router over `routes`.
    ///
    /// - Throws: ``DeepLinkError`` `.invalidConfiguration` naming a malformed pattern, or two
    ///   patterns that duplicate each other.
    public init(caseSensitive: Bool = false, routes: [LinkRoute<Route>]) throws {
        self.caseSensitive = caseSensitive
        var checked: [LinkRoute<Route>] = []
        var shapes: [RoutePattern.Shape: String] = [:]
        for route in routes {
            let pattern = try RoutePattern(route.pattern, caseSensitive: caseSensitive)
            if let earlier = shapes[pattern.shape] {
                throw DeepLinkError(
                    .invalidConfiguration,
                    "The route '\(route.pattern)' duplicates '\(earlier)': both match the same links with the same captures. "
                        + "Remove one, or name the fallback's captures differently.")
            }
            shapes[pattern.shape] = route.pattern
            var compiled = route
            compiled.compiled = pattern
            checked.append(compiled)
        }
        // Most specific first; a stable sort keeps declaration order among equals.
        let order = checked.indices.sorted { left, right in
            let comparison = RoutePattern.compareSpecificity(checked[left].compiled!, checked[right].compiled!)
            return comparison == .orderedAscending || (comparison == .orderedSame && left < right)
        }
        self.routes = order.map { checked[$0] }
        var byFirstLiteral: [String: [Int]] = [:]
        var withoutFirstLiteral: [Int] = []
        for (index, route) in self.routes.enumerated() {
            if case .literal(let first)? = route.compiled!.segments.first {
                byFirstLiteral[first, default: []].append(index)
            } else {
                withoutFirstLiteral.append(index)
            }
        }
        self.byFirstLiteral = byFirstLiteral
        self.withoutFirstLiteral = withoutFirstLiteral
    }

    /// The patterns, most specific first: the order they are tried in.
    public var patterns: [String] { routes.map(\.pattern) }

    /// The route for `link`, or `nil` when no pattern matches.
    public func route(_ link: DeepLink) -> Route? {
        match(link)?.route
    }

    /// The matched route, its index in `routes`, for `link`.
    private func match(_ link: DeepLink) -> (route: Route, index: Int)? {
        for segments in candidateSegments(of: link) {
            if let found = match(segments, link: link) { return (found.value, found.index) }
        }
        return nil
    }

    /// Whether the pattern `link` routes to was declared with `requiresAuthentication`. Give it
    /// to the client, so the sign-in gate follows your routes:
    ///
    /// ```swift
    /// configuration.authenticationRule = { router.requiresAuthentication($0) }
    /// ```
    public func requiresAuthentication(_ link: DeepLink) -> Bool {
        match(link).map { routes[$0.index].requiresAuthentication } ?? false
    }

    /// Routes each link of `links` (``DeepLinkClient/deepLinks()``) as it arrives; unmatched
    /// links are surfaced, not dropped.
    public func routes(of links: AsyncStream<DeepLink>) -> RoutedLinks<Route> {
        RoutedLinks(base: links, router: self)
    }

    // MARK: - Matching

    /// The segment lists to try, in order: an app-scheme destination's, the link's, a web
    /// destination's.
    private func candidateSegments(of link: DeepLink) -> [[String]] {
        guard let destination = link.destination, let scheme = destination.scheme?.lowercased(),
            let parsed = try? LinkParser.parse(destination)
        else { return [link.pathSegments] }
        let isWeb = scheme == "http" || scheme == "https"
        if parsed.pathSegments == link.pathSegments { return [link.pathSegments] }
        return isWeb ? [link.pathSegments, parsed.pathSegments] : [parsed.pathSegments, link.pathSegments]
    }

    private func match(_ segments: [String], link: DeepLink) -> (value: Route, index: Int)? {
        let folded = caseSensitive ? segments : segments.map(RoutePattern.fold)
        let literalFirst = folded.first.flatMap { byFirstLiteral[$0] } ?? []
        for indices in [literalFirst, withoutFirstLiteral] {
            for index in indices {
                let route = routes[index]
                guard let captures = route.compiled!.match(segments, folded: folded) else { continue }
                let match = RouteMatch(link: link, segments: segments, captures: captures.named, rest: captures.rest)
                if let value = try? route.build(match) { return (value, index) }
            }
        }
        return nil
    }
}

/// One pattern of a ``DeepLinkRouter`` and how to build the route from what it captured.
public struct LinkRoute<Route: Sendable>: Sendable {
    /// The pattern, as declared (`"/products/:id"`).
    public let pattern: String
    /// Whether links on this route need a signed-in user (see
    /// ``DeepLinkRouter/requiresAuthentication(_:)``).
    public let requiresAuthentication: Bool
    let build: @Sendable (RouteMatch) throws -> Route
    var compiled: RoutePattern?

    /// A pattern and the closure that builds its route. Throwing from `build` (a capture that
    /// does not convert throws for you) makes the pattern not match.
    public init(
        _ pattern: String, requiresAuthentication: Bool = false, _ build: @escaping @Sendable (RouteMatch) throws -> Route
    ) {
        self.pattern = pattern
        self.requiresAuthentication = requiresAuthentication
        self.build = build
    }
}

/// Declares the routes of a ``DeepLinkRouter`` one per line, with `if`, `for` and `switch`.
@resultBuilder
public enum LinkRouteBuilder<Route: Sendable> {
    public static func buildExpression(_ route: LinkRoute<Route>) -> [LinkRoute<Route>] { [route] }
    public static func buildExpression(_ routes: [LinkRoute<Route>]) -> [LinkRoute<Route>] { routes }
    public static func buildBlock(_ parts: [LinkRoute<Route>]...) -> [LinkRoute<Route>] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [LinkRoute<Route>]?) -> [LinkRoute<Route>] { part ?? [] }
    public static func buildEither(first part: [LinkRoute<Route>]) -> [LinkRoute<Route>] { part }
    public static func buildEither(second part: [LinkRoute<Route>]) -> [LinkRoute<Route>] { part }
    public static func buildArray(_ parts: [[LinkRoute<Route>]]) -> [LinkRoute<Route>] { parts.flatMap { $0 } }
}
