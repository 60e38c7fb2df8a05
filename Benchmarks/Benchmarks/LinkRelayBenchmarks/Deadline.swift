import Benchmark
import Foundation
import LinkRelay
import LinkRelayTesting
import Synchronization

/// 11. N links handed over during an outage: when does the last one reach the app, in the
/// client's (manual) time? The promise is the deadline itself (`resolutionTimeout`, counted from
/// `handle`) for every N: links resolve concurrently and a link never waits for a later deadline
/// than its own. Wall time is context; the manual time is the verdict.
enum DeadlineBenchmarks {
    static let timeout: TimeInterval = 3

    /// A provider in an outage: every resolve hangs until the client gives up on it.
    struct OutageBackend: DeepLinkBackend {
        let id: BackendID = "outage"
        func canHandle(_ url: URL) -> Bool { url.host == "go.acme.app" }
        func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
            // Real time, so the client's manual clock holds only the client's own timers.
            try await Task.sleep(nanoseconds: 86_400 * 1_000_000_000)
            throw CancellationError()
        }
        func matchInstall(context: BackendContext) async throws -> InstallMatch {
            throw DeepLinkError(.network, "The provider is down.", backend: id)
        }
    }

    /// How many links the subscriber received, and the manual time of the last.
    final class Arrivals: Sendable {
        private struct State {
            var count = 0
            var lastAt: TimeInterval = 0
            var waiter: CheckedContinuation<Void, Never>?
            var expected = Int.max
        }
        private let state = Mutex(State())

        func note(at time: TimeInterval) {
            let ready: CheckedContinuation<Void, Never>? = state.withLock { state in
                state.count += 1
                state.lastAt = time
                guard state.count >= state.expected else { return nil }
                defer { state.waiter = nil }
                return state.waiter
            }
            ready?.resume()
        }

        var lastAt: TimeInterval { state.withLock { $0.lastAt } }

        /// Returns once `count` links arrived, or when the calling task is cancelled.
        func wait(for count: Int) async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let now: Bool = state.withLock { state in
                        guard state.count < count, !Task.isCancelled else { return true }
                        state.expected = count
                        state.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
            }
        }
    }

    /// Hands over `count` links at once in an outage, moves the manual clock to their deadline and
    /// on in steps of a tenth of it until all arrived; returns the manual time of the last arrival.
    static func outage(links count: Int) async -> TimeInterval {
        let clock = ManualClock()
        var configuration = DeepLinkClient.Configuration(store: InMemoryStore())
        configuration.deviceInfo = StaticDeviceInfo()
        configuration.logSink = .silent
        configuration.clock = clock
        configuration.retryPolicy = .none
        configuration.resolutionTimeout = timeout
        let client = DeepLinkClient(backend: OutageBackend(), configuration: configuration)
        let arrivals = Arrivals()
        let links = client.deepLinks()
        let subscriber = Task {
            for await _ in links { arrivals.note(at: clock.uptime) }
        }
        for index in 0..<count { client.handle(URL(string: "https://go.acme.app/p/\(index)")!) }
        // Every resolution under way has its deadline timer on the clock (4 run at once).
        await clock.waitForSleepers(count: min(count, 4))
        let start = clock.uptime
        clock.advance(by: timeout)
        // Either every link arrives while the clock stands at the deadline, or a timer later than
        // the deadline appears (a link waiting past it): then the clock moves on, and the figure
        // shows by how much the promise was missed.
        while await withTaskGroup(
            of: Bool.self,
            body: { group in
                group.addTask {
                    await arrivals.wait(for: count)
                    return !Task.isCancelled
                }
                group.addTask {
                    await clock.waitForSleepers(count: 1, dueAtOrAfter: clock.uptime + 0.001)
                    return false
                }
                let done = await group.next() ?? false
                group.cancelAll()
                return !done
            })
        {
            clock.advance(by: timeout / 10)
        }
        subscriber.cancel()
        await client.shutdown()
        return arrivals.lastAt - start
    }

    static func register() {
        let configuration = Benchmark.Configuration(
            metrics: [.wallClock, .custom("manual ms to the last delivery", useScalingFactor: false)],
            scalingFactor: .one, maxDuration: .seconds(2), maxIterations: 50)
        for count in [1, 3, 30] {
            Benchmark("11 deadline: \(count) links in an outage (resolutionTimeout 3 s)", configuration: configuration) { benchmark in
                var last: TimeInterval = 0
                for _ in benchmark.scaledIterations { last = max(last, await outage(links: count)) }
                benchmark.measurement(.custom("manual ms to the last delivery", useScalingFactor: false), Int((last * 1000).rounded()))
            }
        }
    }
}
