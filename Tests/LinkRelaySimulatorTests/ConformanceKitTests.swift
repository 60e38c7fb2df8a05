import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayConformance
import LinkRelaySimulator
import LinkRelayTesting
import Testing

/// The conformance kit against a backend that is none of the four adapters, as the "Implementing
/// a Backend" article shows it: anyone's backend, anyone's emulated server.
@Suite("LinkRelayConformance runs against anyone's backend", .timeLimit(.minutes(1)))
struct ConformanceKitTests {
    /// Acme's API, as much of it as the contract needs (the article's emulation).
    final class AcmeServer: ProviderEmulation {
        func handle(_ request: ProviderSimulator.Request) -> HTTPResponse {
            switch request.http.url.path {
            case "/v1/resolve/spring": .json(["path": "/products/42"])
            case "/v1/install": .json(["matched": false])
            default: .json(["error": "not found"], status: 404)
            }
        }
    }

    /// A small backend of an app's own: resolves by short code, reports organic installs. It
    /// describes itself without its key: the kit checks that the backend, printed, shows none.
    struct AcmeBackend: DeepLinkBackend, CustomStringConvertible {
        struct Resolved: Decodable { var path: String }
        struct Install: Decodable { var matched: Bool }

        let apiKey: String
        var id: BackendID { "acme" }
        var secrets: [String] { [apiKey] }
        var description: String { "AcmeBackend" }

        func canHandle(_ url: URL) -> Bool { url.host == "go.acme.app" }

        func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
            let url = link.url
            let code = url.lastPathComponent
            let request = HTTPRequest(
                method: .get, url: URL(string: "https://api.acme.test/v1/resolve/\(code)")!, headers: ["Authorization": "Bearer \(apiKey)"])
            let resolved = try await call(Resolved.self, request, context: context, url: url)
            var link = try LinkParser.parse(url).deepLink(provider: id, resolution: .server)
            link.setPathSegments(resolved.path.split(separator: "/").map(String.init))
            return link
        }

        func matchInstall(context: BackendContext) async throws -> InstallMatch {
            let request = HTTPRequest(method: .post, url: URL(string: "https://api.acme.test/v1/install")!, body: Data("{}".utf8))
            _ = try await call(Install.self, request, context: context, url: nil)
            return .organic()
        }

        private func call<Answer: Decodable>(
            _ type: Answer.Type, _ request: HTTPRequest, context: BackendContext, url: URL?
        ) async throws -> Answer {
            let response = try await context.transport.send(request)
            if response.status == 404, url != nil { throw DeepLinkError(.notFound, "Acme does not know this link.", backend: id, url: url) }
            guard response.isSuccess else { throw response.serverError("Acme answered \(response.status).", backend: id, url: url) }
            do {
                return try JSONDecoder().decode(Answer.self, from: response.body)
            } catch {
                throw DeepLinkError(.decoding, "Acme's answer could not be read.", backend: id, status: response.status, url: url)
            }
        }
    }

    struct AcmeFixture: ConformanceFixture {
        let name = "Acme"

        func makeWorld(simulator: ProviderSimulator) throws -> ConformanceWorld {
            simulator.register(AcmeServer(), hosts: ["api.acme.test"])
            return ConformanceWorld(
                backend: AcmeBackend(apiKey: "acme-secret"), apiKey: "acme-secret",
                ownLinks: [URL(string: "https://go.acme.app/spring")!], foreignLinks: [URL(string: "https://other.app/x")!],
                knownLink: URL(string: "https://go.acme.app/spring")!, knownLinkPath: ["products", "42"],
                unknownLink: URL(string: "https://go.acme.app/nothing")!,
                resolveRoute: (.get, "/v1/resolve/spring"), installRoute: (.post, "/v1/install"),
                device: StaticDeviceInfo.iPhone, scriptAttributedInstall: { ExpectedDeferredLink() })
        }
    }

    /// Every check but those about deferred links and destinations, which this backend has none of.
    static let checks = ConformanceCheck.allCases.filter {
        ![.attributedInstallDeliversDeferredLink, .deferredLinkOnceAcrossLaunches, .destinationsOutsideTheAllowlistAreRefused].contains($0)
    }

    @Test("an app's own backend passes the contract", arguments: checks)
    func conforms(_ check: ConformanceCheck) async throws {
        try await ConformanceSuite(AcmeFixture()).run(check)
    }

    @Test("a backend that breaks the contract fails it, saying what did not hold")
    func catchesABrokenBackend() async throws {
        /// Claims every link, and leaks its key into its errors.
        struct Leaky: ConformanceFixture {
            let name = "Leaky"
            func makeWorld(simulator: ProviderSimulator) throws -> ConformanceWorld {
                var world = try AcmeFixture().makeWorld(simulator: simulator)
                world.foreignLinks = [URL(string: "https://go.acme.app.evil.example/x")!]
                world.backend = LeakyBackend()
                return world
            }
        }
        struct LeakyBackend: DeepLinkBackend {
            var id: BackendID { "leaky" }
            func canHandle(_ url: URL) -> Bool { true }
            // Errors that are not retried, so the check needs no clock to move.
            func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
                let url = link.url
                throw DeepLinkError(.decoding, "failed with key acme-secret", backend: id, url: url)
            }
            func matchInstall(context: BackendContext) async throws -> InstallMatch {
                throw DeepLinkError(.decoding, "failed with key acme-secret", backend: id)
            }
        }
        let claims = await #expect(throws: ConformanceFailure.self) { try await ConformanceSuite(Leaky()).run(.claimsOwnLinksOnly) }
        #expect(claims?.description.contains("claims a foreign link") == true)
        let leak = await #expect(throws: ConformanceFailure.self) { try await ConformanceSuite(Leaky()).run(.noAPIKeyInErrorsOrLogs) }
        #expect(leak?.description.contains("the API key appears in") == true)
    }
}
