import Foundation
import LinkRelay
import LinkRelayTesting

/// Part two of linkrelay-demo: install attribution and the event queue across two launches,
/// with the client's files on disk. The provider is `InMemoryBackend` from LinkRelayTesting,
/// scripted to match this install to a click and to be unreachable for a while.
enum LaunchDemo {
    static func run() async {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("linkrelay-demo-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let provider = InMemoryBackend(id: "demo-provider", schemes: ["acme"], hosts: ["go.acme.app"])
        let clicked = DeepLink(
            url: URL(string: "https://go.acme.app/products/42?utm_source=instagram")!, origin: .deferred,
            provider: provider.id, resolution: .server, pathSegments: ["products", "42"],
            parameters: ["utm_source": "instagram"], utm: UTMParameters(source: "instagram"))
        provider.scriptInstall(
            .success(
                InstallMatch(
                    attribution: InstallAttribution(
                        installID: "inst-7f3a", isAttributed: true, confidence: .init(score: 92),
                        matchedFactors: ["ip", "user_agent", "timezone"], method: .fingerprint),
                    link: clicked)))

        func launch() -> DeepLinkClient {
            var configuration = DeepLinkClient.Configuration()
            configuration.store = FileStore(directory: folder)
            return DeepLinkClient(backend: provider, configuration: configuration)
        }

        print("\n\nLinkRelay demo, part two: first launch, an outage, and a second launch")
        print("(the client's files are in \(folder.path))")

        DemoOutput.step("First launch: the user clicked a link on Instagram before installing")
        let first = launch()
        var events = first.events().makeAsyncIterator()
        await first.start()
        DemoOutput.show(await events.next())
        DemoOutput.show(await events.next())

        DemoOutput.step("The user signs up while the provider is unreachable")
        provider.scriptEventSending(.failure(DeepLinkError(.network, "The device is offline.")))
        do {
            try await first.track("signup", properties: ["plan": "pro"])
        } catch {
            print("   track failed: \(error)")
        }
        await first.flushEvents()
        print("   queued events: \(await first.queuedEventCount) (kept on disk, nothing lost)")
        await first.shutdown()
        print("   … the app is closed …")

        DemoOutput.step("Second launch, network back")
        provider.scriptEventSending(.success(()))
        let second = launch()
        print("   queued events on disk: \(await second.queuedEventCount)")
        await second.start()
        await second.flushEvents()
        print("   install outcome restored without asking again: \(DemoOutput.describe(await second.installOutcome()))")
        print("   install matches asked of the provider in both launches: \(provider.installMatchCount)")
        let sent = provider.sentEvents.suffix(1).map { event in
            event.name + " " + event.properties.map { "\($0.key)=\($0.value.scalarDescription ?? "…")" }.joined(separator: " ")
        }
        print("   sent after the outage: \(sent.joined(separator: ", ")); queued now: \(await second.queuedEventCount)")
        await second.shutdown()
    }
}
