import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// "A link is never held longer than its deadline", counted from the moment `handle` received
/// it, also when many links arrive while the provider hangs.
@Suite("Per-link deadlines in an outage", .timeLimit(.minutes(1)))
struct PerLinkDeadlineTests {
    /// The links a subscriber has received so far, for waiting on without sleeping.
    final class Received: Sendable {
        private let links = Locked<[DeepLink]>([])
        private let waiters = ConditionWaiters()

        init(_ stream: AsyncStream<DeepLink>) {
            Task { [links, waiters] in
                for await link in stream {
                    let count = links.withLock { links -> Int in
                        links.append(link)
                        return links.count
                    }
                    waiters.update(count)
                }
            }
        }

        var all: [DeepLink] { links.withLock { $0 } }

        func wait(for count: Int) async {
            await waiters.wait(until: count) { [links] in links.withLock { $0.count } }
        }
    }

    /// Waits until `received` holds `count` links; `false` as soon as the clock holds a timer due
    /// at or after `limit` instead (a link waiting for a deadline later than any link's own).
    func delivered(_ count: Int, _ received: Received, clock: ManualClock, noTimerFrom limit: TimeInterval) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await received.wait(for: count)
                return true
            }
            group.addTask {
                await clock.waitForSleepers(count: 1, dueAtOrAfter: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Hands over `count` links `spacing` apart while the provider hangs, then moves the clock to
    /// each link's deadline in turn: by then that link (and every one before it) is delivered,
    /// parsed on the device, in arrival order.
    func outage(links count: Int, spacing: TimeInterval, concurrency: Int = 4) async throws {
        let backend = HangingBackend()
        let clock = ManualClock()
        let client = makeClient(backend, clock: clock) {
            $0.retryPolicy = .none
            $0.maximumConcurrentResolutions = concurrency
        }
        let received = Received(client.deepLinks())
        let urls = (0..<count).map { url("myapp://item/\($0)") }
        var deadlines: [TimeInterval] = []
        for (index, link) in urls.enumerated() {
            if index > 0 { clock.advance(by: spacing) }
            deadlines.append(clock.uptime + 3)
            client.handle(link)
        }
        let last = try #require(deadlines.last)
        for (index, deadline) in deadlines.enumerated() {
            clock.advance(by: deadline - clock.uptime)
            let onTime = await delivered(index + 1, received, clock: clock, noTimerFrom: last + 0.001)
            #expect(onTime, "link \(index) (deadline \(deadline) s) was not delivered by its deadline")
            guard onTime else { return }
        }
        let links = received.all
        #expect(links.map(\.url) == urls)
        #expect(links.allSatisfy { $0.resolution == .local(.timedOut) })
        await client.shutdown()
    }

    @Test("three links in an outage are each delivered by their own deadline, in arrival order")
    func threeLinks() async throws {
        try await outage(links: 3, spacing: 0.5)
    }

    @Test("thirty links in an outage are each delivered by their own deadline, in arrival order")
    func thirtyLinks() async throws {
        try await outage(links: 30, spacing: 0.05)
    }

    @Test("with one resolution at a time, links still keep their own deadlines")
    func serialResolution() async throws {
        try await outage(links: 6, spacing: 0.4, concurrency: 1)
    }

    @Test("links resolve concurrently, up to the configured bound, and a link whose deadline passed while it waited is not sent")
    func boundedConcurrency() async throws {
        let backend = HangingBackend()
        let clock = ManualClock()
        let client = makeClient(backend, clock: clock) { $0.retryPolicy = .none }
        let received = Received(client.deepLinks())
        let urls = (0..<10).map { url("myapp://item/\($0)") }
        for link in urls { client.handle(link) }
        await backend.waitForStarts(4)
        await clock.waitForSleepers(count: 4)  // the four deadlines
        #expect(backend.started == Array(urls.prefix(4)))
        clock.advance(by: 3)
        await received.wait(for: 10)
        #expect(received.all.map(\.url) == urls)
        #expect(backend.mostRunning == 4)
        #expect(backend.started == Array(urls.prefix(4)))
    }

    @Test("a flood of links in an outage is bounded by linkBufferLimit: the newest are kept, drops counted and logged without a storm")
    func floodIsBounded() async throws {
        let backend = HangingBackend()
        let clock = ManualClock()
        let logs = LogCollector()
        let client = makeClient(backend, clock: clock) {
            $0.retryPolicy = .none
            $0.linkBufferLimit = 50
            $0.logSink = logs.sink
        }
        let received = Received(client.deepLinks())
        let urls = (0..<2_000).map { url("myapp://item/\($0)") }
        for link in urls { client.handle(link) }
        let idle = Task { await client.waitUntilIdle() }
        await clock.waitForSleepers(count: 4)  // the four resolutions under way
        #expect(await client.intake.count <= 54)
        clock.advance(by: 3)
        await idle.value
        let drops = client.linkDrops.total
        await received.wait(for: 2_000 - drops)
        let delivered = received.all.map(\.url)
        #expect(drops > 0)
        #expect(delivered.count + drops == 2_000)
        // Logged: the first drop and every 1,000th, not a line per drop.
        #expect(logs.lines.filter { $0.contains("linkBufferLimit") }.count == 1 + drops / 1_000)
        #expect(delivered.last == urls.last)
        let indices = delivered.compactMap { Int($0.lastPathComponent) }
        #expect(indices == indices.sorted())
        #expect(await client.intake.count == 0)
    }

    @Test("a fast link behind a hanging one resolves at once, and is delivered right after it, in order")
    func fastBehindSlow() async throws {
        let backend = HangingBackend()
        let slow = url("myapp://slow")
        let fast = url("myapp://fast")
        backend.answer(fast)
        let clock = ManualClock()
        let client = makeClient(backend, clock: clock) { $0.retryPolicy = .none }
        let received = Received(client.deepLinks())
        client.handle(slow)
        client.handle(fast)
        await backend.waitForStarts(2)
        await clock.waitForSleepers(count: 1)  // the slow link's deadline
        #expect(received.all.isEmpty)
        clock.advance(by: 3)
        await received.wait(for: 2)
        #expect(received.all.map(\.url) == [slow, fast])
        #expect(received.all.map(\.resolution) == [.local(.timedOut), .server])
    }

    @Test("a link answered on the device waits for an earlier link the provider resolves, and goes at once when nothing is ahead of it")
    func onDeviceKeepsArrivalOrder() async throws {
        let backend = HangingBackend()
        let clock = ManualClock()
        let client = makeClient(backend, clock: clock) { $0.retryPolicy = .none }
        let received = Received(client.deepLinks())
        let alone = url("myapp://on-device/first")
        client.handle(alone)
        // No clock advance: nothing is ahead of it.
        await received.wait(for: 1)
        #expect(received.all.map(\.url) == [alone])
        let slow = url("myapp://slow")
        let onDevice = url("myapp://on-device/second")
        client.handle(slow)
        client.handle(onDevice)
        await backend.waitForStarts(1)
        await clock.waitForSleepers(count: 1)  // the slow link's deadline
        clock.advance(by: 3)
        await received.wait(for: 3)
        #expect(received.all.map(\.url) == [alone, slow, onDevice])
        #expect(received.all.map(\.resolution) == [.local(.onDevice), .local(.timedOut), .local(.onDevice)])
    }

    @Test("waitUntilIdle returns once every link handed over before it is delivered")
    func barrierWaitsForResolutions() async throws {
        let backend = HangingBackend()
        let clock = ManualClock()
        let client = makeClient(backend, clock: clock) { $0.retryPolicy = .none }
        let received = Received(client.deepLinks())
        client.handle(url("myapp://a"))
        let idle = Task { await client.waitUntilIdle() }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 3)
        await idle.value
        await received.wait(for: 1)
        #expect(received.all.count == 1)
    }
}
