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
/// - **No waiting on the network.** Every link has a deadline, counted from the moment
///   ``handle(_:)`` received it; links resolve concurrently, so none waits past its own. On
///   timeout, error or an unknown link the adapter's local link is delivered, with
///   ``DeepLink/Resolution/local(_:)`` saying why.
/// - **Links are delivered in the order they were handed over.**
/// - **A clean stop.** After ``shutdown()`` every call returns at once or throws
///   ``DeepLinkError/Code-swift.struct/shutdown``, and nothing is sent.
public actor DeepLinkClient {
    /// The backend links are resolved with.
    public nonisolated let backend: any DeepLinkBackend
    /// What the backend's provider offers beyond delivering links: ask before you call.
    ///
    /// ```swift
    /// shareButton.isHidden = !client.capabilities.contains(.linkCreation)
    /// ```
    ///
    /// Without ``BackendCapabilities/eventTracking``, ``track(_:properties:)`` does nothing;
    /// without ``BackendCapabilities/linkCreation``, ``createLink(_:)`` throws `.unsupported`.
    public nonisolated var capabilities: BackendCapabilities { backend.capabilities }
    /// The configuration the client runs with: the one it was created with, each duration
    /// and count clamped as ``Configuration`` documents.
    public nonisolated let configuration: Configuration

    nonisolated let logger: LinkRelayLogger
    nonisolated let broadcaster: LinkEventBroadcaster
    nonisolated let inbox: Inbox
    /// Published events on their way to an observing backend (see ``publish(_:replayable:)``);
    /// `nil` when the backend does not observe them.
    private nonisolated let published: AsyncStream<(DeepLinkEvent, Date)>.Continuation?
    nonisolated let clock: any LinkRelayClock
    nonisolated let redactor: Redactor
    let policy: DestinationPolicy
    let signInPaths: Set<String>

    // The client's state, one value per concern. `clearData()` and `shutdown()` make one call
    // on each; work that outlives an `await` checks its concern's generation before it commits.

    /// Links from arrival to delivery (see DeepLinkClient+Intake.swift).
    var intake: LinkIntake<CheckedContinuation<Void, Never>>
    /// The resolutions under way, by intake ticket, to cancel at shutdown.
    var resolutions: [UInt64: Task<Void, Never>] = [:]
    /// First launch (see DeepLinkClient+Install.swift).
    var firstLaunch = FirstLaunch()
    /// The conversion-value account and its writes (``Configuration-swift.struct/conversionValues``).
    var conversions = ConversionWriting()
    /// The launch's conversion values, decided when the client is made (Apple asks for the
    /// first value at the first launch, before any consent screen: it reaches no provider).
    nonisolated let conversionRegistration = Locked<Task<Void, Never>?>(nil)
    /// The links handed over with an ad re-engagement's parameter (taken off), until delivered.
    nonisolated let adReengagements = Locked<[URL]>([])
    /// Events: the queue as stored (opened on first use, see DeepLinkClient+Queue.swift) and
    /// its sending (see DeepLinkClient+Events.swift).
    var eventJournal: EventJournal?
    var eventQueue = EventQueueState()
    /// The journal's background writer, for `deinit`, which writes what it holds.
    nonisolated let journalWriter = Locked<DeferredWriter?>(nil)
    /// The link held for sign-in (see DeepLinkClient+SignInHold.swift).
    var signInHold = SignInHold()
    /// What backend calls are made with.
    var session: BackendSession
    private(set) var isShutDown = false

    /// A link the backend claims was handed over during this launch (set in ``handle(_:)``, so
    /// before it is resolved): a deferred link that arrives afterwards is reported, not
    /// delivered, even if the direct link is still resolving.
    nonisolated let directLinkReceived = Locked(false)
    /// Links and events dropped by full buffers: the first drop and every 1,000th are logged.
    nonisolated let linkDrops = DropCounter()
    nonisolated let eventDrops = DropCounter()

    /// The app's id for the signed-in user, attached to link requests and handed to the backend.
    /// Kept in memory only. Set it with ``setExternalUserID(_:)``.
    public var externalUserID: String? { session.externalUserID }
    /// The campaign of the link that opened the current session, handed to backends that stamp
    /// events with it.
    public var sessionAttribution: Campaign? { session.sessionAttribution }
    /// The link waiting for sign-in, if any (see ``completePendingLink()``).
    public var pendingLink: DeepLink? { signInHold.link }

    enum InboxItem: Sendable {
        /// A URL from ``handle(_:)``, stamped with its arrival on the client's clock.
        case link(URL, arrivedAt: TimeInterval)
        /// Resumed when every item before it has been delivered.
        case barrier(CheckedContinuation<Void, Never>)
    }

    /// Runs the link path's pure parts once per process, on a made-up link, on a background task
    /// the first client starts (``warmUp``): the runtime's first-time work for their generic
    /// types (type metadata made from mangled names and the conformance lookups behind them,
    /// hundreds of thousands of instructions) then happens off the caller's thread, right after
    /// the app creates its client at launch, instead of on the first link a user opens. A link
    /// that arrives before it ends pays the rest, once. No I/O, no state: nothing of it is kept.
    private static let firstUseOfTheLinkPath: Void = {
        guard let url = URL(string: "https://linkrelay.invalid/") else { return }
        let link = DeepLink(url: url, origin: .universalLink, provider: "warm-up", resolution: .local(.onDevice), pathSegments: [])
        var intake = LinkIntake<CheckedContinuation<Void, Never>>(duplicateWindow: 1, limit: 1)
        _ = intake.admit(url, at: 0)
        intake.enqueue(.link(link, handedOver: url))
        _ = intake.ready()
        let (stream, continuation) = AsyncStream<DeepLink>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.yield(link)
        continuation.finish()
        withExtendedLifetime(stream) {}
    }()

    /// The warm-up of the link path (``firstUseOfTheLinkPath``), started by the first client.
    private static let warmUp = Task.detached(priority: .background) { _ = firstUseOfTheLinkPath }

    /// Returns once the first client's warm-up of the link path has finished (at once when no
    /// client was created). For instruction counts, which must not count it as the first link's.
    @_spi(Benchmarks) public static func linkPathWarmedUp() async {
        await warmUp.value
    }

    /// Creates a client. No I/O happens here, and nothing blocks: work starts with the first
    /// link. The first client of a process also starts a background task that runs the link
    /// path once on a made-up link, so that neither this call nor the first link pays the Swift
    /// runtime's first use of its types.
    public init(backend: any DeepLinkBackend, configuration: Configuration = Configuration()) {
        _ = Self.warmUp
        let configuration = configuration.clamped()
        self.backend = backend
        self.configuration = configuration
        self.clock = configuration.clock
        let logger = LinkRelayLogger(sink: configuration.logSink, secrets: backend.secrets, backend: backend.id)
        self.logger = logger
        self.redactor = logger.redactor
        for warning in backend.configurationWarnings { logger.warning(warning) }
        self.session = BackendSession(configuration: configuration, backendID: backend.id, logger: logger)
        self.broadcaster = LinkEventBroadcaster(
            heldLimit: configuration.undeliveredEventLimit, bufferLimit: configuration.linkBufferLimit, logger: logger)
        self.policy = DestinationPolicy(
            allowedSchemes: configuration.allowedDestinationSchemes.union(backend.appSchemes))
        self.signInPaths = Set(
            configuration.authenticationRequiredPaths.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "/")) })
        self.intake = LinkIntake(duplicateWindow: configuration.duplicateWindow, limit: configuration.maximumConcurrentResolutions)
        self.inbox = Inbox(
            limit: configuration.linkBufferLimit,
            isDroppable: { item in
                if case .link = item { return true }
                return false
            },
            dropped: { [linkDrops] item in
                if case .link(let url, _) = item { linkDrops.note(url, logger: logger) }
            })
        // Asked of the backend, not found with `as?`: a dynamic cast's first use in a process
        // scans every conformance the runtime knows (about 470,000 instructions).
        let observer = backend.linkEventObserver
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
        if configuration.conversionValues != nil {
            conversionRegistration.withLock { $0 = Task { [weak self] in await self?.conversionsAtLaunch() } }
        }
    }

    deinit {
        // What shutdown() closes with a caller waiting (intake and install-outcome waiters, the
        // shared folder's membership) cannot be open here: a waiter keeps the client alive, and
        // the journal leaves its folder when it is released with the client.
        journalWriter.withLock { $0 }?.flush()
        Self.close(
            inbox: inbox, resolutions: &resolutions, eventQueue: &eventQueue, signInHold: &signInHold, published: published,
            broadcaster: broadcaster)
    }

    /// What ``shutdown()`` and `deinit` both close, one call per concern: links stop arriving
    /// (the inbox's barriers are released) and resolving, the event queue stops sending, the
    /// held link's expiry stops, the observing backend's feed and every subscriber's stream
    /// finish.
    private nonisolated static func close(
        inbox: Inbox, resolutions: inout [UInt64: Task<Void, Never>], eventQueue: inout EventQueueState, signInHold: inout SignInHold,
        published: AsyncStream<(DeepLinkEvent, Date)>.Continuation?, broadcaster: LinkEventBroadcaster
    ) {
        release(inbox.close())
        for resolution in resolutions.values { resolution.cancel() }
        resolutions.removeAll()
        eventQueue.shutdown()
        _ = signInHold.take()
        published?.finish()
        broadcaster.finishAll()
    }

    /// Applies the destination policy and the sign-in hold, then publishes: the one path
    /// every link takes, direct or deferred.
    func deliver(_ link: DeepLink, handedOver url: URL) {
        guard !isShutDown else { return }
        var link = link
        if link.origin != .deferred, takeAdReengagement(url) {
            link.isAdReengagement = true
            reengaged(at: clock.currentDate)
        }
        if let refusal = policy.refusal(for: link, handedOver: url) {
            publishFailure(refusal, url: url)
            return
        }
        // The link that opens the app defines the session's attribution; one without a campaign
        // ends the previous link's.
        session.sessionAttribution = link.campaign
        logger.debug("Delivering \(link)\(link.requiresAuthentication ? ", held until sign-in" : "")")
        if link.requiresAuthentication {
            hold(link)
        } else {
            publish(.link(link))
        }
    }

    /// Publishes `event` to the app, then, for an ``LinkEventObservingBackend``, queues it for
    /// ``LinkEventObservingBackend/didPublish(_:at:context:)``. Every event the client publishes goes
    /// through here. Callable from any thread: a background write reports its failure here.
    nonisolated func publish(_ event: DeepLinkEvent, replayable: Bool = false) {
        broadcaster.publish(event, replayable: replayable)
        published?.yield((event, clock.currentDate))
    }

    /// Tells the observing backend about published events, one at a time, each within
    /// `requestTimeout`.
    private func tell(_ backend: any LinkEventObservingBackend, _ event: DeepLinkEvent, publishedAt date: Date) async {
        guard !isShutDown else { return }
        let context = await makeContext()
        let timeout = configuration.requestTimeout
        do {
            try await withDeadline(
                clock.uptime + timeout, on: clock,
                timeoutError: { DeepLinkError(.timedOut, "The backend took longer than \(timeout) s to take in an event.") },
                operation: { try await backend.didPublish(event, at: date, context: context) })
        } catch {
            logger.info("The backend did not take in a published event: \(error)")
            reportIfCredentialsRejected(error, during: "Reporting an event to the provider")
        }
    }

    // MARK: - Events out

    /// A new stream of every link event published from now on: links, the install outcome,
    /// authentication requests and failures. (The events an app tracks for its provider,
    /// ``track(_:properties:)``, are another thing: they go to the provider, not to the app.)
    ///
    /// Each call makes a new subscription, registered before it returns; any number may run at
    /// once, and each receives every event exactly once, in order. The first subscriber also
    /// receives the events held while nobody listened. The stream ends when its task is
    /// cancelled or after ``shutdown()``.
    public nonisolated func linkEvents() -> AsyncStream<DeepLinkEvent> {
        broadcaster.subscribe { $0 }
    }

    /// The former name of ``linkEvents()``.
    @available(*, deprecated, renamed: "linkEvents()")
    public nonisolated func events() -> AsyncStream<DeepLinkEvent> {
        linkEvents()
    }

    /// ``linkEvents()`` narrowed to the links to open (direct and deferred).
    public nonisolated func deepLinks() -> AsyncStream<DeepLink> {
        broadcaster.subscribe { $0.link }
    }

    /// The context for a backend call. Device information is collected once, on first need.
    func makeContext() async -> BackendContext {
        let withheld = !configuration.fingerprinting.allowsFingerprint
        let device = await deviceInfo()
        var context = session.context(device: withheld ? device.withholdingFingerprint() : device, installID: loadInstallRecord().installID)
        {
            [weak self] event in
            await self?.enqueueBackendEvent(event)
        }
        context.fingerprintWithheld = withheld
        return context
    }

    /// The store, opened on first use (see ``BackendSession/store()``).
    func store() -> any PersistentStore { session.store() }

    func publishFailure(_ error: any Error, url: URL?) {
        var failure = DeepLinkError.wrapping(error, as: .network, "The link could not be handled.", backend: backend.id, url: url)
        failure.url = failure.url ?? url
        failure = failure.redacted(by: redactor)
        logger.warning(failure.description)
        publish(.failure(failure))
    }

    // MARK: - Lifecycle

    /// Stops the client for good: every stream finishes, a held link is dropped, the work under
    /// way (resolutions, the event flush) is cancelled, and the event queue is written. After
    /// it every call returns at once or throws ``DeepLinkError/Code-swift.struct/shutdown``, and
    /// nothing is sent: ``handle(_:)`` returns `false`, ``start()`` returns,
    /// ``installOutcome()`` returns the outcome decided before or `.failed` with code
    /// `.shutdown`. ``clearData()`` and ``clearQueuedEvents()`` still erase what is stored.
    public func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        Self.close(
            inbox: inbox, resolutions: &resolutions, eventQueue: &eventQueue, signInHold: &signInHold, published: published,
            broadcaster: broadcaster)
        for waiter in intake.removeAll() { waiter.resume() }
        // No longer a user of a shared folder: the others may settle claims left behind.
        eventJournal?.close()
        let (outcome, waiters) = firstLaunch.close(
            undecided: .failed(shutdownError("The client was shut down before the install outcome was known.")))
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    /// The error for a call made after ``shutdown()``.
    func shutdownError(_ message: String = "The client is shut down.") -> DeepLinkError {
        DeepLinkError(.shutdown, message, backend: backend.id)
    }
}
