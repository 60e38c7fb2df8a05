import Benchmark
import Foundation
import LinkRelay
import LinkRelayTesting

/// 1. handle → `for await`: LinkRelay's delivery against a bare `AsyncStream` with the same
/// traffic, per link.
enum DeliveryBenchmarks {
    static let count = 1000
    /// Distinct links (the same URL twice within the duplicate window is one link).
    static let links: [URL] = (0..<count).map { URL(string: "https://go.acme.app/products/\($0)?utm_source=bench&color=red")! }

    static func client(heldLimit: Int = 32) -> DeepLinkClient {
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore())
        configuration.deviceInfo = StaticDeviceInfo()
        configuration.undeliveredEventLimit = heldLimit
        return DeepLinkClient(backend: LocalBackend(.init(hosts: ["go.acme.app"])), configuration: configuration)
    }

    /// A task that takes `count` elements from `stream` and returns how many it took.
    static func consume<Element: Sendable>(_ stream: AsyncStream<Element>, count: Int) -> Task<Int, Never> {
        Task {
            var taken = 0
            for await _ in stream {
                taken += 1
                if taken == count { break }
            }
            return taken
        }
    }

    /// A consumer that takes `count` elements from `stream` and acknowledges each on `acks`.
    static func acknowledge<Element: Sendable>(
        _ stream: AsyncStream<Element>, count: Int, on acks: AsyncStream<Int>.Continuation
    ) -> Task<Void, Never> {
        Task {
            var taken = 0
            for await _ in stream {
                taken += 1
                acks.yield(taken)
                if taken == count { break }
            }
        }
    }

    static func register() {
        // What a user feels: one link at a time, the next handed over once the app has the
        // previous one. Both sides pay the same acknowledgement hop.
        Benchmark("1 baseline: one at a time, yield → for await") { benchmark in
            for _ in benchmark.scaledIterations {}
            let (stream, continuation) = AsyncStream<Int>.makeStream()
            let (acks, ackContinuation) = AsyncStream<Int>.makeStream()
            let consumer = acknowledge(stream, count: count, on: ackContinuation)
            var received = acks.makeAsyncIterator()
            for index in 0..<count {
                continuation.yield(index)
                blackHole(await received.next())
            }
            await consumer.value
        }

        Benchmark("1 LinkRelay: one at a time, handle → for await") { benchmark in
            for _ in benchmark.scaledIterations {}
            let client = client()
            let (acks, ackContinuation) = AsyncStream<Int>.makeStream()
            let consumer = acknowledge(client.deepLinks(), count: count, on: ackContinuation)
            var received = acks.makeAsyncIterator()
            for link in links {
                client.handle(link)
                blackHole(await received.next())
            }
            await consumer.value
            await client.shutdown()
        }

        Benchmark("1a baseline: AsyncStream yield → for await, 1 subscriber") { benchmark in
            for _ in benchmark.scaledIterations {}
            let (stream, continuation) = AsyncStream<Int>.makeStream()
            let consumer = consume(stream, count: count)
            for index in 0..<count { continuation.yield(index) }
            blackHole(await consumer.value)
        }

        Benchmark("1a LinkRelay: handle → for await, 1 subscriber") { benchmark in
            for _ in benchmark.scaledIterations {}
            let client = client()
            let consumer = consume(client.deepLinks(), count: count)
            for link in links { client.handle(link) }
            blackHole(await consumer.value)
            await client.shutdown()
        }

        Benchmark("1b baseline: AsyncStream yield → for await, 4 subscribers") { benchmark in
            for _ in benchmark.scaledIterations {}
            let streams = (0..<4).map { _ in AsyncStream<Int>.makeStream() }
            let consumers = streams.map { consume($0.stream, count: count) }
            for index in 0..<count {
                for pair in streams { pair.continuation.yield(index) }
            }
            for consumer in consumers { blackHole(await consumer.value) }
        }

        Benchmark("1b LinkRelay: handle → for await, 4 subscribers") { benchmark in
            for _ in benchmark.scaledIterations {}
            let client = client()
            let consumers = (0..<4).map { _ in consume(client.deepLinks(), count: count) }
            for link in links { client.handle(link) }
            for consumer in consumers { blackHole(await consumer.value) }
            await client.shutdown()
        }

        Benchmark("1c baseline: 1,000 yielded before the first for await") { benchmark in
            for _ in benchmark.scaledIterations {}
            let (stream, continuation) = AsyncStream<Int>.makeStream()
            for index in 0..<count { continuation.yield(index) }
            blackHole(await consume(stream, count: count).value)
        }

        Benchmark("1c LinkRelay: 1,000 handled before the first subscriber") { benchmark in
            for _ in benchmark.scaledIterations {}
            let client = client(heldLimit: count)
            for link in links { client.handle(link) }
            blackHole(await consume(client.deepLinks(), count: count).value)
            await client.shutdown()
        }
    }
}
