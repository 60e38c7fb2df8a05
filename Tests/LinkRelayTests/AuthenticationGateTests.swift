import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

@Suite("Sign-in hold", .timeLimit(.minutes(1)))
struct AuthenticationGateTests {
    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
    let clock = ManualClock()

    func gatedClient() -> DeepLinkClient {
        makeClient(backend, clock: clock) { $0.authenticationRequiredPaths = ["/wallet", "account/settings"] }
    }

    @Test("a gated path is held and published as authenticationRequired, not as a link")
    func gatedPathIsHeld() async throws {
        let client = gatedClient()
        let events = client.linkEvents()
        client.handle(url("myapp://wallet/cards"))
        client.handle(url("myapp://home"))
        let received = await events.prefixArray(2)
        guard case .authenticationRequired(let held) = received[0] else {
            Issue.record("expected authenticationRequired, got \(received[0])")
            return
        }
        #expect(held.path == "/wallet/cards")
        #expect(held.requiresAuthentication)
        #expect(received[1].link?.path == "/home")
        #expect(await client.pendingLink == held)
    }

    @Test(
        "gating matches the first segment or the whole path",
        arguments: [
            ("myapp://wallet", true), ("https://go.acme.app/wallet/x", true), ("myapp://account/settings", true),
            ("myapp://account", false), ("myapp://account/settings/more", false), ("myapp://walletx", false),
            ("myapp://home?auth=required", true), ("myapp://home?auth=no", false),
        ])
    func gatingRules(_ link: String, _ gated: Bool) async throws {
        let client = gatedClient()
        let resolved = try await client.resolve(url(link))
        #expect(resolved.requiresAuthentication == gated)
    }

    @Test("a provider's app-scheme destination is gated by its path too")
    func gatedDestination() async throws {
        let link = url("https://go.acme.app/link/x9")
        backend.script(link, .link(.fixture(path: "/link/x9", host: "go.acme.app", destination: url("myapp://wallet/cards"))))
        let client = gatedClient()
        #expect(try await client.resolve(link).requiresAuthentication)
        backend.script(link, .link(.fixture(path: "/link/x9", host: "go.acme.app", destination: url("https://web.example/wallet"))))
        #expect(try await client.resolve(link).requiresAuthentication == false)
    }

    @Test("completePendingLink delivers the held link as a link")
    func completeDelivers() async throws {
        let client = gatedClient()
        let events = client.linkEvents()
        client.handle(url("myapp://wallet"))
        _ = await events.prefixArray(1)
        let completed = await client.completePendingLink()
        #expect(completed?.path == "/wallet")
        #expect(await events.prefixArray(1).first?.link?.path == "/wallet")
        #expect(await client.pendingLink == nil)
        #expect(await client.completePendingLink() == nil)
    }

    @Test("cancelPendingLink drops the held link with an event saying so")
    func cancelDrops() async throws {
        let client = gatedClient()
        let events = client.linkEvents()
        client.handle(url("myapp://wallet"))
        _ = await events.prefixArray(1)
        #expect(await client.cancelPendingLink()?.path == "/wallet")
        guard case .pendingLinkDropped(let link, .cancelled)? = await events.prefixArray(1).first else {
            Issue.record("expected pendingLinkDropped(.cancelled)")
            return
        }
        #expect(link.path == "/wallet")
        #expect(await client.completePendingLink() == nil)
    }

    @Test("a held link expires after the pending-link timeout")
    func heldLinkExpires() async throws {
        let client = makeClient(backend, clock: clock) {
            $0.authenticationRequiredPaths = ["wallet"]
            $0.pendingLinkTimeout = 300
        }
        let events = client.linkEvents()
        client.handle(url("myapp://wallet"))
        _ = await events.prefixArray(1)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 299)
        #expect(await client.pendingLink != nil)
        clock.advance(by: 1)
        guard case .pendingLinkDropped(let link, .expired)? = await events.prefixArray(1).first else {
            Issue.record("expected pendingLinkDropped(.expired)")
            return
        }
        #expect(link.path == "/wallet")
        #expect(await client.pendingLink == nil)
    }

    @Test("a newer gated link replaces the held one, with an event for the replaced one")
    func newerGatedLinkReplaces() async throws {
        let client = gatedClient()
        let events = client.linkEvents()
        client.handle(url("myapp://wallet/1"))
        client.handle(url("myapp://wallet/2"))
        let received = await events.prefixArray(3)
        guard case .authenticationRequired(let first) = received[0],
            case .pendingLinkDropped(let replaced, .replaced) = received[1],
            case .authenticationRequired(let second) = received[2]
        else {
            Issue.record("unexpected events: \(received)")
            return
        }
        #expect(first.path == "/wallet/1")
        #expect(replaced == first)
        #expect(second.path == "/wallet/2")
        // The replaced link's expiry timer no longer applies: only one held-link timer is left.
        // (Short deadlines for telling the backend about each event may come and go meanwhile.)
        let expiry = DeepLinkClient.Configuration().pendingLinkTimeout
        await clock.waitForSleepers(count: 1, dueAtOrAfter: expiry)
        #expect(clock.sleeperCount(dueAtOrAfter: expiry) == 1)
        #expect(await client.completePendingLink() == second)
    }
}

@Suite("Destination policy", .timeLimit(.minutes(1)))
struct DestinationPolicyTests {
    @Test(
        "dangerous or unlisted destination schemes are refused",
        arguments: [
            "javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi", "http://plain.example/x",
            "otherapp://x", "JavaScript:alert(1)",
        ])
    func refused(_ destination: String) async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        let link = url("https://go.acme.app/promo")
        backend.script(link, .link(.fixture(path: "/promo", destination: url(destination))))
        let client = makeClient(backend)
        let events = client.linkEvents()
        client.handle(link)
        client.handle(url("myapp://after"))
        let received = await events.prefixArray(2)
        guard case .failure(let error) = received[0] else {
            Issue.record("expected a failure, got \(received[0])")
            return
        }
        #expect(error.code == .rejected)
        #expect(error.url == link)
        #expect(received[1].link?.path == "/after")
        let explicit = await #expect(throws: DeepLinkError.self) { try await client.resolve(link) }
        #expect(explicit?.code == .rejected)
    }

    @Test("https and the backend's own schemes are allowed", arguments: ["https://shop.example/x", "myapp://cart"])
    func allowed(_ destination: String) async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        let link = url("https://go.acme.app/promo")
        backend.script(link, .link(.fixture(path: "/promo", destination: url(destination))))
        let client = makeClient(backend)
        #expect(try await client.resolve(link).destination == url(destination))
    }

    @Test("javascript stays refused even when configured as allowed")
    func neverAllowedStaysRefused() async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
        let link = url("https://go.acme.app/promo")
        backend.script(link, .link(.fixture(path: "/promo", destination: url("javascript:alert(1)"))))
        let client = makeClient(backend) { $0.allowedDestinationSchemes = ["https", "javascript", "http"] }
        await #expect(throws: DeepLinkError.self) { try await client.resolve(link) }
        backend.script(link, .link(.fixture(path: "/promo", destination: url("http://plain.example"))))
        #expect(try await client.resolve(link).destination == url("http://plain.example"))
    }
}
