import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting
import Testing

/// A provider the Sandbox has never heard of, written entirely in this file: the Sandbox routes
/// to it, its admin API creates its links, records its clicks and lists its events, and its
/// settings appear in the description, with no edit to the Sandbox.
@Suite("A fifth provider needs no edit to the Sandbox", .timeLimit(.minutes(1)))
struct FifthProviderTests {
    @Test("a new emulation is routed by prefix and by host, and its admin routes work")
    func servesANewProvider() async throws {
        var settings = SandboxSettings()
        settings[.toyKey] = "toy_secret"
        let sandbox = Sandbox(settings: settings, emulations: Sandbox.emulations + [ToyEmulation.self])

        let description = try await sandbox.describe()
        #expect(description.provider(.toy)?.hosts == ["toy.example", "go.toy.example"])
        #expect(description.provider(.toy)?.baseURL.absoluteString == "http://127.0.0.1:8642/toy")
        #expect(description.settings[.toyHost] == "toy.example", "defaults are filled in")
        #expect(description.settings[.toyKey] == "toy_secret")

        let created = await sandbox.handle(admin(.post, "/_admin/toy/links", body: #"{"code":"spring","target":"toyapp://spring"}"#))
        #expect(status(created) == 201)
        try await sandbox.createLink(ToyLink(code: "autumn", target: "toyapp://autumn"))
        #expect(sandbox.emulation(ToyEmulation.self).links == ["spring": "toyapp://spring", "autumn": "toyapp://autumn"])

        let byPrefix = await sandbox.handle(admin(.get, "/toy/resolve/spring"))
        #expect(byPrefix.handler == "toy")
        #expect(byPrefix.routedURL?.absoluteString == "https://toy.example/resolve/spring")
        #expect(body(byPrefix) == "toyapp://spring")
        let byHost = await sandbox.handle(admin(.get, "/resolve/autumn", host: "go.toy.example"))
        #expect(byHost.handler == "toy")
        #expect(body(byHost) == "toyapp://autumn")

        let phone = String(decoding: try JSONEncoder().encode(StaticDeviceInfo.iPhone), as: UTF8.self)
        let click = await sandbox.handle(
            admin(.post, "/_admin/toy/clicks", body: #"{"url":"https://go.toy.example/spring","device":"# + phone + "}"))
        #expect(status(click) == 201)
        let events = try await sandbox.receivedEvents(.toy)
        #expect(events == [SandboxAPI.ReceivedEvent(name: "click", properties: ["url": "https://go.toy.example/spring"])])

        let wrongBody = await sandbox.handle(admin(.post, "/_admin/toy/links", body: #"{"code":"x"}"#))
        #expect(status(wrongBody) == 400)
    }

    @Test("settings round-trip through JSON per provider, and hosts are kept lowercase")
    func settingsCoding() throws {
        var settings = SandboxSettings()
        settings.linkFortyHost = "Go.Acme.App"
        settings.paylisherShortLinkHosts = ["L.Acme.App", "link.acme.app"]
        settings.limeLinkAPIKey = "Lk_MixedCase"
        #expect(settings.linkFortyHost == "go.acme.app")
        #expect(settings.paylisherShortLinkHosts == ["l.acme.app", "link.acme.app"])
        #expect(settings.limeLinkAPIKey == "Lk_MixedCase", "keys are kept as given")
        #expect(settings.dynalinksAPIHost == "dynalinks.app", "an unset setting reads as its default")

        let json = try JSONEncoder().encode(settings)
        let object = try JSONDecoder().decode([String: [String: JSONValue]].self, from: json)
        #expect(object["linkforty"]?["host"] == "go.acme.app")
        #expect(try JSONDecoder().decode(SandboxSettings.self, from: json) == settings)
    }

    private func admin(_ method: HTTPMethod, _ target: String, host: String = "127.0.0.1:8642", body: String? = nil) -> HTTPRequest {
        HTTPRequest(method: method, url: URL(string: "http://\(host)\(target)")!, headers: ["Host": host], body: body.map { Data($0.utf8) })
    }

    private func status(_ exchange: Sandbox.Exchange) -> Int? {
        guard case .respond(let response) = exchange.outcome else { return nil }
        return response.status
    }

    private func body(_ exchange: Sandbox.Exchange) -> String? {
        guard case .respond(let response) = exchange.outcome else { return nil }
        return String(decoding: response.body, as: UTF8.self)
    }
}

// MARK: The fifth provider, all of it

extension SandboxProvider {
    static let toy = SandboxProvider(rawValue: "toy")
}

extension SandboxSetting {
    static let toyHost = SandboxSetting(provider: .toy, key: "host", kind: .host, default: ["toy.example"], summary: "Toy's API host")
    static let toyLinkHost = SandboxSetting(
        provider: .toy, key: "linkHost", kind: .host, default: ["go.toy.example"], summary: "Toy's links")
    static let toyKey = SandboxSetting(
        provider: .toy, key: "key", kind: .text, default: ["toy_key"], option: "--toy-key", summary: "Toy's key")
}

struct ToyLink: SandboxAdminLink, Hashable {
    static var sandboxProvider: SandboxProvider { .toy }
    var code: String
    var target: String
}

final class ToyEmulation: SandboxEmulation {
    static var sandboxProvider: SandboxProvider { .toy }
    static var sandboxSettings: [SandboxSetting] { [.toyHost, .toyLinkHost, .toyKey] }
    static func apiHost(in settings: SandboxSettings) -> String { settings[.toyHost] }
    static func hosts(in settings: SandboxSettings) -> [String] { [settings[.toyHost], settings[.toyLinkHost]] }
    static func add(to simulator: ProviderSimulator, settings: SandboxSettings) -> ToyEmulation {
        let emulation = ToyEmulation(clock: simulator.clock)
        simulator.register(emulation, hosts: Set(hosts(in: settings)))
        return emulation
    }

    let clock: any LinkRelayClock
    private let state = Locked((links: [String: String](), clicks: [String]()))

    init(clock: any LinkRelayClock) {
        self.clock = clock
    }

    var links: [String: String] { state.withLock { $0.links } }

    func handle(_ request: ProviderSimulator.Request) -> HTTPResponse {
        let code = request.http.url.lastPathComponent
        guard let target = state.withLock({ $0.links[code] }) else { return HTTPResponse(status: 404) }
        return HTTPResponse(status: 200, body: Data(target.utf8))
    }

    func createLink(_ link: ToyLink) throws {
        state.withLock { $0.links[link.code] = link.target }
    }

    func recordWebClick(url: URL, from device: DeviceInfo, ip: String, at date: Date) throws {
        state.withLock { $0.clicks.append(url.absoluteString) }
    }

    var sandboxEvents: [SandboxAPI.ReceivedEvent] {
        state.withLock { $0.clicks.map { SandboxAPI.ReceivedEvent(name: "click", properties: ["url": .string($0)]) } }
    }
}
