import Foundation
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import Logging

/// The click store over simulated days: each day the retention pass runs (as the hourly job
/// does at the day's start), then the day's clicks are stored; every 30 days (and on the last)
/// a row of clicks stored and bytes on disk. With the 90-day retention the store grows for 90
/// days and then stays flat, on SQLite (batch deletes; freed pages reused, the file does not
/// shrink) and on PostgreSQL (whole days' partitions dropped).
///
///   linkrelay-server-bench retention [--days 120] [--per-day 5000] [--postgres URL]
enum RetentionRun {
    struct Options {
        var days = 120
        var perDay = 5_000
        var postgres: URL?

        init(_ arguments: ArraySlice<String>) {
            let values = ModeArguments(arguments, names: ["--days", "--per-day", "--postgres"])
            days = values.integer("--days", in: 1...3650) ?? days
            perDay = values.integer("--per-day", in: 1...10_000_000) ?? perDay
            postgres = values.postgres
        }
    }

    /// Runs on SQLite, and on PostgreSQL when it has one; whether the store stayed bounded.
    static func run(_ arguments: ArraySlice<String>) async throws -> Bool {
        let options = Options(arguments)
        var bounded = true
        say("Click retention over \(options.days) simulated days, \(options.perDay) clicks a day, 90 days kept (\(Date()))")
        for engine in ["sqlite"] + (options.postgres == nil ? [] : ["postgres"]) {
            say("\nengine: \(engine)")
            say("| day | clicks made | clicks stored | bytes on disk | bytes per stored click | last pass removed |")
            say("|---|---|---|---|---|---|")
            try await ScratchStore.with(engine: engine, postgres: options.postgres, name: "retention") { scratch in
                let store = scratch.store
                _ = try await store.migrate()
                let project = try await store.createProject(name: "retention", at: Date())
                let link = LinkRecord(projectID: project.id, shortCode: "r", originalURL: "https://acme.example/r", createdAt: Date())
                try await store.insertLink(link)
                let clock = BenchClock()
                let retention = ClickRetention(store: store, clock: clock, logger: Logger(label: "retention"))
                let start = Date(timeIntervalSince1970: 1_780_012_800)  // a UTC midnight
                var made = 0
                var stored = 0
                for day in 0..<options.days {
                    let dayStart = start.addingTimeInterval(TimeInterval(day) * 86_400)
                    clock.set(dayStart.addingTimeInterval(60))
                    let removed = try await retention.sweep()
                    var batch: [ClickRecord] = []
                    for index in 0..<options.perDay {
                        batch.append(
                            ClickRecord(
                                id: "d\(day)c\(index)", linkID: link.id, projectID: project.id,
                                clickedAt: dayStart.addingTimeInterval(86_400 * Double(index) / Double(options.perDay)),
                                device: DeviceSignals(
                                    ip: "203.0.\(index % 250).9",
                                    networkPrefix: "203.0.\(index % 250)", userAgent: Population.appUserAgent, timezone: "Europe/Berlin",
                                    language: "de-DE",
                                    screenWidth: 1179, screenHeight: 2556), platform: .ios, isBot: false))
                        if batch.count == 10_000 {
                            try await store.importClicks(batch)
                            batch.removeAll(keepingCapacity: true)
                        }
                    }
                    try await store.importClicks(batch)
                    made += options.perDay
                    if (day + 1) % 30 == 0 || day + 1 == options.days {
                        stored = try await store.counts().clicks
                        let bytes = try await scratch.bytes()
                        say("| \(day + 1) | \(made) | \(stored) | \(bytes) | \(stored == 0 ? 0 : bytes / stored) | \(removed) |")
                    }
                }
                // At most the 90 days kept and the day being made.
                let limit = 91 * options.perDay
                say("\(stored <= limit ? "met" : "MISSED"): the store holds at most 91 days of clicks (\(stored) ≤ \(limit))")
                if stored > limit { bounded = false }
            }
        }
        return bounded
    }
}

/// A store of its own for one benchmark run: a SQLite file in a scratch folder, or a new
/// PostgreSQL database, running while the run's body does and removed afterwards.
struct ScratchStore {
    let store: SQLStore
    let engine: String
    let folder: URL

    static func with<T>(engine: String, postgres: URL?, name: String, _ body: (ScratchStore) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = "lr_bench_\(name)_\(UInt32.random(in: 0...UInt32.max))"
        if engine == "sqlite" {
            return try await SQLStore.sqlite(path: folder.appendingPathComponent("bench.sqlite").path).withRunning { store in
                try await body(ScratchStore(store: store, engine: engine, folder: folder))
            }
        }
        guard let base = postgres else { throw StoreError(.unusableLocation, "no PostgreSQL") }
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
        components?.path = "/" + name
        guard let url = components?.url else { throw StoreError(.unusableLocation, "no PostgreSQL") }
        return try await SQLStore.postgres(base).withRunning { admin in
            try await admin.execute("CREATE DATABASE \(name)")
            do {
                let result = try await SQLStore.postgres(url).withRunning { store in
                    try await body(ScratchStore(store: store, engine: engine, folder: folder))
                }
                try? await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
                return result
            } catch {
                try? await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
                throw error
            }
        }
    }

    /// The clicks' bytes on disk: the SQLite file and its WAL (everything, indexes included), or
    /// PostgreSQL's click partitions with their indexes and TOAST.
    func bytes() async throws -> Int {
        if engine == "sqlite" {
            return ["bench.sqlite", "bench.sqlite-wal"].compactMap {
                try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent($0).path)[.size] as? Int
            }.reduce(0, +)
        }
        return try await store.clickBytes()
    }

}

/// A bench mode's `--name value` arguments (an unknown name, or one without its value, ends the
/// run with 64), and the PostgreSQL URL from `--postgres` or `LINKRELAY_TEST_POSTGRES`.
struct ModeArguments {
    private var values: [String: String] = [:]

    init(_ arguments: ArraySlice<String>, names: Set<String>) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard names.contains(argument), let value = iterator.next() else {
                FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
                exit(64)
            }
            values[argument] = value
        }
    }

    /// The value of `name` as a whole number, clamped to `range`.
    func integer(_ name: String, in range: ClosedRange<Int>) -> Int? {
        values[name].flatMap { Int($0) }.map { min(max($0, range.lowerBound), range.upperBound) }
    }

    var postgres: URL? {
        (values["--postgres"] ?? ProcessInfo.processInfo.environment["LINKRELAY_TEST_POSTGRES"]).flatMap { URL(string: $0) }
    }
}
