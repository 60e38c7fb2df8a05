import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// Two clients on one folder, as an app and its extension share an App Group container: each
/// opens its own files (the advisory lock is per open file, so two clients in one process are
/// as separate as two processes).
@Suite("Two clients sharing a FileStore folder", .timeLimit(.minutes(1)))
struct SharedStoreTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-shared-\(UUID().uuidString)")

    func client(_ backend: InMemoryBackend) -> DeepLinkClient {
        makeClient(backend, store: FileStore(directory: folder)) {
            $0.retryPolicy = .none
            $0.eventQueueCapacity = 10_000
        }
    }

    /// The ids the backend was asked to send (every attempt).
    func attempts(_ backend: InMemoryBackend) -> [UUID] {
        backend.calls.compactMap { call in
            if case .send(let event) = call { return event.id }
            return nil
        }
    }

    @Test("one tracks while the other tracks and sends: every event is sent once, none is lost")
    func trackingWhileTheOtherSends() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let backend = InMemoryBackend(schemes: ["myapp"])
        let extensionClient = client(backend)
        let app = client(backend)
        await app.start()
        var tracked: Set<String> = []
        // Large enough that the journal is rewritten whole several times on the way.
        let padding: [String: JSONValue] = ["padding": .string(String(repeating: "p", count: 300))]
        for index in 0..<300 {
            try await extensionClient.track("extension-\(index)", properties: padding)
            try await app.track("app-\(index)", properties: padding)
            tracked.formUnion(["extension-\(index)", "app-\(index)"])
            if index % 50 == 49 { await app.flushEvents() }
        }
        try await extensionClient.saveQueuedEvents()
        await extensionClient.shutdown()
        await app.flushEvents()
        await app.shutdown()
        // A later launch sends what is left.
        let later = client(backend)
        await later.start()
        await later.flushEvents()
        #expect(await later.queuedEventCount == 0)
        await later.shutdown()
        let sent = backend.calls.compactMap { call -> String? in
            if case .send(let event) = call { return event.name }
            return nil
        }
        print("shared store: \(tracked.count) tracked, \(Set(sent).count) sent, \(sent.count - Set(sent).count) twice")
        #expect(Set(sent) == tracked, "\(tracked.subtracting(sent).count) lost")
        #expect(sent.count == Set(sent).count)
    }

    @Test("both send at once: each event goes out once")
    func bothSend() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let backend = InMemoryBackend(schemes: ["myapp"])
        let first = client(backend)
        for index in 0..<200 { try await first.track("event-\(index)") }
        try await first.saveQueuedEvents()
        let second = client(backend)
        #expect(await second.queuedEventCount == 200)
        await first.start()
        await second.start()
        async let a: Void = first.flushEvents()
        async let b: Void = second.flushEvents()
        _ = await (a, b)
        await first.flushEvents()
        await second.flushEvents()
        let ids = attempts(backend)
        print("both send: \(Set(ids).count) sent, \(ids.count - Set(ids).count) twice")
        #expect(Set(ids).count == 200)
        #expect(ids.count == 200)
        await first.shutdown()
        await second.shutdown()
    }

    @Test("both send at once in batches of 7: each event goes out once, each batch in queue order")
    func bothSendInBatches() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let backend = BatchRecorder(size: 7)
        let first = makeClient(backend, store: FileStore(directory: folder)) {
            $0.retryPolicy = .none; $0.eventQueueCapacity = 10_000
        }
        for index in 0..<200 { try await first.track("event-\(index)") }
        try await first.saveQueuedEvents()
        let second = makeClient(backend, store: FileStore(directory: folder)) {
            $0.retryPolicy = .none; $0.eventQueueCapacity = 10_000
        }
        await first.start()
        await second.start()
        async let a: Void = first.flushEvents()
        async let b: Void = second.flushEvents()
        _ = await (a, b)
        await first.flushEvents()
        await second.flushEvents()
        let batches = backend.batches
        let names = batches.flatMap { $0 }
        print("both send in batches: \(batches.count) batches, \(Set(names).count) sent, \(names.count - Set(names).count) twice")
        #expect(Set(names).count == 200)
        #expect(names.count == 200)
        #expect(batches.allSatisfy { (1...7).contains($0.count) })
        let order = { (name: String) in Int(name.dropFirst("event-".count)) ?? -1 }
        #expect(batches.allSatisfy { batch in zip(batch, batch.dropFirst()).allSatisfy { order($0) < order($1) } })
        await first.shutdown()
        await second.shutdown()
    }

    @Test("a claim left by a client that is gone is left alone while others use the folder, and settled by the next sole user")
    func deadClaimSettledBySoleUser() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let backend = InMemoryBackend(schemes: ["myapp"])
        let first = client(backend)
        try await first.track("claimed-by-a-client-that-died")
        try await first.track("free")
        try await first.saveQueuedEvents()
        await first.shutdown()
        // The dead client's claim on the first event, as it would have written it.
        let journal = folder.appendingPathComponent("events.json")
        let text = try String(contentsOf: journal, encoding: .utf8)
        let firstLine = try #require(text.split(separator: "\n").first { $0.hasPrefix("+") })
        let event = try JSONDecoder.linkRelay().decode(ConversionEvent.self, from: Data(firstLine.dropFirst(38).utf8))
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("~\(event.id.uuidString)\n".utf8))
        try handle.close()

        // Another user is alive (another process): the claim may be its own, so it is left
        // alone, and not sent.
        var other: FolderMembership? = FileStore(directory: folder).join()
        let logs = LogCollector()
        let second = makeClient(backend, store: FileStore(directory: folder)) { $0.logSink = logs.sink }
        #expect(await second.queuedEventCount == 1)
        #expect(!logs.lines.contains { $0.contains("were sent (or on their way)") })
        await second.shutdown()
        withExtendedLifetime(other) {}
        other = nil

        // Alone, a client settles it: sent (or on its way) when its sender stopped.
        let sole = makeClient(backend, store: FileStore(directory: folder)) { $0.logSink = logs.sink }
        #expect(await sole.queuedEventCount == 1)
        #expect(logs.lines.contains { $0.contains("1 queued events were sent (or on their way)") })
        await sole.start()
        await sole.flushEvents()
        let names = backend.calls.compactMap { call -> String? in
            if case .send(let sent) = call { return sent.name }
            return nil
        }
        #expect(names == ["free"])
        await sole.shutdown()
    }

    @Test("clearData in one client empties the queue for the other too; what it tracks next is kept")
    func clearDataSeenByTheOther() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let backend = InMemoryBackend(schemes: ["myapp"])
        let app = client(backend)
        let extensionClient = client(backend)
        for index in 0..<5 { try await extensionClient.track("before-\(index)") }
        try await extensionClient.saveQueuedEvents()
        #expect(await app.queuedEventCount == 5)
        await app.clearData()
        try await extensionClient.track("after")
        try await extensionClient.saveQueuedEvents()
        await app.start()
        await app.flushEvents()
        let sent = backend.calls.compactMap { call -> String? in
            if case .send(let event) = call { return event.name }
            return nil
        }
        #expect(sent == ["after"])
        await app.shutdown()
        await extensionClient.shutdown()
    }
}

/// A backend that sends events in batches of up to `size`, every one at once, and records each
/// batch's names.
final class BatchRecorder: EventBatchingBackend, Sendable {
    private let recorded = Locked([[String]]())
    let eventBatching: EventBatching

    init(size: Int) {
        eventBatching = EventBatching(maximumBatchSize: size, flushAt: 1, flushInterval: 0)
    }

    var batches: [[String]] { recorded.withLock { $0 } }
    var id: BackendID { "batches" }
    func canHandle(_ url: URL) -> Bool { false }

    func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
        throw DeepLinkError(.unsupported, "No links here.")
    }

    func matchInstall(context: BackendContext) async throws -> InstallMatch { .organic() }

    func send(_ events: [ConversionEvent], context: BackendContext) async throws {
        recorded.withLock { $0.append(events.map(\.name)) }
    }
}
