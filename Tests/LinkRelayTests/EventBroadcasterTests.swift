import Foundation
import LinkRelayTesting
import Testing

@_spi(Backend) @testable import LinkRelay

@Suite("LinkEventBroadcaster", .timeLimit(.minutes(1)))
struct EventBroadcasterTests {
    func link(_ path: String) -> DeepLinkEvent { .link(.fixture(path: path)) }

    @Test("events held while nobody listens are bounded; the oldest go, with a log line each")
    func heldEventsAreBounded() async {
        let logs = LogCollector()
        let broadcaster = LinkEventBroadcaster(heldLimit: 2, logger: LinkRelayLogger(sink: logs.sink))
        for index in 1...4 { broadcaster.publish(link("/\(index)")) }
        #expect(broadcaster.heldCount == 2)
        let received = await broadcaster.subscribe { $0.link?.path }.prefixArray(2)
        #expect(received == ["/3", "/4"])
        #expect(logs.lines.filter { $0.contains("dropped the oldest") }.count == 2)
    }

    @Test("a replayable event is handed to every new subscriber, once")
    func replayableEventIsReplayed() async {
        let broadcaster = LinkEventBroadcaster(heldLimit: 8, logger: .silent)
        let outcome = DeepLinkEvent.install(.organic(nil))
        broadcaster.publish(outcome, replayable: true)
        broadcaster.publish(link("/a"))
        // The first subscriber gets the held events in order, the outcome not twice.
        #expect(await broadcaster.subscribe { $0 }.prefixArray(2) == [outcome, link("/a")])
        // Later subscribers get the outcome first.
        let later = broadcaster.subscribe { $0 }
        broadcaster.publish(link("/b"))
        #expect(await later.prefixArray(2) == [outcome, link("/b")])
    }

    @Test("a filtered subscription skips other events")
    func filteredSubscription() async {
        let broadcaster = LinkEventBroadcaster(heldLimit: 8, logger: .silent)
        let links = broadcaster.subscribe { $0.link?.path }
        broadcaster.publish(.failure(DeepLinkError(.network, "x")))
        broadcaster.publish(link("/only"))
        #expect(await links.prefixArray(1) == ["/only"])
    }

    @Test("after finishAll, subscriptions end at once and publishing does nothing")
    func finishAllEndsEverything() async {
        let broadcaster = LinkEventBroadcaster(heldLimit: 8, logger: .silent)
        let stream = broadcaster.subscribe { $0 }
        broadcaster.finishAll()
        broadcaster.publish(link("/late"))
        #expect(await stream.prefixArray(1).isEmpty)
        #expect(await broadcaster.subscribe { $0 }.prefixArray(1).isEmpty)
        #expect(broadcaster.subscriberCount == 0)
        #expect(broadcaster.heldCount == 0)
    }
}

@Suite("Redaction and logging")
struct RedactionTests {
    @Test(
        "known secrets are removed, raw and percent-encoded",
        arguments: [
            ("key sk_live_ABCD1234 failed", "key [redacted] failed"),
            ("https://x.com/?k=a%2Bb%2Fc%3D", "https://x.com/?k=[redacted]"),
            ("nothing secret here", "nothing secret here"),
        ])
    func knownSecrets(_ input: String, _ expected: String) {
        let redactor = Redactor(secrets: ["sk_live_ABCD1234", "a+b/c="])
        #expect(redactor.redact(input) == expected)
    }

    @Test(
        "secret-named values are removed without knowing the secret",
        arguments: [
            ("Authorization: Bearer abc.def.ghi", "Authorization: Bearer [redacted]"),
            ("GET /x?api_key=zzz&page=2", "GET /x?api_key=[redacted]&page=2"),
            (#"{"private_key":"pk_123","n":1}"#, #"{"private_key":"[redacted]","n":1}"#),
            ("apiKey: 12345", "apiKey: [redacted]"),
            ("tokenize my_token=keep", "tokenize my_token=keep"),
        ])
    func namedSecrets(_ input: String, _ expected: String) {
        #expect(Redactor(secrets: []).redact(input) == expected)
    }

    @Test("very short values are not treated as secrets")
    func shortValuesIgnored() {
        #expect(Redactor(secrets: ["a", ""]).redact("a banana") == "a banana")
    }

    @Test("the logger writes redacted lines at or above its level, and builds nothing otherwise")
    func loggerLevelsAndRedaction() {
        let logs = LogCollector()
        let logger = LinkRelayLogger(sink: LogSink(minimumLevel: .info) { _ in }, secrets: ["SECRET99"])
        var built = false
        logger.debug(
            {
                built = true; return "x"
            }())
        #expect(!built)
        let collecting = LinkRelayLogger(sink: logs.sink, secrets: ["SECRET99"])
        collecting.warning("key SECRET99 in use")
        #expect(logs.lines == ["key [redacted] in use"])
    }

    @Test("the silent sink writes nothing")
    func silentSink() {
        #expect(!LogSink.silent.accepts(.error))
    }
}

@Suite("Model")
struct ModelTests {
    @Test("JSONValue round-trips every kind of value")
    func jsonRoundTrip() throws {
        let value: JSONValue = ["s": "x", "i": 42, "d": 9.5, "b": true, "n": nil, "a": [1, "two"], "o": ["k": false]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"big":12345678901,"f":1.25,"t":true}"#.utf8))
        #expect(decoded == ["big": .int(12_345_678_901), "f": .double(1.25), "t": .bool(true)])
        #expect(JSONValue.int(3).scalarDescription == "3")
        #expect(JSONValue.array([]).scalarDescription == nil)
    }

    @Test("DeepLink, events and outcomes round-trip through Codable")
    func modelRoundTrip() throws {
        let link = DeepLink.fixture(
            path: "/p/1", destination: URL(string: "myapp://p/1"), parameters: ["a": "b"],
            campaign: Campaign(id: "c", key: "k"), metadata: ["raw": [1, 2]])
        let attribution = InstallAttribution(
            installID: "i-1", isAttributed: true, confidence: .init(score: 82), matchedFactors: ["ip"],
            method: .fingerprint, clickedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let error = DeepLinkError(.server(status: 503), "down", backend: "x", url: URL(string: "myapp://x"))
        let events: [DeepLinkEvent] = [
            .link(link), .install(.attributed(link, attribution)), .install(.organic(nil)), .install(.timedOut),
            .install(.failed(error)), .authenticationRequired(link), .pendingLinkDropped(link, .expired),
            .failure(error), .link(.fixture(resolution: .local(.failed(error)))),
        ]
        let data = try JSONEncoder().encode(events)
        #expect(try JSONDecoder().decode([DeepLinkEvent].self, from: data) == events)
    }

    @Test(
        "confidence is normalised to 0...100 with a level",
        arguments: [
            (InstallAttribution.Confidence(score: 150), 100, InstallAttribution.Confidence.Level.high),
            (.init(score: -5), 0, .low), (.init(score: 70), 70, .high), (.init(score: 69), 69, .medium),
            (.init(score: 40), 40, .medium), (.init(score: 39), 39, .low), (.init(fraction: 0.555), 56, .medium),
            (.init(fraction: .nan), 0, .low), (.init(level: .high), 85, .high), (.init(score: 30, level: .high), 30, .high),
        ])
    func confidence(_ confidence: InstallAttribution.Confidence, _ score: Int, _ level: InstallAttribution.Confidence.Level) {
        #expect(confidence.score == score)
        #expect(confidence.level == level)
    }

    @Test("DeepLinkError compares by code, message, backend, status and URL, and keeps the status of server codes")
    func errorEquality() {
        struct Cause: Error {}
        let a = DeepLinkError(.server(status: 502), "bad gateway", backend: "x", underlying: Cause())
        let b = DeepLinkError(.server(status: 502), "bad gateway", backend: "x")
        #expect(a == b)
        #expect(a.status == 502)
        #expect(a.code != .server(status: 503))
        #expect(a.code.serverStatus == 502)
        #expect(a.description == "DeepLinkError.server(502) [x]: bad gateway")
        #expect(DeepLinkError.wrapping(CancellationError(), as: .network, "x").code == .cancelled)
        #expect(DeepLinkError.wrapping(Cause(), as: .decoding, "unreadable").code == .decoding)
    }

    @Test("setPathSegments keeps path and segments together")
    func pathSegments() {
        var link = DeepLink.fixture(path: "/a")
        link.setPathSegments(["b", "c"])
        #expect(link.path == "/b/c")
        #expect(link.pathSegments == ["b", "c"])
    }
}

@Suite("Testing doubles", .timeLimit(.minutes(1)))
struct TestingDoublesTests {
    @Test("ManualClock wakes sleepers in deadline order only when advanced past them")
    func manualClockOrdering() async throws {
        let clock = ManualClock()
        let order = Locked<[Int]>([])
        let first = Task {
            try await clock.sleep(for: 5)
            order.withLock { $0.append(5) }
        }
        let second = Task {
            try await clock.sleep(for: 2)
            order.withLock { $0.append(2) }
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: 1)
        #expect(clock.sleeperCount == 2)
        clock.advance(by: 1)
        try await second.value
        #expect(order.withLock { $0 } == [2])
        clock.advance(by: 3)
        try await first.value
        #expect(order.withLock { $0 } == [2, 5])
        #expect(clock.uptime == 5)
        #expect(clock.currentDate == Date(timeIntervalSince1970: 1_800_000_005))
    }

    @Test("ManualClock sleep ends with CancellationError when cancelled, before or during")
    func manualClockCancellation() async {
        let clock = ManualClock()
        let during = Task { try await clock.sleep(for: 10) }
        await clock.waitForSleepers(count: 1)
        during.cancel()
        await #expect(throws: CancellationError.self) { try await during.value }
        #expect(clock.sleeperCount == 0)
        let before = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: 10)
        }
        await #expect(throws: CancellationError.self) { try await before.value }
    }

    @Test("StubTransport answers by method and path, in turn, and records requests")
    func stubTransport() async throws {
        let transport = StubTransport()
        transport.stub(.post, "/event", [.status(503), .json(#"{"ok":true}"#)])
        transport.stub(.get, "/down", .failure(DeepLinkError(.network, "offline")))
        let post = HTTPRequest(method: .post, url: url("https://x.com/event"), body: Data("1".utf8))
        #expect(try await transport.send(post).status == 503)
        #expect(try await transport.send(post).status == 200)
        let third = try await transport.send(post)
        #expect(third.status == 200)
        #expect(third.headers["content-type"] == "application/json")
        #expect(try await transport.send(HTTPRequest(method: .get, url: url("https://x.com/event"))).status == 404)
        await #expect(throws: DeepLinkError.self) {
            try await transport.send(HTTPRequest(method: .get, url: url("https://x.com/down")))
        }
        #expect(transport.requests.count == 5)
        #expect(transport.requests.first?.body == Data("1".utf8))
    }

    @Test("StubTransport delays run on its clock")
    func stubTransportDelay() async throws {
        let clock = ManualClock()
        let transport = StubTransport(clock: clock)
        transport.stub(.get, "/slow", .status(200), delay: 4)
        let request = Task { try await transport.send(HTTPRequest(method: .get, url: url("https://x.com/slow"))) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 4)
        #expect(try await request.value.status == 200)
    }

    @Test("HTTPHeaders compare names case-insensitively and replace on set")
    func headers() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain"]
        #expect(headers["content-type"] == "text/plain")
        headers["CONTENT-TYPE"] = "application/json"
        #expect(headers.fields.count == 1)
        #expect(headers["Content-Type"] == "application/json")
        headers["content-type"] = nil
        #expect(headers.fields.isEmpty)
    }

    @Test("DeepLink.fixture builds consistent universal and custom-scheme links")
    func fixture() {
        let universal = DeepLink.fixture(path: "/products/42", parameters: ["b": "2", "a": "1"])
        #expect(universal.url.absoluteString == "https://links.example.com/products/42?a=1&b=2")
        #expect(universal.pathSegments == ["products", "42"])
        let custom = DeepLink.fixture(path: "products/42", origin: .customScheme)
        #expect(custom.url.absoluteString == "myapp://products/42")
        #expect(custom.path == "/products/42")
    }
}

@Suite("ManualClock cancellation", .timeLimit(.minutes(1)))
struct ManualClockWaitTests {
    @Test("waitForSleepers returns when its task is cancelled, so a time limit can end a test")
    func waitForSleepersIsCancellable() async {
        let clock = ManualClock()
        let waiter = Task { await clock.waitForSleepers(count: 1) }
        waiter.cancel()
        await waiter.value
        #expect(clock.sleeperCount == 0)
    }
}
