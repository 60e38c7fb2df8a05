import Foundation
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

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

    @Test("a read under way while its code is forgotten (an edit committed meanwhile) is answered but not kept")
    func readDuringForget() async {
        let cache = TimedCache<LinkRecord>(ttl: .seconds(60), missTTL: .seconds(1))
        let before = Self.link("abc")
        // The read saw the row as it was; the edit forgot the code before the read came back.
        let answered = await cache.value("abc", "*|*") {
            cache.forget("abc")
            return before
        }
        #expect(answered == before, "the request under way gets what it read")
        #expect(cache.cached("abc", "*|*") == nil, "kept, it would be served for a minute after the edit")
        // Forgetting everything (another process was away) counts too.
        _ = await cache.value("xyz", "*|*") {
            cache.forgetAll()
            return Self.link("xyz")
        }
        #expect(cache.cached("xyz", "*|*") == nil)
        // Forgetting another code does not stop this one being kept.
        _ = await cache.value("abc", "*|*") {
            cache.forget("other")
            return before
        }
        #expect(cache.cached("abc", "*|*") == .some(before))
    }

    @Test(
        "through the store: a code asked for before its link exists is found once the process makes it; a kept link is read once",
        arguments: TestEngine.available)
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

    @Test(
        "keys through the store: revoked in this process, refused at once; revoked behind its back (another process), within the second",
        arguments: TestEngine.available)
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

/// Two processes on one PostgreSQL: what one writes, the other forgets at once (`NOTIFY`),
/// instead of when its cache's time runs out.
@Suite("Caches across processes", .timeLimit(.minutes(1)))
struct CrossProcessCacheTests {
    @Test(
        "a notice names the process that made the change: its own is not heard again (it would only stop reads under way being kept); an older server's, without one, is a change"
    )
    func origins() {
        #expect(PostgresEngine.change(in: "A1 link:spring", from: "A1") == nil)
        #expect(PostgresEngine.change(in: "B2 link:spring", from: "A1") == "link:spring")
        #expect(PostgresEngine.change(in: "link:spring", from: "A1") == "link:spring")
        #expect(PostgresEngine.change(in: "B2 *", from: "A1") == "*")
    }

    @Test(
        "a link made through one server is served by the other at once; a key revoked through one is refused by the other at once",
        arguments: TestEngine.available.filter { $0 == .postgres })
    func changesAreHeard(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let first = world.store
            guard let url = TestEngine.postgresURL else { return }
            // The world's database, opened again as a second process would.
            let name = try #require(
                try await first.engine.select("SELECT current_database() AS name").first.map { try $0["name"] as String })
            var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            components.path = "/" + name
            try await SQLStore.postgres(try #require(components.url)).withRunning { second in
                await second.listening()
                await first.listening()
                // The second keeps "no such code" (a second) and the key (a second)…
                #expect(try await second.link(project: nil, shortCode: "fresh", templateSlug: nil) == nil)
                let sdk = try #require(APIKeys.prefix(of: world.sdkKey))
                #expect(try await second.key(prefix: sdk)?.revokedAt == nil)
                let heard = AsyncStream.makeStream(of: String.self)
                second.onForget = { heard.continuation.yield($0) }
                // …the first makes the link and revokes the key…
                let link = try await world.link("fresh")
                let record = try #require(try await first.key(prefix: sdk))
                #expect(try await first.revokeKey(id: record.id, at: Date()))
                var changes = heard.stream.makeAsyncIterator()
                #expect(await changes.next() == SQLStore.CacheChange.link("fresh"))
                #expect(await changes.next() == SQLStore.CacheChange.keys)
                // …and the second sees both at once, well within the second it would have kept them.
                #expect(try await second.link(project: nil, shortCode: "fresh", templateSlug: nil)?.id == link.id)
                #expect(try await second.key(prefix: sdk)?.revokedAt != nil)
            }
        }
    }
}
