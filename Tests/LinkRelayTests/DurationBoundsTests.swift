import Foundation
import LinkRelayTesting
import Testing

@testable import LinkRelay

/// Every duration the public API accepts, tried with the values that used to trap or misbehave:
/// each either works as documented or is clamped, and nothing converts a `Double` to an integer
/// without a bound.
@Suite("Durations and sizes at their extremes", .timeLimit(.minutes(1)))
struct DurationBoundsTests {
    static let extremes: [TimeInterval] = [.infinity, 1e300, 1.8e10, -1, -.infinity, .nan, 0]

    /// What the client runs with for a configured duration.
    static func expectedClamp(_ value: TimeInterval) -> TimeInterval {
        value.isNaN || value < 0 ? 0 : value
    }

    @Test(
        "the system clock sleeps for any deadline: past, NaN and negative return at once, far ones until cancelled",
        arguments: extremes)
    func systemClockTakesAnyDeadline(_ seconds: TimeInterval) async throws {
        let clock = SystemClock()
        let sleeping = Task { try await clock.sleep(for: seconds) }
        if seconds > 0 {
            sleeping.cancel()
            await #expect(throws: CancellationError.self) { try await sleeping.value }
        } else {
            try await sleeping.value
        }
    }

    @Test("every configured duration is clamped as documented", arguments: extremes)
    func configurationIsClamped(_ value: TimeInterval) {
        var configuration = DeepLinkClient.Configuration()
        configuration.resolutionTimeout = value
        configuration.duplicateWindow = value
        configuration.pendingLinkTimeout = value
        configuration.installMatchTimeout = value
        configuration.requestTimeout = value
        configuration.retryPolicy = RetryPolicy(initialBackoff: value, maximumBackoff: value, maximumRetryAfter: value)
        let client = DeepLinkClient(backend: InMemoryBackend(), configuration: configuration)
        let effective = client.configuration
        let expected = Self.expectedClamp(value)
        for duration in [
            effective.resolutionTimeout, effective.duplicateWindow, effective.pendingLinkTimeout,
            effective.installMatchTimeout, effective.requestTimeout, effective.retryPolicy.initialBackoff,
            effective.retryPolicy.maximumBackoff, effective.retryPolicy.maximumRetryAfter,
        ] {
            #expect(duration == expected)
        }
    }

    @Test("counts below their minimum are raised to it")
    func countsAreClamped() {
        var configuration = DeepLinkClient.Configuration()
        configuration.maximumConcurrentResolutions = -5
        configuration.undeliveredEventLimit = -1
        configuration.linkBufferLimit = 0
        configuration.maximumInstallMatchLaunches = Int.min
        configuration.eventQueueCapacity = 0
        configuration.retryPolicy.maximumAttempts = 0
        var effective = DeepLinkClient(backend: InMemoryBackend(), configuration: configuration).configuration
        #expect(effective.maximumConcurrentResolutions == 1)
        #expect(effective.undeliveredEventLimit == 0)
        #expect(effective.linkBufferLimit == 1)
        #expect(effective.maximumInstallMatchLaunches == 1)
        #expect(effective.eventQueueCapacity == 1)
        #expect(effective.retryPolicy.maximumAttempts == 1)
        configuration.maximumConcurrentResolutions = .max
        effective = DeepLinkClient(backend: InMemoryBackend(), configuration: configuration).configuration
        #expect(effective.maximumConcurrentResolutions == 64)
    }

    @Test("retry waits are never negative or NaN, whatever the policy", arguments: extremes)
    func retryDelaysAreBounded(_ value: TimeInterval) throws {
        let error = DeepLinkError(.server(status: 503), "down")
        let policies = [
            RetryPolicy(maximumAttempts: 5, initialBackoff: value),
            RetryPolicy(maximumAttempts: 5, multiplier: value),
            RetryPolicy(maximumAttempts: 5, maximumBackoff: value),
            RetryPolicy(maximumAttempts: 5, jitter: value),
            RetryPolicy(maximumAttempts: 5, initialBackoff: value, multiplier: value, maximumBackoff: value, jitter: value),
        ]
        for policy in policies {
            for attempt in 1...4 {
                for random in [0, 0.5, 0.999, .nan] {
                    let wait = try #require(policy.delay(after: attempt, error: error, random: random))
                    #expect(!wait.isNaN && wait >= 0, "policy \(policy), attempt \(attempt): \(wait)")
                }
            }
        }
    }

    @Test("a Retry-After of any size is honoured up to the cap, and ends the retries past it", arguments: extremes)
    func retryAfterIsBounded(_ seconds: TimeInterval) {
        let error = DeepLinkError(.server(status: 429), "slow down", retryAfter: seconds)
        let wait = RetryPolicy().delay(after: 1, error: error, random: 0)
        if seconds.isNaN || seconds <= 60 {
            #expect(wait == Self.expectedClamp(seconds))
        } else {
            #expect(wait == nil)
        }
    }

    @Test("an infinite resolution timeout on the system clock waits for the provider instead of trapping")
    func infiniteResolutionTimeout() async throws {
        let backend = InMemoryBackend()
        let client = makeClient(backend, clock: ManualClock()) {
            $0.clock = SystemClock()
            $0.resolutionTimeout = .infinity
        }
        let links = client.deepLinks()
        client.handle(url("myapp://products/1"))
        #expect(await links.prefixArray(1).first?.resolution == .server)
    }

    @Test("with a timeout of zero or NaN the link is delivered parsed on the device at once", arguments: [0, -3, .nan])
    func zeroResolutionTimeout(_ value: TimeInterval) async throws {
        let backend = InMemoryBackend()
        backend.unscriptedLinks = .parsed
        let link = url("myapp://products/2")
        backend.script(link, .parsed, delay: 50)
        let clock = ManualClock()
        let client = makeClient(backend, clock: clock) { $0.resolutionTimeout = value }
        let links = client.deepLinks()
        client.handle(link)
        #expect(await links.prefixArray(1).first?.resolution == .local(.timedOut))
        #expect(clock.uptime == 0)
    }

    @Test("an infinite resolution timeout on the manual clock delivers the provider's answer however late")
    func infiniteTimeoutWaits() async throws {
        let backend = InMemoryBackend()
        let link = url("myapp://products/3")
        backend.script(link, .parsed, delay: 1e9)
        let clock = ManualClock()
        let client = makeClient(backend, clock: clock) { $0.resolutionTimeout = .infinity }
        let links = client.deepLinks()
        client.handle(link)
        await clock.waitForSleepers(count: 2)  // the backend's 1e9 s and the deadline at infinity
        clock.advance(by: 1e9)
        #expect(await links.prefixArray(1).first?.resolution == .server)
    }

    @Test("an infinite duplicate window makes every repeat of a URL a duplicate; NaN none")
    func duplicateWindowExtremes() async throws {
        let clock = ManualClock()
        let infinite = makeClient(InMemoryBackend(), clock: clock) { $0.duplicateWindow = .infinity }
        let links = infinite.deepLinks()
        infinite.handle(url("myapp://a"))
        await infinite.waitUntilIdle()
        clock.advance(by: 1e12)
        infinite.handle(url("myapp://a"))
        infinite.handle(url("myapp://b"))
        #expect(await links.prefixArray(2).map(\.path) == ["/a", "/b"])

        let none = makeClient(InMemoryBackend(), clock: clock) { $0.duplicateWindow = .nan }
        let all = none.deepLinks()
        none.handle(url("myapp://a"))
        none.handle(url("myapp://a"))
        #expect(await all.prefixArray(2).map(\.path) == ["/a", "/a"])
    }

    @Test("infinite install, request and pending-link timeouts run on the system clock without trapping")
    func otherInfiniteTimeouts() async throws {
        let backend = InMemoryBackend()
        backend.scriptInstall(.success(.organic(.organic(installID: "i-1"))))
        let client = makeClient(backend) {
            $0.clock = SystemClock()
            $0.installMatchTimeout = .infinity
            $0.requestTimeout = .infinity
            $0.pendingLinkTimeout = .infinity
            $0.authenticationRequiredPaths = ["wallet"]
            $0.retryPolicy = RetryPolicy(initialBackoff: .infinity, maximumBackoff: .infinity, maximumRetryAfter: .infinity)
        }
        await client.start()
        #expect(await client.installOutcome() == .organic(.organic(installID: "i-1")))
        try await client.track("signup")
        await client.flushEvents()
        #expect(backend.sentEvents.map(\.name) == ["signup"])
        let events = client.linkEvents()  // the install outcome is replayed first
        client.handle(url("myapp://wallet"))
        var held: DeepLink?
        for await event in events {
            if case .authenticationRequired(let link) = event {
                held = link
                break
            }
        }
        #expect(held?.path == "/wallet")
        #expect(await client.completePendingLink()?.path == "/wallet")
    }

    @Test(
        "screens of any size make pixel counts without trapping",
        arguments: [(1e300, 3.0), (.infinity, 2.0), (.nan, 2.0), (-1e300, 3.0), (390, 3)] as [(Double, Double)])
    func pixelCounts(_ width: Double, _ scale: Double) {
        let screen = DeviceInfo.Screen(width: width, height: width, scale: scale)
        let product = (width * scale).rounded()
        let expected = product.isNaN ? 0 : product >= 9.3e18 ? Int.max : product <= -9.3e18 ? Int.min : Int(product)
        #expect(screen.pixelWidth == expected)
        #expect(screen.pixelHeight == expected)
    }

    @Test("saturatingInt is exact inside Int's range and stops at its bounds outside it")
    func saturatingConversion() {
        #expect(42.9.saturatingInt == 42)
        #expect((-42.9).saturatingInt == -42)
        #expect(Double.nan.saturatingInt == 0)
        #expect(Double.infinity.saturatingInt == .max)
        #expect((-Double.infinity).saturatingInt == .min)
        #expect(Double(Int.max).saturatingInt == .max)
        #expect(Double(Int.min).saturatingInt == .min)
        #expect(9_007_199_254_740_992.0.saturatingInt == 9_007_199_254_740_992)
    }
}
