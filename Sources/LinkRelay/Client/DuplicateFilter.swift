import Foundation

/// Recognises the same URL handed over twice within a window (the AppDelegate and the
/// SceneDelegate both forwarding the launch URL), measured on the client's clock.
///
/// The window runs from the first occurrence: a third hand-over inside it is also a duplicate,
/// and the first one after it is a new link.
///
/// It remembers at most ``capacity`` URLs (the most recent ones): a duplicate arrives within
/// milliseconds of the original, so a burst of thousands of distinct links costs constant time
/// and memory per link instead of growing with the burst.
struct DuplicateFilter: Sendable {
    let window: TimeInterval
    let capacity: Int
    /// When each remembered URL was first seen.
    private var firstSeen: [String: TimeInterval] = [:]
    /// The remembered URLs in arrival order, oldest first from `head`.
    private var order: [(key: String, time: TimeInterval)] = []
    private var head = 0

    init(window: TimeInterval, capacity: Int = 256) {
        self.window = max(window, 0)
        self.capacity = max(capacity, 1)
    }

    /// How many URLs are remembered.
    var count: Int { firstSeen.count }

    /// True when `url` at `time` is new; false for a duplicate.
    mutating func admit(_ url: URL, at time: TimeInterval) -> Bool {
        let key = url.absoluteString
        if let seen = firstSeen[key], abs(time - seen) < window { return false }
        firstSeen[key] = time
        order.append((key, time))
        forget(before: time)
        return true
    }

    /// Drops entries older than the window, and the oldest beyond `capacity`.
    private mutating func forget(before time: TimeInterval) {
        while head < order.count, order.count - head > capacity || abs(time - order[head].time) >= window {
            let entry = order[head]
            // A URL seen again later has a newer entry; remove the key only for its latest one.
            if firstSeen[entry.key] == entry.time { firstSeen[entry.key] = nil }
            head += 1
        }
        // Compact once the dead prefix is as large as the live part.
        if head > 0, head >= order.count - head {
            order.removeFirst(head)
            head = 0
        }
    }
}
