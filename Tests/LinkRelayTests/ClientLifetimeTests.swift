import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// What a client closes when the app lets go of it without calling `shutdown()`: `deinit` and
/// `shutdown()` share one close per concern.
@Suite("A client released without shutdown()", .timeLimit(.minutes(1)))
struct ClientLifetimeTests {
    @Test("its subscribers' streams finish")
    func subscribersFinish() async throws {
        var client: DeepLinkClient? = makeClient(InMemoryBackend(schemes: ["myapp"]))
        let first = client?.linkEvents()
        let second = client?.linkEvents()
        weak let released = client
        client = nil
        #expect(released == nil, "a subscription does not hold the client")
        guard released == nil, let first, let second else { return }
        // Each stream ends (the suite's time limit catches one that does not).
        for stream in [first, second] {
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == nil)
        }
    }

    @Test("events tracked just before are on disk for the next client, written by deinit")
    func queuedEventsAreWritten() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-lifetime-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let backend = InMemoryBackend(schemes: ["myapp"])
        var client: DeepLinkClient? = makeClient(backend, store: FileStore(directory: folder))
        for index in 0..<5 { try await client?.track("before-start-\(index)") }
        weak let released = client
        client = nil
        #expect(released == nil)

        let next = makeClient(backend, store: FileStore(directory: folder))
        #expect(await next.queuedEventCount == 5)
        #expect(backend.calls.isEmpty, "nothing was sent before start()")
    }
}
