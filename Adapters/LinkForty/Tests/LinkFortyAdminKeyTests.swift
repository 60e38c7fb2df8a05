import Foundation
import LinkRelay
import LinkRelayTesting
import Synchronization
import Testing

@testable import LinkRelayLinkForty

/// A LinkRelay Server admin key in an app is allowed (the app still works) but said, once, when
/// the client is created; an SDK key or a LinkForty key is not.
@Suite("LinkForty: an admin key in an app")
struct LinkFortyAdminKeyTests {
    final class Lines: Sendable {
        let records = Mutex<[LogSink.Record]>([])
        var sink: LogSink { LogSink(minimumLevel: .debug) { record in self.records.withLock { $0.append(record) } } }
    }

    @Test(
        "lr_admin_ is a warning naming the fix, never the key; lr_sdk_ and LinkForty's own keys are not",
        arguments: [
            ("lr_admin_1a2b3c4d_0123456789abcdefghijABCDEFGHIJkl", true), ("lr_sdk_1a2b3c4d_0123456789abcdefghijABCDEFGHIJkl", false),
            ("lf_live_8c1f0e9a2b", false), (nil, false),
        ] as [(String?, Bool)])
    func warning(_ key: String?, _ warned: Bool) async throws {
        let lines = Lines()
        let backend = LinkFortyBackend(try .init(baseURL: URL(string: "https://go.acme.app")!, apiKey: key))
        #expect(backend.configurationWarnings.isEmpty != warned)
        var configuration = DeepLinkClient.Configuration()
        configuration.logSink = lines.sink
        configuration.store = InMemoryStore()
        let client = DeepLinkClient(backend: backend, configuration: configuration)
        let warnings = lines.records.withLock { $0.filter { $0.level == .warning } }
        #expect(warnings.count == (warned ? 1 : 0))
        if warned {
            #expect(warnings.first?.message.contains("admin key") == true && warnings.first?.message.contains("--scope sdk") == true)
            #expect(warnings.first?.message.contains(key ?? "-") == false)
        }
        await client.shutdown()
    }
}
