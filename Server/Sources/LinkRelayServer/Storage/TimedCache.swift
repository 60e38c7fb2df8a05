import Foundation
import Synchronization

/// Answers of the database kept in the process for a short while, for what every request reads
/// and little changes: links by code (the redirect and the resolve read one on every tap;
/// LinkForty Core keeps them 300 s in Redis) and API keys by prefix. A found value is kept
/// ``ttl``, a value not found ``missTTL`` at most, so another process's writes are seen within
/// that; the process's own writes forget what they change at once (``forget(_:)``, ``forgetAll()``).
/// Answers are grouped by what a write changes (a link's code) and told apart within a group by
/// the lookup (the project and template it was narrowed to). Bounded: past ``capacity`` groups
/// the expired go, and if none has, all.
final class TimedCache<Value: Sendable>: Sendable {
    /// The longest a value not found is kept.
    let missTTL: Duration
    /// The most groups kept.
    let capacity: Int
    private let ttlMilliseconds: Atomic<Int>
    private let now: @Sendable () -> ContinuousClock.Instant

    private struct Entry {
        var value: Value?
        var expires: ContinuousClock.Instant
    }

    private let entries = Mutex<[String: [String: Entry]]>([:])

    /// A cache keeping found values `ttl` and missing ones `missTTL` (at most `ttl`), each
    /// clamped to 0…3,600 s, at most `capacity` groups.
    init(
        ttl: Duration, missTTL: Duration, capacity: Int = 10_000,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        ttlMilliseconds = Atomic(Self.milliseconds(ttl))
        self.missTTL = min(max(missTTL, .zero), .seconds(3600))
        self.capacity = max(capacity, 1)
        self.now = now
    }

    /// How long a found value is kept; `0` keeps nothing (every lookup reads the database).
    var ttl: Duration { .milliseconds(ttlMilliseconds.load(ordering: .relaxed)) }

    /// Keeps found values `ttl` from now on (clamped to 0…3,600 s); `0` turns the cache off.
    func setTTL(_ ttl: Duration) {
        ttlMilliseconds.store(Self.milliseconds(ttl), ordering: .relaxed)
        if ttl <= .zero { forgetAll() }
    }

    private static func milliseconds(_ ttl: Duration) -> Int {
        let clamped = min(max(ttl, .zero), .seconds(3600))
        return Int(clamped.components.seconds) * 1000 + Int(clamped.components.attoseconds / 1_000_000_000_000_000)
    }

    /// The kept answer to `lookup` in `group`: `.some(value)` or `.some(nil)` (none), `nil` when
    /// not kept or expired.
    func cached(_ group: String, _ lookup: String = "") -> Value?? {
        guard ttl > .zero else { return nil }
        let at = now()
        return entries.withLock { entries -> Value?? in
            guard let entry = entries[group]?[lookup], entry.expires > at else { return nil }
            return .some(entry.value)
        }
    }

    /// Keeps the answer to `lookup` in `group`.
    func keep(_ value: Value?, _ group: String, _ lookup: String = "") {
        let ttl = ttl
        guard ttl > .zero else { return }
        let at = now()
        let entry = Entry(value: value, expires: at + (value == nil ? min(missTTL, ttl) : ttl))
        entries.withLock { entries in
            if entries[group] == nil, entries.count >= capacity {
                entries = entries.compactMapValues { lookups in
                    let live = lookups.filter { $0.value.expires > at }
                    return live.isEmpty ? nil : live
                }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[group, default: [:]][lookup] = entry
        }
    }

    /// The kept answer, or `read`'s, kept.
    func value(_ group: String, _ lookup: String = "", read: () async throws -> Value?) async rethrows -> Value? {
        if let kept = cached(group, lookup) { return kept }
        let value = try await read()
        keep(value, group, lookup)
        return value
    }

    /// Forgets every answer in `group`: the process wrote what it holds.
    func forget(_ group: String) {
        _ = entries.withLock { $0.removeValue(forKey: group) }
    }

    /// Forgets everything.
    func forgetAll() {
        entries.withLock { $0.removeAll() }
    }

    /// How many groups are kept now.
    var count: Int { entries.withLock { $0.count } }
}
