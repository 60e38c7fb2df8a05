import Foundation
import Synchronization

/// How many clicks one address may have recorded: a token bucket per IPv4 address or IPv6 /64
/// (``key(for:)``), refilled at ``perMinute`` a minute, holding at most a minute's worth. Past it, the link still answers (a
/// person behind a busy carrier address still reaches the destination) but the click is not
/// stored, so it cannot attribute an install. One client wrote about 4,000 clicks a second
/// before, each kept 90 days.
///
/// What it costs a real carrier: a carrier-grade NAT puts many phones behind one address; past
/// ``perMinute`` taps a minute from one such address, the extra taps are not recorded. At the
/// default of 120 a minute that is a viral link on a busy mobile network, where a fingerprint
/// match is near chance anyway (the address is shared by everyone there).
package final class ClickLimiter: Sendable {
    /// Clicks recorded per address per minute; `0` for no limit.
    package let perMinute: Int
    /// The most addresses tracked at once; past it, those idle for a minute (their bucket full
    /// again) are forgotten, and if none are, all are.
    let trackedLimit: Int

    /// What one client is counted by: an IPv4 address, or an IPv6 address's /64 (a subscriber
    /// holds a whole /64 and can send from any address in it; counting addresses would let one
    /// client write 2⁶⁴ minutes' worth).
    package static func key(for address: String?) -> String {
        guard let address else { return "-" }
        guard ClientAddress.isIPv6(address) else { return address }
        return ClientAddress.networkPrefix(of: address, includingPrivate: true).map { $0 + "::/64" } ?? address
    }

    /// On an answer whose click was not recorded: `X-LinkRelay-Click-Recorded: false`.
    package static let headerName = "X-LinkRelay-Click-Recorded"

    private struct Bucket {
        var tokens: Double
        var at: Date
    }

    private let buckets = Mutex<[String: Bucket]>([:])

    package init(perMinute: Int, trackedLimit: Int = 100_000) {
        self.perMinute = max(perMinute, 0)
        self.trackedLimit = max(trackedLimit, 1)
    }

    /// Stores `click` unless `address` is past its limit; whether it was stored.
    package func record(_ click: ClickRecord, from address: String?, in store: any ClickStore, at now: Date) async throws -> Bool {
        guard allow(Self.key(for: address), at: now) else { return false }
        try await store.recordClick(click)
        return true
    }

    /// How many addresses are tracked now.
    var trackedCount: Int { buckets.withLock { $0.count } }

    /// Whether a click from `address` at `now` may be recorded (and counts it when it may).
    func allow(_ address: String, at now: Date) -> Bool {
        guard perMinute > 0 else { return true }
        let capacity = Double(perMinute)
        let rate = capacity / 60
        return buckets.withLock { buckets in
            var bucket = buckets[address] ?? Bucket(tokens: capacity, at: now)
            let elapsed = now.timeIntervalSince(bucket.at)
            // A clock that goes back refills nothing; NaN cannot come from two dates.
            bucket.tokens = min(capacity, bucket.tokens + max(elapsed, 0) * rate)
            bucket.at = max(bucket.at, now)
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            if buckets[address] == nil, buckets.count >= trackedLimit {
                buckets = buckets.filter { now.timeIntervalSince($0.value.at) < 60 }
                if buckets.count >= trackedLimit { buckets.removeAll(keepingCapacity: true) }
            }
            buckets[address] = bucket
            return allowed
        }
    }
}
