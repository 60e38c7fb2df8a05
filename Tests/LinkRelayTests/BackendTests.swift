import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

@Suite("LocalBackend and RoutingBackend", .timeLimit(.minutes(1)))
struct BackendTests {
    let context = BackendContext(transport: StubTransport())

    @Test(
        "LocalBackend claims its schemes and hosts, and only those",
        arguments: [
            ("myapp://x", true), ("MYAPP://x", true), ("https://go.acme.app/x", true), ("http://GO.ACME.APP/x", true),
            ("https://eu.acme.app/x", true), ("https://acme.app/x", false), ("https://evil.example/x", false),
            ("other://x", false), ("mailto:a@b.c", false),
        ])
    func localClaims(_ link: String, _ claimed: Bool) {
        let backend = LocalBackend(.init(schemes: ["MyApp"], hosts: ["go.acme.app", "*.acme.app"]))
        #expect(backend.canHandle(url(link)) == claimed)
    }

    @Test("LocalBackend parses locally and reads the destination parameter")
    func localResolves() async throws {
        let backend = LocalBackend(.init(schemes: ["myapp"], hosts: ["go.acme.app"]))
        let link = try await backend.resolve(url("https://go.acme.app/open?link=myapp%3A%2F%2Fcart&x=1"), context: context)
        #expect(link.resolution == .local(.onDevice))
        #expect(link.destination == url("myapp://cart"))
        #expect(link.provider == .local)
        let plain = try await backend.resolve(url("https://go.acme.app/open?link=not-a-url"), context: context)
        #expect(plain.destination == nil)
    }

    @Test("LocalBackend has no install matching")
    func localHasNoInstallMatching() async throws {
        let backend = LocalBackend(.init(schemes: ["myapp"]))
        let error = await #expect(throws: DeepLinkError.self) { try await backend.matchInstall(context: context) }
        #expect(error?.code == .unsupported)
    }

    @Test("RoutingBackend sends each URL to the first backend that claims it")
    func routingPicksBackend() async throws {
        let new = InMemoryBackend(id: "new", schemes: ["myapp"], hosts: ["go.acme.app"])
        let old = InMemoryBackend(id: "old", schemes: ["legacy"], hosts: ["old.acme.app", "go.acme.app"])
        let routing = RoutingBackend(new, [old])
        let client = makeClient(routing)
        #expect(try await client.resolve(url("https://go.acme.app/a")).provider == "new")
        #expect(try await client.resolve(url("https://old.acme.app/b")).provider == "old")
        #expect(try await client.resolve(url("legacy://c")).provider == "old")
        #expect(new.resolvedURLs == [url("https://go.acme.app/a")])
        #expect(old.resolvedURLs == [url("https://old.acme.app/b"), url("legacy://c")])
        #expect(client.handle(url("https://nobody.example/x")) == false)
        #expect(routing.id == "new")
        #expect(routing.appSchemes == ["myapp", "legacy"])
    }

    @Test("RoutingBackend's local fallback names the backend that claimed the link")
    func routingFallbackNamesClaimingBackend() async throws {
        let new = InMemoryBackend(id: "new", schemes: ["myapp"], hosts: [])
        let old = InMemoryBackend(id: "old", schemes: [], hosts: ["old.acme.app"])
        old.unscriptedLinks = .failure(DeepLinkError(.notFound, "gone"))
        let client = makeClient(RoutingBackend(new, [old]))
        let link = try await client.resolve(url("https://old.acme.app/b"))
        #expect(link.resolution == .local(.notFound))
        #expect(link.provider == "old")
    }

    @Test("RoutingBackend sends install matching, events and link creation to the primary")
    func routingPrimaryGetsTheRest() async throws {
        let new = InMemoryBackend(id: "new")
        let old = InMemoryBackend(id: "old")
        let routing = RoutingBackend(new, [old])
        _ = try await routing.matchInstall(context: context)
        let event = ConversionEvent(name: "signup", timestamp: Date(timeIntervalSince1970: 0))
        try await routing.send(event, context: context)
        _ = try await routing.createLink(LinkRequest(deepLinkPath: "/x"), context: context)
        #expect(new.calls.count == 3)
        #expect(new.sentEvents == [event])
        #expect(old.calls.isEmpty)
    }

    @Test("RoutingBackend: events go to the first member that reports them; with none, send says unsupported")
    func routingUnsupported() async throws {
        let tracker = InMemoryBackend()
        let routing = RoutingBackend(LocalBackend(.init(schemes: ["myapp"])), [tracker])
        let event = ConversionEvent(name: "x", timestamp: Date(timeIntervalSince1970: 0))
        try await routing.send(event, context: context)
        #expect(tracker.sentEvents == [event])
        let none = RoutingBackend(LocalBackend(.init(schemes: ["myapp"])), [LocalBackend(.init(schemes: ["other"]))])
        #expect(none.eventTrackingMember == nil)
        let sendError = await #expect(throws: DeepLinkError.self) { try await none.send(event, context: context) }
        #expect(sendError?.code == .unsupported)
        let createError = await #expect(throws: DeepLinkError.self) {
            try await routing.createLink(LinkRequest(), context: context)
        }
        #expect(createError?.code == .unsupported)
    }
}
