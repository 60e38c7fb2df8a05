import HTTPTypes
import Hummingbird
import LinkRelayServerCore
import LinkRelayServerStorage
import Synchronization

/// The router's routes as a tree of segments, for what the router itself does not say: which
/// methods the route a path reaches takes, so a request with another method is answered
/// `405 Method Not Allowed` with `Allow` (RFC 9110 §15.5.6), not `404`. A path is followed as
/// the router follows it: at each segment the same text first, else a parameter, else `**`
/// (the rest), never back. Filled once, when every route is registered.
final class RouteTable: Sendable {
    private struct Node: Sendable {
        var literal: [Substring: Node] = [:]
        var parameter: [Node] = []
        var rest: [Node] = []
        var methods: Set<String> = []

        mutating func insert(_ segments: ArraySlice<Substring>, method: String) {
            guard let first = segments.first else {
                methods.insert(method)
                return
            }
            if first == "**" {
                if rest.isEmpty { rest.append(Node()) }
                rest[0].methods.insert(method)
            } else if first.hasPrefix("{") || first.hasPrefix(":") || first == "*" {
                if parameter.isEmpty { parameter.append(Node()) }
                parameter[0].insert(segments.dropFirst(), method: method)
            } else {
                literal[first, default: Node()].insert(segments.dropFirst(), method: method)
            }
        }

        func methods(for segments: ArraySlice<Substring>) -> Set<String> {
            guard let first = segments.first else { return methods.union(rest.first?.methods ?? []) }
            if let next = literal[first] { return next.methods(for: segments.dropFirst()) }
            if let next = parameter.first { return next.methods(for: segments.dropFirst()) }
            return rest.first?.methods ?? []
        }
    }

    private let root = Mutex(Node())

    /// Keeps `routes` (``Router/routes``).
    func load(_ routes: [Router<ServerContext>.RouteDescription]) {
        var tree = Node()
        for route in routes {
            tree.insert(ArraySlice("\(route.path)".split(separator: "/")), method: route.method.rawValue)
        }
        root.withLock { $0 = tree }
    }

    /// The methods of the route `path` reaches, sorted; empty when it reaches none.
    func methods(for path: String) -> [String] {
        let segments = ArraySlice(path.split(separator: "/"))
        return root.withLock { $0.methods(for: segments) }.sorted()
    }
}
