import Foundation
import LinkRelayTesting
import Testing

@_spi(Backend) @testable import LinkRelay

@Suite("Events, revenue and the queue", .timeLimit(.minutes(1)))
struct EventQueueTests {
    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
    let store = InMemoryStore()
    let clock = ManualClock()

    func launch(_ configure: (inout DeepLinkClient.Configuration) -> Void = { _ in }) -> DeepLinkClient {
        makeClient(backend, clock: clock, store: store) {
            $0.retryPolicy = .none
            configure(&$0)
        }
    }

    @Test("events wait for start, then go out in order with a UUID and a timestamp")
    func sentInOrderAfterStart() async throws {
        let client = launch()
        try await client.track("signup", properties: ["plan": "pro"])
        try await client.trackRevenue(amount: Decimal(string: "9.99")!, currency: "eur")
        #expect(await client.queuedEventCount == 2)
        #expect(backend.sentEvents.isEmpty)
        await client.start()
        await client.flushEvents()
        let sent = backend.sentEvents
        #expect(sent.map(\.name) == ["signup", "revenue"])
        #expect(sent[0].properties == ["plan": "pro"])
        #expect(sent[1].revenue == .init(amount: Decimal(string: "9.99")!, currency: "EUR"))
        #expect(sent.allSatisfy { $0.timestamp == clock.currentDate })
        #expect(Set(sent.map(\.id)).count == 2)
        #expect(await client.queuedEventCount == 0)
    }

    @Test("the stored queue is a journal: one line per change (`+`, the id and the JSON), each event encoded once")
    func storedJournal() async throws {
        let client = launch()
        try await client.track("signup", properties: ["plan": "pro"])
        try await client.trackRevenue(amount: 9.5, currency: "eur", properties: ["sku": "A-1", "tags": ["x", 2]])
        try await client.track("share")
        let stored = try #require(try store.data(forKey: "events"))
        let lines = stored.split(separator: 0x0A, omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines.last?.isEmpty == true)
        let events = try lines.dropLast().map { line in
            #expect(line.first == UInt8(ascii: "+"))
            return try JSONDecoder.linkRelay().decode(ConversionEvent.self, from: Data(line.dropFirst(38)))
        }
        #expect(events.map(\.name) == ["signup", "revenue", "share"])
        let encoder = JSONEncoder.linkRelay()
        let expected = try events.reduce(into: Data()) { file, event in
            file.append(UInt8(ascii: "+"))
            file.append(Data((event.id.uuidString + " ").utf8))
            file.append(try encoder.encode(event))
            file.append(0x0A)
        }
        #expect(stored == expected)
        // A restart reads it back, in order.
        await client.shutdown()
        #expect(await launch().queuedEventCount == 3)
    }

    @Test("the queue persists across a restart and is sent in order once the network returns")
    func persistsAcrossRestart() async throws {
        backend.scriptEventSending(.failure(DeepLinkError(.network, "offline")))
        let first = launch()
        await first.start()
        for name in ["a", "b", "c"] { try await first.track(name) }
        await first.flushEvents()
        #expect(await first.queuedEventCount == 3)
        await first.shutdown()

        backend.scriptEventSending(.success(()))
        let second = launch()
        #expect(await second.queuedEventCount == 3)
        await second.start()
        await second.flushEvents()
        let delivered = backend.sentEvents.suffix(3).map(\.name)
        #expect(delivered == ["a", "b", "c"])
        #expect(await second.queuedEventCount == 0)
        // Each event reached the backend once successfully: the UUIDs of the last three are the
        // ones queued by the first launch.
        #expect(Set(backend.sentEvents.suffix(3).map(\.id)).count == 3)
    }

    @Test("a full queue drops the oldest, with a log line for the first drop and every 1,000th")
    func capacity() async throws {
        let logs = LogCollector()
        let client = launch {
            $0.eventQueueCapacity = 3
            $0.logSink = logs.sink
        }
        for index in 1...5 { try await client.track("e\(index)") }
        #expect(await client.queuedEventCount == 3)
        await client.start()
        await client.flushEvents()
        #expect(backend.sentEvents.map(\.name) == ["e3", "e4", "e5"])
        // The first drop is logged, then every 1,000th: not a line per track.
        #expect(
            logs.lines.filter { $0.contains("event queue is full") } == ["The event queue is full (3); dropped the oldest: e1 (1 so far)."])
        let offline = launch {
            $0.eventQueueCapacity = 3
            $0.logSink = logs.sink
        }
        for index in 1...2_003 { try await offline.track("f\(index)") }  // 2,000 drops
        #expect(logs.lines.filter { $0.contains("event queue is full") }.count == 1 + 3)
    }

    @Test("a 4xx drops the event and publishes a failure; a 5xx keeps it queued")
    func fourHundredDropsFiveHundredKeeps() async throws {
        let client = launch()
        let events = client.linkEvents()
        await client.start()
        backend.scriptEventSending(.failure(DeepLinkError(.server(status: 503), "busy")))
        try await client.track("kept")
        await client.flushEvents()
        #expect(await client.queuedEventCount == 1)

        backend.scriptEventSending(.failure(DeepLinkError(.server(status: 404), "Install event not found")))
        await client.flushEvents()
        #expect(await client.queuedEventCount == 0)
        var iterator = events.makeAsyncIterator()
        var failure: DeepLinkError?
        while let event = await iterator.next() {
            if case .failure(let error) = event {
                failure = error
                break
            }
        }
        #expect(failure?.code == .server(status: 404))
    }

    @Test("clearQueuedEvents drops everything unsent")
    func clearQueue() async throws {
        let client = launch()
        try await client.track("x")
        await client.clearQueuedEvents()
        #expect(await client.queuedEventCount == 0)
        let again = launch()
        #expect(await again.queuedEventCount == 0)
    }

    @Test(
        "invalid revenue and names are typed errors",
        arguments: [
            (Decimal(-1), "EUR"), (Decimal(1), "EURO"), (Decimal(1), "E1R"), (Decimal(1), ""), (Decimal.nan, "EUR"),
        ])
    func invalidRevenue(_ amount: Decimal, _ currency: String) async throws {
        let client = launch()
        let error = await #expect(throws: DeepLinkError.self) {
            try await client.trackRevenue(amount: amount, currency: currency)
        }
        #expect(error?.code == .invalidArgument)
        #expect(await client.queuedEventCount == 0)
    }

    @Test("an empty event name is refused")
    func emptyName() async throws {
        let error = await #expect(throws: DeepLinkError.self) { try await launch().track("  ") }
        #expect(error?.code == .invalidArgument)
    }

    @Test("on a backend without event tracking, track does nothing and queues nothing")
    func unsupported() async throws {
        let client = makeClient(LocalBackend(.init(schemes: ["myapp"])), store: store)
        try await client.track("x")
        try await client.trackRevenue(amount: 1, currency: "EUR")
        #expect(await client.queuedEventCount == 0)
        #expect(store.keys.isEmpty)
    }

    @Test("concurrent flushes never send one event twice")
    func noDoubleSends() async throws {
        let client = launch()
        await client.start()
        for index in 0..<20 { try await client.track("e\(index)") }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { await client.flushEvents() } }
        }
        await client.flushEvents()
        let ids = backend.sentEvents.map(\.id)
        #expect(ids.count == 20)
        #expect(Set(ids).count == 20)
        #expect(backend.sentEvents.map(\.name) == (0..<20).map { "e\($0)" })
    }

    @Test("the session's campaign and the external user id reach the backend")
    func sessionAttributionAndUser() async throws {
        let client = launch()
        await client.setExternalUserID("user-7")
        let links = client.deepLinks()
        client.handle(url("myapp://promo?campaign_id=spring&jid=j-1"))
        _ = await links.prefixArray(1)
        await client.start()
        try await client.track("purchase")
        await client.flushEvents()
        let context = try #require(backend.contexts.last)
        #expect(context.sessionAttribution == Campaign(id: "spring", journeyID: "j-1"))
        #expect(context.externalUserID == "user-7")
    }
}

@Suite("Retries", .timeLimit(.minutes(1)))
struct RetryTests {
    let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
    let clock = ManualClock()
    let link = url("myapp://retry")

    func client(_ policy: RetryPolicy = RetryPolicy(jitter: 0)) -> DeepLinkClient {
        makeClient(backend, clock: clock) { $0.retryPolicy = policy }
    }

    @Test("a 5xx is retried with exponential backoff on the clock, then falls back")
    func backoff() async throws {
        let failure = DeepLinkError(.server(status: 503), "busy")
        backend.script(link, .failure(failure))
        let client = client()
        let links = client.deepLinks()
        client.handle(link)
        await clock.waitForSleepers(count: 2)  // backoff 0.5 s and the 3 s deadline
        #expect(backend.resolvedURLs.count == 1)
        clock.advance(by: 0.49)
        #expect(backend.resolvedURLs.count == 1)
        clock.advance(by: 0.01)
        await clock.waitForSleepers(count: 2)  // backoff 1 s and the deadline
        #expect(backend.resolvedURLs.count == 2)
        clock.advance(by: 1)
        let delivered = try #require(await links.prefixArray(1).first)
        #expect(backend.resolvedURLs.count == 3)
        #expect(delivered.resolution == .local(.failed(failure)))
        #expect(clock.uptime == 1.5)
    }

    @Test("Retry-After is honoured instead of the backoff")
    func retryAfter() async throws {
        backend.script(link, .failure(DeepLinkError(.server(status: 429), "slow down", retryAfter: 2)))
        let client = client(RetryPolicy(maximumAttempts: 2, jitter: 0))
        let task = Task { try await client.resolve(link) }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 1.9)
        #expect(backend.resolvedURLs.count == 1)
        clock.advance(by: 0.1)
        let resolved = try await task.value
        #expect(backend.resolvedURLs.count == 2)
        #expect(resolved.resolution == .local(.failed(DeepLinkError(.server(status: 429), "slow down"))))
    }

    @Test("a Retry-After longer than the cap ends the retries")
    func retryAfterCapped() async throws {
        backend.script(link, .failure(DeepLinkError(.server(status: 503), "maintenance", retryAfter: 3600)))
        let resolved = try await client().resolve(link)
        #expect(backend.resolvedURLs.count == 1)
        #expect(resolved.resolution != .server)
    }

    @Test("a 4xx other than 429 is never retried", arguments: [400, 401, 403, 404, 422])
    func fourHundredNotRetried(_ status: Int) async throws {
        backend.script(link, .failure(DeepLinkError(.server(status: status), "no")))
        _ = try await client().resolve(link)
        #expect(backend.resolvedURLs.count == 1)
    }

    @Test(
        "decoding errors and unsupported features are not retried",
        arguments: [
            DeepLinkError.Code.decoding, .unsupported, .invalidURL, .rejected, .responseTooLarge,
        ])
    func finalErrorsNotRetried(_ code: DeepLinkError.Code) async throws {
        backend.script(link, .failure(DeepLinkError(code, "final")))
        _ = try await client().resolve(link)
        #expect(backend.resolvedURLs.count == 1)
    }

    @Test("retries stop at the resolution deadline")
    func retriesStopAtDeadline() async throws {
        backend.script(link, .failure(DeepLinkError(.network, "offline")))
        let client = client(RetryPolicy(maximumAttempts: 10, initialBackoff: 2, multiplier: 1, jitter: 0))
        let links = client.deepLinks()
        client.handle(link)
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 2)
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 1)  // the 3 s deadline passes during the second backoff
        #expect(await links.prefixArray(1).first?.resolution == .local(.timedOut))
        #expect(backend.resolvedURLs.count == 2)
    }

    @Test(
        "backoff grows, is capped, and jitter only shortens it",
        arguments: [
            (1, 0.0, 0.5), (2, 0.0, 1.0), (3, 0.0, 2.0), (1, 0.999, 0.4001),
        ])
    func backoffFormula(_ attempt: Int, _ random: Double, _ expected: TimeInterval) throws {
        let policy = RetryPolicy(maximumAttempts: 5, initialBackoff: 0.5, multiplier: 2, maximumBackoff: 30, jitter: 0.2)
        let delay = try #require(policy.delay(after: attempt, error: DeepLinkError(.network, "x"), random: random))
        #expect(abs(delay - expected) < 0.0001)
        let capped = RetryPolicy(maximumAttempts: 20, initialBackoff: 1, maximumBackoff: 5, jitter: 0)
        #expect(capped.delay(after: 10, error: DeepLinkError(.network, "x"), random: 0) == 5)
        #expect(policy.delay(after: 5, error: DeepLinkError(.network, "x"), random: 0) == nil)
    }

    @Test(
        "Retry-After headers are read as seconds or an HTTP date",
        arguments: [
            ("120", 120.0), ("0", 0.0), ("Thu, 01 Jan 1970 00:01:40 GMT", 40.0), ("soon", nil), ("-5", nil),
        ])
    func retryAfterHeader(_ value: String, _ expected: TimeInterval?) {
        let response = HTTPResponse(status: 503, headers: ["Retry-After": value])
        #expect(response.retryAfter(now: Date(timeIntervalSince1970: 60)) == expected)
        let error = response.serverError("busy", backend: "x", now: Date(timeIntervalSince1970: 60))
        #expect(error.code == .server(status: 503))
        #expect(error.retryAfter == expected)
    }
}

@Suite("Backend events and session attribution", .timeLimit(.minutes(1)))
struct BackendEventTests {
    @Test("events a backend enqueues go through the persisted queue, in order, once started")
    func backendEnqueuedEvents() async throws {
        let backend = EnqueuingBackend()
        let client = makeClient(backend)
        let links = client.deepLinks()
        client.handle(url("myapp://one"))
        client.handle(url("myapp://two"))
        _ = await links.prefixArray(2)
        await client.start()
        await backend.waiters.wait(until: 2) { [backend] in backend.sentNames.count }
        #expect(backend.sentNames == ["opened /one", "opened /two"])
        await client.flushEvents()
        #expect(await client.queuedEventCount == 0)
    }

    @Test("the link that opens the app defines the session's campaign; one without a campaign ends it")
    func sessionAttributionFollowsLinks() async throws {
        let backend = InMemoryBackend(schemes: ["myapp"], hosts: [])
        let client = makeClient(backend)
        let links = client.deepLinks()
        client.handle(url("myapp://promo?k=SUMMER"))
        _ = await links.prefixArray(1)
        #expect(await client.sessionAttribution?.key == "SUMMER")
        client.handle(url("myapp://home"))
        _ = await links.prefixArray(1)
        #expect(await client.sessionAttribution == nil)
    }
}

/// Reports each delivered link as an event of its own, and records what it sends.
final class EnqueuingBackend: EventTrackingBackend, LinkEventObservingBackend {
    let waiters = ConditionWaiters()
    private let sent = Locked<[String]>([])
    var sentNames: [String] { sent.withLock { $0 } }
    var id: BackendID { "enqueuing" }
    func canHandle(_ url: URL) -> Bool { url.scheme == "myapp" }
    func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
        link.deepLink(provider: id, resolution: .server)
    }
    func matchInstall(context: BackendContext) async throws -> InstallMatch { .organic() }
    func didPublish(_ event: DeepLinkEvent, at date: Date, context: BackendContext) async {
        if case .link(let link) = event {
            await context.enqueueEvent(ConversionEvent(name: "opened \(link.path)", timestamp: context.clock.currentDate))
        }
    }
    func send(_ event: ConversionEvent, context: BackendContext) async throws {
        let count = sent.withLock {
            $0.append(event.name); return $0.count
        }
        waiters.update(count)
    }
}
