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
    /// When each remembered URL was first seen, by a 64-bit hash of the URL (cheaper to hash and
    /// compare than the URL's text on every link); the text is kept to tell a collision apart.
    /// Made on first use, not when the client is created (see ``FirstLaunch``'s waiters).
    private var firstSeenStorage: [UInt64: (time: TimeInterval, url: String)]?
    private var firstSeen: [UInt64: (time: TimeInterval, url: String)] {
        _read {
            yield firstSeenStorage ?? [:]
        }
        _modify {
            if firstSeenStorage == nil { firstSeenStorage = [:] }
            yield &firstSeenStorage!
        }
    }
    /// The remembered URLs in arrival order, oldest first from `head`.
    private var order: [(key: UInt64, time: TimeInterval)] = []
    private var head = 0

    init(window: TimeInterval, capacity: Int = 256) {
        self.window = max(window, 0)
        self.capacity = max(capacity, 1)
    }

    /// How many URLs are remembered.
    var count: Int { firstSeen.count }

    /// True when `url` at `time` is new; false for a duplicate.
    mutating func admit(_ url: URL, at time: TimeInterval) -> Bool {
        var text = url.absoluteString
        let key = text.withUTF8 { Self.fnv1a($0) }
        if let seen = firstSeen[key], seen.url == text, abs(time - seen.time) < window { return false }
        // A different URL with the same hash (practically never) replaces the older entry: at
        // worst a true duplicate of that older URL is delivered twice, never a new link dropped.
        firstSeen[key] = (time, text)
        order.append((key, time))
        forget(before: time)
        return true
    }

    /// FNV-1a over the bytes.
    static func fnv1a(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// Drops entries older than the window, and the oldest beyond `capacity`.
    private mutating func forget(before time: TimeInterval) {
        while head < order.count, order.count - head > capacity || abs(time - order[head].time) >= window {
            let entry = order[head]
            // A URL seen again later has a newer entry; remove the key only for its latest one.
            if firstSeen[entry.key]?.time == entry.time { firstSeen[entry.key] = nil }
            head += 1
        }
        // Compact once the dead prefix is as large as the live part.
        if head > 0, head >= order.count - head {
            order.removeFirst(head)
            head = 0
        }
    }
}
