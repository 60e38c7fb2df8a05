import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// Which connection a listener at its cap closes for a new client (``IdleConnections``): the
/// longest idle, never one in a request.
@Suite("The connection budget")
struct ConnectionBudgetTests {
    /// Connections whose close is recorded.
    final class Closed: Sendable {
        let ids = Mutex<[Int]>([])
        func close(_ id: Int) -> @Sendable () -> Void { { self.ids.withLock { $0.append(id) } } }
        var all: [Int] { ids.withLock { $0 } }
    }

    @Test("the longest idle is closed first: one that never sent a request before one kept alive after its response")
    func longestIdleFirst() {
        let closed = Closed()
        let connections = IdleConnections()
        let first = connections.opened(close: closed.close(1))
        let second = connections.opened(close: closed.close(2))
        _ = connections.opened(close: closed.close(3))
        connections.busy(first)
        connections.idle(first)  // 1 answered and waits: now idle after 2 and 3
        connections.busy(second)  // 2 is in a request
        #expect(connections.closeLongestIdle())
        #expect(closed.all == [3])
        #expect(connections.closeLongestIdle())
        #expect(closed.all == [3, 1])
        #expect(!connections.closeLongestIdle(), "2 is in a request")
        #expect(closed.all == [3, 1])
    }

    @Test("at the cap an eighth of it is closed at once, the longest idle first, never one in a request")
    func batches() {
        let closed = Closed()
        let connections = IdleConnections()
        let ids = (0..<16).map { connections.opened(close: closed.close($0)) }
        connections.busy(ids[0])
        var budget = ConnectionBudget(maximum: 16, connections: connections)
        for _ in 0..<16 { budget.connectionOpened() }
        #expect(budget.batch == 2)
        #expect(!budget.isAcceptingNewConnections())
        #expect(closed.all == [1, 2])
        budget.connectionClosed()
        #expect(budget.isAcceptingNewConnections(), "room made: the next is accepted")
        #expect(
            ConnectionBudget(maximum: 880, connections: connections).batch == 110
                && ConnectionBudget(maximum: 3, connections: connections).batch == 1)
    }

    /// Two connections, both in a request, and the cap reached: nothing idle to close, so the
    /// listener waits for room.
    static func capWithBothBusy() -> (Closed, IdleConnections, UInt64, UInt64) {
        let closed = Closed()
        let connections = IdleConnections()
        let first = connections.opened(close: closed.close(1))
        let second = connections.opened(close: closed.close(2))
        connections.busy(first)
        connections.busy(second)
        #expect(!connections.closeLongestIdle())
        return (closed, connections, first, second)
    }

    @Test("at the cap with every connection busy, the first to finish its response is closed instead of kept alive")
    func nextIdleClosedWhenWaiting() {
        let (closed, connections, first, second) = Self.capWithBothBusy()
        connections.idle(second)
        #expect(closed.all == [2])
        connections.idle(first)
        #expect(closed.all == [2], "one client was waiting, one connection closed")
    }

    @Test("a flood: the cap is reached before the accepted connections are set up, so the next set up closes the one set up before it")
    func capBeforeSetUp() {
        let closed = Closed()
        let connections = IdleConnections()
        var budget = ConnectionBudget(maximum: 2, connections: connections)
        budget.connectionOpened()
        budget.connectionOpened()
        #expect(!budget.isAcceptingNewConnections())
        #expect(closed.all == [], "nothing set up yet to close")
        _ = connections.opened(close: closed.close(1))
        #expect(closed.all == [], "the first set up has no older one to make room")
        _ = connections.opened(close: closed.close(2))
        #expect(closed.all == [1], "the second closes the first: the listener no longer waits for an idle timeout")
        _ = connections.opened(close: closed.close(3))
        #expect(closed.all == [1], "room was made once, for the one waiting")
    }

    @Test("a connection closed by itself makes the room: the next to become idle is kept alive")
    func closeClearsWaiting() {
        let (closed, connections, first, second) = Self.capWithBothBusy()
        connections.closed(second)
        connections.idle(first)
        #expect(closed.all == [])
        #expect(connections.count == 1)
    }

    @Test(
        "closed connections and stale turns are never closed again, and the order stays within twice the open connections over 100,000 requests"
    )
    func staleEntries() {
        let closed = Closed()
        let connections = IdleConnections()
        let ids = (0..<10).map { connections.opened(close: closed.close($0)) }
        for round in 0..<10_000 {
            for id in ids {
                connections.busy(id)
                connections.idle(id)
            }
            #expect(connections.queued <= 2 * ids.count + 64 + 1, "round \(round)")
        }
        connections.closed(ids[0])
        for _ in 0..<9 { #expect(connections.closeLongestIdle()) }
        #expect(closed.all == Array(1..<10), "each once, in the order they became idle")
        #expect(!connections.closeLongestIdle())
    }
}
