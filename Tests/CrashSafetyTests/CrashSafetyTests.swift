import Foundation
import LinkRelay
import LinkRelayPaylisher
import LinkRelaySimulator
import LinkRelayTesting
import XCTest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Processes exist on macOS and Linux only; the iOS Simulator run skips this target.
#if os(macOS) || os(Linux)

    /// The event queue survives SIGKILL: a helper process tracks events into a `FileStore` in a
    /// loop and is killed at random moments, then started again on the same store. XCTest, not
    /// Swift Testing: the test blocks on pipes and processes, and XCTest runs it alone on its own
    /// thread before the Swift Testing suites start.
    final class CrashSafetyTests: XCTestCase {
        static let kills = 100

        func testEventsSurviveSIGKILLExactlyOnce() async throws {
            let helper = try Self.helperExecutable()
            let store = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-crash-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: store) }

            // Kill points vary from run to run; the timing inside the helper varies anyway.
            var generator = SystemRandomNumberGenerator()
            var reported: [Int] = []  // every seq a helper said was queued, over all runs
            var unreported: Set<Int> = []  // per kill, the seq after the last one reported
            var loads = 0
            for run in 0..<Self.kills {
                // Kill right after launch (during start-up and the first load), or after the
                // helper has reported 0 to 6 events (somewhere in the next track or write).
                let reportsBeforeKill = Int(generator.next() % 8) - 1
                let outcome = try Self.runAndKill(helper, store: store, run: run, afterReports: reportsBeforeKill)
                XCTAssertEqual(outcome.problems, [], "run \(run): the helper logged warnings or errors")
                if let loaded = outcome.loaded {
                    // Everything reported before is on disk; at most one more per earlier kill.
                    XCTAssertGreaterThanOrEqual(loaded, reported.count, "run \(run) lost events on load")
                    XCTAssertLessThanOrEqual(loaded, reported.count + unreported.count, "run \(run) loaded events never tracked")
                    loads += 1
                }
                reported += outcome.queued
                unreported.insert(run * 100_000 + outcome.queued.count)
            }

            // A final client on the same store sends everything to the simulator.
            let (received, remaining) = try await Self.sendEverything(in: store)
            XCTAssertEqual(remaining, 0)
            // Temporary files left by kills mid-write are gone once another process read the store.
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: store.path).filter { $0.hasSuffix(".tmp") }
            XCTAssertEqual(leftovers, [])

            let ticks = received.filter { $0.event == "tick" }
            let uuids = Set(ticks.map(\.uuid))
            let seqs = ticks.compactMap { tick -> Int? in
                if case .int(let seq)? = tick.properties["seq"] { return seq }
                return nil
            }
            XCTAssertEqual(uuids.count, ticks.count, "an event was received twice")
            XCTAssertEqual(Set(seqs).count, seqs.count, "a tracked event was received twice")
            let missing = Set(reported).subtracting(seqs)
            XCTAssertEqual(missing, [], "events reported as queued were lost")
            let extra = Set(seqs).subtracting(reported)
            XCTAssertTrue(extra.isSubset(of: unreported), "received events no helper tracked: \(extra.subtracting(unreported))")
            print(
                "Crash safety: \(Self.kills) SIGKILLs, \(loads) clean reloads, \(reported.count) events reported queued, "
                    + "\(ticks.count) received once each (\(extra.count) written at a kill before being reported), "
                    + "\(missing.count) lost, \(ticks.count - uuids.count) duplicated.")
        }

        /// An app and its extension share one store (an App Group container): two processes
        /// track 200 events each into the same folder at the same time, then a third sends them.
        /// A new user's app, with no log sink set: warnings reach standard error (on Apple platforms,
        /// unified logging), info lines do not; the debug switch and the console sink.
        func testTheDefaultLogShowsWarnings() throws {
            let process = Process()
            process.executableURL = try Self.helperExecutable()
            process.arguments = ["--default-log"]
            let errors = Pipe()
            let output = Pipe()
            process.standardError = errors
            process.standardOutput = output
            try process.run()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0)
            // enableDebugLogging() shows debug lines in the same place; .console() prints.
            XCTAssertEqual(
                stderr, "[LinkRelay] warning: a warning a new user must see\n[LinkRelay] debug: a debug line once debugging is on\n")
            XCTAssertEqual(stdout, "[LinkRelay] info: a console line\n")
        }

        func testTwoProcessesShareAStore() async throws {
            let helper = try Self.helperExecutable()
            let store = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-shared-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: store) }
            let processes = try (1...2).map { run -> (Process, Pipe, Pipe) in
                let process = Process()
                process.executableURL = helper
                process.arguments = [store.path, String(run), "200"]
                let output = Pipe()
                let errors = Pipe()
                process.standardOutput = output
                process.standardError = errors
                try process.run()
                return (process, output, errors)
            }
            var reported: [Int] = []
            for (process, output, errors) in processes {
                var reader = LineReader(output.fileHandleForReading)
                while let line = reader.next() {
                    if line.hasPrefix("queued "), let seq = Int(line.dropFirst(7)) { reported.append(seq) }
                }
                process.waitUntilExit()
                XCTAssertEqual(process.terminationStatus, 0)
                let problems = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                XCTAssertEqual(problems, "", "a helper logged warnings or errors")
            }
            XCTAssertEqual(reported.count, 400)

            let (received, remaining) = try await Self.sendEverything(in: store)
            XCTAssertEqual(remaining, 0)
            let seqs = received.filter { $0.event == "tick" }.compactMap { tick -> Int? in
                if case .int(let seq)? = tick.properties["seq"] { return seq }
                return nil
            }
            print("Two processes: 400 events tracked, \(Set(seqs).count) received, \(seqs.count - Set(seqs).count) twice.")
            XCTAssertEqual(Set(seqs), Set(reported), "\(Set(reported).subtracting(seqs).count) events lost")
            XCTAssertEqual(seqs.count, Set(seqs).count, "events received twice")
        }

        /// A client on `store` sends its queue to a simulated Paylisher: what arrived, and how many
        /// events the client still holds.
        static func sendEverything(in store: URL) async throws -> ([PaylisherEmulation.ReceivedEvent], Int) {
            let simulator = ProviderSimulator()
            let server = simulator.addPaylisher(apiKey: "phc_crash_helper")
            var configuration = DeepLinkClient.Configuration(store: FileStore(directory: store), transport: simulator)
            configuration.eventQueueCapacity = 100_000
            configuration.deviceInfo = StaticDeviceInfo()
            configuration.retryPolicy = .none
            let client = DeepLinkClient(
                backend: PaylisherBackend(try PaylisherBackend.Configuration(apiKey: "phc_crash_helper", appSchemes: ["diyetim"])),
                configuration: configuration)
            await client.start()
            await client.flushEvents()
            let remaining = await client.queuedEventCount
            await client.shutdown()
            return (server.events, remaining)
        }

        // MARK: - Helper process

        struct Outcome {
            var loaded: Int?
            var queued: [Int] = []
            var problems: [String] = []
        }

        /// Starts the helper, reads its lines until it has reported `afterReports` events (or kills
        /// it at once for -1), kills it with SIGKILL, then reads what it printed before it died.
        static func runAndKill(_ helper: URL, store: URL, run: Int, afterReports: Int) throws -> Outcome {
            let process = Process()
            process.executableURL = helper
            process.arguments = [store.path, String(run)]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()

            var outcome = Outcome()
            var reader = LineReader(output.fileHandleForReading)
            func take(_ line: String) {
                if line.hasPrefix("loaded "), let count = Int(line.dropFirst(7)) { outcome.loaded = count }
                if line.hasPrefix("queued "), let seq = Int(line.dropFirst(7)) { outcome.queued.append(seq) }
            }
            if afterReports >= 0 {
                while outcome.queued.count < afterReports || outcome.loaded == nil, let line = reader.next() {
                    take(line)
                }
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            // The lines written before the kill are still in the pipe.
            while let line = reader.next() { take(line) }
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            outcome.problems = stderr.split(separator: "\n").map(String.init)
            return outcome
        }

        /// The helper is built next to the test bundle (the test target depends on it).
        static func helperExecutable() throws -> URL {
            // Linux runs the tests as an executable in the build folder; macOS loads them as a
            // bundle there into Xcode's `xctest`, so `Bundle.main` would be Xcode's folder.
            #if canImport(Darwin)
                var folder = Bundle(for: CrashSafetyTests.self).bundleURL
            #else
                var folder = Bundle.main.executableURL ?? URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
            #endif
            for _ in 0..<5 {
                folder.deleteLastPathComponent()
                let candidate = folder.appendingPathComponent("CrashHelper")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "CrashHelper next to the test bundle"])
        }
    }

    /// Lines from a pipe, read as they arrive; `nil` at the end of the stream.
    struct LineReader {
        private let handle: FileHandle
        private var buffer = Data()
        private var ended = false

        init(_ handle: FileHandle) {
            self.handle = handle
        }

        mutating func next() -> String? {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer = Data(buffer[(newline + 1)...])
                    return line
                }
                if ended { return nil }
                let chunk = handle.availableData
                if chunk.isEmpty { ended = true } else { buffer.append(chunk) }
            }
        }
    }

#endif
