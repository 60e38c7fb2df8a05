import Dispatch
import Foundation
@_spi(Benchmarks) import LinkRelay
import LinkRelayTesting
import Synchronization

// Work for instruction counts (`Benchmarks/count-instructions`): the same scenario run with N
// and 2N operations under callgrind, so the difference is the marginal cost of N operations,
// free of start-up and set-up.
//
//   linkrelay-instructions subscribe LIVE CALLS
//     a client with LIVE live subscribers; then CALLS times: linkEvents() and drop the stream
//     (a subscribe and an unsubscribe).
//   linkrelay-instructions deliver LINKS
//     a client on a LocalBackend with one subscriber; LINKS times, one at a time: handle a link,
//     then take it from `for await` (handle → delivered link).
//   linkrelay-instructions baseline LINKS
//     the floor of the same work: LINKS times, LinkParser.parse of the same URL and one bare
//     AsyncStream hop (yield, then next) of the parsed link.
//   linkrelay-instructions actor-floor LINKS
//     the floor of any design whose `handle` returns at once from any thread and does the work
//     on an actor: LINKS times, a Task onto an actor that parses the URL and yields the parsed
//     link into a bare AsyncStream, then next. No DeepLink, no duplicate filter, no order.
//   linkrelay-instructions promises-floor LINKS
//     the least that keeps LinkRelay's promises per link, with the lightest structure: the
//     backend's claim checked on the caller, a Task onto an actor that parses, builds the
//     DeepLink (stable id, path) and checks a duplicate window (a dictionary of URL texts), and
//     yields the link into a bare AsyncStream, then next.
//   linkrelay-instructions parse LINKS, components LINKS
//     LinkParser.parse, or URLComponents + queryItems (its baseline), of LINKS URLs: every
//     tenth a 1 KB link with 93 query items, the others short links with a query.
//   linkrelay-instructions track-prepare FOLDER QUEUED, then track FOLDER EVENTS
//     a FileStore folder holding QUEUED events (prepared outside callgrind); a new client on a
//     copy tracks EVENTS more and writes them (saveQueuedEvents): every event on disk, the
//     background writes included.
//   linkrelay-instructions first LINKS
//     the client and its subscriber set up, then LINKS (0 or 1) links: run with 0 and 1, the
//     difference is the first link of a process.
//   linkrelay-instructions launch STEPS
//     an app's launch: 0, no client; 1, the first client created on the main thread (as
//     `App.init` does) and its background warm-up finished; 2, the first client, then at once
//     a link handed over and taken from `for await` (an app launched by a link). The caller's
//     synchronous part of the first init is `createFirstClient`, counted alone with callgrind's
//     --toggle-collect.
//
// Main is synchronous and waits on a semaphore: valgrind 3.19 crashes in an async main (which
// parks the main thread in sigsuspend), not in the concurrency pool's threads.

let arguments = Array(ProcessInfo.processInfo.arguments.dropFirst())
func usage() -> Never {
    FileHandle.standardError.write(
        Data(
            "usage: linkrelay-instructions subscribe LIVE CALLS | deliver LINKS | baseline LINKS | actor-floor LINKS | first LINKS | launch STEPS\n"
                .utf8))
    exit(64)
}

/// The links every scenario uses: distinct (no duplicate filtering), a path, a query, UTM.
func link(_ index: Int) -> URL {
    URL(string: "https://go.acme.app/products/\(index)?color=red&utm_source=mail&utm_campaign=spring")!
}

func makeClient() -> DeepLinkClient {
    var configuration = DeepLinkClient.Configuration(store: InMemoryStore())
    configuration.deviceInfo = StaticDeviceInfo()
    configuration.logSink = .silent
    return DeepLinkClient(backend: LocalBackend(.init(hosts: ["go.acme.app"])), configuration: configuration)
}

/// The first client of the process, created on the calling (main) thread as an app's
/// `App.init` creates it: its backend and the default configuration (the default store, a
/// `FileStore` in the app's Application Support folder, opened on first use). Not inlined, so
/// callgrind can count it alone.
@inline(never)
func createFirstClient() -> DeepLinkClient {
    var configuration = DeepLinkClient.Configuration()
    configuration.logSink = .silent
    return DeepLinkClient(backend: LocalBackend(.init(hosts: ["go.acme.app"])), configuration: configuration)
}

/// Returns once the first client's background warm-up of the link path has finished.
func warmedUp() async {
    await DeepLinkClient.linkPathWarmedUp()
}

/// Runs `work` on the concurrency pool and waits for it. A failure ends the run with it: a
/// failing call must never count as a fast one.
func run(_ work: @escaping @Sendable () async throws -> String) {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Result<String, any Error>>(.success(""))
    Task.detached {
        let outcome: Result<String, any Error>
        do { outcome = .success(try await work()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    switch result.withLock({ $0 }) {
    case .success(let text): print(text)
    case .failure(let error):
        FileHandle.standardError.write(Data("linkrelay-instructions: \(error)\n".utf8))
        exit(1)
    }
}

/// A run that delivered less than it was given fails: it did not do the work it is counted for.
struct Undelivered: Error, CustomStringConvertible {
    let delivered: Int, expected: Int
    var description: String { "delivered \(delivered) of \(expected)" }
}

func expect(_ delivered: Int, of expected: Int) throws {
    guard delivered == expected else { throw Undelivered(delivered: delivered, expected: expected) }
}

/// Starts every thread of the concurrency pool, as an app's own async work has by the time a
/// user opens a link: without it, whether the pool starts its second thread during the counted
/// run (about 535,000 instructions under callgrind) varies from run to run, and the first link's
/// figure with it.
func startEveryPoolThread() {
    final class Arrivals: Sendable { let count = Atomic<Int>(0) }
    let width = ProcessInfo.processInfo.activeProcessorCount
    let arrived = Arrivals()
    run {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<width {
                group.addTask {
                    // Each child holds its thread until all have one.
                    arrived.count.add(1, ordering: .relaxed)
                    while arrived.count.load(ordering: .relaxed) < width { sched_yield() }
                }
            }
        }
        return "pool of \(width) threads started"
    }
}

/// `url` parsed; a link that does not parse ends the run with a failure (it must never count as
/// fast).
func parsedOrFail(_ url: URL) -> ParsedLink {
    do {
        return try LinkParser.parse(url)
    } catch {
        FileHandle.standardError.write(Data("linkrelay-instructions: \(url) did not parse: \(error)\n".utf8))
        exit(1)
    }
}

/// One at a time through a bare stream: `start` gets the stream's continuation and returns how a
/// URL is handed over; each URL is handed over, then one element taken, before the next.
func oneAtATime<Element: Sendable>(
    _ urls: [URL], _ what: String,
    _ start: @escaping @Sendable (AsyncStream<Element>.Continuation) -> @Sendable (URL, Int) throws -> Void
) {
    run {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        let hand = start(continuation)
        var iterator = stream.makeAsyncIterator()
        var delivered = 0
        for (index, url) in urls.enumerated() {
            try hand(url, index)
            if await iterator.next() != nil { delivered += 1 }
        }
        continuation.finish()
        try expect(delivered, of: urls.count)
        return "\(what) \(delivered) of \(urls.count)"
    }
}

guard let scenario = arguments.first else { usage() }
switch scenario {
case "subscribe":
    guard arguments.count == 3, let live = Int(arguments[1]), let calls = Int(arguments[2]) else { usage() }
    let client = makeClient()
    let kept = (0..<live).map { _ in client.linkEvents() }
    for _ in 0..<calls {
        let stream = client.linkEvents()
        withExtendedLifetime(stream) {}
    }
    // Reported so the work is not optimised away, and so a run shows what it did.
    print("subscribers kept: \(kept.count), subscribed and dropped: \(calls)")
case "deliver", "first":
    guard arguments.count == 2, let links = Int(arguments[1]) else { usage() }
    if scenario == "first" { startEveryPoolThread() }
    // At least one URL is made, whatever `links`: `first 0` and `first 1` differ by the link alone.
    let urls = Array((0..<max(links, 1)).map(link).prefix(links))
    run {
        let client = makeClient()
        // The first link after the first client's background warm-up, as a user's tap meets it.
        if scenario == "first" { await warmedUp() }
        var iterator = client.deepLinks().makeAsyncIterator()
        var delivered = 0
        for url in urls {
            client.handle(url)
            if await iterator.next() != nil { delivered += 1 }
        }
        await client.shutdown()
        try expect(delivered, of: urls.count)
        return "delivered \(delivered) of \(urls.count)"
    }
case "launch":
    guard arguments.count == 2, let steps = Int(arguments[1]), (0...2).contains(steps) else { usage() }
    startEveryPoolThread()
    guard steps > 0 else {
        print("no client")
        break
    }
    let client = createFirstClient()
    if steps == 1 {
        run {
            await warmedUp()
            return "first client created, warm-up finished"
        }
    } else {
        let url = link(1)
        run {
            var iterator = client.deepLinks().makeAsyncIterator()
            client.handle(url)
            try expect(await iterator.next() == nil ? 0 : 1, of: 1)
            // The process goes on, as an app does: the warm-up finishes and is counted.
            await warmedUp()
            return "first client created, then a link delivered"
        }
    }
    withExtendedLifetime(client) {}
case "baseline":
    guard arguments.count == 2, let links = Int(arguments[1]) else { usage() }
    let urls = (0..<links).map(link)
    oneAtATime(urls, "parsed and passed") { (continuation: AsyncStream<ParsedLink>.Continuation) in
        { url, _ in continuation.yield(try LinkParser.parse(url)) }
    }
case "actor-floor":
    guard arguments.count == 2, let links = Int(arguments[1]) else { usage() }
    let urls = (0..<links).map(link)
    /// The least an actor core does with a link: hop onto it, parse, yield.
    actor Core {
        let continuation: AsyncStream<ParsedLink>.Continuation
        init(_ continuation: AsyncStream<ParsedLink>.Continuation) { self.continuation = continuation }
        func take(_ url: URL) {
            let parsed = parsedOrFail(url)
            continuation.yield(parsed)
        }
        nonisolated func handle(_ url: URL) { Task { await self.take(url) } }
    }
    oneAtATime(urls, "hopped, parsed and passed") { (continuation: AsyncStream<ParsedLink>.Continuation) in
        let core = Core(continuation)
        return { url, _ in core.handle(url) }
    }
case "promises-floor":
    guard arguments.count == 2, let links = Int(arguments[1]) else { usage() }
    let urls = (0..<links).map(link)
    let backend = LocalBackend(.init(hosts: ["go.acme.app"]))
    actor Core {
        let continuation: AsyncStream<DeepLink>.Continuation
        var seen: [String: TimeInterval] = [:]
        init(_ continuation: AsyncStream<DeepLink>.Continuation) { self.continuation = continuation }
        func take(_ url: URL, at time: TimeInterval) {
            let text = url.absoluteString
            if let last = seen[text], time - last < 1 { return }
            seen[text] = time
            let parsed = parsedOrFail(url)
            continuation.yield(parsed.deepLink(provider: "local", resolution: .local(.onDevice)))
        }
    }
    oneAtATime(urls, "claimed, hopped, parsed, built, filtered and passed") { (continuation: AsyncStream<DeepLink>.Continuation) in
        let core = Core(continuation)
        return { url, index in
            guard backend.canHandle(url) else { return continuation.finish() }
            Task { await core.take(url, at: TimeInterval(index)) }
        }
    }
case "parse", "components":
    guard arguments.count == 2, let links = Int(arguments[1]) else { usage() }
    let long = URL(string: "https://go.acme.app/campaign/spring?" + (0..<93).map { "k\($0)=v\($0 * 7)" }.joined(separator: "&"))!
    let urls = (0..<links).map { $0 % 10 == 9 ? long : link($0) }
    var items = 0
    for url in urls {
        if scenario == "parse" {
            items += try LinkParser.parse(url).queryItems.count
        } else {
            items += URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.count ?? 0
        }
    }
    print("query items read: \(items)")
case "track-prepare", "track":
    // track-prepare FOLDER QUEUED: a FileStore folder holding QUEUED events (run outside callgrind).
    // track FOLDER EVENTS: a new client on that folder tracks EVENTS more and writes them
    // (saveQueuedEvents): every event on disk, the background writes included.
    guard arguments.count == 3, let number = Int(arguments[2]) else { usage() }
    let folder = URL(fileURLWithPath: arguments[1])
    let preparing = scenario == "track-prepare"
    run {
        var configuration = DeepLinkClient.Configuration(store: FileStore(directory: folder))
        configuration.deviceInfo = StaticDeviceInfo()
        configuration.logSink = .silent
        configuration.eventQueueCapacity = 1_000_000
        let client = DeepLinkClient(backend: InMemoryBackend(), configuration: configuration)
        let before = await client.queuedEventCount
        for index in 0..<number { try await client.track("purchase", properties: ["sku": "A-1", "n": .int(index)]) }
        try await client.saveQueuedEvents()
        let stored = await client.queuedEventCount
        await client.shutdown()
        return preparing ? "prepared \(stored)" : "queued \(stored) (\(before) before)"
    }
default:
    usage()
}
