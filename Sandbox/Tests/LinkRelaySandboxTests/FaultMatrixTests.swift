import Foundation
import LinkRelay
import LinkRelaySandbox
import LinkRelaySimulator
import LinkRelayTesting
import Testing

/// A server misbehaving, over a real socket.
enum WireFault: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case delayPastDeadline
    case serverErrorThenSuccess
    case serviceUnavailableWithRetryAfter
    case tooManyRequests
    case notFoundWithProviderBody
    case malformedJSON
    case wrongShapeJSON
    case fiveMegabyteBody
    case closedMidResponse
    case connectionRefused

    var testDescription: String { rawValue }

    /// Installs the fault on `path` (a refused connection is made by stopping the server).
    func install(on path: String, fixture: ProviderFixture, harness: SandboxHarness) async throws {
        let rule: SandboxAPI.FaultRule? =
            switch self {
            case .delayPastDeadline: .init(path: path, fault: .delay(3600))
            case .serverErrorThenSuccess: .init(path: path, fault: .status(500, body: #"{"error":"Internal Server Error"}"#), times: 1)
            case .serviceUnavailableWithRetryAfter:
                .init(path: path, fault: .status(503, body: #"{"error":"Service Unavailable"}"#, headers: ["Retry-After": "1"]), times: 1)
            case .tooManyRequests: .init(path: path, fault: .status(429, body: #"{"error":"Rate limit exceeded"}"#))
            case .notFoundWithProviderBody: .init(path: path, fault: .status(404, body: fixture.notFoundBody))
            case .malformedJSON: .init(path: path, fault: .malformedBody)
            case .wrongShapeJSON: .init(path: path, fault: .status(200, body: #"["not","the","object",42]"#))
            case .fiveMegabyteBody: .init(path: path, fault: .oversizedBody(5_000_000))
            case .closedMidResponse: .init(path: path, fault: .drop)
            case .connectionRefused: nil
            }
        if let rule {
            // Through the admin API, as a developer would script it.
            try await harness.admin.setFault(rule)
        } else {
            await harness.server.stop()
        }
    }
}

@Suite("Fault matrix over HTTP", .timeLimit(.minutes(1)))
struct FaultMatrixTests {
    @Test(
        "a universal link under each fault: the documented error or retry, and the link still arrives within its deadline",
        arguments: ProviderFixture.all, WireFault.allCases)
    func resolution(_ fixture: ProviderFixture, _ fault: WireFault) async throws {
        let harness = try await SandboxHarness()
        try await fixture.script(harness.sandbox)
        let client = try harness.client(fixture)
        var events = client.linkEvents().makeAsyncIterator()
        let deadline = DeepLinkClient.Configuration().resolutionTimeout
        try await fault.install(on: fixture.resolvePath, fixture: fixture, harness: harness)

        client.handle(fixture.universalLink)
        switch fault {
        case .delayPastDeadline:
            // The request is parked on the server; the client's deadline passes.
            await harness.serverClock.waitForSleepers(count: 1)
            await harness.clientClock.waitForSleepers(count: 1)
            harness.clientClock.advance(by: deadline)
        case .serviceUnavailableWithRetryAfter:
            // The client waits out Retry-After on its clock (beside its deadline) before retrying.
            await harness.clientClock.waitForSleepers(count: 2)
            #expect(harness.requests(fixture.resolvePath).count == 1)
            harness.clientClock.advance(by: 1)
        default:
            break
        }
        let delivered = await nextDelivery(&events)
        guard case .link(let link)? = delivered else {
            Issue.record("expected a link, got \(String(describing: delivered))")
            await harness.stop()
            return
        }
        #expect(link.url == fixture.universalLink)
        let attempts = harness.requests(fixture.resolvePath).count
        switch fault {
        case .delayPastDeadline:
            #expect(link.resolution == .local(.timedOut))
            #expect(attempts == 1)
        case .serverErrorThenSuccess, .serviceUnavailableWithRetryAfter:
            #expect(link.resolution == .server)
            #expect(link.destination == fixture.destination)
            #expect(attempts == 2)
        case .tooManyRequests:
            #expect(failureCode(link) == .server(status: 429))
            #expect(attempts == 3)
        case .notFoundWithProviderBody:
            if let code = fixture.notFoundError {
                #expect(failureCode(link) == code)
            } else {
                #expect(link.resolution == .local(.notFound))
            }
            #expect(attempts == 1)
        case .malformedJSON, .wrongShapeJSON:
            #expect(failureCode(link) == .decoding)
            #expect(attempts == 1)
        case .fiveMegabyteBody:
            #expect(failureCode(link) == .responseTooLarge)
            #expect(attempts == 1)
        case .closedMidResponse:
            #expect(failureCode(link) == .network)
            #expect(failureMessage(link) == "The connection was lost before the response was complete.")
            #expect(attempts == 3)
        case .connectionRefused:
            #expect(failureCode(link) == .network)
            #expect(failureMessage(link) == "The server refused the connection.")
            #expect(attempts == 0)
        }
        if fault != .delayPastDeadline {
            // Everything above happened before the deadline: the client's clock never reached it.
            #expect(harness.clientClock.uptime < deadline)
        }
        await client.shutdown()
        await harness.stop()
    }

    @Test(
        "an event under each fault: retried, kept for the next flush, or dropped with a failure; never lost unreported, never sent twice",
        arguments: ProviderFixture.withEvents, WireFault.allCases)
    func eventQueue(_ fixture: ProviderFixture, _ fault: WireFault) async throws {
        let eventPath = try #require(fixture.eventPath)
        let harness = try await SandboxHarness()
        try await fixture.script(harness.sandbox)
        let store = InMemoryStore()
        let client = try harness.client(fixture, store: store)
        var events = client.linkEvents().makeAsyncIterator()
        await client.start()
        // Paylisher reports the organic first launch ("Deferred Deep Link Check") of its own.
        await harness.sandbox.simulator.waitForRequests(path: eventPath, count: fixture.eventsAfterStart)
        await client.flushEvents()
        let before = harness.requests(eventPath).count
        func purchases() async throws -> Int {
            try await harness.sandbox.receivedEvents(fixture.provider).filter { $0.name == "purchase" }.count
        }
        try await fault.install(on: eventPath, fixture: fixture, harness: harness)

        try await client.track("purchase", properties: ["sku": "A-1"])
        switch fault {
        case .delayPastDeadline:
            await harness.serverClock.waitForSleepers(count: 1)
            await harness.clientClock.waitForSleepers(count: 1)
            harness.clientClock.advance(by: DeepLinkClient.Configuration().requestTimeout)
        case .serviceUnavailableWithRetryAfter:
            await harness.clientClock.waitForSleepers(count: 2)
            harness.clientClock.advance(by: 1)
        default:
            break
        }
        await client.flushEvents()
        let attempts = harness.requests(eventPath).count - before

        switch fault {
        case .serverErrorThenSuccess, .serviceUnavailableWithRetryAfter:
            // Retried within the flush, and stored once.
            #expect(attempts == 2)
            #expect(await client.queuedEventCount == 0)
            #expect(try await purchases() == 1)
        case .malformedJSON, .wrongShapeJSON:
            // A 2xx is the provider's acceptance; its body is not read.
            #expect(attempts == 1)
            #expect(await client.queuedEventCount == 0)
        case .notFoundWithProviderBody, .fiveMegabyteBody:
            // Refused for good (404), or answered with a body no client should hold: dropped, and
            // reported, after one request.
            #expect(attempts == 1)
            #expect(await client.queuedEventCount == 0)
            guard case .failure(let error)? = await nextDelivery(&events) else {
                Issue.record("expected a failure event")
                await harness.stop()
                return
            }
            #expect(error.code == (fault == .fiveMegabyteBody ? .responseTooLarge : .server(status: 404)))
        case .delayPastDeadline, .tooManyRequests, .closedMidResponse, .connectionRefused:
            // Kept for the next flush; then sent once.
            #expect(attempts == [.delayPastDeadline: 1, .tooManyRequests: 3, .closedMidResponse: 3, .connectionRefused: 0][fault])
            #expect(await client.queuedEventCount == 1)
            #expect(try await purchases() == 0)
            if fault == .connectionRefused {
                // The app is killed while the server is down; the next launch, against a server
                // that is back (on a new port), sends the event from the store.
                await client.shutdown()
                let revived = try SandboxServer(sandbox: harness.sandbox, port: 0)
                let revivedURL = try await revived.start()
                let next = try harness.client(
                    fixture, store: store, description: try await SandboxAdminClient(baseURL: revivedURL).describe())
                await next.start()
                await next.flushEvents()
                #expect(await next.queuedEventCount == 0)
                await next.shutdown()
                await revived.stop()
            } else {
                try await harness.admin.clearFaults()
                await client.flushEvents()
                #expect(await client.queuedEventCount == 0)
            }
            #expect(try await purchases() == 1)
        }
        await client.shutdown()
        await harness.stop()
    }

    private func failureCode(_ link: DeepLink) -> DeepLinkError.Code? {
        if case .local(.failed(let error)) = link.resolution { return error.code }
        return nil
    }

    private func failureMessage(_ link: DeepLink) -> String? {
        if case .local(.failed(let error)) = link.resolution { return error.message }
        return nil
    }
}
