import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelaySandbox
import LinkRelaySimulator
import LinkRelayTesting
import Testing

func url(_ string: String) -> URL {
    guard let url = URL(string: string) else { fatalError("not a URL: \(string)") }
    return url
}

/// The phone: the iPhone every web click is recorded from and every client runs on.
let phone = StaticDeviceInfo.iPhone

/// A sandbox on an ephemeral loopback port. The server runs its delays on `serverClock`, which
/// the tests never advance while a request is parked, so a `delay` fault holds a request until
/// the client gives up; the client runs on `clientClock`, so its deadlines pass when a test
/// says so, not after real seconds.
final class SandboxHarness: Sendable {
    let serverClock = ManualClock()
    let clientClock = ManualClock()
    let sandbox: Sandbox
    let server: SandboxServer
    let baseURL: URL
    /// The admin API, over HTTP.
    let admin: SandboxAdminClient
    let description: SandboxAPI.Description

    init() async throws {
        sandbox = Sandbox(clock: serverClock)
        server = try SandboxServer(sandbox: sandbox, port: 0)
        baseURL = try await server.start()
        admin = SandboxAdminClient(baseURL: baseURL)
        description = try await admin.describe()
    }

    /// Stops the server and releases any request still parked in a delay.
    func stop() async {
        await server.stop()
        serverClock.advance(by: 86_400)
    }

    /// A client for `fixture` over URLSession against this sandbox, on `store`.
    func client(
        _ fixture: ProviderFixture, store: InMemoryStore = InMemoryStore(), description: SandboxAPI.Description? = nil
    ) throws -> DeepLinkClient {
        let (backend, transport) = try fixture.connect(description ?? self.description)
        var configuration = DeepLinkClient.Configuration()
        configuration.clock = clientClock
        configuration.transport = transport
        configuration.store = store
        configuration.deviceInfo = StaticDeviceInfo(phone)
        // Retries at once (no backoff) so a test never waits on real or manual time for them;
        // a Retry-After still makes the client sleep on its clock.
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, initialBackoff: 0, jitter: 0)
        return DeepLinkClient(backend: backend, configuration: configuration)
    }

    /// The requests the emulations received on `path`.
    func requests(_ path: String) -> [HTTPRequest] {
        sandbox.simulator.requests.filter { $0.url.path == path }
    }
}

/// One provider as the over-HTTP tests see it: how an app connects to the sandbox, its links,
/// and the routes the tests check and fault.
struct ProviderFixture: Sendable, CustomTestStringConvertible {
    let provider: SandboxProvider
    /// The backend and transport an app's Debug build uses against the sandbox.
    let connect: @Sendable (SandboxAPI.Description) throws -> (any DeepLinkBackend, any HTTPTransport)
    /// Creates the provider's product link.
    let script: @Sendable (any SandboxControl) async throws -> Void
    /// The tap before install.
    let webClick: SandboxAPI.WebClick
    /// A universal link to the product, as this provider's links look.
    let universalLink: URL
    /// Where the server resolves ``universalLink`` to.
    let destination: URL
    /// The path of the request that resolves ``universalLink``, as the provider sees it.
    let resolvePath: String
    /// The provider's own 404 body for that request.
    let notFoundBody: String
    /// What a 404 there means: `nil` for an unknown link (`.local(.notFound)`); Dynalinks
    /// answers an unknown link with 200 and no match, so its 404 is a server error.
    var notFoundError: DeepLinkError.Code?
    /// The path events are sent to, for providers with an event queue.
    let eventPath: String?
    /// Events the backend reports of its own on an organic first launch.
    var eventsAfterStart = 0

    var testDescription: String { provider.rawValue }

    static let all: [ProviderFixture] = [.linkForty, .limeLink, .dynalinks, .paylisher]
    static let withEvents: [ProviderFixture] = all.filter { $0.eventPath != nil }

    static let appScheme = "shopapp"

    /// LinkForty takes a base URL: the sandbox's `/linkforty` prefix.
    static let linkForty = ProviderFixture(
        provider: .linkForty,
        connect: { description in
            let backend = LinkFortyBackend(
                try .init(
                    baseURL: try #require(description.provider(.linkForty)?.baseURL), apiKey: "lf_sandbox_key",
                    linkDomains: [description.settings.linkFortyHost], appSchemes: [appScheme]))
            return (backend, URLSessionTransport())
        },
        script: { sandbox in
            try await sandbox.createLink(
                SandboxAPI.LinkFortyLink(
                    shortCode: "p42", originalURL: "https://shop.example/product/42", deepLinkPath: "/product/42", appScheme: appScheme,
                    utmParameters: ["source": "instagram"], deepLinkParameters: ["productId": "42"]))
        },
        webClick: .init(url: url("https://go.sandbox.test/p42"), device: phone),
        universalLink: url("https://go.sandbox.test/p42?utm_source=newsletter"), destination: url("shopapp://product/42"),
        resolvePath: "/api/sdk/v1/resolve/p42", notFoundBody: #"{"error":"Link not found"}"#, eventPath: "/api/sdk/v1/event")

    /// LimeLink's hosts are fixed: HostRewritingTransport sends them to the sandbox.
    static let limeLink = ProviderFixture(
        provider: .limeLink,
        connect: { description in
            let backend = LimeLinkBackend(try .init(apiKey: description.settings.limeLinkAPIKey, appSchemes: [appScheme]))
            let domain = description.settings.limeLinkDomain
            return (backend, HostRewritingTransport(hosts: [domain, "*." + domain], to: description.baseURL))
        },
        script: { sandbox in
            try await sandbox.createLink(SandboxAPI.LimeLinkLink(project: "shop", suffix: "p42", uri: "shopapp://product/42"))
        },
        webClick: .init(url: url("https://shop.limelink.org/link/p42?utm_source=instagram&ref=a+b"), device: phone),
        universalLink: url("https://shop.limelink.org/link/p42?utm_source=newsletter&ref=a+b"), destination: url("shopapp://product/42"),
        resolvePath: "/api/v1/app/dynamic_link/p42", notFoundBody: #"{"message":"dynamic link not found","statusCode":404}"#,
        eventPath: nil)

    /// Dynalinks takes a base URL: the sandbox's `/dynalinks` prefix, plus its `/api/v1`.
    static let dynalinks = ProviderFixture(
        provider: .dynalinks,
        connect: { description in
            let base = try #require(description.provider(.dynalinks)?.baseURL).appendingPathComponent("api/v1")
            let backend = DynalinksBackend(
                try .init(
                    apiKey: description.settings.dynalinksAPIKey, baseURL: base,
                    linkDomains: [description.settings.dynalinksProjectHost], appSchemes: [appScheme]))
            return (backend, URLSessionTransport())
        },
        script: { sandbox in
            try await sandbox.createLink(
                SandboxAPI.DynalinksLink(path: "/p42", url: "https://shop.example/product/42", deepLinkValue: "/product/42"))
        },
        webClick: .init(url: url("https://sandbox.dynalinks.app/p42"), device: phone),
        universalLink: url("https://sandbox.dynalinks.app/p42"), destination: url("https://shop.example/product/42"),
        resolvePath: "/api/v1/links/attribute", notFoundBody: #"{"error":"Not found"}"#, notFoundError: .server(status: 404),
        eventPath: nil)

    /// Paylisher, one event per request: the fault matrix counts the attempts of one event.
    static let paylisher = paylisher(batching: .oneByOne)

    /// Paylisher's short-link and analytics hosts are fixed: HostRewritingTransport.
    static func paylisher(batching: EventBatching) -> ProviderFixture {
        ProviderFixture(
            provider: .paylisher,
            connect: { description in
                let backend = PaylisherBackend(
                    try .init(apiKey: description.settings.paylisherAPIKey, appSchemes: [appScheme], eventBatching: batching))
                let hosts = Set(try #require(description.provider(.paylisher)?.hosts))
                return (backend, HostRewritingTransport(hosts: hosts, to: description.baseURL))
            },
            script: { sandbox in
                try await sandbox.createCampaign(
                    SandboxAPI.PaylisherCampaign(keyName: "p42", title: "Product 42", scheme: "shopapp://product/42"))
            },
            webClick: .init(url: url("shopapp://product/42?color=red"), device: phone, campaignKey: "p42"),
            universalLink: url("https://link.paylisher.com/p42"), destination: url("shopapp://product/42"),
            resolvePath: "/resolve/p42", notFoundBody: #"{"error":"Campaign not found","statusCode":404}"#, eventPath: "/batch",
            eventsAfterStart: 1)
    }
}

/// The next link or failure from a client's events, skipping install outcomes.
func nextDelivery(_ iterator: inout AsyncStream<DeepLinkEvent>.Iterator) async -> DeepLinkEvent? {
    while let event = await iterator.next() {
        if case .install = event { continue }
        return event
    }
    return nil
}
