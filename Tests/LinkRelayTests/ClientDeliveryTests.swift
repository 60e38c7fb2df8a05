import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

@Suite("DeepLinkClient delivery", .timeLimit(.minutes(1)))
struct ClientDeliveryTests {
    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])

    @Test("a link handled before anybody subscribes reaches the first subscriber")
    func coldStartLinkReachesFirstSubscriber() async throws {
        let client = makeClient(backend)
        #expect(client.handle(url("myapp://products/42")))
        await client.waitUntilIdle()
        #expect(client.broadcaster.heldCount == 1)
        let links = await client.deepLinks().prefixArray(1)
        #expect(links.map(\.path) == ["/products/42"])
        #expect(links.first?.origin == .customScheme)
        #expect(links.first?.resolution == .server)
    }

    @Test("links held while nobody listens go to the first subscriber only, in order")
    func heldLinksGoToFirstSubscriberOnly() async throws {
        let client = makeClient(backend)
        for index in 1...3 { client.handle(url("myapp://item/\(index)")) }
        await client.waitUntilIdle()
        let first = client.linkEvents()
        let held = await first.prefixArray(3).compactMap(\.link?.path)
        #expect(held == ["/item/1", "/item/2", "/item/3"])
        let second = client.deepLinks()
        client.handle(url("myapp://item/4"))
        #expect(await second.prefixArray(1).map(\.path) == ["/item/4"])
    }

    @Test("held links are bounded; the oldest are dropped with a log line")
    func heldLinksAreBounded() async throws {
        let logs = LogCollector()
        let client = makeClient(backend) {
            $0.undeliveredEventLimit = 2
            $0.logSink = logs.sink
        }
        for index in 1...4 { client.handle(url("myapp://item/\(index)")) }
        await client.waitUntilIdle()
        let links = await client.deepLinks().prefixArray(2)
        #expect(links.map(\.path) == ["/item/3", "/item/4"])
        #expect(logs.lines.filter { $0.contains("dropped the oldest") }.count == 2)
    }

    @Test("two subscribers both receive every link once, in order")
    func twoSubscribersReceiveEverything() async throws {
        let client = makeClient(backend)
        let first = client.deepLinks()
        let second = client.deepLinks()
        let urls = (1...50).map { url("myapp://item/\($0)") }
        for link in urls { client.handle(link) }
        async let a = first.prefixArray(50)
        async let b = second.prefixArray(50)
        let (fromFirst, fromSecond) = await (a, b)
        #expect(fromFirst.map(\.url) == urls)
        #expect(fromSecond.map(\.url) == urls)
    }

    @Test("a subscriber that joins late receives only later events")
    func lateSubscriberGetsOnlyLaterEvents() async throws {
        let client = makeClient(backend)
        let early = client.deepLinks()
        client.handle(url("myapp://before"))
        #expect(await early.prefixArray(1).map(\.path) == ["/before"])
        let late = client.deepLinks()
        client.handle(url("myapp://after"))
        #expect(await late.prefixArray(1).map(\.path) == ["/after"])
    }

    @Test("cancelling a subscriber's task removes it")
    func cancelledSubscriberIsRemoved() async throws {
        let client = makeClient(backend)
        let stream = client.deepLinks()
        #expect(client.broadcaster.subscriberCount == 1)
        let consumer = Task {
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        consumer.cancel()
        #expect(await consumer.value == 0)
        #expect(client.broadcaster.subscriberCount == 0)
        // With nobody listening again, the next link is held for the next subscriber.
        client.handle(url("myapp://after-cancel"))
        #expect(await client.deepLinks().prefixArray(1).map(\.path) == ["/after-cancel"])
    }

    @Test("a subscriber that stops iterating and drops its stream is removed")
    func droppedSubscriberIsRemoved() async throws {
        let client = makeClient(backend)
        let reader = Task {
            for await link in client.deepLinks() { return link.path }
            return ""
        }
        #expect(client.handle(url("myapp://one")))
        #expect(await reader.value == "/one")
        #expect(client.broadcaster.subscriberCount == 0)
    }

    @Test("the same URL twice within the duplicate window is one link")
    func duplicateWithinWindowIsOneLink() async throws {
        let clock = ManualClock()
        let client = makeClient(backend, clock: clock)
        let links = client.deepLinks()
        client.handle(url("myapp://launch"))
        clock.advance(by: 1.5)
        client.handle(url("myapp://launch"))
        client.handle(url("myapp://marker"))
        #expect(await links.prefixArray(2).map(\.path) == ["/launch", "/marker"])
        #expect(backend.resolvedURLs.filter { $0 == url("myapp://launch") }.count == 1)
    }

    @Test("the same URL again after the duplicate window is a second link")
    func duplicateOutsideWindowIsTwoLinks() async throws {
        let clock = ManualClock()
        let client = makeClient(backend, clock: clock)
        let links = client.deepLinks()
        client.handle(url("myapp://launch"))
        clock.advance(by: 2.0)
        client.handle(url("myapp://launch"))
        #expect(await links.prefixArray(2).map(\.path) == ["/launch", "/launch"])
    }

    @Test("a URL the backend does not claim is refused and not delivered")
    func unclaimedURLIsRefused() async throws {
        let client = makeClient(backend)
        let links = client.deepLinks()
        #expect(client.handle(url("https://elsewhere.example/x")) == false)
        #expect(client.handle(url("other://x")) == false)
        client.handle(url("myapp://mine"))
        #expect(await links.prefixArray(1).map(\.path) == ["/mine"])
        #expect(backend.resolvedURLs == [url("myapp://mine")])
    }

    @Test("1,000 concurrent handle calls from many tasks are all delivered exactly once")
    func thousandConcurrentHandles() async throws {
        let client = makeClient(backend)
        let links = client.deepLinks()
        let urls = (0..<1000).map { url("https://go.acme.app/item/\($0)") }
        await withTaskGroup(of: Bool.self) { group in
            for link in urls { group.addTask { client.handle(link) } }
            for await claimed in group { #expect(claimed) }
        }
        let received = await links.prefixArray(1000)
        #expect(received.count == 1000)
        #expect(Set(received.map(\.url)) == Set(urls))
    }

    @Test("shutdown finishes every stream and later links are refused")
    func shutdownFinishesStreams() async throws {
        let client = makeClient(backend)
        let events = client.linkEvents()
        await client.shutdown()
        #expect(await events.prefixArray(10).isEmpty)
        #expect(client.handle(url("myapp://late")) == false)
        #expect(await client.linkEvents().prefixArray(1).isEmpty)
    }

    @Test("handle never blocks on a slow backend and links keep their order")
    func slowBackendKeepsOrder() async throws {
        let clock = ManualClock()
        backend.script(url("myapp://slow"), .parsed, delay: 1)
        let client = makeClient(backend, clock: clock)
        let links = client.deepLinks()
        client.handle(url("myapp://slow"))
        client.handle(url("myapp://fast"))
        await clock.waitForSleepers(count: 2)  // the backend's delay and the deadline timer
        clock.advance(by: 1)
        #expect(await links.prefixArray(2).map(\.path) == ["/slow", "/fast"])
    }

}

@Suite("Backends observe published events", .timeLimit(.minutes(1)))
struct PublishedEventObservationTests {
    @Test("the backend hears of every published event, in order, after it was published")
    func observesInOrder() async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: [])
        let client = makeClient(backend) { $0.authenticationRequiredPaths = ["wallet"] }
        let events = client.linkEvents()
        client.handle(url("myapp://one"))
        client.handle(url("myapp://wallet"))
        _ = await events.prefixArray(2)  // link /one, held /wallet
        await client.completePendingLink()
        client.handle(url("myapp://wallet/again"))
        _ = await events.prefixArray(2)  // link /wallet, held /wallet/again
        await client.cancelPendingLink()
        await backend.waitForObservedEvents(count: 5)
        let observed = backend.observedEvents.map { event -> String in
            switch event {
            case .link(let link): "link \(link.path)\(link.requiresAuthentication ? " (after sign-in)" : "")"
            case .authenticationRequired(let link): "held \(link.path)"
            case .pendingLinkDropped(let link, let reason): "dropped \(link.path) \(reason)"
            case .install: "install"
            case .failure: "failure"
            }
        }
        #expect(
            observed == [
                "link /one", "held /wallet", "link /wallet (after sign-in)", "held /wallet/again", "dropped /wallet/again cancelled",
            ])
    }

    @Test("a backend that never finishes taking in an event does not hold up the next link")
    func slowObserverDoesNotBlock() async throws {
        let clock = ManualClock()
        let client = makeClient(HangingObserverBackend(), clock: clock)
        let links = client.deepLinks()
        client.handle(url("myapp://first"))
        client.handle(url("myapp://second"))
        #expect(await links.prefixArray(2).map(\.path) == ["/first", "/second"])
    }
}

/// Resolves locally and never finishes taking in a published event.
private struct HangingObserverBackend: LinkEventObservingBackend {
    var id: BackendID { "hanging" }
    func canHandle(_ url: URL) -> Bool { true }
    func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
        link.deepLink(provider: id, resolution: .server)
    }
    func matchInstall(context: BackendContext) async throws -> InstallMatch { .organic() }
    func didPublish(_ event: DeepLinkEvent, at date: Date, context: BackendContext) async {
        await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
    }
}

@Suite("Bounded buffers", .timeLimit(.minutes(1)))
struct BoundedBufferTests {
    @Test("the duplicate filter remembers at most its capacity, and still catches a recent duplicate")
    func duplicateFilterIsBounded() {
        var filter = DuplicateFilter(window: 2, capacity: 8)
        var admitted = 0
        for index in 0..<10_000 where filter.admit(url("https://go.acme.app/p/\(index)"), at: 0.5) { admitted += 1 }
        #expect(admitted == 10_000)
        #expect(filter.count <= 8)
        let again = filter.admit(url("https://go.acme.app/p/9999"), at: 0.6)
        #expect(!again)
        // Outside the window, the same URL is a new link.
        let later = filter.admit(url("https://go.acme.app/p/9999"), at: 3)
        #expect(later)
    }

    @Test("the inbox drops its oldest link past the limit, never a barrier, and asks for one drain per idle spell")
    func inboxIsBounded() async {
        let dropped = Locked([URL]())
        let inbox = Inbox(
            limit: 3,
            isDroppable: { item in
                if case .link = item { return true }
                return false
            },
            dropped: { item in
                if case .link(let url, _) = item { dropped.withLock { $0.append(url) } }
            })
        await withCheckedContinuation { (barrier: CheckedContinuation<Void, Never>) in
            #expect(inbox.put(.barrier(barrier)) == .startDrain)
            for index in 0..<4 {
                #expect(inbox.put(.link(url("https://go.acme.app/p/\(index)"), arrivedAt: 0)) == .queued)
            }
            let batch = inbox.takeAll()
            #expect(batch.count == 3)
            if case .barrier(let kept) = batch.first { kept.resume() }
        }
        let droppedURLs = dropped.withLock { $0 }
        #expect(droppedURLs == [url("https://go.acme.app/p/0"), url("https://go.acme.app/p/1")])
        #expect(inbox.takeAll().isEmpty)
        #expect(inbox.put(.link(url("https://go.acme.app/p/9"), arrivedAt: 0)) == .startDrain)
        #expect(inbox.close().count == 1)
        #expect(inbox.put(.link(url("https://go.acme.app/p/10"), arrivedAt: 0)) == .closed)
    }

    @Test("with no drain running, an inbox flooded with links keeps at most twice its limit in memory")
    func inboxMemoryIsBoundedWithoutADrain() {
        let inbox = Inbox(limit: 16, isDroppable: { _ in true }, dropped: { _ in })
        for index in 0..<10_000 { _ = inbox.put(.link(url("https://go.acme.app/p/\(index)"), arrivedAt: 0)) }
        #expect(inbox.retainedCount <= 32)
        let kept = inbox.takeAll()
        #expect(kept.count == 16)
        if case .link(let last, _)? = kept.last { #expect(last == url("https://go.acme.app/p/9999")) }
    }

    @Test("a subscriber that falls behind by more than its buffer keeps the newest events, with a warning")
    func subscriberBufferIsBounded() async throws {
        let warnings = Locked([String]())
        let logger = LinkRelayLogger(
            sink: LogSink(minimumLevel: .warning) { record in warnings.withLock { $0.append(record.message) } }, secrets: [],
            backend: nil)
        let broadcaster = LinkEventBroadcaster(heldLimit: 0, bufferLimit: 4, logger: logger)
        let links = broadcaster.subscribe { event -> DeepLink? in
            if case .link(let link) = event { return link }
            return nil
        }
        for index in 0..<10 { broadcaster.publish(.link(.fixture(path: "/p/\(index)"))) }
        let delivered = await links.prefixArray(4)
        #expect(delivered.map(\.path) == ["/p/6", "/p/7", "/p/8", "/p/9"])
        #expect(
            warnings.withLock { $0 }.filter { $0.contains("events behind") } == [
                "A subscriber is 4 events behind; dropped the oldest waiting for it (linkBufferLimit): 1 so far."
            ])
        // Far behind: the first drop, then every 1,000th; not one line per drop.
        for index in 0..<5_000 { broadcaster.publish(.link(.fixture(path: "/q/\(index)"))) }
        #expect(warnings.withLock { $0 }.filter { $0.contains("events behind") }.count == 6)
        #expect(warnings.withLock { $0 }.last?.hasSuffix("5000 so far.") == true)
    }
}
