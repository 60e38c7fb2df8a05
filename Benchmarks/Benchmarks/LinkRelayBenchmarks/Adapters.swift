import Benchmark
import Foundation
import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher
import LinkRelaySimulator
import LinkRelayTesting

/// One adapter set up against the in-process simulator: a universal link it resolves, and the
/// context a client would hand it.
struct AdapterCase: Sendable {
    let name: String
    let backend: any DeepLinkBackend
    let link: URL
    let simulator: ProviderSimulator

    var context: BackendContext {
        BackendContext(transport: simulator, device: StaticDeviceInfo.iPhone)
    }

    static let all: [AdapterCase] = {
        var cases: [AdapterCase] = []
        var settings = SandboxSettings()
        settings.linkFortyHost = "go.acme.app"
        func make(_ name: String, _ body: (Sandbox) throws -> (any DeepLinkBackend, URL)) -> AdapterCase {
            let sandbox = Sandbox(settings: settings)
            do {
                let (backend, link) = try body(sandbox)
                return AdapterCase(name: name, backend: backend, link: link, simulator: sandbox.simulator)
            } catch {
                fatalError("benchmark setup: \(error)")
            }
        }
        cases.append(
            make("LinkForty") { sandbox in
                sandbox.linkForty.createLink(
                    shortCode: "Xk9_2bQz", templateSlug: "k3m9x2qa", deepLinkPath: "/product/42", appScheme: "acme",
                    utmParameters: ["source": "newsletter"], deepLinkParameters: ["productId": "42"])
                return (
                    LinkFortyBackend(try .init(baseURL: URL(string: "https://go.acme.app")!, apiKey: "lf_key", appSchemes: ["acme"])),
                    URL(string: "https://go.acme.app/k3m9x2qa/Xk9_2bQz?utm_source=newsletter")!
                )
            })
        cases.append(
            make("LimeLink") { sandbox in
                sandbox.limeLink.createLink(project: "shop", suffix: "p42", uri: "acme://product/42?ref=bench")
                return (
                    LimeLinkBackend(try .init(apiKey: settings.limeLinkAPIKey, appSchemes: ["acme"])),
                    URL(string: "https://shop.limelink.org/link/p42?utm_source=newsletter")!
                )
            })
        cases.append(
            make("Dynalinks") { sandbox in
                sandbox.dynalinks.createLink(path: "/p42", url: "https://shop.example/product/42?ref=bench", deepLinkValue: "/product/42")
                return (
                    DynalinksBackend(
                        try .init(apiKey: settings.dynalinksAPIKey, linkDomains: [settings.dynalinksProjectHost], appSchemes: ["acme"])),
                    URL(string: "https://\(settings.dynalinksProjectHost)/p42")!
                )
            })
        cases.append(
            make("Paylisher") { sandbox in
                sandbox.paylisher.createCampaign(keyName: "p42", title: "Product 42", scheme: "acme://product/42")
                return (
                    PaylisherBackend(try .init(apiKey: settings.paylisherAPIKey, appSchemes: ["acme"])),
                    URL(string: "https://link.paylisher.com/p42")!
                )
            })
        return cases
    }()
}

/// 3. An adapter's resolve through the in-process simulator (no I/O), against the simulator
/// answering the same requests on its own: the difference is the adapter's request building,
/// decoding and mapping.
enum AdapterBenchmarks {
    static func register() {
        let configuration = Benchmark.Configuration(scalingFactor: .one, maxDuration: .seconds(2), maxIterations: 2000)
        for adapter in AdapterCase.all {
            Benchmark("3 baseline: \(adapter.name) simulator answering the same requests", configuration: configuration) {
                (benchmark: Benchmark, requests: [HTTPRequest]) in
                for _ in benchmark.scaledIterations {
                    // Every answer must be a success: a failing one would count as fast.
                    for request in requests {
                        let response = try await adapter.simulator.send(request)
                        precondition(response.isSuccess, "\(adapter.name): \(request.url.absoluteString) answered \(response.status)")
                        blackHole(response)
                    }
                }
            } setup: {
                // The requests one resolve makes, recorded once.
                let before = adapter.simulator.requests.count
                _ = try await adapter.backend.resolve(adapter.link, context: adapter.context)
                return Array(adapter.simulator.requests.dropFirst(before))
            }

            Benchmark("3 \(adapter.name) resolve, adapter only (the simulator's answers replayed)", configuration: configuration) {
                (benchmark: Benchmark, context: BackendContext) in
                for _ in benchmark.scaledIterations {
                    let link = try await adapter.backend.resolve(adapter.link, context: context)
                    precondition(link.resolution == .server, "\(adapter.name): the resolve did not come from the server")
                    blackHole(link)
                }
            } setup: {
                // One resolve through the simulator, recorded; then its answers are replayed, so
                // only request building, decoding and mapping are measured.
                let recorder = RecordingTransport(adapter.simulator)
                _ = try await adapter.backend.resolve(
                    adapter.link, context: BackendContext(transport: recorder, device: StaticDeviceInfo.iPhone))
                return BackendContext(transport: ReplayTransport(recorder.responses), device: StaticDeviceInfo.iPhone)
            }
        }
    }
}
