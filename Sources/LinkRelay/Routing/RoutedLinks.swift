import Foundation

/// A link and what the router made of it.
public enum RoutedLink<Route: Sendable>: Sendable {
    /// A pattern matched: the route, and the link it came from.
    case matched(Route, DeepLink)
    /// No pattern matched. The link is still yours: show a default screen, log it, or open its
    /// destination in Safari.
    case unmatched(DeepLink)

    /// The route, or `nil` for an unmatched link.
    public var route: Route? {
        if case .matched(let route, _) = self { return route }
        return nil
    }

    /// The link, matched or not.
    public var link: DeepLink {
        switch self {
        case .matched(_, let link), .unmatched(let link): link
        }
    }
}

extension RoutedLink: Equatable where Route: Equatable {}
extension RoutedLink: Hashable where Route: Hashable {}

/// Links from a stream, routed as they arrive. No task and no buffer of its own: each link is
/// routed when you take it, so it costs no extra hop. It ends when the stream ends.
public struct RoutedLinks<Route: Sendable>: AsyncSequence, Sendable {
    public typealias Element = RoutedLink<Route>

    let base: AsyncStream<DeepLink>
    let router: DeepLinkRouter<Route>

    /// Takes the next link from the stream and routes it.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<DeepLink>.Iterator
        let router: DeepLinkRouter<Route>

        /// The next link, routed; `nil` once the stream has ended.
        public mutating func next() async -> RoutedLink<Route>? {
            guard let link = await base.next() else { return nil }
            return router.route(link).map { .matched($0, link) } ?? .unmatched(link)
        }
    }

    /// An iterator over the stream's links, routed.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), router: router)
    }
}

extension DeepLinkClient {
    /// ``deepLinks()`` routed by `router`: every link to open, as your route or as unmatched.
    ///
    /// ```swift
    /// for await routed in client.routes(router) {
    ///     if let route = routed.route { navigation.open(route) } else { navigation.openHome() }
    /// }
    /// ```
    public nonisolated func routes<Route>(_ router: DeepLinkRouter<Route>) -> RoutedLinks<Route> {
        router.routes(of: deepLinks())
    }
}

extension RoutedLink: CustomStringConvertible {
    /// The route and the link it came from, short: `product(id: 42) ← https://go.acme.app/p42
    /// (linkforty, resolved by the server)`, or `unmatched: https://…`. `debugPrint` still shows
    /// every field of the link.
    public var description: String {
        switch self {
        case .matched(let route, let link): "\(route) ← \(link)"
        case .unmatched(let link): "unmatched: \(link)"
        }
    }
}
