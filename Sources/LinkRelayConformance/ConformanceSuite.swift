import Foundation
@_spi(Backend) import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting

/// The behaviours every adapter must show, run against the provider's emulation.
public enum ConformanceCheck: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `canHandle` is true for every one of the world's own links and false for every foreign one.
    case claimsOwnLinksOnly
    /// A link handed over before anyone listens or `start()` runs is delivered, resolved by the
    /// server, with the expected path.
    case coldStartLinkIsDelivered
    /// One tap forwarded twice (the scene and the app delegate) is delivered once; the next link
    /// still comes through.
    case sameLinkTwiceIsDeliveredOnce
    /// A matched install delivers its deferred link on the first launch and never again on the next.
    case deferredLinkOnceAcrossLaunches
    /// An install without a click is organic and delivers no link.
    case organicInstall
    /// An install after a click is attributed and delivers the deferred link exactly once, with the
    /// expected path, parameters and short code.
    case attributedInstallDeliversDeferredLink
    /// A link the provider does not know is delivered locally, with `.notFound` as the reason.
    case unknownLinkFallsBackWithReason
    /// A 503 is tried three times with backoff, then the link is delivered locally with the error.
    case serverErrorRetriedThenFallback
    /// A 400 is tried once and not retried.
    case clientErrorNotRetried
    /// A server slower than the 3-second deadline gives a local link at the deadline, not later.
    case slowServerGivesLocalLinkAtDeadline
    /// A malformed answer to the install match and to the resolve is a `.decoding` error.
    case malformedBodyIsTypedError
    /// An answer over the size limit is a `.responseTooLarge` error.
    case oversizedBodyIsTypedError
    /// Cancelling a resolve ends it with `CancellationError` and leaves nothing waiting.
    case cancellationStopsTheRequest
    /// A server that echoes the API key in its 401 leaves it in no outcome, error, log line or
    /// description of the backend.
    case noAPIKeyInErrorsOrLogs
    /// Damaged answers (truncated, wrong types, `null`s, nested 10,000 deep) give typed errors or
    /// cautious results, never a crash or an attribution.
    case hostileResponsesAreTypedErrors
    /// A resolve answer whose URLs are `javascript:`, `http:`, `file:` or `data:` is refused with
    /// `.rejected`.
    case destinationsOutsideTheAllowlistAreRefused

    public var description: String { rawValue }
}

/// Runs ``ConformanceCheck``s for one adapter. Each run builds a new world.
public struct ConformanceSuite: Sendable {
    let fixture: any ConformanceFixture

    /// A suite for the adapter `fixture` describes.
    public init(_ fixture: any ConformanceFixture) {
        self.fixture = fixture
    }

    /// Runs `check`; throws ``ConformanceFailure`` saying what did not hold.
    public func run(_ check: ConformanceCheck) async throws {
        let clock = ManualClock()
        let simulator = ProviderSimulator(clock: clock)
        let world = try fixture.makeWorld(simulator: simulator)
        let logs = Locked<[String]>([])
        let mutations = MutatingTransport(base: simulator)
        var configuration = DeepLinkClient.Configuration()
        configuration.clock = clock
        configuration.transport = mutations
        configuration.store = InMemoryStore()
        configuration.deviceInfo = StaticDeviceInfo(world.device)
        configuration.retryPolicy = RetryPolicy(jitter: 0)
        configuration.logSink = LogSink(minimumLevel: .debug) { record in logs.withLock { $0.append(record.message) } }
        let client = DeepLinkClient(backend: world.backend, configuration: configuration)
        let context = Context(
            check: check, name: fixture.name, world: world, simulator: simulator, mutations: mutations, clock: clock, client: client,
            logs: logs, nextLaunch: { [configuration] in DeepLinkClient(backend: world.backend, configuration: configuration) })
        defer { Task { await client.shutdown() } }
        try await context.run()
    }
}

private struct Context {
    let check: ConformanceCheck
    let name: String
    let world: ConformanceWorld
    let simulator: ProviderSimulator
    let mutations: MutatingTransport
    let clock: ManualClock
    let client: DeepLinkClient
    let logs: Locked<[String]>
    /// A client for the app's next launch: the same backend, store and provider.
    let nextLaunch: @Sendable () -> DeepLinkClient

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        guard condition else { throw ConformanceFailure(description: "\(name) · \(check): \(message())") }
    }

    /// Starts the client, shuts it down, and returns everything it published.
    func eventsOfFirstLaunch() async -> [DeepLinkEvent] {
        let events = client.linkEvents()
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

        case .coldStartLinkIsDelivered:
            // The link that opened the app, handed over before anybody listens or start() runs.
            client.handle(world.knownLink)
            var iterator = client.deepLinks().makeAsyncIterator()
            let link = await iterator.next()
            try expect(link?.url == world.knownLink, "the cold-start link was not delivered: \(String(describing: link))")
            try expect(link?.resolution == .server, "the cold-start link resolved as \(String(describing: link?.resolution))")
            try expect(
                link?.pathSegments == world.knownLinkPath, "path \(String(describing: link?.pathSegments)), expected \(world.knownLinkPath)"
            )

        case .sameLinkTwiceIsDeliveredOnce:
            // The AppDelegate and the SceneDelegate both forward one tap; then another link.
            let links = client.deepLinks()
            client.handle(world.knownLink)
            client.handle(world.knownLink)
            client.handle(world.unknownLink)
            var iterator = links.makeAsyncIterator()
            let first = await iterator.next()
            let second = await iterator.next()
            try expect(
                first?.url == world.knownLink && second?.url == world.unknownLink,
                "one tap forwarded twice gave \([first, second].map { $0?.url.absoluteString ?? "nothing" })")

        case .deferredLinkOnceAcrossLaunches:
            _ = try world.scriptAttributedInstall()
            let first = await eventsOfFirstLaunch()
            try expect(first.compactMap(\.link).count == 1, "the first launch delivered \(first.compactMap(\.link).count) links")
            let relaunch = nextLaunch()
            let events = relaunch.linkEvents()
            await relaunch.start()
            let outcome = await relaunch.installOutcome()
            await relaunch.shutdown()
            var again: [DeepLinkEvent] = []
            for await event in events { again.append(event) }
            try expect(outcome.isAttributed, "the next launch's outcome is \(outcome)")
            try expect(!again.contains { $0.link != nil }, "the next launch delivered the deferred link again")

        case .organicInstall:
            let events = await eventsOfFirstLaunch()
            guard case .organic(let attribution) = await client.installOutcome() else {
                throw ConformanceFailure(description: "\(name) · \(check): the outcome is \(await client.installOutcome())")
            }
            try expect(attribution?.isAttributed != true, "an organic install is reported as attributed")
            try expect(!events.contains { $0.link != nil }, "an organic install delivered a link")

        case .attributedInstallDeliversDeferredLink:
            let expected = try world.scriptAttributedInstall()
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
            if let code = expected.shortCode {
                try expect(link.shortCode == code, "short code \(link.shortCode ?? "none"), expected \(code)")
            }

        case .unknownLinkFallsBackWithReason:
            let link = try await client.resolve(world.unknownLink)
            try expect(link.resolution == .local(.notFound), "an unknown link resolved as \(link.resolution)")
            try expect(link.url == world.unknownLink, "the fallback link has another URL")

        case .serverErrorRetriedThenFallback:
            simulator.setFault(
                .status(503, body: #"{"error":"unavailable"}"#), method: world.resolveRoute.method, path: world.resolveRoute.path)
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
            simulator.setFault(
                .status(400, body: #"{"error":"bad request"}"#), method: world.resolveRoute.method, path: world.resolveRoute.path)
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

        case .hostileResponsesAreTypedErrors:
            try await hostileResponses()

        case .destinationsOutsideTheAllowlistAreRefused:
            try await refusedDestinations()
        }
    }

    /// The provider's real answers to the install match and the resolve, damaged: truncated,
    /// numbers where strings belong, `null` for every value, nested 10,000 deep. Each gives a
    /// typed error or a cautious result (no attribution from damaged data), never a crash.
    private func hostileResponses() async throws {
        for damage in ResponseDamage.allCases {
            mutations.mutate(path: world.installRoute.path, with: damage.apply)
            mutations.mutate(path: world.resolveRoute.path, with: damage.apply)
            _ = try world.scriptAttributedInstall()
            let install = try await installMatch()
            switch install {
            case .failure(let error):
                try expect(damage.allowedErrors.contains(error.code), "\(damage): the install match failed with \(error.code)")
            case .success(let match):
                try expect(damage.mayGiveAResult, "\(damage): the install match gave a result: \(match)")
                try expect(match.link == nil, "\(damage): the install match delivered a link from damaged data: \(match)")
            }
            let link = try await client.resolve(world.knownLink)
            switch link.resolution {
            case .local(.failed(let error)):
                try expect(damage.allowedErrors.contains(error.code), "\(damage): the resolve failed with \(error.code)")
            case .local(.notFound):
                try expect(damage.mayGiveAResult, "\(damage): the resolve gave not-found")
            default:
                try expect(damage.mayGiveAResult, "\(damage): the resolve gave \(link.resolution)")
            }
        }
    }

    /// One install match straight through the backend, as the client would make it.
    private func installMatch() async throws -> Result<InstallMatch, DeepLinkError> {
        let context = BackendContext(
            transport: mutations, clock: clock, device: world.device, storage: BackendStorage(store: InMemoryStore()))
        do {
            return .success(try await world.backend.matchInstall(context: context))
        } catch let error as DeepLinkError {
            return .failure(error)
        }
    }

    /// The provider's real resolve answer with every URL in it, and every app scheme it names,
    /// replaced by a `javascript:`, `http:`, `file:` or `data:` one (the provider compromised,
    /// or a link created with a hostile destination): the client refuses the link with
    /// `.rejected`, whichever field the adapter builds the destination from.
    private func refusedDestinations() async throws {
        let appSchemes = Set(world.ownLinks.compactMap { $0.scheme?.lowercased() }).subtracting(["http", "https"])
        for scheme in ["javascript", "http", "file", "data"] {
            let hostile = "\(scheme)://x/%0Aalert(document.cookie)"
            mutations.mutate(path: world.resolveRoute.path) { body in
                ResponseDamage.mapStrings(body) { value in
                    if value.contains("://") { return hostile }
                    return appSchemes.contains(value.lowercased()) ? scheme : value
                }
            }
            let events = client.linkEvents()
            clock.advance(by: 5)  // past the duplicate window: the same link again is a new tap
            client.handle(world.knownLink)
            var iterator = events.makeAsyncIterator()
            let event = await iterator.next()
            guard case .failure(let error)? = event else {
                throw ConformanceFailure(description: "\(name) · \(check): \(hostile) gave \(String(describing: event))")
            }
            try expect(error.code == .rejected, "\(hostile) gave \(error.code)")
            try expect(error.url == world.knownLink, "the refusal names \(String(describing: error.url))")
        }
    }
}
