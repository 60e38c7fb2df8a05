import Foundation
import LinkRelayServerCore
import Synchronization

/// Answers of the database kept in the process for a short while, for what every request reads
/// and little changes: links by code (the redirect and the resolve read one on every tap;
/// LinkForty Core keeps them 300 s in Redis) and API keys by prefix. A found value is kept
/// ``ttl``, a value not found ``missTTL`` at most, so another process's writes are seen within
/// that; the process's own writes forget what they change at once (``forget(_:)``, ``forgetAll()``).
/// Answers are grouped by what a write changes (a link's code) and told apart within a group by
/// the lookup (the project and template it was narrowed to). Bounded: past ``capacity`` groups
/// the expired go, and if none has, all.
///
/// A read under way when its group is forgotten is answered but not kept: it may have seen the
/// row before the write that forgot it, and kept it would be served for a whole ``ttl`` after
/// the write was acknowledged.
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

    private struct State {
        var entries: [String: [String: Entry]] = [:]
        /// Counts every forgetting; a read notes it when it starts.
        var epoch: UInt64 = 0
        /// When each group was last forgotten, while reads are under way (cleared when none is).
        var forgotten: [String: UInt64] = [:]
        /// When everything was last forgotten.
        var allForgotten: UInt64 = 0
        /// Reads under way.
        var reading = 0
    }

    private let state = Mutex(State())

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
        return state.withLock { state -> Value?? in
            guard let entry = state.entries[group]?[lookup], entry.expires > at else { return nil }
            return .some(entry.value)
        }
    }

    /// Keeps the answer to `lookup` in `group`.
    func keep(_ value: Value?, _ group: String, _ lookup: String = "") {
        state.withLock { keep(value, group, lookup, in: &$0) }
    }

    private func keep(_ value: Value?, _ group: String, _ lookup: String, in state: inout State) {
        let ttl = ttl
        guard ttl > .zero else { return }
        let at = now()
        let entry = Entry(value: value, expires: at + (value == nil ? min(missTTL, ttl) : ttl))
        if state.entries[group] == nil, state.entries.count >= capacity {
            state.entries = state.entries.compactMapValues { lookups in
                let live = lookups.filter { $0.value.expires > at }
                return live.isEmpty ? nil : live
            }
            if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
        }
        state.entries[group, default: [:]][lookup] = entry
    }

    /// The kept answer, or `read`'s, kept unless `group` was forgotten while it read.
    func value(_ group: String, _ lookup: String = "", read: () async throws -> Value?) async rethrows -> Value? {
        if let kept = cached(group, lookup) { return kept }
        let started = state.withLock { state -> UInt64 in
            state.reading += 1
            return state.epoch
        }
        let value: Value?
        do {
            value = try await read()
        } catch {
            state.withLock { Self.finishRead(&$0) }
            throw error
        }
        state.withLock { state in
            if state.allForgotten <= started, (state.forgotten[group] ?? 0) <= started { keep(value, group, lookup, in: &state) }
            Self.finishRead(&state)
        }
        return value
    }

    private static func finishRead(_ state: inout State) {
        state.reading -= 1
        if state.reading == 0 { state.forgotten.removeAll(keepingCapacity: true) }
    }

    /// Forgets every answer in `group`: the process wrote what it holds.
    func forget(_ group: String) {
        state.withLock { state in
            state.entries.removeValue(forKey: group)
            state.epoch += 1
            guard state.reading > 0 else { return }
            if state.forgotten.count >= capacity {
                // Too many to tell apart: every read under way is left unkept.
                state.forgotten.removeAll(keepingCapacity: true)
                state.allForgotten = state.epoch
            } else {
                state.forgotten[group] = state.epoch
            }
        }
    }

    /// Forgets everything.
    func forgetAll() {
        state.withLock { state in
            state.entries.removeAll()
            state.epoch += 1
            state.allForgotten = state.epoch
            state.forgotten.removeAll()
        }
    }

    /// How many groups are kept now.
    var count: Int { state.withLock { $0.entries.count } }
}
