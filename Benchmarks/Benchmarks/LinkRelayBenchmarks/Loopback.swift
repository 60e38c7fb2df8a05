import Benchmark
import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelaySandbox
import LinkRelaySimulator
import LinkRelayTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Records what goes through a transport: the requests as sent, and the responses.
final class RecordingTransport: HTTPTransport, @unchecked Sendable {
    let base: any HTTPTransport
    private let lock = NSLock()
    private var recorded: [HTTPRequest] = []
    private var answers: [HTTPResponse] = []

    init(_ base: any HTTPTransport) { self.base = base }

    var requests: [HTTPRequest] { lock.withLock { recorded } }
    var responses: [HTTPResponse] { lock.withLock { answers } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        lock.withLock { recorded.append(request) }
        let response = try await base.send(request)
        lock.withLock { answers.append(response) }
        return response
    }
}

/// Answers with recorded responses, in turn: the adapter's own work, and nothing else.
final class ReplayTransport: HTTPTransport, @unchecked Sendable {
    private let responses: [HTTPResponse]
    private let lock = NSLock()
    private var next = 0

    init(_ responses: [HTTPResponse]) { self.responses = responses }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        lock.withLock {
            defer { next = (next + 1) % responses.count }
            return responses[next]
        }
    }
}

/// A sandbox on a loopback port with each provider's product link, and per provider the backend
/// an app would use against it (path prefixes for LinkForty and Dynalinks, HostRewritingTransport
/// for LimeLink and Paylisher).
struct LoopbackWorld: Sendable {
    struct Adapter: Sendable {
        let backend: any DeepLinkBackend
        let transport: any HTTPTransport
        let link: URL
        /// The requests one resolve sends, as they go over the wire.
        let wire: [HTTPRequest]
    }

    let server: SandboxServer
    let adapters: [String: Adapter]

    static func start() async throws -> LoopbackWorld {
        let sandbox = Sandbox()
        let server = try SandboxServer(sandbox: sandbox, port: 0)
        let base = try await server.start()
        let settings = sandbox.settings
        sandbox.linkForty.createLink(
            shortCode: "p42", deepLinkPath: "/product/42", appScheme: "acme", deepLinkParameters: ["productId": "42"])
        sandbox.limeLink.createLink(project: "shop", suffix: "p42", uri: "acme://product/42")
        sandbox.dynalinks.createLink(path: "/p42", url: "https://shop.example/product/42", deepLinkValue: "/product/42")
        sandbox.paylisher.createCampaign(keyName: "p42", title: "Product 42", scheme: "acme://product/42")
        let device = StaticDeviceInfo.iPhone
        var adapters: [String: Adapter] = [:]
        /// `transport` builds the app's transport over a base one; the requests are recorded at
        /// the base, as they go over the wire (after any host rewriting).
        func add(
            _ name: String, _ backend: any DeepLinkBackend, _ transport: (any HTTPTransport) -> any HTTPTransport, _ link: URL
        ) async throws {
            let recorder = RecordingTransport(URLSessionTransport())
            _ = try await backend.resolve(link, context: BackendContext(transport: transport(recorder), device: device))
            adapters[name] = Adapter(backend: backend, transport: transport(URLSessionTransport()), link: link, wire: recorder.requests)
        }
        try await add(
            "LinkForty",
            LinkFortyBackend(try .init(baseURL: base.appendingPathComponent("linkforty"), linkDomains: [settings.linkFortyHost])),
            { $0 }, URL(string: "https://\(settings.linkFortyHost)/p42")!)
        try await add(
            "LimeLink", LimeLinkBackend(try .init(apiKey: settings.limeLinkAPIKey)),
            { HostRewritingTransport(hosts: [settings.limeLinkDomain, "*." + settings.limeLinkDomain], to: base, over: $0) },
            URL(string: "https://shop.\(settings.limeLinkDomain)/link/p42")!)
        try await add(
            "Dynalinks",
            DynalinksBackend(
                try .init(
                    apiKey: settings.dynalinksAPIKey, baseURL: base.appendingPathComponent("dynalinks/api/v1"),
                    linkDomains: [settings.dynalinksProjectHost])),
            { $0 }, URL(string: "https://\(settings.dynalinksProjectHost)/p42")!)
        try await add(
            "Paylisher", PaylisherBackend(try .init(apiKey: settings.paylisherAPIKey)),
            { HostRewritingTransport(hosts: Set(settings.hosts(of: .paylisher)), to: base, over: $0) },
            URL(string: "https://link.paylisher.com/p42")!)
        return LoopbackWorld(server: server, adapters: adapters)
    }
}

/// 4. Over loopback HTTP: an adapter's resolve through URLSession against a bare URLSession
/// sending the same requests to the same server.
enum LoopbackBenchmarks {
    static func register() {
        let configuration = Benchmark.Configuration(
            metrics: [.wallClock, .cpuTotal, .mallocCountTotal], scalingFactor: .one, maxDuration: .seconds(2), maxIterations: 500)
        for name in ["LinkForty", "LimeLink", "Dynalinks", "Paylisher"] {
            Benchmark("4 baseline: \(name)'s requests, bare URLSession over loopback", configuration: configuration) {
                (benchmark: Benchmark, state: (LoopbackWorld, URLSession)) in
                let (world, session) = state
                guard let adapter = world.adapters[name] else { return }
                let requests = adapter.wire.map { request -> URLRequest in
                    var urlRequest = URLRequest(url: request.url)
                    urlRequest.httpMethod = request.method.rawValue
                    urlRequest.httpBody = request.body
                    for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
                    return urlRequest
                }
                for _ in benchmark.scaledIterations {
                    // Every answer must be a success: a failing request would count as fast.
                    for request in requests {
                        let (data, response) = try await session.data(for: request)
                        guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
                            fatalError("\(name): \(request.url?.absoluteString ?? "?") did not answer 2xx")
                        }
                        blackHole(data)
                    }
                }
            } setup: {
                let configuration = URLSessionConfiguration.ephemeral
                return (try await LoopbackWorld.start(), URLSession(configuration: configuration))
            }

            Benchmark("4 \(name) resolve over loopback (URLSessionTransport)", configuration: configuration) {
                (benchmark: Benchmark, world: LoopbackWorld) in
                guard let adapter = world.adapters[name] else { return }
                let context = BackendContext(transport: adapter.transport, device: StaticDeviceInfo.iPhone)
                for _ in benchmark.scaledIterations {
                    // A resolution that fails would count as fast: it must succeed, from the server.
                    let link = try await adapter.backend.resolve(adapter.link, context: context)
                    guard link.resolution == .server else { fatalError("\(name): the resolve did not come from the server") }
                    blackHole(link)
                }
            } setup: {
                try await LoopbackWorld.start()
            }
        }
    }
}
