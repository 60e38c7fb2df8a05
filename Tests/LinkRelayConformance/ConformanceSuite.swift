import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting

/// The behaviours every adapter must show, run against the provider's emulation.
public enum ConformanceCheck: String, CaseIterable, Sendable, CustomStringConvertible {
    case claimsOwnLinksOnly
    case organicInstall
    case attributedInstallDeliversDeferredLink
    case unknownLinkFallsBackWithReason
    case serverErrorRetriedThenFallback
    case clientErrorNotRetried
    case slowServerGivesLocalLinkAtDeadline
    case malformedBodyIsTypedError
    case oversizedBodyIsTypedError
    case cancellationStopsTheRequest
    case noAPIKeyInErrorsOrLogs

    public var description: String { rawValue }
}

/// Runs ``ConformanceCheck``s for one adapter. Each run builds a new world.
public struct ConformanceSuite: Sendable {
    let fixture: any ConformanceFixture

    public init(_ fixture: any ConformanceFixture) {
        self.fixture = fixture
    }

    /// Runs `check`; throws ``ConformanceFailure`` saying what did not hold.
    public func run(_ check: ConformanceCheck) async throws {
        let clock = ManualClock()
        let simulator = ProviderSimulator(clock: clock)
        let world = try fixture.makeWorld(simulator: simulator)
        let logs = Locked<[String]>([])
        var configuration = DeepLinkClient.Configuration()
        configuration.clock = clock
        configuration.transport = simulator
        configuration.store = InMemoryStore()
        configuration.deviceInfo = StaticDeviceInfo(world.device)
        configuration.retryPolicy = RetryPolicy(jitter: 0)
        configuration.logSink = LogSink(minimumLevel: .debug) { record in logs.withLock { $0.append(record.message) } }
        let client = DeepLinkClient(backend: world.backend, configuration: configuration)
        let context = Context(check: check, name: fixture.name, world: world, simulator: simulator, clock: clock, client: client, logs: logs)
        defer { Task { await client.shutdown() } }
        try await context.run()
    }
}

private struct Context {
    let check: ConformanceCheck
    let name: String
    let world: ConformanceWorld
    let simulator: ProviderSimulator
    let clock: ManualClock
    let client: DeepLinkClient
    let logs: Locked<[String]>

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        guard condition else { throw ConformanceFailure(description: "\(name) · \(check): \(message())") }
    }

    /// Starts the client, shuts it down, and returns everything it published.
    func eventsOfFirstLaunch() async -> [DeepLinkEvent] {
        let events = client.events()
        await client.start()
        await client.shutdown()
        var received: [DeepLinkEvent] = []
        for await event in events { received.append(event) }
        return received
    }

    func run() async throws {
        switch check {
        case .claimsOwnLinksOnly:
            for link in world.ownLinks { try expect(world.backend.canHandle(link), "does not claim its own link \(link)") }
            for link in world.foreignLinks { try expect(!world.backend.canHandle(link), "claims a foreign link \(link)") }

        case .organicInstall:
            let events = await eventsOfFirstLaunch()
            guard case .organic(let attribution) = await client.installOutcome() else {
                throw ConformanceFailure(description: "\(name) · \(check): the outcome is \(await client.installOutcome())")
            }
            try expect(attribution?.isAttributed != true, "an organic install is reported as attributed")
            try expect(!events.contains { $0.link != nil }, "an organic install delivered a link")

        case .attributedInstallDeliversDeferredLink:
            let expected = world.scriptAttributedInstall()
            let events = await eventsOfFirstLaunch()
            guard case .attributed(let link, let attribution) = await client.installOutcome() else {
                throw ConformanceFailure(description: "\(name) · \(check): the outcome is \(await client.installOutcome())")
            }
            try expect(attribution.isAttributed, "the attribution is not marked attributed")
            let delivered = events.compactMap(\.link)
            try expect(delivered == [link], "the deferred link was not delivered exactly once: \(delivered)")
            try expect(link.origin == .deferred, "the deferred link's origin is \(link.origin)")
            if let path = expected.pathSegments { try expect(link.pathSegments == path, "path \(link.pathSegments), expected \(path)") }
            for (key, value) in expected.parameters {
                try expect(link.parameters[key] == value, "parameter \(key) is \(link.parameters[key] ?? "missing"), expected \(value)")
            }
            if let code = expected.shortCode { try expect(link.shortCode == code, "short code \(link.shortCode ?? "none"), expected \(code)") }

        case .unknownLinkFallsBackWithReason:
            let link = try await client.resolve(world.unknownLink)
            try expect(link.resolution == .local(.notFound), "an unknown link resolved as \(link.resolution)")
            try expect(link.url == world.unknownLink, "the fallback link has another URL")

        case .serverErrorRetriedThenFallback:
            simulator.setFault(.status(503, body: #"{"error":"unavailable"}"#), method: world.resolveRoute.method, path: world.resolveRoute.path)
            let links = client.deepLinks()
            client.handle(world.knownLink)
            await clock.waitForSleepers(count: 2)  // first backoff and the deadline
            clock.advance(by: 0.5)
            await clock.waitForSleepers(count: 2)  // second backoff and the deadline
            clock.advance(by: 1)
            var iterator = links.makeAsyncIterator()
            let link = await iterator.next()
            let attempts = simulator.requestCount(path: world.resolveRoute.path)
            try expect(attempts == 3, "a 503 was tried \(attempts) times, expected 3")
            guard case .local(.failed(let error))? = link?.resolution else {
                throw ConformanceFailure(description: "\(name) · \(check): resolution \(String(describing: link?.resolution))")
            }
            try expect(error.code == .server(status: 503), "the fallback reason is \(error.code)")

        case .clientErrorNotRetried:
            simulator.setFault(.status(400, body: #"{"error":"bad request"}"#), method: world.resolveRoute.method, path: world.resolveRoute.path)
            let link = try await client.resolve(world.knownLink)
            let attempts = simulator.requestCount(path: world.resolveRoute.path)
            try expect(attempts == 1, "a 400 was tried \(attempts) times, expected 1")
            try expect(link.resolution != .server, "a 400 resolved as server")

        case .slowServerGivesLocalLinkAtDeadline:
            simulator.setFault(.delay(10), method: world.resolveRoute.method, path: world.resolveRoute.path)
            let links = client.deepLinks()
            client.handle(world.knownLink)
            await clock.waitForSleepers(count: 2)  // the slow server and the deadline
            clock.advance(by: 3)
            var iterator = links.makeAsyncIterator()
            let link = await iterator.next()
            try expect(link?.resolution == .local(.timedOut), "resolution \(String(describing: link?.resolution))")
            try expect(clock.uptime == 3, "delivered at \(clock.uptime) s, expected at the 3 s deadline")

        case .malformedBodyIsTypedError:
            simulator.setFault(.malformedBody, method: world.installRoute.method, path: world.installRoute.path)
            await client.start()
            guard case .failed(let error) = await client.installOutcome() else {
                throw ConformanceFailure(description: "\(name) · \(check): the outcome is \(await client.installOutcome())")
            }
            try expect(error.code == .decoding, "a malformed body gave \(error.code)")
            simulator.setFault(.malformedBody, method: world.resolveRoute.method, path: world.resolveRoute.path)
            let link = try await client.resolve(world.knownLink)
            guard case .local(.failed(let resolveError)) = link.resolution else {
                throw ConformanceFailure(description: "\(name) · \(check): a malformed resolve gave \(link.resolution)")
            }
            try expect(resolveError.code == .decoding, "a malformed resolve gave \(resolveError.code)")

        case .oversizedBodyIsTypedError:
            simulator.setFault(.oversizedBody(2 << 20), method: world.installRoute.method, path: world.installRoute.path)
            await client.start()
            guard case .failed(let error) = await client.installOutcome() else {
                throw ConformanceFailure(description: "\(name) · \(check): the outcome is \(await client.installOutcome())")
            }
            try expect(error.code == .responseTooLarge, "an oversized body gave \(error.code)")

        case .cancellationStopsTheRequest:
            simulator.setFault(.delay(100), method: world.resolveRoute.method, path: world.resolveRoute.path)
            let task = Task { try await client.resolve(world.knownLink) }
            await clock.waitForSleepers(count: 2)
            task.cancel()
            let result = await task.result
            guard case .failure(let error) = result, error is CancellationError else {
                throw ConformanceFailure(description: "\(name) · \(check): a cancelled resolve gave \(result)")
            }
            try expect(clock.sleeperCount == 0, "work still waits after cancellation (\(clock.sleeperCount) sleepers)")

        case .noAPIKeyInErrorsOrLogs:
            let key = world.apiKey
            let echo = #"{"error":"invalid key \#(key)","message":"key \#(key) rejected"}"#
            simulator.setFault(.status(401, body: echo), path: world.installRoute.path)
            simulator.setFault(.status(401, body: echo), path: world.resolveRoute.path)
            await client.start()
            let outcome = await client.installOutcome()
            let link = try await client.resolve(world.knownLink)
            let texts = ["\(outcome)", "\(link.resolution)", "\(world.backend)"] + logs.withLock { $0 }
            for text in texts { try expect(!text.contains(key), "the API key appears in: \(text)") }
        }
    }
}
