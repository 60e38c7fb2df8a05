import Foundation
import Synchronization

/// Links by code, kept in the process for a short while: the redirect and the resolve read a
/// link on every tap, and links change far less often than they are tapped (LinkForty Core keeps
/// them 300 s in Redis). A found link is kept ``ttl`` (60 s by default); a code not found, 1 s
/// (a link made through another process on the same PostgreSQL is served within a second).
/// The process's own writes of a link forget its code at once. Bounded: past ``capacity`` codes
/// the expired go, and if none has, all.
final class LinkCache: Sendable {
    /// How long a found link is kept, in milliseconds; `0` keeps nothing (every lookup reads the
    /// database). Set at start (`--link-cache-seconds`).
    private let ttlMilliseconds: Atomic<Int>
    /// How long "no such code" is kept.
    static let missTTL: Duration = .seconds(1)
    /// The most codes kept.
    let capacity: Int
    private let now: @Sendable () -> ContinuousClock.Instant

    private struct Entry {
        var link: LinkRecord?
        var expires: ContinuousClock.Instant
    }

    /// Entries by code, then by the lookup's project and template (`*` for any).
    private let entries = Mutex<[String: [String: Entry]]>([:])

    /// A cache keeping found links `ttl` (clamped to 0…3,600 s), at most `capacity` codes.
    init(ttl: Duration = .seconds(60), capacity: Int = 10_000, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        ttlMilliseconds = Atomic(Self.milliseconds(ttl))
        self.capacity = max(capacity, 1)
        self.now = now
    }

    /// How long a found link is kept.
    var ttl: Duration { .milliseconds(ttlMilliseconds.load(ordering: .relaxed)) }

    /// Keeps found links `ttl` from now on (clamped to 0…3,600 s); `0` turns the cache off.
    func setTTL(_ ttl: Duration) {
        ttlMilliseconds.store(Self.milliseconds(ttl), ordering: .relaxed)
        if ttl <= .zero { entries.withLock { $0.removeAll() } }
    }

    private static func milliseconds(_ ttl: Duration) -> Int {
        let clamped = min(max(ttl, .zero), .seconds(3600))
        return Int(clamped.components.seconds) * 1000 + Int(clamped.components.attoseconds / 1_000_000_000_000_000)
    }

    /// What a lookup is: its code, and the project and template it was narrowed to.
    private static func lookup(project: String?, templateSlug: String?) -> String {
        "\(project ?? "*")|\(templateSlug ?? "*")"
    }

    /// The kept answer to a lookup: `.some(link)` or `.some(nil)` (no such link), `nil` when not
    /// kept or expired.
    func cached(project: String?, shortCode: String, templateSlug: String?) -> LinkRecord?? {
        guard ttl > .zero else { return nil }
        let at = now()
        return entries.withLock { entries -> LinkRecord?? in
            guard let entry = entries[shortCode]?[Self.lookup(project: project, templateSlug: templateSlug)], entry.expires > at else { return nil }
            return .some(entry.link)
        }
    }

    /// Keeps the answer to a lookup.
    func keep(_ link: LinkRecord?, project: String?, shortCode: String, templateSlug: String?) {
        let ttl = ttl
        guard ttl > .zero else { return }
        let at = now()
        let entry = Entry(link: link, expires: at + (link == nil ? min(Self.missTTL, ttl) : ttl))
        entries.withLock { entries in
            if entries[shortCode] == nil, entries.count >= capacity {
                entries = entries.compactMapValues { lookups in
                    let live = lookups.filter { $0.value.expires > at }
                    return live.isEmpty ? nil : live
                }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[shortCode, default: [:]][Self.lookup(project: project, templateSlug: templateSlug)] = entry
        }
    }

    /// Forgets every lookup of `shortCode`: the process wrote a link with it.
    func forget(shortCode: String) {
        _ = entries.withLock { $0.removeValue(forKey: shortCode) }
    }

    /// How many codes are kept now.
    var count: Int { entries.withLock { $0.count } }
}
