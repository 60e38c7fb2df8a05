import Benchmark
import Foundation
import LinkRelay
import LinkRelayLinkForty
import LinkRelaySimulator
import LinkRelayTesting

/// A store that counts reads and writes, around a real `FileStore`.
final class CountingStore: PersistentStore, @unchecked Sendable {
    let base: FileStore
    private let lock = NSLock()
    private var counts = (reads: 0, writes: 0)

    init(_ base: FileStore) { self.base = base }

    var reads: Int { lock.withLock { counts.reads } }
    var writes: Int { lock.withLock { counts.writes } }

    func data(forKey key: String) throws -> Data? {
        lock.withLock { counts.reads += 1 }
        return try base.data(forKey: key)
    }
    func setData(_ data: Data, forKey key: String) throws {
        lock.withLock { counts.writes += 1 }
        try base.setData(data, forKey: key)
    }
    func removeData(forKey key: String) throws { try base.removeData(forKey: key) }
    func removeAll() throws { try base.removeAll() }
}

enum Folders {
    /// A new folder under the system's temporary directory.
    static func make(_ name: String) -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-bench-\(name)-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            fatalError("cannot make \(folder.path): \(error)")
        }
        return folder
    }
}

/// 5. Client construction and `start()` on a warm store; 6. event tracking with the persisted
/// queue; 7. memory with a slow subscriber.
enum ClientBenchmarks {
    static func linkForty(_ simulator: ProviderSimulator) -> LinkFortyBackend {
        do {
            return LinkFortyBackend(try LinkFortyBackend.Configuration(baseURL: URL(string: "https://go.acme.app")!, apiKey: "lf_key"))
        } catch {
            fatalError("benchmark setup: \(error)")
        }
    }

    static func configuration(store: any PersistentStore, simulator: ProviderSimulator) -> DeepLinkClient.Configuration {
        var configuration = DeepLinkClient.Configuration(store: store, transport: simulator)
        configuration.deviceInfo = StaticDeviceInfo()
        return configuration
    }

    /// A folder whose store already holds an install outcome: a later launch.
    static func warmStore(_ simulator: ProviderSimulator) async -> FileStore {
        let store = FileStore(directory: Folders.make("warm"))
        let first = DeepLinkClient(backend: linkForty(simulator), configuration: configuration(store: store, simulator: simulator))
        await first.start()
        await first.shutdown()
        return store
    }

    static func register() {
        // 5. Construction: the client and nothing else, scaled per client.
        Benchmark("5 baseline: an actor with an AsyncStream (the floor of any client)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(FloorClient())
            }
        }

        Benchmark("5 DeepLinkClient init on a warm FileStore (reads on the caller must be 0)") {
            (benchmark: Benchmark, state: (ProviderSimulator, FileStore)) in
            let (simulator, store) = state
            let counting = CountingStore(store)
            let configuration = configuration(store: counting, simulator: simulator)
            let backend = linkForty(simulator)
            for _ in benchmark.scaledIterations {
                blackHole(DeepLinkClient(backend: backend, configuration: configuration))
            }
            precondition(counting.reads == 0 && counting.writes == 0, "the initializer touched the store")
        } setup: {
            let simulator = ProviderSimulator()
            simulator.addLinkForty(host: "go.acme.app")
            return (simulator, await warmStore(simulator))
        }

        let once = Benchmark.Configuration(scalingFactor: .one, maxDuration: .seconds(2), maxIterations: 300)
        Benchmark("5 baseline: read and decode the stored outcome file", configuration: once) { (benchmark: Benchmark, folder: URL) in
            for _ in benchmark.scaledIterations {
                for file in try FileManager.default.subpathsOfDirectory(atPath: folder.path) where file.hasSuffix(".json") {
                    let data = try Data(contentsOf: folder.appendingPathComponent(file))
                    blackHole(try JSONSerialization.jsonObject(with: data))
                }
            }
        } setup: {
            let simulator = ProviderSimulator()
            simulator.addLinkForty(host: "go.acme.app")
            let store = await warmStore(simulator)
            return store.directory
        }

        Benchmark("5 start() on a warm FileStore (outcome restored, no request)", configuration: once) {
            (benchmark: Benchmark, state: (ProviderSimulator, FileStore)) in
            let (simulator, store) = state
            for _ in benchmark.scaledIterations {
                let client = DeepLinkClient(backend: linkForty(simulator), configuration: configuration(store: store, simulator: simulator))
                await client.start()
                blackHole(await client.installOutcome())
                await client.shutdown()
            }
        } setup: {
            let simulator = ProviderSimulator()
            simulator.addLinkForty(host: "go.acme.app")
            return (simulator, await warmStore(simulator))
        }

        // 6. track. (No "amortised over 10,000" row: with the default queue of 100 it timed the
        // queue-full path, and only the caller's wall time. Per persisted track, by instructions:
        // Benchmarks/count-instructions track.)
        let tracking = Benchmark.Configuration(
            metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .syscalls], scalingFactor: .one, maxDuration: .seconds(3), maxIterations: 5)

        // 6. track with 1,000 and 10,000 events already queued: 1,000 more tracks, written to
        // the store (saveQueuedEvents) before the measurement ends. CPU is the figure: the
        // writes run off the caller's path.
        for queued in [1_000, 10_000] {
            Benchmark("6 track × 1,000 at a queue of \(queued.formatted()) (FileStore)", configuration: tracking) {
                (benchmark: Benchmark, state: (ProviderSimulator, URL)) in
                let (simulator, folder) = state
                // Not measured: a launch on a copy of the prepared queue.
                let copy = Folders.make("track-at-\(queued)")
                if FileManager.default.fileExists(atPath: copy.path) { try FileManager.default.removeItem(at: copy) }
                try FileManager.default.copyItem(at: folder, to: copy)
                var settings = configuration(store: FileStore(directory: copy), simulator: simulator)
                settings.eventQueueCapacity = 2 * queued
                let client = DeepLinkClient(backend: linkForty(simulator), configuration: settings)
                let before = await client.queuedEventCount
                precondition(before == queued, "the prepared queue holds \(before) events")
                benchmark.startMeasurement()
                for _ in 0..<1_000 { try await client.track("purchase", properties: ["sku": "A-1", "quantity": 2]) }
                try await client.saveQueuedEvents()
                benchmark.stopMeasurement()
                let after = await client.queuedEventCount
                precondition(after == queued + 1_000, "the queue holds \(after) events")
                await client.shutdown()
                try FileManager.default.removeItem(at: copy)
            } setup: {
                let simulator = ProviderSimulator()
                simulator.addLinkForty(host: "go.acme.app")
                let folder = Folders.make("queued-\(queued)")
                var settings = configuration(store: FileStore(directory: folder), simulator: simulator)
                settings.eventQueueCapacity = 2 * queued
                let client = DeepLinkClient(backend: linkForty(simulator), configuration: settings)
                for _ in 0..<queued { try await client.track("purchase", properties: ["sku": "A-1", "quantity": 2]) }
                await client.shutdown()
                return (simulator, folder)
            }
        }

        Benchmark("6 flush of 100 queued events to the simulator", configuration: once) {
            (benchmark: Benchmark, simulator: ProviderSimulator) in
            // Not measured: a launch with 100 events already queued.
            // (The event endpoint fails while start() runs, so the queue is still full after it.)
            let store = FileStore(directory: Folders.make("flush"))
            var settings = configuration(store: store, simulator: simulator)
            settings.retryPolicy = .none
            let client = DeepLinkClient(backend: linkForty(simulator), configuration: settings)
            for index in 0..<100 { try await client.track("purchase", properties: ["index": .int(index)]) }
            simulator.setFault(.status(503), path: "/api/sdk/v1/event")
            await client.start()
            await client.flushEvents()
            simulator.clearFaults()
            let queued = await client.queuedEventCount
            precondition(queued == 100, "the queue was sent before the measurement")
            benchmark.startMeasurement()
            await client.flushEvents()
            benchmark.stopMeasurement()
            let left = await client.queuedEventCount
            precondition(left == 0, "the flush left events queued")
            await client.shutdown()
        } setup: {
            let simulator = ProviderSimulator()
            simulator.addLinkForty(host: "go.acme.app")
            return simulator
        }

        // 7. Memory: links handed over far faster than a subscriber takes them.
        let memory = Benchmark.Configuration(
            metrics: [.peakMemoryResident, .wallClock], scalingFactor: .one, maxDuration: .seconds(30), maxIterations: 1)
        for count in [100_000, 1_000_000] {
            Benchmark("7 baseline: \(count.formatted()) URLs built and dropped", configuration: memory) { benchmark in
                for _ in benchmark.scaledIterations {
                    for index in 0..<count { blackHole(URL(string: "https://go.acme.app/p/\(index)")!) }
                }
            }
            Benchmark("7 peak memory: \(count.formatted()) links, a slow subscriber", configuration: memory) { benchmark in
                for _ in benchmark.scaledIterations {
                    let taken = await slowSubscriber(links: count)
                    // Flat memory here means the buffer dropped: say how much was delivered.
                    FileHandle.standardError.write(Data("7: the slow subscriber received \(taken) of \(count) links\n".utf8))
                }
            }
            Benchmark("7 peak memory: \(count.formatted()) links, a subscriber that keeps up (all delivered)", configuration: memory) {
                benchmark in
                for _ in benchmark.scaledIterations {
                    let taken = await keepingUp(links: count)
                    precondition(taken == count, "delivered \(taken) of \(count)")
                }
            }
        }
    }

    /// Hands over `links` distinct links, each taken by the one subscriber before the next: every
    /// link is delivered. Returns how many were.
    static func keepingUp(links: Int) async -> Int {
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore())
        configuration.deviceInfo = StaticDeviceInfo()
        configuration.logSink = .silent
        let client = DeepLinkClient(backend: LocalBackend(.init(hosts: ["go.acme.app"])), configuration: configuration)
        var iterator = client.deepLinks().makeAsyncIterator()
        var taken = 0
        for index in 0..<links {
            client.handle(URL(string: "https://go.acme.app/p/\(index)")!)
            if let link = await iterator.next() {
                blackHole(link.pathSegments)
                taken += 1
            }
        }
        await client.shutdown()
        return taken
    }

    /// Hands over `links` distinct links while one subscriber takes one link every 1,000; returns
    /// how many it received (the buffer keeps the newest `linkBufferLimit`).
    static func slowSubscriber(links: Int) async -> Int {
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore())
        configuration.deviceInfo = StaticDeviceInfo()
        configuration.logSink = .silent
        let client = DeepLinkClient(backend: LocalBackend(.init(hosts: ["go.acme.app"])), configuration: configuration)
        let stream = client.deepLinks()
        let subscriber = Task {
            var taken = 0
            for await link in stream {
                taken += 1
                // Slow: a little work per link, and a pause now and then.
                blackHole(link.pathSegments)
                if taken % 1000 == 0 { await Task.yield() }
            }
            return taken
        }
        for index in 0..<links {
            client.handle(URL(string: "https://go.acme.app/p/\(index)")!)
        }
        await client.shutdown()
        return await subscriber.value
    }
}

/// The least a client needs: an actor and a stream for its links.
actor FloorClient {
    let stream: AsyncStream<URL>
    let continuation: AsyncStream<URL>.Continuation

    init() {
        (stream, continuation) = AsyncStream<URL>.makeStream()
    }
}
