import Foundation
@testable import LinkRelay
import LinkRelayTesting

extension AsyncSequence where Self: Sendable {
    /// The first `count` elements; fewer only if the sequence ends first.
    func prefixArray(_ count: Int) async rethrows -> [Element] {
        var elements: [Element] = []
        guard count > 0 else { return elements }
        for try await element in self {
            elements.append(element)
            if elements.count == count { break }
        }
        return elements
    }
}

/// A URL from a literal that is known to be valid.
func url(_ string: String) -> URL {
    guard let url = URL(string: string) else { preconditionFailure("Not a URL: \(string)") }
    return url
}

/// A client over `backend` with a manual clock and a quiet configuration.
func makeClient(
    _ backend: any DeepLinkBackend,
    clock: ManualClock = ManualClock(),
    store: any PersistentStore = InMemoryStore(),
    transport: (any HTTPTransport)? = StubTransport(),
    configure: (inout DeepLinkClient.Configuration) -> Void = { _ in }
) -> DeepLinkClient {
    var configuration = DeepLinkClient.Configuration()
    configuration.clock = clock
    configuration.store = store
    configuration.deviceInfo = StaticDeviceInfo()
    configuration.transport = transport
    configure(&configuration)
    return DeepLinkClient(backend: backend, configuration: configuration)
}

/// Collects log lines for assertions.
final class LogCollector: Sendable {
    private let records = Locked<[LogSink.Record]>([])

    var sink: LogSink {
        LogSink(minimumLevel: .debug) { [records] record in records.withLock { $0.append(record) } }
    }

    var lines: [String] { records.withLock { $0.map(\.message) } }
}
