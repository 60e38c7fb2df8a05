// A process for the crash-safety tests, and nothing else: it tracks events into a FileStore in
// a loop until it is killed. The test kills it with SIGKILL at random moments and starts it
// again on the same store.
//
//     CrashHelper <store folder> <run number> [<count>]
//     CrashHelper --default-log
//
// With a count it tracks that many events and exits with status 0 (two of them at once share
// a store in the two-process test).
// It prints `loaded <count>` once the queue is read back, then `queued <seq>` for each event
// once `saveQueuedEvents()` has written it. Warnings and errors the client logs go to standard
// error, one per line, for the test to read.
import Foundation
import LinkRelay
import LinkRelayPaylisher

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let arguments = ProcessInfo.processInfo.arguments
// `CrashHelper --default-log`: writes an info line and a warning through the default log sink
// of a configuration nobody set up, for the test of what a new user sees.
if arguments.count == 2, arguments[1] == "--default-log" {
    let logger = LinkRelayLogger(sink: DeepLinkClient.Configuration().logSink)
    logger.info("an info line nobody asked for")
    logger.warning("a warning a new user must see")
    var debugging = DeepLinkClient.Configuration()
    debugging.enableDebugLogging()
    LinkRelayLogger(sink: debugging.logSink).debug("a debug line once debugging is on")
    LinkRelayLogger(sink: .console(minimumLevel: .info)).info("a console line")
    exit(0)
}
guard arguments.count == 3 || arguments.count == 4, let run = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: CrashHelper <store folder> <run number> [<count>]\n".utf8))
    exit(64)
}
let count = arguments.count == 4 ? Int(arguments[3]) : nil

@Sendable func say(_ line: String) {
    // One write per line, straight to the pipe: a buffered line would die with the process.
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let backend = PaylisherBackend(try PaylisherBackend.Configuration(apiKey: "phc_crash_helper", appSchemes: ["diyetim"]))
var configuration = DeepLinkClient.Configuration()
configuration.store = FileStore(directory: URL(fileURLWithPath: arguments[1]))
configuration.eventQueueCapacity = 100_000
configuration.logSink = LogSink(minimumLevel: .warning) { record in
    FileHandle.standardError.write(Data("log \(record.level): \(record.message)\n".utf8))
}
let client = DeepLinkClient(backend: backend, configuration: configuration)

let done = DispatchSemaphore(value: 0)
Task.detached {
    say("loaded \(await client.queuedEventCount)")
    var index = 0
    while index < count ?? .max {
        let seq = run * 100_000 + index
        do {
            try await client.track("tick", properties: ["seq": .int(seq)])
        } catch {
            FileHandle.standardError.write(Data("track failed: \(error)\n".utf8))
            done.signal()
            return
        }
        do {
            try await client.saveQueuedEvents()
        } catch {
            FileHandle.standardError.write(Data("save failed: \(error)\n".utf8))
            done.signal()
            return
        }
        say("queued \(seq)")
        index += 1
    }
    await client.shutdown()
    exit(0)
}
done.wait()
exit(1)
