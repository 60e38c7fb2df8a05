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
/// `myapp://products/42` and `https://go.acme.app/products/42` route the same), and the path of
/// its ``DeepLink/destination`` when the provider gave one. The most specific pattern that
/// matches any of them wins (so a catch-all `/*` never hides a real route in the other); when
/// one pattern matches more than one, this order decides:
/// 1. an app-scheme destination (`myapp://products/42`: LimeLink's `uri`, LinkForty's app scheme
///    and path, Paylisher's `scheme`, Dynalinks' absolute `deep_link_value`). It is the
///    provider's own answer to "which screen", while the link's path on a short-link host is
///    often just its code (`/link/summer`).
/// 2. the link's path segments.
/// 3. a web destination (`https://acme.com/products/42`): last, because it is usually the page
///    to show when the app is not installed, not a route.
///
/// Dot segments are resolved first, as the web server at the link's URL resolves them:
/// `/products/../wallet` is routed (and gated) as `/wallet`, and `..` never reaches past the
/// root. ``DeepLink/pathSegments`` itself keeps them as Foundation parsed them.
///
/// **Precedence.** Patterns are compared segment by segment: a literal beats a capture, which
/// beats a wildcard; a longer pattern beats its prefix, but an exact match beats a wildcard that
/// matches nothing (`/anything` before `/anything/*`, `/` before `/*`); then the order you
/// declared them in. The first pattern that matches and
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
    /// A declared route and its compiled pattern.
    private struct Entry: Sendable {
        let route: LinkRoute<Route>
        let pattern: RoutePattern
    }

    /// Most specific first.
    private let entries: [Entry]
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
        var checked: [Entry] = []
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
            checked.append(Entry(route: route, pattern: pattern))
        }
        // Most specific first; ties keep declaration order.
        let order = checked.indices.sorted { left, right in
            switch RoutePattern.compareSpecificity(checked[left].pattern, checked[right].pattern) {
            case .orderedAscending: true
            case .orderedDescending: false
            case .orderedSame: left < right
            }
        }
        self.entries = order.map { checked[$0] }
        var byFirstLiteral: [String: [Int]] = [:]
        var withoutFirstLiteral: [Int] = []
        for (index, entry) in entries.enumerated() {
            if case .literal(let first)? = entry.pattern.segments.first {
                byFirstLiteral[first, default: []].append(index)
            } else {
                withoutFirstLiteral.append(index)
            }
        }
        self.byFirstLiteral = byFirstLiteral
        self.withoutFirstLiteral = withoutFirstLiteral
    }

    /// The patterns, most specific first: the order they are tried in.
    public var patterns: [String] { entries.map(\.route.pattern) }

    /// The route for `link`, or `nil` when no pattern matches.
    public func route(_ link: DeepLink) -> Route? {
        match(link)?.route
    }

    /// The matched route, and its index in `entries`, for `link`.
    private func match(_ link: DeepLink) -> (route: Route, index: Int)? {
        let candidates = candidateSegments(of: link)
        if candidates.count == 1 { return match(candidates[0], link: link) }
        // Several segment lists: the most specific pattern that matches any of them wins, and
        // for one pattern the lists are tried in order.
        var indices = Set(withoutFirstLiteral)
        for segments in candidates {
            if let first = segments.first, let bucket = byFirstLiteral[folded(first)] { indices.formUnion(bucket) }
        }
        for index in indices.sorted() {
            for segments in candidates {
                if let value = build(index, segments, link) { return (value, index) }
            }
        }
        return nil
    }

    /// The first route, in precedence order, for one list of segments: those whose first
    /// literal is the first segment, then those that start with a capture or a wildcard (every
    /// literal-first pattern precedes those).
    private func match(_ segments: [String], link: DeepLink) -> (route: Route, index: Int)? {
        if let first = segments.first, let bucket = byFirstLiteral[folded(first)] {
            for index in bucket {
                if let value = build(index, segments, link) { return (value, index) }
            }
        }
        for index in withoutFirstLiteral {
            if let value = build(index, segments, link) { return (value, index) }
        }
        return nil
    }

    private func folded(_ segment: String) -> String {
        caseSensitive ? segment : RoutePattern.fold(segment)
    }

    /// Whether the pattern `link` routes to was declared with `requiresAuthentication`. Give it
    /// to the client, so the sign-in hold follows your routes:
    ///
    /// ```swift
    /// configuration.authenticationRule = { router.requiresAuthentication($0) }
    /// ```
    public func requiresAuthentication(_ link: DeepLink) -> Bool {
        match(link).map { entries[$0.index].route.requiresAuthentication } ?? false
    }

    /// Routes each link of `links` (``DeepLinkClient/deepLinks()``) as it arrives; unmatched
    /// links are surfaced, not dropped.
    public func routes(of links: AsyncStream<DeepLink>) -> RoutedLinks<Route> {
        RoutedLinks(base: links, router: self)
    }

    // MARK: - Matching

    /// The segment lists to try, in order: an app-scheme destination's, the link's, a web
    /// destination's.
    /// Dot segments are resolved first (`/a/../b` is `/b`), as the web server at that URL
    /// resolves them, so a route and the sign-in hold see the path that would be served.
    private func candidateSegments(of link: DeepLink) -> [[String]] {
        let own = RoutePattern.resolvingDotSegments(link.pathSegments)
        guard let destination = link.destination, let scheme = destination.scheme?.lowercased(),
            let parsed = try? LinkParser.parse(destination)
        else { return [own] }
        let other = RoutePattern.resolvingDotSegments(parsed.pathSegments)
        guard other != own else { return [own] }
        let isWeb = scheme == "http" || scheme == "https"
        return isWeb ? [own, other] : [other, own]
    }

    /// Route `index`'s value for `segments`, or `nil` when its pattern does not match or its
    /// closure throws. Captures are collected only once the pattern matched.
    private func build(_ index: Int, _ segments: [String], _ link: DeepLink) -> Route? {
        let entry = entries[index]
        guard entry.pattern.matches(segments, caseSensitive: caseSensitive) else { return nil }
        let captures = entry.pattern.captures(in: segments)
        return try? entry.route.build(RouteMatch(link: link, segments: segments, captures: captures.named, rest: captures.rest))
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
    /// One route.
    public static func buildExpression(_ route: LinkRoute<Route>) -> [LinkRoute<Route>] { [route] }
    /// Routes made elsewhere (a loop over your resources, say).
    public static func buildExpression(_ routes: [LinkRoute<Route>]) -> [LinkRoute<Route>] { routes }
    /// The routes, in declaration order.
    public static func buildBlock(_ parts: [LinkRoute<Route>]...) -> [LinkRoute<Route>] { parts.flatMap { $0 } }
    /// Routes declared under `if`.
    public static func buildOptional(_ part: [LinkRoute<Route>]?) -> [LinkRoute<Route>] { part ?? [] }
    /// Routes declared under `if`/`else` or `switch`.
    public static func buildEither(first part: [LinkRoute<Route>]) -> [LinkRoute<Route>] { part }
    /// Routes declared under `if`/`else` or `switch`.
    public static func buildEither(second part: [LinkRoute<Route>]) -> [LinkRoute<Route>] { part }
    /// Routes declared in a `for` loop.
    public static func buildArray(_ parts: [[LinkRoute<Route>]]) -> [LinkRoute<Route>] { parts.flatMap { $0 } }
}
