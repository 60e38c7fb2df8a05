import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// Health says whether the database takes writes, not only whether the process answers.
@Suite("Health when writes fail", .serialized)
struct WriteHealthTests {
    static func health(_ store: any ServerStore) async throws -> (HTTPResponse.Status, Health) {
        let app = Application(
            router: ServerApplication.router(store: store), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.router) { client in
            try await client.execute(uri: "/api/sdk/v1/health", method: .get) { response in
                (response.status, try JSONDecoder().decode(Health.self, from: Data(String(buffer: response.body).utf8)))
            }
        }
    }

    static func click(_ project: String, _ link: String) -> ClickRecord {
        ClickRecord(
            linkID: link, projectID: project, clickedAt: Date(),
            device: DeviceSignals(
                ip: "203.0.113.7", networkPrefix: "203.0.113",
                userAgent: String(repeating: "x", count: 400), timezone: "UTC", language: "en", screenWidth: 1, screenHeight: 1),
            platform: .ios,
            isBot: false)
    }

    @Test("an SQLite file deleted under the server: 503 with the reason, until it is back")
    func deletedFile() async throws {
        let folder = try Scratch()
        let path = folder.path + "/data.sqlite"
        let store = try await SQLStore.sqlite(path: path)
        _ = try await store.migrate()
        let project = try await store.createProject(name: "p", at: Date())
        let link = LinkRecord(projectID: project.id, shortCode: "gone", originalURL: "https://acme.example", createdAt: Date())
        try await store.insertLink(link)
        #expect(try await Self.health(store).0 == .ok)
        try FileManager.default.moveItem(atPath: path, toPath: path + ".moved")
        let (status, answer) = try await Self.health(store)
        #expect(status == .serviceUnavailable && answer.status == "unhealthy")
        #expect(answer.reason?.contains("was deleted") == true, "\(answer)")
        // Issue 63, 13: a click is refused (the tap says so) rather than written where no one can
        // read it again.
        await #expect { try await store.recordClick(Self.click(project.id, link.id)) } throws: { error in
            (error as? StoreError)?.message.contains("was deleted") == true
        }
        try FileManager.default.moveItem(atPath: path + ".moved", toPath: path)
        #expect(try await Self.health(store).0 == .ok)
        try await store.close()
    }

    @Test(
        "a real write that fails marks the store unhealthy until one succeeds (no time limit); a conflict does not; a probe begun before a newer failure clears nothing"
    )
    func failedWrites() throws {
        let outcomes = WriteOutcomes()
        outcomes.note([Result<Int, any Error>.failure(StoreError(.conflict, "taken"))])
        #expect(outcomes.problem == nil)
        outcomes.note([Result<Int, any Error>.success(1), .failure(StoreError(.failed, "disk I/O error"))])
        #expect(outcomes.problem?.contains("disk I/O error") == true)
        outcomes.note([Result<Int, any Error>.success(1)])
        #expect(outcomes.problem == nil)
        outcomes.note([Result<Int, any Error>.failure(StoreError(.failed, "database or disk is full"))])
        let probed = try #require(outcomes.standing)
        outcomes.note([Result<Int, any Error>.failure(StoreError(.failed, "database or disk is full"))])
        outcomes.clear(unlessNewerThan: probed.failures)
        #expect(outcomes.problem != nil, "a failure noted while the probe ran stands")
        outcomes.clear(unlessNewerThan: try #require(outcomes.standing).failures)
        #expect(outcomes.problem == nil)
    }

    @Test("a full disk (a 2 MiB tmpfs): clicks fail with a typed error, health is 503; once space is freed, writes and health come back")
    func fullDisk() async throws {
        guard let mountPoint = Tmpfs.mount(size: "2m") else { return }
        defer { Tmpfs.unmount(mountPoint) }
        let store = try await SQLStore.sqlite(path: mountPoint + "/data.sqlite")
        _ = try await store.migrate()
        let project = try await store.createProject(name: "p", at: Date())
        let link = LinkRecord(
            projectID: project.id, shortCode: "full", originalURL: "https://acme.example", deepLinkPath: nil, appScheme: nil,
            iosAppStoreURL: nil,
            webFallbackURL: nil, utmParameters: [:], deepLinkParameters: [:], attributionWindowHours: 168, createdAt: Date())
        try await store.insertLink(link)
        // Fill the disk, then write until a click fails.
        let filler = mountPoint + "/filler"
        _ = FileManager.default.createFile(atPath: filler, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
        let chunk = Data(count: 64 * 1024)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        try? handle.close()
        var failure: (any Error)?
        for _ in 0..<2000 {
            do {
                try await store.recordClick(Self.click(project.id, link.id))
            } catch {
                failure = error
                break
            }
        }
        #expect((failure as? StoreError)?.kind == .failed, "\(String(describing: failure))")
        // Issue 63, 4: while health's own one-row write may still fit, it must go on saying
        // what the real write met, every time, for as long as no real write succeeds.
        for check in 1...40 {
            let (status, answer) = try await Self.health(store)
            #expect(
                status == .serviceUnavailable && answer.reason?.contains("the newest write failed") == true, "check \(check): \(answer)")
        }
        // Space freed and no traffic (a load balancer took the server out): the probe, larger
        // than any real write, brings health back without a click.
        try FileManager.default.removeItem(atPath: filler)
        #expect(try await Self.health(store).0 == .ok)
        #expect(try await Self.health(store).0 == .ok)
        try await store.recordClick(Self.click(project.id, link.id))
        #expect(try await Self.health(store).0 == .ok)
        try await store.close()
    }
}

extension WriteHealthTests {
    @Test(
        "a disk smaller than the WAL's checkpoint (a 3 MiB tmpfs; SQLite checkpoints at about 4 MiB of WAL): once full, then freed, writes come back and the WAL is checkpointed"
    )
    func diskSmallerThanCheckpoint() async throws {
        guard let mountPoint = Tmpfs.mount(size: "3m") else { return }
        defer { Tmpfs.unmount(mountPoint) }
        let store = try await SQLStore.sqlite(path: mountPoint + "/data.sqlite")
        _ = try await store.migrate()
        let project = try await store.createProject(name: "p", at: Date())
        let link = LinkRecord(projectID: project.id, shortCode: "small", originalURL: "https://acme.example", createdAt: Date())
        try await store.insertLink(link)
        // A megabyte of something else on the disk, which the operator deletes later.
        let filler = mountPoint + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: Data(count: 1024 * 1024)))
        func writeUntilFull(_ limit: Int) async -> (written: Int, failure: (any Error)?) {
            for written in 0..<limit {
                do {
                    try await store.recordClick(Self.click(project.id, link.id))
                } catch {
                    return (written, error)
                }
            }
            return (limit, nil)
        }
        func walBytes() -> Int { (try? FileManager.default.attributesOfItem(atPath: mountPoint + "/data.sqlite-wal")[.size] as? Int) ?? 0 }
        func sizes() -> String {
            ["data.sqlite", "data.sqlite-wal", "filler"].map { name in
                "\(name) \((try? FileManager.default.attributesOfItem(atPath: mountPoint + "/" + name)[.size] as? Int) ?? 0) bytes"
            }.joined(separator: ", ")
        }
        let first = await writeUntilFull(20_000)
        #expect(first.failure != nil, "the disk filled")
        // The 2 MiB left hold clicks, not old page versions in the WAL (84 clicks before).
        #expect(first.written > 1_000, "\(first.written) clicks; \(sizes())")
        #expect(try await Self.health(store).0 == .serviceUnavailable)
        try FileManager.default.removeItem(atPath: filler)
        // The freed megabyte takes writes again, health comes back.
        let second = await writeUntilFull(200)
        #expect(walBytes() < 256 * 1024, "the WAL stays checkpointed while space is low: \(sizes())")
        #expect(second.written == 200, "\(String(describing: second.failure))")
        #expect(try await Self.health(store).0 == .ok)
        try await store.close()
    }
}

/// A small tmpfs, to fill a disk for real.
enum Tmpfs {
    /// A tmpfs of `size` (`2m`) mounted on a new folder; `nil`, with a message, where mounting
    /// is refused (`failedWrites` tests the same logic by injecting the failure).
    static func mount(size: String) -> String? {
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-disk-\(UUID().uuidString)").path
        guard (try? FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)) != nil,
            Shell.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint]) == 0
        else {
            try? FileManager.default.removeItem(atPath: mountPoint)
            print("skipped: cannot mount a tmpfs here (not root, or no mount permission); failedWrites tests the same logic")
            return nil
        }
        return mountPoint
    }

    static func unmount(_ mountPoint: String) {
        _ = Shell.run("/bin/umount", [mountPoint])
        try? FileManager.default.removeItem(atPath: mountPoint)
    }
}

/// A command run to its end, for test set-up (mount, umount).
enum Shell {
    static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        guard let process = try? ChildProcess(URL(fileURLWithPath: executable), arguments) else { return -1 }
        return process.waitUntilExit().status
    }
}
