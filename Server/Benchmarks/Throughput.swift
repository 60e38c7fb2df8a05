import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage

/// The baseline of the redirect's throughput: a bare Hummingbird route, in the same kind of
/// process (release, the same server configuration), answering the same 302 from memory, with
/// no key, no database and no click.
enum BareRedirect {
    static func run(port: Int) async throws {
        let targets = ["t1": "https://acme.example/p/42"]
        let router = Router()
        router.get(":code") { _, context -> Response in
            guard let target = targets[context.parameters.get("code") ?? ""] else { return Response(status: .notFound) }
            return Response(status: .found, headers: [.location: target, .cacheControl: "no-store"])
        }
        let app = Application(
            router: router, server: .http1(configuration: .init(idleTimeout: .seconds(30))),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "LinkRelay Server"),
            onServerRunning: { channel in
                FileHandle.standardOutput.write(
                    Data("bare redirect listening on http://127.0.0.1:\(channel.localAddress?.port ?? port)\n".utf8))
            })
        try await app.runService()
    }
}

/// A database with a population's clicks (for the install endpoint under load): one project,
/// its links, the clicks, an SDK key printed on the last line; with `installsFile`, one line per
/// install of the population, `<ip>\t<body>`, for the load client.
enum Seed {
    static func run(database: String, clicks: Int, installsFile: String?) async throws {
        guard let location = DatabaseLocation(database) else { throw StoreError(.unusableLocation, "sqlite:PATH or postgres://…") }
        try await location.open(logger: .init(label: "seed")).withRunning { store in
            guard let store = store as? SQLStore else { return }
            try await seed(store, clicks: clicks, installsFile: installsFile)
        }
    }

    private static func seed(_ store: SQLStore, clicks: Int, installsFile: String?) async throws {
        _ = try await store.migrate()
        let population = Population(clickCount: clicks)
        let project = try await store.createProject(name: "load", at: Date())
        let key = APIKeys.issue(project: project.id, scope: .sdk, name: "load", at: Date())
        try await store.insertKey(key.record)
        var linkIDs: [String] = []
        for index in 0..<population.linkCount {
            // Windows long enough that every click stays a candidate while the load runs.
            let link = LinkRecord(
                projectID: project.id, shortCode: "l\(index)", originalURL: "https://acme.example/\(index)", attributionWindowHours: 2160,
                createdAt: Date())
            try await store.insertLink(link)
            linkIDs.append(link.id)
        }
        // The population's week, moved to end now.
        let shift = Date().timeIntervalSince1970 * 1000 - Double(population.clicks.last?.time ?? 0)
        let data = Signals(population: population, projectID: project.id, linkIDs: linkIDs)
        // The day partitions (PostgreSQL) the server's hourly pass would have made over the week.
        if let first = population.clicks.first?.time, let last = population.clicks.last?.time {
            var day = Date(timeIntervalSince1970: (Double(first) + shift) / 1000)
            while day.timeIntervalSince1970 * 1000 <= Double(last) + shift + 86_400_000 {
                _ = try await store.maintainClickPartitions(now: day, droppingBefore: nil)
                day = day.addingTimeInterval(86_400)
            }
        }
        var batch: [ClickRecord] = []
        for index in population.clicks.indices {
            var record = data.record(index)
            record.clickedAt = record.clickedAt.addingTimeInterval(shift / 1000)
            batch.append(record)
            if batch.count == 20_000 {
                try await store.importClicks(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        try await store.importClicks(batch)
        // What a running database's autovacuum (and the server's hourly pass) would have done:
        // the partitions' statistics, without which the planner chose the wrong index.
        try await store.analyzeNewClickPartitions()
        if let installsFile {
            var lines = ""
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            for install in population.installs {
                let (body, ip, _) = data.install(install)
                lines += ip + "\t" + String(decoding: try encoder.encode(body), as: UTF8.self) + "\n"
            }
            try lines.write(toFile: installsFile, atomically: true, encoding: .utf8)
        }
        print("seeded \(population.clicks.count) clicks, \(population.installs.count) installs")
        print(key.secret)
    }
}
