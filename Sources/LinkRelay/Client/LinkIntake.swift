import Foundation

/// The links between ``DeepLinkClient/handle(_:)`` and delivery: the duplicate filter, the
/// resolutions under way (at most `limit` at once), and delivery in arrival order.
///
/// A pure state machine: the client feeds it what happened (a link arrived, a resolution
/// finished) and carries out what it returns (start these resolutions, deliver these links).
///
/// Why per-link deadlines hold: every link's deadline is its arrival plus the same timeout,
/// resolutions start in arrival order, and delivery waits only for links that arrived earlier,
/// so a link waits only for earlier deadlines than its own. A link whose deadline passed while
/// it waited for a free slot is finished without asking the provider.
struct LinkIntake<Waiter: Sendable>: Sendable {
    /// One place in arrival order.
    private enum Slot: Sendable {
        /// Waiting for a free resolution slot.
        case waiting(URL, ParsedLink, deadline: TimeInterval)
        /// Being resolved with the provider.
        case resolving(URL)
        /// Ready to deliver.
        case finished(Finished)
        /// Someone waiting until every earlier link is delivered (``DeepLinkClient/waitUntilIdle()``).
        case barrier(Waiter)
    }

    /// A link's end: the link to deliver, or the failure to report, for the URL handed over.
    enum Finished: Sendable {
        case link(DeepLink, handedOver: URL)
        case failure(DeepLinkError, url: URL)
    }

    /// What the client does next, in this order.
    enum Action: Sendable {
        case deliver(Finished)
        case release(Waiter)
    }

    /// A resolution the client must start.
    struct Start: Sendable {
        let ticket: UInt64
        let url: URL
        /// The link parsed on the device, for the fallback.
        let parsed: ParsedLink
        let deadline: TimeInterval
    }

    private var duplicates: DuplicateFilter
    /// Made on first use, not when the client is created (see ``FirstLaunch``'s waiters: the
    /// first dictionary keyed by `UInt64` makes the runtime scan every conformance).
    private var slotStorage: [UInt64: Slot]?
    private var slots: [UInt64: Slot] {
        _read {
            yield slotStorage ?? [:]
        }
        _modify {
            if slotStorage == nil { slotStorage = [:] }
            yield &slotStorage!
        }
    }
    /// The oldest slot not yet delivered, the next one a new item gets, and the oldest that may
    /// still be waiting for a resolution slot.
    private var head: UInt64 = 0
    private var tail: UInt64 = 0
    private var nextToStart: UInt64 = 0
    private var resolving = 0
    let limit: Int

    init(duplicateWindow: TimeInterval, limit: Int) {
        self.duplicates = DuplicateFilter(window: duplicateWindow)
        self.limit = max(limit, 1)
    }

    /// How many links are between arrival and delivery.
    var count: Int { slots.count }

    /// Whether `url`, handed over at `time`, is new (false: a duplicate within the window).
    mutating func admit(_ url: URL, at time: TimeInterval) -> Bool {
        duplicates.admit(url, at: time)
    }

    /// Adds a link that needs the provider, resolved by `deadline`.
    mutating func enqueue(_ url: URL, parsed: ParsedLink, deadline: TimeInterval) {
        append(.waiting(url, parsed, deadline: deadline))
    }

    /// Adds a link finished at arrival (answered on the device, or not parseable).
    mutating func enqueue(_ finished: Finished) {
        append(.finished(finished))
    }

    /// Adds a barrier, released once every earlier item is delivered.
    mutating func enqueue(barrier waiter: Waiter) {
        append(.barrier(waiter))
    }

    private mutating func append(_ slot: Slot) {
        slots[tail] = slot
        tail += 1
    }

    /// Drops the oldest links not yet delivered nor being resolved until at most `limit` items
    /// wait, and returns their URLs: in an outage, links handed over faster than their
    /// deadlines pass cannot grow memory without bound. Links under way and barriers stay.
    mutating func trim(to limit: Int) -> [URL] {
        guard slots.count > limit else { return [] }
        var dropped: [URL] = []
        var ticket = head
        while slots.count > limit, ticket < tail {
            switch slots[ticket] {
            case .waiting(let url, _, _)?, .finished(.link(_, let url))?, .finished(.failure(_, let url))?:
                slots[ticket] = nil
                dropped.append(url)
            case .resolving?, .barrier?, nil:
                break
            }
            ticket += 1
        }
        return dropped
    }

    /// The waiting links that may start now, oldest first, each counted as resolving.
    mutating func startable() -> [Start] {
        var starts: [Start] = []
        while resolving < limit, nextToStart < tail {
            let ticket = nextToStart
            nextToStart += 1
            guard case .waiting(let url, let parsed, let deadline) = slots[ticket] else { continue }
            slots[ticket] = .resolving(url)
            resolving += 1
            starts.append(Start(ticket: ticket, url: url, parsed: parsed, deadline: deadline))
        }
        return starts
    }

    /// Records the end of a resolution started by ``startable()``.
    mutating func finish(_ ticket: UInt64, _ finished: Finished) {
        guard case .resolving = slots[ticket] else { return }
        slots[ticket] = .finished(finished)
        resolving -= 1
    }

    /// What can be delivered now: the finished links and barriers at the front, in order.
    mutating func ready() -> [Action] {
        var actions: [Action] = []
        while head < tail {
            switch slots[head] {
            case .finished(let finished)?:
                actions.append(.deliver(finished))
            case .barrier(let waiter)?:
                actions.append(.release(waiter))
            case .waiting?, .resolving?:
                return actions
            case nil:
                break
            }
            slots[head] = nil
            head += 1
        }
        return actions
    }

    /// Empties the intake (at shutdown): the barriers to release; links not yet delivered are
    /// dropped, and the resolutions under way must be cancelled by the caller.
    mutating func removeAll() -> [Waiter] {
        var waiters: [Waiter] = []
        for ticket in head..<tail {
            if case .barrier(let waiter)? = slots[ticket] { waiters.append(waiter) }
        }
        slots.removeAll()
        head = tail
        nextToStart = tail
        resolving = 0
        return waiters
    }
}
