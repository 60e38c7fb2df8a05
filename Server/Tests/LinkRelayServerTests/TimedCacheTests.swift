import Foundation
import Synchronization
import Testing

@testable import LinkRelayServer

/// What the process keeps of the database: links by code a minute, keys by prefix a second, a
/// miss a second; forgotten at once by the process's own writes; bounded.
@Suite("Timed cache: links and keys")
struct TimedCacheTests {
    /// A clock the test moves.
    final class ManualInstant: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: @Sendable () -> ContinuousClock.Instant { { self.instant.withLock { $0 } } }
        func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
    }

    static func link(_ code: String, project: String = "p") -> LinkRecord {
        LinkRecord(projectID: project, shortCode: code, originalURL: "https://acme.example/\(code)", createdAt: Date())
    }

    @Test("a found link is kept its TTL and no longer; a missing code one second; each lookup apart")
    func expiry() {
        let clock = ManualInstant()
        let cache = TimedCache<LinkRecord>(ttl: .seconds(60), missTTL: .seconds(1), now: clock.now)
        let link = Self.link("abc")
        #expect(cache.cached("abc", "*|*") == nil, "nothing kept yet")
        cache.keep(link, "abc", "*|*")
        cache.keep(nil, "gone", "*|*")
        #expect(cache.cached("abc", "*|*") == .some(link))
        #expect(cache.cached("gone", "*|*") == .some(nil), "kept: no such code")
        #expect(cache.cached("abc", "p|*") == nil, "another lookup of the code is its own")
        clock.advance(.milliseconds(1001))
        #expect(cache.cached("gone", "*|*") == nil, "a miss lasts a second")
        #expect(cache.cached("abc", "*|*") == .some(link))
        clock.advance(.seconds(59))
        #expect(cache.cached("abc", "*|*") == nil, "a hit lasts its TTL")
    }

    @Test("forgetting a code drops every lookup of it; a TTL of 0 keeps nothing; the TTL is clamped; the size is bounded")
    func forgettingAndBounds() {
        let clock = ManualInstant()
        let cache = TimedCache<LinkRecord>(ttl: .seconds(60), missTTL: .seconds(1), capacity: 3, now: clock.now)
        cache.keep(nil, "new", "*|*")
        cache.keep(nil, "new", "p|promo")
        cache.forget("new")
        #expect(cache.cached("new", "*|*") == nil)
        #expect(cache.cached("new", "p|promo") == nil)
        for index in 0..<10 { cache.keep(Self.link("c\(index)"), "c\(index)", "*|*") }
        #expect(cache.count <= 3)
        cache.setTTL(.zero)
        cache.keep(Self.link("off"), "off", "*|*")
        #expect(cache.cached("off", "*|*") == nil && cache.count == 0)
        cache.setTTL(.seconds(100_000))
        #expect(cache.ttl == .seconds(3600))
        cache.setTTL(.seconds(-5))
        #expect(cache.ttl == .zero)
    }

    @Test("through the store: a code asked for before its link exists is found once the process makes it; a kept link is read once", arguments: TestEngine.available)
    func store(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let store = world.store
            #expect(try await store.link(project: nil, shortCode: "later", templateSlug: nil) == nil)
            let link = try await world.link("later")
            #expect(try await store.link(project: nil, shortCode: "later", templateSlug: nil)?.id == link.id, "the miss was forgotten")
            // Kept: the row deleted behind the store's back is still answered within the TTL
            // (what a cache is), and at once no longer with the cache off.
            try await store.execute("DELETE FROM links WHERE short_code = 'later'")
            #expect(try await store.link(project: nil, shortCode: "later", templateSlug: nil)?.id == link.id)
            store.setLinkCacheTTL(.zero)
            #expect(try await store.link(project: nil, shortCode: "later", templateSlug: nil) == nil)
        }
    }

    @Test("keys through the store: revoked in this process, refused at once; revoked behind its back (another process), within the second", arguments: TestEngine.available)
    func keys(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let store = world.store
            let issued = APIKeys.issue(project: world.project.id, scope: .sdk, name: "cached", at: Date())
            #expect(try await store.key(prefix: issued.record.prefix) == nil, "a miss, kept")
            try await store.insertKey(issued.record)
            #expect(try await store.key(prefix: issued.record.prefix)?.id == issued.record.id, "its insert forgot the miss")
            #expect(try await store.revokeKey(id: issued.record.id, at: Date()))
            #expect(try await store.key(prefix: issued.record.prefix)?.revokedAt != nil, "revoked here: at once")
            // Another process revokes a second key (its row changed behind this store's back):
            // kept for at most the cache's second, which a manual clock shows.
            let clock = ManualInstant()
            let cache = TimedCache<APIKeyRecord>(ttl: .seconds(1), missTTL: .seconds(1), now: clock.now)
            let other = APIKeys.issue(project: world.project.id, scope: .sdk, name: "other", at: Date()).record
            cache.keep(other, other.prefix)
            clock.advance(.milliseconds(999))
            #expect(cache.cached(other.prefix) == .some(other))
            clock.advance(.milliseconds(2))
            #expect(cache.cached(other.prefix) == nil, "read again after a second")
        }
    }
}
