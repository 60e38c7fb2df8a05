import Foundation

/// Fans events out to any number of subscribers, one `AsyncStream` each.
///
/// - Registration is synchronous: a stream returned by ``subscribe(_:)`` receives every event
///   published after the call returned.
/// - Events published while nobody listens are held (up to `heldLimit`, oldest dropped with a log
///   line) and handed to the next subscriber.
/// - The last replayable event (the install outcome) is handed to every new subscriber.
/// - A subscriber whose stream terminates (its task is cancelled, or it stops iterating and drops
///   the stream) is removed.
///
/// Publishing must be serial (the client publishes only from its actor); events are yielded
/// outside the lock, so a subscriber's termination handler may run at any time.
final class LinkEventBroadcaster: Sendable {
    private struct Subscriber: Sendable {
        let deliver: @Sendable (DeepLinkEvent) -> Void
        let finish: @Sendable () -> Void
    }

    private struct State: Sendable {
        var subscribers: [UInt64: Subscriber] = [:] {
            didSet { receivers = nil }
        }
        /// The subscribers as an array, built by the first publish after they changed: joining
        /// and leaving cost O(1) however many subscribers there are, and publishing allocates
        /// nothing while nobody joins or leaves.
        var receivers: [Subscriber]? = []
        var nextID: UInt64 = 0
        var held: [DeepLinkEvent] = []
        var replay: DeepLinkEvent?
        var finished = false
    }

    private let state = Locked(State())
    private let heldLimit: Int
    private let bufferLimit: Int
    private let logger: LinkRelayLogger

    /// - Parameters:
    ///   - heldLimit: events held while nobody subscribes.
    ///   - bufferLimit: events waiting in one subscriber's stream; past it the oldest is
    ///     dropped with a warning.
    init(heldLimit: Int, bufferLimit: Int = .max, logger: LinkRelayLogger) {
        self.heldLimit = max(heldLimit, 0)
        self.bufferLimit = max(bufferLimit, 1)
        self.logger = logger
    }

    /// A new stream of the events `transform` maps to an element (`nil` skips the event).
    func subscribe<Element: Sendable>(
        _ transform: @escaping @Sendable (DeepLinkEvent) -> Element?
    ) -> AsyncStream<Element> {
        let limit = max(bufferLimit, heldLimit)
        let (stream, continuation) = AsyncStream<Element>.makeStream(
            bufferingPolicy: limit == .max ? .unbounded : .bufferingNewest(limit))
        let logger = self.logger
        let drops = DropCounter()
        let subscriber = Subscriber(
            deliver: { event in
                guard let element = transform(event) else { return }
                if case .dropped = continuation.yield(element) {
                    if let dropped = drops.note() {
                        logger.warning(
                            "A subscriber is \(limit) events behind; dropped the oldest waiting for it (linkBufferLimit): \(dropped) so far."
                        )
                    }
                }
            },
            finish: { continuation.finish() })
        let id: UInt64? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            // Nobody can iterate this stream yet, so these yields cannot race a termination.
            if let replay = state.replay, !state.held.contains(replay) {
                subscriber.deliver(replay)
            }
            if state.subscribers.isEmpty {
                for event in state.held { subscriber.deliver(event) }
                state.held.removeAll()
            }
            state.subscribers[id] = subscriber
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.remove(id)
        }
        return stream
    }

    /// Delivers `event` to every current subscriber, or holds it when there is none.
    /// A `replayable` event is also handed to every later subscriber.
    func publish(_ event: DeepLinkEvent, replayable: Bool = false) {
        var dropped: DeepLinkEvent?
        let receivers: [Subscriber] = state.withLock { state in
            guard !state.finished else { return [] }
            if replayable { state.replay = event }
            guard !state.subscribers.isEmpty else {
                state.held.append(event)
                if state.held.count > heldLimit { dropped = state.held.removeFirst() }
                return []
            }
            if let receivers = state.receivers { return receivers }
            let receivers = Array(state.subscribers.values)
            state.receivers = receivers
            return receivers
        }
        if let dropped {
            logger.warning(
                "Nobody listens for link events and \(heldLimit) are already held; dropped the oldest: \(LinkEventBroadcaster.summary(of: dropped))"
            )
        }
        for receiver in receivers { receiver.deliver(event) }
    }

    /// Finishes every stream; later subscribers get a finished stream.
    func finishAll() {
        let receivers: [Subscriber] = state.withLock { state in
            state.finished = true
            state.held.removeAll()
            let receivers = Array(state.subscribers.values)
            state.subscribers.removeAll()
            return receivers
        }
        for receiver in receivers { receiver.finish() }
    }

    /// Forgets the replayable event and the events held for a subscriber (after the client's
    /// data was cleared: erased data must not resurface).
    func forgetUndelivered() {
        state.withLock {
            $0.replay = nil
            $0.held.removeAll()
        }
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    var heldCount: Int { state.withLock { $0.held.count } }

    private func remove(_ id: UInt64) {
        state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
    }

    private static func summary(of event: DeepLinkEvent) -> String {
        switch event {
        case .link(let link), .authenticationRequired(let link), .pendingLinkDropped(let link, _):
            "link \(link.path)"
        case .install: "install outcome"
        case .failure(let error): "failure \(error.code)"
        }
    }
}
