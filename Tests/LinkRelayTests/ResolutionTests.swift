import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

@Suite("Resolution deadline and local fallback", .timeLimit(.minutes(1)))
struct ResolutionTests {
    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"], secrets: ["sk_live_SECRET123"])

    @Test("a backend slower than the deadline gives the local link at the deadline")
    func slowBackendFallsBackAtDeadline() async throws {
        let clock = ManualClock()
        let link = url("https://go.acme.app/products/42?utm_source=mail")
        backend.script(link, .link(.fixture(path: "/from-server")), delay: 10)
        let client = makeClient(backend, clock: clock)
        let links = client.deepLinks()
        client.handle(link)
        await clock.waitForSleepers(count: 2)  // the backend's 10 s and the 3 s deadline
        clock.advance(by: 2.9)
        #expect(clock.sleeperCount == 2)  // nothing has fired before the deadline
        clock.advance(by: 0.1)
        let delivered = try #require(await links.prefixArray(1).first)
        #expect(delivered.resolution == .local(.timedOut))
        #expect(delivered.path == "/products/42")
        #expect(delivered.utm.source == "mail")
        #expect(clock.uptime == 3)
    }

    @Test("the deadline follows the configuration")
    func configuredDeadline() async throws {
        let clock = ManualClock()
        let link = url("myapp://slow")
        backend.script(link, .parsed, delay: 5)
        let client = makeClient(backend, clock: clock) { $0.resolutionTimeout = 0.5 }
        let links = client.deepLinks()
        client.handle(link)
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 0.5)
        #expect(await links.prefixArray(1).first?.resolution == .local(.timedOut))
    }

    @Test("a backend that answers in time gives the server's link")
    func fastBackendWins() async throws {
        let clock = ManualClock()
        let link = url("https://go.acme.app/x")
        let server = DeepLink.fixture(path: "/resolved", host: "go.acme.app", destination: url("myapp://resolved"))
        backend.script(link, .link(server), delay: 1)
        let client = makeClient(backend, clock: clock)
        let links = client.deepLinks()
        client.handle(link)
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 1)
        #expect(await links.prefixArray(1) == [server])
    }

    @Test("a backend error gives the local link with the error as the reason")
    func errorFallsBackWithReason() async throws {
        let link = url("myapp://products/7")
        let failure = DeepLinkError(.server(status: 503), "Service unavailable", backend: backend.id, url: link)
        backend.script(link, .failure(failure))
        let client = makeClient(backend) { $0.retryPolicy = .none }
        let delivered = try await client.resolve(link)
        #expect(delivered.resolution == .local(.failed(failure)))
        #expect(delivered.pathSegments == ["products", "7"])
        #expect(delivered.provider == backend.id)
    }

    @Test("a link the backend does not know gives the local link with reason notFound")
    func unknownLinkFallsBack() async throws {
        backend.unscriptedLinks = .failure(DeepLinkError(.notFound, "Link not found"))
        let client = makeClient(backend)
        let links = client.deepLinks()
        client.handle(url("https://go.acme.app/zzz?ref=1"))
        let delivered = try #require(await links.prefixArray(1).first)
        #expect(delivered.resolution == .local(.notFound))
        #expect(delivered.parameters == ["ref": "1"])
    }

    @Test("an error that is not a DeepLinkError is wrapped, and its text is not copied")
    func foreignErrorIsWrapped() async throws {
        struct Leaky: Error { let description = "token sk_live_SECRET123" }
        let link = url("myapp://x")
        let client = makeClient(ThrowingBackend(error: Leaky())) { $0.retryPolicy = .none }
        let delivered = try await client.resolve(link)
        guard case .local(.failed(let error)) = delivered.resolution else {
            Issue.record("expected a failed local resolution, got \(delivered.resolution)")
            return
        }
        #expect(error.code == .network)
        #expect(!error.description.contains("SECRET"))
    }

    @Test("backend error messages are redacted of the backend's secrets")
    func errorMessagesAreRedacted() async throws {
        let link = url("myapp://secret")
        backend.script(link, .failure(DeepLinkError(.server(status: 401), "Key sk_live_SECRET123 was rejected")))
        let logs = LogCollector()
        let client = makeClient(backend) { $0.logSink = logs.sink }
        let delivered = try await client.resolve(link)
        guard case .local(.failed(let error)) = delivered.resolution else {
            Issue.record("expected a failed local resolution")
            return
        }
        #expect(error.message == "Key [redacted] was rejected")
        #expect(logs.lines.allSatisfy { !$0.contains("SECRET123") })
    }

    @Test("resolve does not broadcast")
    func resolveDoesNotBroadcast() async throws {
        let client = makeClient(backend)
        let link = try await client.resolve(url("myapp://quiet"))
        #expect(link.path == "/quiet")
        await client.waitUntilIdle()
        #expect(client.broadcaster.heldCount == 0)
    }

    @Test("resolve refuses a URL the backend does not claim, with a code that says so")
    func resolveRefusesUnclaimed() async throws {
        let client = makeClient(backend)
        let error = await #expect(throws: DeepLinkError.self) { try await client.resolve(url("other://x")) }
        #expect(error?.code == .unsupported)
        #expect(error?.message == "The backend does not handle this link.")
    }

    @Test("a URL the backend claims but that cannot be parsed is a failure event with the URL")
    func unparsableClaimedURLIsAFailure() async throws {
        let client = makeClient(LocalBackend(.init(hosts: ["go.acme.app"])).claimingEverything)
        let events = client.linkEvents()
        let broken = url("https:///no-host")
        client.handle(broken)
        guard case .failure(let error)? = await events.prefixArray(1).first else {
            Issue.record("expected a failure event")
            return
        }
        #expect(error.code == .invalidURL)
        #expect(error.url == broken)
    }

    @Test("cancelling an explicit resolve cancels the backend call")
    func cancellingResolve() async throws {
        let clock = ManualClock()
        let link = url("myapp://hang")
        backend.script(link, .parsed, delay: 100)
        let client = makeClient(backend, clock: clock)
        let task = Task { try await client.resolve(link) }
        await clock.waitForSleepers(count: 2)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}

/// A backend whose every call throws `error`.
struct ThrowingBackend: DeepLinkBackend {
    let error: any Error
    var id: BackendID { "throwing" }
    func canHandle(_ url: URL) -> Bool { true }
    func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink { throw error }
    func matchInstall(context: BackendContext) async throws -> InstallMatch { throw error }
}

extension LocalBackend {
    /// A backend that claims every URL, to feed the client URLs that cannot be parsed.
    var claimingEverything: some DeepLinkBackend { ClaimAll(base: self) }
}

private struct ClaimAll: DeepLinkBackend {
    let base: LocalBackend
    var id: BackendID { base.id }
    func canHandle(_ url: URL) -> Bool { true }
    func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
        try await base.resolve(link, context: context)
    }
    func matchInstall(context: BackendContext) async throws -> InstallMatch {
        try await base.matchInstall(context: context)
    }
}
