import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// A backend that answers links on the device gets the link the client parsed, as `resolve`
/// does; one written for the URL form still works.
@Suite("Links answered on the device", .timeLimit(.minutes(1)))
struct OnDeviceTests {
    /// Answers every link on the device from the parsed link it is handed, and keeps them.
    struct ParsedFormBackend: DeepLinkBackend {
        let id: BackendID = "parsed-form"
        let received = Locked<[ParsedLink]>([])
        /// Claims relative URLs too, so that one reaches the parser.
        func canHandle(_ url: URL) -> Bool { url.scheme == "myapp" || url.scheme == nil }
        func resolveOnDevice(_ link: ParsedLink) -> DeepLink? {
            received.withLock { $0.append(link) }
            return link.deepLink(provider: id, resolution: .local(.onDevice))
        }
        func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
            throw DeepLinkError(.notFound, "Never asked.", backend: id)
        }
        func matchInstall(context: BackendContext) async throws -> InstallMatch { .organic() }
    }

    /// Written before the parsed form: answers `myapp://on-device/…` from the URL.
    struct URLFormBackend: DeepLinkBackend {
        let id: BackendID = "url-form"
        func canHandle(_ url: URL) -> Bool { url.scheme == "myapp" }
        func resolveOnDevice(_ url: URL) -> DeepLink? {
            guard url.host == "on-device" else { return nil }
            return try? LinkParser.parse(url).deepLink(provider: id, resolution: .local(.onDevice))
        }
        func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
            link.deepLink(provider: id, resolution: .server)
        }
        func matchInstall(context: BackendContext) async throws -> InstallMatch { .organic() }
    }

    @Test("the backend receives the client's parse of the handed-over URL, through handle and resolve")
    func parsedForm() async throws {
        let backend = ParsedFormBackend()
        let client = makeClient(backend)
        let events = client.linkEvents()
        let first = url("myapp://products/42?color=red")
        client.handle(first)
        #expect(await events.prefixArray(1).first?.link?.pathSegments == ["products", "42"])
        let second = try await client.resolve(url("myapp://cart"))
        #expect(second.pathSegments == ["cart"])
        let received = backend.received.withLock { $0 }
        #expect(received.map(\.url) == [first, url("myapp://cart")])
        #expect(received.first == (try LinkParser.parse(first)))
    }

    @Test("a backend that implements the URL form is still asked, and links it leaves go to the provider")
    func urlForm() async throws {
        let client = makeClient(URLFormBackend())
        let onDevice = try await client.resolve(url("myapp://on-device/help"))
        #expect(onDevice.resolution == .local(.onDevice))
        let fromServer = try await client.resolve(url("myapp://elsewhere"))
        #expect(fromServer.resolution == .server)
    }

    @Test("a link that does not parse is refused as .invalidURL before any backend sees it")
    func unparseable() async throws {
        let backend = ParsedFormBackend()
        let client = makeClient(backend)
        let error = await #expect(throws: DeepLinkError.self) { try await client.resolve(url("products/42")) }
        #expect(error?.code == .invalidURL)
        #expect(backend.received.withLock { $0 }.isEmpty)
    }
}

/// The client finds an observing backend by asking it, not by a dynamic cast (issue 41).
@Suite("Which backends are told about published events")
struct LinkEventObserverTests {
    struct Observing: LinkEventObservingBackend {
        let id: BackendID = "observing"
        func canHandle(_ url: URL) -> Bool { true }
        func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
            link.deepLink(provider: id, resolution: .server)
        }
        func matchInstall(context: BackendContext) async throws -> InstallMatch { .organic() }
        func didPublish(_ event: DeepLinkEvent, at date: Date, context: BackendContext) async throws {}
    }

    @Test("an observing backend answers itself, any other nil, and a RoutingBackend itself")
    func observers() {
        #expect(Observing().linkEventObserver?.id == "observing")
        #expect(OnDeviceTests.URLFormBackend().linkEventObserver == nil)
        #expect(LocalBackend(.init(hosts: ["go.acme.app"])).linkEventObserver == nil)
        let routing = RoutingBackend(Observing(), [LocalBackend(.init(hosts: ["go.acme.app"]))])
        #expect(routing.linkEventObserver?.id == routing.id)
    }
}
