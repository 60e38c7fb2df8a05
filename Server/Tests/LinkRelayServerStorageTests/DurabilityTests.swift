import Foundation
import LinkRelay
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// Writes that are on disk before their answer, committed together.
@Suite("Durable writes")
struct DurabilityTests {
    @Test("concurrent writes share commits, and each is answered only after its batch committed")
    func groupCommit() async throws {
        let batches = Mutex<[[Int]]>([])
        let commit = GroupCommit<Int, Int>(limit: 64) { batch in
            batches.withLock { $0.append(batch) }
            return batch.map { .success($0 * 2) }
        }
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for value in 0..<200 { group.addTask { try await commit.submit(value) } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(results.sorted() == (0..<200).map { $0 * 2 })
        let seen = batches.withLock { $0 }
        #expect(seen.flatMap { $0 }.sorted() == Array(0..<200), "every write once")
        #expect(seen.allSatisfy { $0.count <= 64 })
    }

    @Test("one failing write fails alone; the others of its batch are stored", arguments: TestEngine.available)
    func failureIsolated(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("abc")
            func click(_ id: String, link: String) -> ClickRecord {
                ClickRecord(
                    id: id, linkID: link, projectID: world.project.id, clickedAt: world.clock.date, device: DeviceSignals(), platform: nil,
                    isBot: false)
            }
            // A click on a link that does not exist breaks the foreign key.
            let writes = [click("a", link: link.id), click("bad", link: "missing"), click("b", link: link.id), click("c", link: link.id)]
            let outcomes = await withTaskGroup(of: (String, Bool).self) { group in
                for write in writes {
                    group.addTask {
                        do {
                            try await world.store.recordClick(write)
                            return (write.id, true)
                        } catch {
                            return (write.id, false)
                        }
                    }
                }
                return await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
            }
            #expect(outcomes == ["a": true, "bad": false, "b": true, "c": true])
            #expect(Set(try await world.store.clicks(link: link.id).map(\.id)) == ["a", "b", "c"])
            #expect(try await world.store.counts() == StoreCounts(projects: 2, links: 1, clicks: 3, installs: 0, events: 0))
        }
    }

    @Test("a click answered is on disk: a new connection to the file, opened after the answer, reads it", arguments: TestEngine.available)
    func clickIsOnDisk(_ engine: TestEngine) async throws {
        try await ScratchDatabase.with(engine) { store, reopen async throws in
            _ = try await store.migrate()
            let project = try await store.createProject(name: "acme", at: Date())
            let link = LinkRecord(projectID: project.id, shortCode: "abc", originalURL: "https://acme.example", createdAt: Date())
            try await store.insertLink(link)
            try await store.recordClick(
                ClickRecord(
                    id: "c1", linkID: link.id, projectID: project.id, clickedAt: Date(), device: DeviceSignals(), platform: nil,
                    isBot: false))
            // The first connection is still open (nothing flushed by closing it).
            try await reopen { second async throws in
                #expect(try await second.clicks(link: link.id).map(\.id) == ["c1"])
            }
        }
    }
}
