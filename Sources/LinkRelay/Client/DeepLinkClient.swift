import Foundation

/// The one object an app talks to: it takes links in, resolves them through a backend, and
/// delivers them through `AsyncStream`s.
///
/// ```swift
/// let client = DeepLinkClient(backend: LocalBackend(.init(schemes: ["myapp"], hosts: ["go.acme.app"])))
///
/// Task { for await link in client.deepLinks() { router.open(link) } }
/// client.handle(url)    // from .onOpenURL, the AppDelegate or the SceneDelegate
/// ```
///
/// Guarantees:
/// - **No lost links.** ``handle(_:)`` accepts a URL from any thread at any time, before
///   anybody listens; links published while nobody listens are held for the first subscriber.
/// - **No doubles.** The same URL handed over twice within
///   ``Configuration/duplicateWindow`` is one link.
/// - **No waiting on the network.** Resolution has a deadline; on timeout, error or an unknown
///   link the locally parsed link is delivered, with ``DeepLink/Resolution/local(_:)`` saying
///   why.
/// - **Links are delivered in the order they were handed over.**
public actor DeepLinkClient {
    /// The backend links are resolved with.
    public nonisolated let backend: any DeepLinkBackend
    /// The configuration the client runs with: the one it was created with, each duration
    /// and count clamped as ``Configuration`` documents.
    public nonisolated let configuration: Configuration

    nonisolated let logger: LinkRelayLogger
    nonisolated let broadcaster: EventBroadcaster
    private nonisolated let inbox: Inbox
    /// Published events on their way to an observing backend (see ``publish(_:replayable:)``);
    /// `nil` when the backend does not observe them.
    private nonisolated let published: AsyncStream<(DeepLinkEvent, Date)>.Continuation?
    nonisolated let clock: any LinkRelayClock
    let redactor: Redactor
    private let policy: DestinationPolicy
    private let gatedPaths: Set<String>

    private var duplicates: DuplicateFilter
    private var defaultTransport: URLSessionTransport?
    private var openedStore: (any PersistentStore)?
    private var device: DeviceInfo?
    var isShutDown = false

    // First launch (see DeepLinkClient+Install.swift).
    var installRecord: InstallRecord?
    var startTask: Task<Void, Never>?
    var currentOutcome: InstallOutcome?
    var outcomeWaiters: [UInt64: CheckedContinuation<InstallOutcome, Never>] = [:]
    var nextWaiterID: UInt64 = 0
    /// Bumped by ``clearData()`` so that results of work started before it are ignored.
    var installGeneration: UInt64 = 0
    /// A link the backend claims was handed over during this launch (set in ``handle(_:)``, so
    /// before it is resolved): a deferred link that arrives afterwards is reported, not
    /// delivered, even if the direct link is still resolving.
    nonisolated let directLinkReceived = Locked(false)

    // Events (see DeepLinkClient+Events.swift).
    var eventQueue: [ConversionEvent]?
    /// Each queued event's JSON, encoded once: saving the queue joins them instead of encoding
    /// every event again on every change.
    var encodedEvents: [UUID: [UInt8]] = [:]
    /// Writes the event queue off the caller's path, for stores that prefer it (files).
    var eventQueueWriter: DeferredWriter?
    var flushTask: Task<Void, Never>?

    /// The app's id for the signed-in user, attached to link requests and handed to the backend.
    /// Kept in memory only. Set it with ``setExternalUserID(_:)``.
    public internal(set) var externalUserID: String?
    /// The campaign of the link that opened the current session, handed to backends that stamp
    /// events with it.
    public internal(set) var sessionAttribution: Campaign?

    /// The link waiting for sign-in, if any (see ``completePendingLink()``).
    public internal(set) var pendingLink: DeepLink?
    var pendingExpiry: Task<Void, Never>?
    var pendingGeneration: UInt64 = 0

    enum InboxItem: Sendable {
        /// A URL from ``handle(_:)``, stamped with its arrival on the client's clock.
        case link(URL, arrivedAt: TimeInterval)
        /// Resumed when the drain reaches it: every item before it has been processed.
        case barrier(CheckedContinuation<Void, Never>)
    }

    /// Creates a client. No I/O happens here, and nothing blocks: work starts with the first
    /// link.
    public init(backend: any DeepLinkBackend, configuration: Configuration = Configuration()) {
        let configuration = configuration.clamped()
        self.backend = backend
        self.configuration = configuration
        self.clock = configuration.clock
        let logger = LinkRelayLogger(sink: configuration.logSink, secrets: backend.secrets, backend: backend.id)
        self.logger = logger
        self.redactor = logger.redactor
        self.broadcaster = EventBroadcaster(
            heldLimit: configuration.undeliveredEventLimit, bufferLimit: configuration.linkBufferLimit, logger: logger)
        self.policy = DestinationPolicy(
            allowedSchemes: configuration.allowedDestinationSchemes.union(backend.appSchemes))
        self.gatedPaths = Set(
            configuration.authenticationRequiredPaths.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "/")) })
        self.duplicates = DuplicateFilter(window: configuration.duplicateWindow)
        self.inbox = Inbox(
            limit: configuration.linkBufferLimit,
            isDroppable: { item in
                if case .link = item { return true }
                return false
            },
            dropped: { item in
                if case .link(let url, _) = item {
                    logger.warning("More links are waiting than linkBufferLimit allows; dropped the oldest: \(url.absoluteString)")
                }
            })
        let observer = backend as? any EventObservingBackend
        let (publishedStream, publishedContinuation) = AsyncStream<(DeepLinkEvent, Date)>.makeStream(bufferingPolicy: .unbounded)
        self.published = observer == nil ? nil : publishedContinuation
        // A second task tells an observing backend about published events, so that what the
        // backend does with them never holds up the next link.
        if let observer {
            Task { [weak self] in
                for await (event, date) in publishedStream {
                    guard let self else { return }
                    await self.tell(observer, event, publishedAt: date)
                }
            }
        }
    }

    deinit {
        eventQueueWriter?.flush()
        Self.release(inbox.close())
        published?.finish()
        broadcaster.finishAll()
        pendingExpiry?.cancel()
        flushTask?.cancel()
    }

    // MARK: - Links in

    /// Hands a URL to the client. Call it from `onOpenURL`, the AppDelegate or the
    /// SceneDelegate, from any thread, at any time, also before anybody listens.
    ///
    /// It never blocks: the URL goes into an inbox that one task drains in order, and the link
    /// is delivered through ``events()`` and ``deepLinks()``.
    ///
    /// - Returns: whether the backend claims the URL. `false` lets you hand it to another
    ///   handler; such a URL is not delivered. Also `false` after ``shutdown()``.
    @discardableResult
    public nonisolated func handle(_ url: URL) -> Bool {
        guard backend.canHandle(url) else {
            logger.debug("Not a link of this backend: \(url.absoluteString)")
            return false
        }
        directLinkReceived.withLock { $0 = true }
        guard enqueue(.link(url, arrivedAt: clock.uptime)) else {
            logger.warning("The client is shut down; the link was not taken: \(url.absoluteString)")
            return false
        }
        return true
    }

    /// Queues an inbox item, starting a drain when the inbox was idle; `false` after shutdown.
    private nonisolated func enqueue(_ item: InboxItem) -> Bool {
        switch inbox.put(item) {
        case .closed:
            return false
        case .queued:
            return true
        case .startDrain:
            Task { await self.drainInbox() }
            return true
        }
    }

    /// Processes the inbox in order, a batch at a time, until it is empty.
    private func drainInbox() async {
        while true {
            let batch = inbox.takeAll()
            if batch.isEmpty { return }
            for item in batch { await process(item) }
        }
    }

    /// Resumes the barriers among items that will not be processed.
    private nonisolated static func release(_ items: [InboxItem]) {
        for case .barrier(let continuation) in items { continuation.resume() }
    }

    /// Returns once every URL handed over before the call has been processed (published, held
    /// or dropped as a duplicate). For tests and the demo.
    nonisolated func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            if !enqueue(.barrier(continuation)) { continuation.resume() }
        }
    }

    private func process(_ item: InboxItem) async {
        switch item {
        case .barrier(let continuation):
            continuation.resume()
        case .link(let url, let arrivedAt):
            await process(url, arrivedAt: arrivedAt)
        }
    }

    private func process(_ url: URL, arrivedAt: TimeInterval) async {
        guard !isShutDown else { return }
        guard duplicates.admit(url, at: arrivedAt) else {
            logger.debug("Same link again within \(configuration.duplicateWindow) s; delivered once: \(url.absoluteString)")
            return
        }
        let link: DeepLink
        do {
            link = try await resolveWithFallback(url)
        } catch {
            publishFailure(error, url: url)
            return
        }
        deliver(link, handedOver: url)
    }

    /// Applies the destination policy and the authentication gate, then publishes: the one path
    /// every link takes, direct or deferred.
    func deliver(_ link: DeepLink, handedOver url: URL) {
        guard !isShutDown else { return }
        if let refusal = policy.refusal(for: link, handedOver: url) {
            publishFailure(refusal, url: url)
            return
        }
        // The link that opens the app defines the session's attribution; one without a campaign
        // ends the previous link's.
        sessionAttribution = link.campaign
        if link.requiresAuthentication {
            hold(link)
        } else {
            publish(.link(link))
        }
    }

    /// Publishes `event` to the app, then, for an ``EventObservingBackend``, queues it for
    /// ``EventObservingBackend/didPublish(_:at:context:)``. Every event the client publishes goes
    /// through here.
    func publish(_ event: DeepLinkEvent, replayable: Bool = false) {
        broadcaster.publish(event, replayable: replayable)
        published?.yield((event, clock.currentDate))
    }

    /// Tells the observing backend about published events, one at a time, each within
    /// `requestTimeout`.
    private func tell(_ backend: any EventObservingBackend, _ event: DeepLinkEvent, publishedAt date: Date) async {
        guard !isShutDown else { return }
        let context = await makeContext()
        let timeout = max(configuration.requestTimeout, 0)
        do {
            try await withDeadline(
                clock.uptime + timeout, on: clock,
                timeoutError: { DeepLinkError(.timedOut, "The backend took longer than \(timeout) s to take in an event.") },
                operation: { await backend.didPublish(event, at: date, context: context) })
        } catch {
            logger.info("The backend did not finish taking in a published event: \(error)")
        }
    }

    // MARK: - Events out

    /// A new stream of every event published from now on: links, the install outcome,
    /// authentication requests and failures.
    ///
    /// Each call makes a new subscription, registered before it returns; any number may run at
    /// once, and each receives every event exactly once, in order. The first subscriber also
    /// receives the events held while nobody listened. The stream ends when its task is
    /// cancelled or after ``shutdown()``.
    public nonisolated func events() -> AsyncStream<DeepLinkEvent> {
        broadcaster.subscribe { $0 }
    }

    /// ``events()`` narrowed to the links to open (direct and deferred).
    public nonisolated func deepLinks() -> AsyncStream<DeepLink> {
        broadcaster.subscribe { $0.link }
    }

    // MARK: - Explicit resolution

    /// Resolves a URL as ``handle(_:)`` would (the same deadline, local fallback and destination
    /// policy) and returns the link instead of publishing it. Authentication gating does not
    /// apply: ``DeepLink/requiresAuthentication`` tells you.
    ///
    /// - Throws: ``DeepLinkError`` `.invalidURL` for a URL the backend does not claim or that
    ///   cannot be parsed, `.rejected` for a destination that is not allowed.
    public func resolve(_ url: URL) async throws -> DeepLink {
        guard backend.canHandle(url) else {
            throw DeepLinkError(.invalidURL, "The backend does not handle this link.", backend: backend.id, url: url)
        }
        let link = try await resolveWithFallback(url)
        if let refusal = policy.refusal(for: link, handedOver: url) { throw refusal }
        return link
    }

    /// The backend's link, or the locally parsed one when the backend fails, does not know the
    /// link, or misses the deadline. Throws only when the URL cannot be parsed at all, or when
    /// the calling task is cancelled.
    private func resolveWithFallback(_ url: URL) async throws -> DeepLink {
        let backend = self.backend
        var link: DeepLink
        if let onDevice = backend.resolveOnDevice(url) {
            // Answered without the provider: no context, no deadline, no task.
            link = onDevice
            if !link.requiresAuthentication, isGatedPath(link) { link.requiresAuthentication = true }
            return link
        }
        // Parsed first: an unparseable link never reaches the provider, and the parse is the
        // fallback if the provider fails.
        let parsed: ParsedLink
        do {
            parsed = try LinkParser.parse(url)
        } catch var error as DeepLinkError {
            error.backend = error.backend ?? backend.id
            throw error
        }
        do {
            link = try await request("Resolving the link", timeout: configuration.resolutionTimeout, url: url) { context in
                try await backend.resolve(url, context: context)
            }
        } catch {
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            let failure = DeepLinkError.wrapping(error, as: .network, "The provider could not resolve the link.", backend: backend.id, url: url)
                .redacted(by: redactor)
            let reason: DeepLink.LocalReason =
                switch failure.code {
                case .timedOut: .timedOut
                case .notFound: .notFound
                default: .failed(failure)
                }
            logger.info("Delivering the locally parsed link (\(reason)): \(url.absoluteString)")
            link = parsed.deepLink(provider: backend.provider(for: url), resolution: .local(reason))
        }
        if !link.requiresAuthentication, isGatedPath(link) { link.requiresAuthentication = true }
        return link
    }

    /// Whether the app's rule gates the link, or the link's path, or the path of an app-scheme
    /// destination (where providers such as LimeLink put the route), is gated.
    private func isGatedPath(_ link: DeepLink) -> Bool {
        if let rule = configuration.authenticationRule, rule(link) { return true }
        guard !gatedPaths.isEmpty else { return false }
        var candidates = [link.pathSegments]
        if let destination = link.destination, let scheme = destination.scheme?.lowercased(),
            backend.appSchemes.contains(scheme), let parsed = try? LinkParser.parse(destination)
        {
            candidates.append(parsed.pathSegments)
        }
        return candidates.contains { segments in
            guard let first = segments.first else { return false }
            return gatedPaths.contains(first) || gatedPaths.contains(segments.joined(separator: "/"))
        }
    }

    /// The context for a backend call. Device information is collected once, on first need.
    func makeContext() async -> BackendContext {
        let device: DeviceInfo
        if let known = self.device {
            device = known
        } else {
            device = await configuration.deviceInfo.deviceInfo()
            self.device = device
        }
        return BackendContext(
            transport: transport(), clock: clock, logger: logger, device: device,
            storage: BackendStorage(store: store(), logger: logger), installID: loadInstallRecord().installID,
            externalUserID: externalUserID, sessionAttribution: sessionAttribution,
            enqueueEvent: { [weak self] event in await self?.enqueueBackendEvent(event) })
    }

    /// The store, opened on first use. When the default folder cannot be found, values are kept
    /// in memory for this run, with an error log line.
    func store() -> any PersistentStore {
        if let openedStore { return openedStore }
        let store: any PersistentStore
        if let configured = configuration.store {
            store = configured
        } else {
            do {
                store = try FileStore.forBackend(backend.id)
            } catch {
                logger.error("No folder for LinkRelay's files; nothing will survive a restart.")
                store = EphemeralStore()
            }
        }
        openedStore = store
        return store
    }

    private func transport() -> any HTTPTransport {
        if let transport = configuration.transport { return transport }
        if let defaultTransport { return defaultTransport }
        let created = URLSessionTransport()
        defaultTransport = created
        return created
    }

    func publishFailure(_ error: any Error, url: URL?) {
        var failure = DeepLinkError.wrapping(error, as: .network, "The link could not be handled.", backend: backend.id, url: url)
        failure.url = failure.url ?? url
        failure = failure.redacted(by: redactor)
        logger.warning(failure.description)
        publish(.failure(failure))
    }

    // MARK: - Lifecycle

    /// Stops the client: every stream finishes, later ``handle(_:)`` calls return `false`, and a
    /// held link is dropped.
    public func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        eventQueueWriter?.flush()
        Self.release(inbox.close())
        published?.finish()
        pendingExpiry?.cancel()
        pendingExpiry = nil
        pendingLink = nil
        flushTask?.cancel()
        resumeOutcomeWaiters(with: currentOutcome ?? .failed(DeepLinkError(.notStarted, "The client was shut down.", backend: backend.id)))
        broadcaster.finishAll()
    }
}
