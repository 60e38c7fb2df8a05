import Foundation
import LinkRelayTesting

@testable import LinkRelay

extension AsyncSequence where Self: Sendable {
    /// The first `count` elements; fewer only if the sequence ends first.
    func prefixArray(_ count: Int) async rethrows -> [Element] {
        var elements: [Element] = []
        guard count > 0 else { return elements }
        for try await element in self {
            elements.append(element)
            if elements.count == count { break }
        }
        return elements
    }
}

/// A URL from a literal that is known to be valid.
func url(_ string: String) -> URL {
    guard let url = URL(string: string) else { preconditionFailure("Not a URL: \(string)") }
    return url
}

/// A client over `backend` with a manual clock and a quiet configuration.
func makeClient(
    _ backend: any DeepLinkBackend,
    clock: ManualClock = ManualClock(),
    store: any PersistentStore = InMemoryStore(),
    transport: (any HTTPTransport)? = StubTransport(),
    configure: (inout DeepLinkClient.Configuration) -> Void = { _ in }
) -> DeepLinkClient {
    var configuration = DeepLinkClient.Configuration()
    configuration.clock = clock
    configuration.store = store
    configuration.deviceInfo = StaticDeviceInfo()
    configuration.transport = transport
    // Tests never touch the machine's Keychain (on a Mac the default marker would).
    configuration.installMarker = nil
    configure(&configuration)
    return DeepLinkClient(backend: backend, configuration: configuration)
}

/// The events a client published before a marker link handled now (the client claims the
/// `myapp` scheme): what arrived up to this point, in order.
func eventsUntilMarker(_ client: DeepLinkClient, _ events: AsyncStream<DeepLinkEvent>) async -> [DeepLinkEvent] {
    client.handle(url("myapp://marker?n=\(UUID().uuidString)"))
    var received: [DeepLinkEvent] = []
    for await event in events {
        if event.link?.path == "/marker" { break }
        received.append(event)
    }
    return received
}

/// Collects log lines for assertions.
final class LogCollector: Sendable {
    private let records = Locked<[LogSink.Record]>([])
    private let waiters = ConditionWaiters()

    var sink: LogSink {
        LogSink(minimumLevel: .debug) { [records, waiters] record in
            let count = records.withLock { records in
                records.append(record)
                return records.count
            }
            waiters.update(count)
        }
    }

    var lines: [String] { records.withLock { $0.map(\.message) } }

    /// Returns once a line containing `text` was written (no sleeping: each new line wakes it).
    func waitForLine(containing text: String) async {
        while !lines.contains(where: { $0.contains(text) }) {
            let seen = records.withLock { $0.count }
            await waiters.wait(until: seen + 1) { [records] in records.withLock { $0.count } }
        }
    }
}

/// A backend whose resolutions hang, without a timer on any clock, until they are cancelled
/// (a provider in an outage), except for the URLs told to answer; it counts how many
/// resolutions run at once.
final class HangingBackend: DeepLinkBackend {
    private struct State: Sendable {
        var hanging: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        var running = 0
        var mostRunning = 0
        var started: [URL] = []
        var answering: Set<URL> = []
    }

    private let state = Locked(State())
    private let startWaiters = ConditionWaiters()
    let id: BackendID = "hanging"

    func canHandle(_ url: URL) -> Bool { url.scheme == "myapp" }

    /// `myapp://on-device/…` is answered on the device, without the provider.
    func resolveOnDevice(_ url: URL) -> DeepLink? {
        guard url.host == "on-device" else { return nil }
        return try? LinkParser.parse(url).deepLink(provider: id, resolution: .local(.onDevice))
    }

    /// These URLs resolve at once, parsed, as the server's answer.
    func answer(_ urls: URL...) {
        state.withLock { $0.answering.formUnion(urls) }
    }

    /// The most resolutions that ran at once.
    var mostRunning: Int { state.withLock { $0.mostRunning } }

    /// The URLs whose resolution started, in order.
    var started: [URL] { state.withLock { $0.started } }

    /// Returns once `count` resolutions have started.
    func waitForStarts(_ count: Int) async {
        await startWaiters.wait(until: count) { [state] in state.withLock { $0.started.count } }
    }

    func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
        let url = link.url
        let (id, answers, started) = state.withLock { state -> (UInt64, Bool, Int) in
            state.nextID += 1
            state.running += 1
            state.mostRunning = max(state.mostRunning, state.running)
            state.started.append(url)
            return (state.nextID, state.answering.contains(url), state.started.count)
        }
        startWaiters.update(started)
        defer { state.withLock { $0.running -= 1 } }
        if answers { return try LinkParser.parse(url).deepLink(provider: self.id, resolution: .server) }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let cancelled = state.withLock { state -> Bool in
                    if state.cancelled.remove(id) != nil { return true }
                    state.hanging[id] = continuation
                    return false
                }
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let continuation = state.hanging.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return continuation
            }
            continuation?.resume()
        }
        throw CancellationError()
    }

    func matchInstall(context: BackendContext) async throws -> InstallMatch { .organic() }
}
