import Foundation

/// Sends requests for chosen hosts to another server, path and query unchanged: how an app's
/// Debug build reaches the LinkRelay Sandbox (or any local stand-in) when a provider's hosts are
/// fixed, like LimeLink's `{project}.limelink.org` or Paylisher's short-link hosts.
///
/// ```swift
/// #if DEBUG
/// configuration.transport = HostRewritingTransport(
///     hosts: ["*.limelink.org", "limelink.org"],
///     to: URL(string: "http://127.0.0.1:8642")!)
/// #endif
/// ```
///
/// A request to `https://shop.limelink.org/link/p42?x=1` goes to
/// `http://127.0.0.1:8642/link/p42?x=1` with `X-Forwarded-Host: shop.limelink.org` and
/// `X-Forwarded-Proto: https`, which the Sandbox routes by. The path and query are copied byte
/// for byte, so a provider that signs or echoes them sees what the app sent. A path in the
/// destination (`http://127.0.0.1:8642/limelink`) is put in front of the request's path.
/// Requests to other hosts pass through untouched. Links themselves are not rewritten: the app
/// still handles `https://shop.limelink.org/…`, and the backend still claims it.
public struct HostRewritingTransport: HTTPTransport {
    /// The hosts rewritten: exact names, or `*.example.com` for every subdomain.
    public let hosts: Set<String>
    /// Where their requests go: scheme, host, port and an optional path prefix.
    public let destination: URL
    /// The transport that sends every request.
    public let base: any HTTPTransport

    /// A transport sending requests for `hosts` (compared case-insensitively) to `destination`
    /// through `base` (default: a new ``URLSessionTransport``).
    public init(hosts: Set<String>, to destination: URL, over base: any HTTPTransport = URLSessionTransport()) {
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.destination = destination
        self.base = base
    }

    /// Whether requests to `host` are rewritten.
    public func rewrites(host: String) -> Bool {
        HostPattern.matches(host.lowercased(), anyOf: hosts)
    }

    /// The request as it is sent: rewritten when its host is one of ``hosts``.
    public func rewritten(_ request: HTTPRequest) -> HTTPRequest {
        guard let host = request.url.host, rewrites(host: host),
            var target = URLComponents(url: destination, resolvingAgainstBaseURL: true),
            let original = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
        else { return request }
        var prefix = target.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        let path = original.percentEncodedPath.isEmpty ? "/" : original.percentEncodedPath
        target.percentEncodedPath = prefix + path
        target.percentEncodedQuery = original.percentEncodedQuery
        target.fragment = nil
        guard let url = target.url else { return request }
        var rewritten = request
        rewritten.url = url
        let port = original.port.map { ":\($0)" } ?? ""
        rewritten.headers["X-Forwarded-Host"] = host.lowercased() + port
        rewritten.headers["X-Forwarded-Proto"] = original.scheme?.lowercased() ?? "https"
        return rewritten
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await base.send(rewritten(request))
    }
}
