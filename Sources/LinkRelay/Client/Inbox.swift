import Foundation

/// The client's inbox: what ``DeepLinkClient/handle(_:)`` hands over, taken out in order by
/// one drain at a time, in batches.
///
/// An `AsyncStream` here would cost one suspension and one executor hop per link (tens of
/// microseconds on Linux) before the link even reaches the subscriber's stream. The inbox
/// instead starts a drain only when it goes from empty to non-empty; that drain takes everything
/// queued at once, so a burst of links costs one wake-up, not one per link.
///
/// It holds at most `limit` items: past that, the oldest link is dropped with a warning (a
/// barrier is never dropped), so a producer that outruns the client cannot grow memory without
/// bound. Not generic, so the hot path needs no runtime generic metadata.
final class Inbox: Sendable {
    typealias Item = DeepLinkClient.InboxItem

    private struct State: Sendable {
        var items: [Item] = []
        var head = 0
        var draining = false
        var closed = false
    }

    private let state = Locked(State())
    private let limit: Int
    private let isDroppable: @Sendable (Item) -> Bool
    private let dropped: @Sendable (Item) -> Void

    /// - Parameters:
    ///   - limit: the most items held (at least 1).
    ///   - isDroppable: whether an item may be dropped when the inbox is full.
    ///   - dropped: told about each dropped item, outside the lock.
    init(limit: Int, isDroppable: @escaping @Sendable (Item) -> Bool, dropped: @escaping @Sendable (Item) -> Void) {
        self.limit = max(limit, 1)
        self.isDroppable = isDroppable
        self.dropped = dropped
    }

    enum Admission: Equatable {
        /// Queued; the caller must start a drain (the inbox was idle).
        case startDrain
        /// Queued; a drain is running and will take it.
        case queued
        /// Refused: the inbox is closed.
        case closed
    }

    /// Queues `item`.
    func put(_ item: Item) -> Admission {
        var victim: Item?
        let admission: Admission = state.withLock { state in
            guard !state.closed else { return .closed }
            state.items.append(item)
            // Only a new link can push an old one out; a barrier never costs a link.
            if isDroppable(item), state.items.count - state.head > limit,
                let index = state.items[state.head...].firstIndex(where: isDroppable)
            {
                victim = state.items[index]
                if index == state.head {
                    state.head += 1
                    // Release the dropped prefix once it is as long as the limit, so memory
                    // stays bounded even when no drain runs for a while.
                    if state.head >= limit {
                        state.items.removeFirst(state.head)
                        state.head = 0
                    }
                } else {
                    state.items.remove(at: index)
                }
            }
            if state.draining { return .queued }
            state.draining = true
            return .startDrain
        }
        if let victim { dropped(victim) }
        return admission
    }

    /// Everything queued, oldest first; empty (and the drain marked finished) when there is
    /// nothing left, so the next ``put(_:)`` starts a new drain.
    func takeAll() -> [Item] {
        state.withLock { state in
            guard state.head < state.items.count else {
                state.items.removeAll(keepingCapacity: true)
                state.head = 0
                state.draining = false
                return []
            }
            // Hand the buffer over instead of copying it; the inbox starts a new one.
            var batch: [Item] = []
            swap(&batch, &state.items)
            if state.head > 0 { batch.removeFirst(state.head) }
            state.head = 0
            return batch
        }
    }

    /// How many items the inbox holds in memory, the dropped ones not yet released included.
    var retainedCount: Int { state.withLock { $0.items.count } }

    /// Refuses further items and returns those still queued.
    func close() -> [Item] {
        state.withLock { state in
            state.closed = true
            let rest = Array(state.items[state.head...])
            state.items.removeAll()
            state.head = 0
            return rest
        }
    }
}
