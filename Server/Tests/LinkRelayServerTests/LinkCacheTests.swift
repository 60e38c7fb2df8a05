import Foundation
import Synchronization
import Testing

@testable import LinkRelayServer

/// Links by code in the process: kept a minute, "no such code" a second, forgotten at once by the
/// process's own writes, bounded.
@Suite("Link cache")
struct LinkCacheTests {
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
        let cache = LinkCache(ttl: .seconds(60), now: clock.now)
        let link = Self.link("abc")
        #expect(cache.cached(project: nil, shortCode: "abc", templateSlug: nil) == nil, "nothing kept yet")
        cache.keep(link, project: nil, shortCode: "abc", templateSlug: nil)
        cache.keep(nil, project: nil, shortCode: "gone", templateSlug: nil)
        #expect(cache.cached(project: nil, shortCode: "abc", templateSlug: nil) == .some(link))
        #expect(cache.cached(project: nil, shortCode: "gone", templateSlug: nil) == .some(nil), "kept: no such code")
        #expect(cache.cached(project: "p", shortCode: "abc", templateSlug: nil) == nil, "another lookup of the code is its own")
        clock.advance(.milliseconds(1001))
        #expect(cache.cached(project: nil, shortCode: "gone", templateSlug: nil) == nil, "a miss lasts a second")
        #expect(cache.cached(project: nil, shortCode: "abc", templateSlug: nil) == .some(link))
        clock.advance(.seconds(59))
        #expect(cache.cached(project: nil, shortCode: "abc", templateSlug: nil) == nil, "a hit lasts its TTL")
    }

    @Test("forgetting a code drops every lookup of it; a TTL of 0 keeps nothing; the TTL is clamped; the size is bounded")
    func forgettingAndBounds() {
        let clock = ManualInstant()
        let cache = LinkCache(ttl: .seconds(60), capacity: 3, now: clock.now)
        cache.keep(nil, project: nil, shortCode: "new", templateSlug: nil)
        cache.keep(nil, project: "p", shortCode: "new", templateSlug: "promo")
        cache.forget(shortCode: "new")
        #expect(cache.cached(project: nil, shortCode: "new", templateSlug: nil) == nil)
        #expect(cache.cached(project: "p", shortCode: "new", templateSlug: "promo") == nil)
        for index in 0..<10 { cache.keep(Self.link("c\(index)"), project: nil, shortCode: "c\(index)", templateSlug: nil) }
        #expect(cache.count <= 3)
        cache.setTTL(.zero)
        cache.keep(Self.link("off"), project: nil, shortCode: "off", templateSlug: nil)
        #expect(cache.cached(project: nil, shortCode: "off", templateSlug: nil) == nil && cache.count == 0)
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
}
