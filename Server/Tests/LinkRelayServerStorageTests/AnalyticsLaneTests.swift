import Foundation
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// Issue 63, 8: analytics read on a lane of their own, one at a time per process, and the taps'
/// and installs' reads never wait behind them.
@Suite("The analytics lane")
struct AnalyticsLaneTests {
    final class Flag: Sendable {
        let value = Mutex(false)
    }

    @Test(
        "while an analytics read is held, every other read goes on; a second analytics read waits for the first",
        arguments: TestEngine.available)
    func lane(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, _ in
            _ = try await store.migrate()
            let project = try await store.createProject(name: "p", at: Date())
            let (entered, entering) = AsyncStream.makeStream(of: Int.self)
            let (release, releasing) = AsyncStream.makeStream(of: Void.self)
            let firstDone = Flag()
            let first = Task {
                try await store.engine.readAnalytics { connection in
                    entering.yield(1)
                    for await _ in release { break }
                    let count = try await connection.run("SELECT 1 AS one").count
                    firstDone.value.withLock { $0 = true }
                    return count
                }
            }
            var arrivals = entered.makeAsyncIterator()
            #expect(await arrivals.next() == 1)
            let second = Task {
                try await store.engine.readAnalytics { connection in
                    entering.yield(2)
                    #expect(firstDone.value.withLock { $0 }, "the second ran only once the first was done")
                    return try await connection.run("SELECT 1 AS one").count
                }
            }
            // Both readers (and the pool) stay free: what a tap and an install read goes on.
            for _ in 0..<8 {
                #expect(try await store.engine.select("SELECT 1 AS one").count == 1)
                #expect(try await store.destinationHosts(project: project.id).mode == .learned)
            }
            releasing.yield()
            releasing.finish()
            #expect(try await first.value == 1)
            #expect(await arrivals.next() == 2)
            #expect(try await second.value == 1)
            entering.finish()
        }
    }
}
