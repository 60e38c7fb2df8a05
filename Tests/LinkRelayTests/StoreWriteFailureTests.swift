import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// A full disk: the store refuses writes. Each event still goes out at most once, across
/// launches, and the failures reach the app.
@Suite("Events when the store cannot write", .timeLimit(.minutes(1)))
struct StoreWriteFailureTests {
    /// An ``InMemoryStore`` whose writes fail on demand, as a full disk's do.
    final class FailingStore: PersistentStore {
        private let base = InMemoryStore()
        private struct Rule: Sendable {
            /// `nil`: every key.
            var keys: Set<String>?
            /// Writes starting with this byte still succeed (a journal's claim lines, `~`).
            var allowed: UInt8?
        }

        /// `nil`: every write succeeds.
        private let failing = Locked<Rule?>(nil)
        let prefersDeferredWrites: Bool

        init(deferred: Bool = false) { prefersDeferredWrites = deferred }

        /// Writes to `keys` (`nil`: all) fail, but those starting with `allowed`.
        func fail(_ keys: Set<String>? = nil, allowing allowed: UInt8? = nil) {
            failing.withLock { $0 = Rule(keys: keys, allowed: allowed) }
        }

        func heal() { failing.withLock { $0 = nil } }

        private func check(_ data: Data, forKey key: String) throws {
            let fails = failing.withLock { rule -> Bool in
                guard let rule else { return false }
                if let keys = rule.keys, !keys.contains(key) { return false }
                return rule.allowed == nil || data.first != rule.allowed
            }
            if fails { throw POSIXError(.ENOSPC) }
        }

        func data(forKey key: String) throws -> Data? { try base.data(forKey: key) }

        func setData(_ data: Data, forKey key: String) throws {
            try check(data, forKey: key)
            try base.setData(data, forKey: key)
        }

        func appendData(_ data: Data, forKey key: String) throws {
            try check(data, forKey: key)
            try base.appendData(data, forKey: key)
        }

        func removeData(forKey key: String) throws { try base.removeData(forKey: key) }
        func removeAll() throws { try base.removeAll() }
    }

    let backend = InMemoryBackend(schemes: ["myapp"])

    func launch(_ store: any PersistentStore) -> DeepLinkClient {
        makeClient(backend, store: store) {
            $0.retryPolicy = .none
            $0.eventQueueCapacity = 200
        }
    }

    /// The ids the backend was asked to send, in order (every attempt, failed or not).
    var sendAttempts: [UUID] { backend.sentEvents.map(\.id) }

    /// The `.storage` failures in `stream` up to the first link (a marker the test hands over).
    func storageFailures(until stream: AsyncStream<DeepLinkEvent>) async -> [DeepLinkError] {
        var failures: [DeepLinkError] = []
        for await event in stream {
            if case .failure(let error) = event, error.code == .storage { failures.append(error) }
            if event.link != nil { break }
        }
        return failures
    }

    @Test("a sent event whose removal could not be written is not sent again by the next launch")
    func removalNotWrittenIsNotResent() async throws {
        let store = FailingStore()
        let first = launch(store)
        for index in 0..<10 { try await first.track("event-\(index)") }
        // Only claims (`~` lines) can be written: the first event is claimed and sent, its
        // removal fails, and after that failure the next claim must be a whole write, which
        // fails too: nothing more is sent.
        store.fail([DeepLinkClient.eventQueueKey], allowing: UInt8(ascii: "~"))
        await first.start()
        await first.flushEvents()
        #expect(sendAttempts.count == 1)
        await first.shutdown()

        store.heal()
        let second = launch(store)
        await second.start()
        await second.flushEvents()
        #expect(await second.queuedEventCount == 0)
        #expect(sendAttempts.count == 10, "\(sendAttempts.count - 10) events were sent twice")
        #expect(Set(sendAttempts).count == 10)
        await second.shutdown()
    }

    @Test("when the claim cannot be written nothing is sent, the failure is published once, and all go out once the disk has room")
    func noClaimNoSend() async throws {
        let store = FailingStore()
        let client = launch(store)
        let events = client.linkEvents()
        for index in 0..<10 { try await client.track("event-\(index)") }
        store.fail([DeepLinkClient.eventQueueKey])
        await client.start()
        await client.flushEvents()
        await client.flushEvents()
        #expect(sendAttempts.isEmpty)
        #expect(await client.queuedEventCount == 10)

        store.heal()
        await client.flushEvents()
        #expect(sendAttempts.count == 10)
        #expect(Set(sendAttempts).count == 10)
        #expect(await client.queuedEventCount == 0)
        client.handle(url("myapp://marker"))
        let failures = await storageFailures(until: events)
        #expect(failures.count == 1, "one failure for the run of failed writes: \(failures)")
        #expect(failures.first?.message.contains("'events'") == true)
        #expect(failures.first?.backend == backend.id)
        await client.shutdown()
    }

    @Test("a failed background write is published, saveQueuedEvents throws it, and writes the queue once it can")
    func deferredWriteFailureSurfaces() async throws {
        let store = FailingStore(deferred: true)
        let client = launch(store)
        let events = client.linkEvents()
        store.fail()
        for index in 0..<5 { try await client.track("event-\(index)") }
        let error = await #expect(throws: DeepLinkError.self) { try await client.saveQueuedEvents() }
        #expect(error?.code == .storage)
        #expect(try store.data(forKey: DeepLinkClient.eventQueueKey) == nil)

        store.heal()
        try await client.saveQueuedEvents()
        #expect(try store.data(forKey: DeepLinkClient.eventQueueKey) != nil)
        #expect(await launch(store).queuedEventCount == 5)
        client.handle(url("myapp://marker"))
        let failures = await storageFailures(until: events)
        #expect(failures.count == 1)
        await client.shutdown()
    }

    @Test("a failed send takes its mark back: the next launch sends the event")
    func failedSendIsSentNextLaunch() async throws {
        let store = FailingStore()
        backend.scriptEventSending(.failure(DeepLinkError(.network, "offline")))
        let first = launch(store)
        try await first.track("signup")
        await first.start()
        await first.flushEvents()
        await first.shutdown()
        let failedAttempts = sendAttempts.count
        #expect(failedAttempts > 0)
        backend.scriptEventSending(.success(()))
        let second = launch(store)
        await second.start()
        await second.flushEvents()
        #expect(sendAttempts.count == failedAttempts + 1)
        #expect(Set(sendAttempts).count == 1)
        #expect(await second.queuedEventCount == 0)
        await second.shutdown()
    }

    @Test("on a full 64 KiB filesystem nothing is sent twice: no claim, no send; the next launch sends the rest, each once")
    func fullFilesystem() async throws {
        guard let disk = try TinyDisk(kilobytes: 64) else { return }
        defer { disk.unmount() }
        let padding = String(repeating: "p", count: 400)
        let first = launch(FileStore(directory: disk.folder))
        let events = first.linkEvents()
        for index in 0..<60 { try await first.track("event-\(index)", properties: ["padding": .string(padding)]) }
        try await first.saveQueuedEvents()
        // Another file takes the rest of the disk.
        try disk.fill()
        await first.start()
        await first.flushEvents()
        let sentByFirst = sendAttempts.count
        first.handle(url("myapp://marker"))
        let failures = await storageFailures(until: events)
        await first.shutdown()

        disk.removeFiller()
        let second = launch(FileStore(directory: disk.folder))
        await second.start()
        await second.flushEvents()
        #expect(await second.queuedEventCount == 0)
        await second.shutdown()
        let attempts = sendAttempts
        let twice = attempts.count - Set(attempts).count
        print(
            "full 64 KiB disk: first launch sent \(sentByFirst), the next \(attempts.count - sentByFirst); \(twice) sent twice; storage failures published: \(failures.map(\.message))"
        )
        // Short lines still fit in the last page of the journal's file for a while (a few
        // claims and removals); then the disk refuses, and nothing more is sent.
        #expect(sentByFirst < 60)
        #expect(twice == 0)
        #expect(Set(attempts).count == 60)
        #expect(failures.count == 1)
        #expect(failures.first?.message.contains("'events'") == true)
    }
}

/// A tmpfs of a few KiB, mounted for one test; `nil` (with a message) where mounting is refused.
struct TinyDisk {
    let folder: URL

    init?(kilobytes: Int) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-tinydisk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let status = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", folder.path])
        guard status == 0 else {
            print("TinyDisk: mounting a tmpfs was refused (status \(status)); skipped, the store double covers the logic.")
            try? FileManager.default.removeItem(at: folder)
            return nil
        }
        self.folder = folder
    }

    private var filler: URL { folder.appendingPathComponent("filler") }

    /// Fills the disk to the last byte with a file of its own.
    func fill() throws {
        _ = FileManager.default.createFile(atPath: filler.path, contents: nil)
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        let block = Data(count: 4096)
        var size = 4096
        while true {
            do { try handle.write(contentsOf: block) } catch { break }
            size += 4096
            if size > 1 << 20 { break }
        }
        // The last partial block: byte by byte.
        let byte = Data(count: 1)
        while (try? handle.write(contentsOf: byte)) != nil {}
    }

    func removeFiller() {
        try? FileManager.default.removeItem(at: filler)
    }

    func unmount() {
        _ = Self.run("/bin/umount", [folder.path])
        try? FileManager.default.removeItem(at: folder)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        #if os(macOS) || os(Linux)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                return -1
            }
            process.waitUntilExit()
            return process.terminationStatus
        #else
            // No processes on iOS (the suite also runs on a simulator): nothing is mounted.
            return -1
        #endif
    }
}
