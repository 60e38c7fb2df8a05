import HTTPTypes
import HummingbirdCore
import LinkRelayServerCore
import LinkRelayServerStorage
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

/// The connections one listener has open, and which of them wait for a request: the longest
/// idle is the one closed to make room for a new client.
///
/// A listener at its cap used to stop accepting, and new clients (a health check, a real tap)
/// waited in the kernel's backlog until an idle connection timed out: 1,100 idle sockets under a
/// hard limit of 1,024 open files took the API off the air for every check. Now, at the cap, the
/// connection idle the longest (one that never sent a request, or is kept alive between two) is
/// closed, so a waiting client is accepted at once; connections in the middle of a request are
/// never closed. When every connection is busy, the first to finish its response is closed
/// instead of kept alive. Closing an idle keep-alive connection is what HTTP/1.1 allows a server
/// at any time (RFC 9112, 9.6); clients retry the request they had not sent.
///
/// Each listener has its own: a flood of the metrics port closes metrics connections only.
package final class IdleConnections: Sendable {
    private struct State {
        /// Every open connection: its close, and the sequence at which it last became idle
        /// (`nil` while it is in a request).
        var open: [UInt64: (close: @Sendable () -> Void, idleSince: UInt64?)] = [:]
        /// Connections in the order they became idle, with the sequence of that time; an entry
        /// is stale when the connection has since become busy, idle again, or closed.
        var order: [(id: UInt64, since: UInt64)] = []
        var head = 0
        var sequence: UInt64 = 0
        /// The listener is at its cap with nothing idle: the next connection to become idle is
        /// closed.
        var waiting = false

        mutating func nextSequence() -> UInt64 {
            sequence &+= 1
            return sequence
        }

        mutating func markIdle(_ id: UInt64) {
            let since = nextSequence()
            open[id]?.idleSince = since
            order.append((id, since))
            // Stale entries are dropped once they are most of the list: the work stays linear in
            // the transitions, and the list within twice the open connections.
            if order.count - head > 2 * open.count + 64 {
                order = order[head...].filter { open[$0.id]?.idleSince == $0.since }
                head = 0
            }
        }
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    /// How many connections are open.
    package var count: Int { state.withLockedValue { $0.open.count } }

    /// How many entries the idle order holds, stale ones included (at most about twice the open
    /// connections).
    package var queued: Int { state.withLockedValue { $0.order.count - $0.head } }

    /// A new connection, idle until its first request; `close` closes it.
    ///
    /// When the listener already waits for room (its cap was reached before the connections it
    /// accepted were set up here, as in a flood), the longest-idle connection other than this
    /// one is closed now: without this, the listener waited for an idle timeout.
    package func opened(close: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, evicted): (UInt64, (@Sendable () -> Void)?) = state.withLockedValue { state in
            let id = state.nextSequence()
            var evicted: (@Sendable () -> Void)?
            if state.waiting {
                while state.head < state.order.count {
                    let entry = state.order[state.head]
                    state.head += 1
                    if let connection = state.open[entry.id], connection.idleSince == entry.since {
                        state.open[entry.id]?.idleSince = nil
                        state.waiting = false
                        evicted = connection.close
                        break
                    }
                }
            }
            state.open[id] = (close, nil)
            state.markIdle(id)
            return (id, evicted)
        }
        evicted?()
        return id
    }

    /// The connection received a request's head.
    package func busy(_ id: UInt64) {
        state.withLockedValue { $0.open[id]?.idleSince = nil }
    }

    /// The connection wrote a response's end and waits for the next request; closed at once when
    /// a new client waits for room.
    package func idle(_ id: UInt64) {
        let close: (@Sendable () -> Void)? = state.withLockedValue { state in
            guard let connection = state.open[id] else { return nil }
            if state.waiting {
                state.waiting = false
                return connection.close
            }
            state.markIdle(id)
            return nil
        }
        close?()
    }

    /// The connection closed (any close makes room, so a waiting client no longer needs one).
    package func closed(_ id: UInt64) {
        state.withLockedValue { state in
            if state.open.removeValue(forKey: id) != nil { state.waiting = false }
        }
    }

    /// Closes the `count` connections idle the longest (fewer when fewer are idle); when none is
    /// idle, the next to become idle is closed. Returns whether one was closed now.
    @discardableResult
    package func closeLongestIdle(_ count: Int = 1) -> Bool {
        let closes: [@Sendable () -> Void] = state.withLockedValue { state in
            var closes: [@Sendable () -> Void] = []
            while state.head < state.order.count, closes.count < count {
                let entry = state.order[state.head]
                state.head += 1
                if let connection = state.open[entry.id], connection.idleSince == entry.since {
                    state.open[entry.id]?.idleSince = nil
                    closes.append(connection.close)
                }
            }
            if closes.isEmpty {
                state.order.removeAll(keepingCapacity: true)
                state.head = 0
                state.waiting = true
            }
            return closes
        }
        for close in closes { close() }
        return !closes.isEmpty
    }
}

/// A listener's cap on open connections (Hummingbird's `MaximumAvailableConnections`, which only
/// stops accepting), closing the longest-idle connections to make room when it is reached.
package struct ConnectionBudget: AvailableConnectionsDelegate {
    let maximum: Int
    /// How many idle connections are closed at once at the cap: an eighth of it (at least one),
    /// so a backlog of waiting clients is accepted in bursts rather than one close at a time
    /// (one at a time, a flood of the port kept its backlog full and new clients' connections
    /// waited for the kernel's retries).
    let batch: Int
    let connections: IdleConnections
    private var accepted = 0

    package init(maximum: Int, connections: IdleConnections) {
        self.maximum = max(maximum, 1)
        self.batch = max(self.maximum / 8, 1)
        self.connections = connections
    }

    package mutating func connectionOpened() { accepted += 1 }
    package mutating func connectionClosed() { accepted -= 1 }

    /// Asked on the listener's event loop before each accept. At the cap the longest-idle
    /// connections are closed; their closes resume accepting.
    package func isAcceptingNewConnections() -> Bool {
        guard accepted >= maximum else { return true }
        connections.closeLongestIdle(batch)
        return false
    }
}

/// In each connection's pipeline: tells ``IdleConnections`` when the connection starts and ends
/// a request.
final class ConnectionActivityHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connections: IdleConnections
    private var id: UInt64?

    init(connections: IdleConnections) {
        self.connections = connections
    }

    private func register(_ context: ChannelHandlerContext) {
        guard id == nil else { return }
        let channel = context.channel
        id = connections.opened { channel.close(promise: nil) }
    }

    private func unregister() {
        if let id { connections.closed(id) }
        id = nil
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { register(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        register(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        unregister()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        unregister()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data), let id { connections.busy(id) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data), let id else {
            context.write(data, promise: promise)
            return
        }
        let connections = connections
        let written = promise ?? context.eventLoop.makePromise()
        written.futureResult.whenSuccess { connections.idle(id) }
        context.write(data, promise: written)
    }
}

extension IdleConnections {
    /// Hummingbird's HTTP/1.1 server for a listener with this budget: `idleTimeout`, and this
    /// handler in each connection.
    package func http1(idleTimeout: Duration) -> HTTPServerBuilder {
        .http1(
            configuration: .init(
                additionalChannelHandlers: [ConnectionActivityHandler(connections: self)],
                idleTimeout: .seconds(idleTimeout.components.seconds)))
    }
}
