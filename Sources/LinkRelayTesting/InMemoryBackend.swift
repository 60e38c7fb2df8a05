import Foundation
@_spi(Backend) import LinkRelay

/// A scriptable backend for tests: say what each URL resolves to, how long it takes, and what
/// the install match finds; then read what the client asked for.
///
/// ```swift
/// let backend = InMemoryBackend(schemes: ["myapp"], hosts: ["go.acme.app"])
/// backend.script(URL(string: "https://go.acme.app/sale")!, .failure(DeepLinkError(.server(status: 503), "down")))
/// backend.script(URL(string: "https://go.acme.app/slow")!, .parsed, delay: 10)   // on the client's clock
/// let client = DeepLinkClient(backend: backend)
/// ```
///
/// A URL without a script resolves according to ``unscriptedLinks``.
public final class InMemoryBackend: EventTrackingBackend, LinkCreatingBackend, LinkEventObservingBackend, LateAppleAdsTokenBackend, Sendable
{
    /// What resolving a URL gives.
    public enum Resolution: Sendable {
        /// This link.
        case link(DeepLink)
        /// The URL parsed by ``/LinkRelay/LinkParser``, as if the server had resolved it.
        case parsed
        /// This error.
        case failure(DeepLinkError)
    }

    /// A call the client made, in order.
    public enum Call: Sendable, Hashable {
        /// ``resolve(_:context:)`` for this URL.
        case resolve(URL)
        /// ``matchInstall(context:)``.
        case matchInstall
        /// ``send(_:context:)`` with this event.
        case send(ConversionEvent)
        /// ``createLink(_:context:)`` with this request.
        case createLink(LinkRequest)
        /// ``addAppleAdsToken(_:toInstall:context:)``: a late Apple Ads token for this install.
        case addAppleAdsToken(token: String, installID: String)
    }

    private struct Script: Sendable {
        var resolution: Resolution
        var delay: TimeInterval
    }

    private struct State: Sendable {
        var scripts: [URL: Script] = [:]
        var unscripted: Resolution = .parsed
        var install: Result<InstallMatch, DeepLinkError> = .success(.organic())
        var installDelay: TimeInterval = 0
        var sendResult: Result<Void, DeepLinkError> = .success(())
        var linkCreationFailure: DeepLinkError?
        var lateTokenResult: Result<Void, DeepLinkError> = .success(())
        var calls: [Call] = []
        var contexts: [BackendContext] = []
        var observed: [DeepLinkEvent] = []
    }

    /// The backend's name (default `in-memory`).
    public let id: BackendID
    /// The app schemes it claims.
    public let appSchemes: Set<String>
    /// The web hosts this backend claims.
    public let hosts: Set<String>
    /// Values the client must keep out of logs and errors.
    public let secrets: [String]
    /// Whether it names the install only in its install report, as LinkForty does
    /// (``/LinkRelay/DeepLinkBackend/needsInstallReport``).
    public let needsInstallReport: Bool
    /// Whether its install report takes the Apple Ads token
    /// (``/LinkRelay/BackendCapabilities/appleAdsToken``).
    public let acceptsAppleAdsToken: Bool
    /// Whether it takes a token after the install report
    /// (``/LinkRelay/BackendCapabilities/lateAppleAdsToken``, as LinkRelay Server does).
    public let acceptsLateAppleAdsToken: Bool
    private let state = Locked(State())
    private let observationWaiters = ConditionWaiters()

    /// A backend claiming `schemes` and `hosts` (lower-cased). `secrets` are values the client
    /// must keep out of logs and errors; `needsInstallReport` makes it a backend that names the
    /// install only in its install report; `acceptsAppleAdsToken` one whose report takes the
    /// Apple Ads token, and `acceptsLateAppleAdsToken` one that also takes it after the report.
    public init(
        id: BackendID = "in-memory",
        schemes: Set<String> = ["myapp"],
        hosts: Set<String> = ["links.example.com"],
        secrets: [String] = [],
        needsInstallReport: Bool = false,
        acceptsAppleAdsToken: Bool = false,
        acceptsLateAppleAdsToken: Bool = false
    ) {
        self.needsInstallReport = needsInstallReport
        self.acceptsAppleAdsToken = acceptsAppleAdsToken || acceptsLateAppleAdsToken
        self.acceptsLateAppleAdsToken = acceptsLateAppleAdsToken
        self.id = id
        self.appSchemes = Set(schemes.map { $0.lowercased() })
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.secrets = secrets
    }

    /// What a URL without a script resolves to. Default ``Resolution/parsed``.
    public var unscriptedLinks: Resolution {
        get { state.withLock { $0.unscripted } }
        set { state.withLock { $0.unscripted = newValue } }
    }

    /// Resolving `url` gives `resolution`, after `delay` seconds on the client's clock.
    public func script(_ url: URL, _ resolution: Resolution, delay: TimeInterval = 0) {
        state.withLock { $0.scripts[url] = Script(resolution: resolution, delay: delay) }
    }

    /// The install match gives `result`, after `delay` seconds on the client's clock.
    public func scriptInstall(_ result: Result<InstallMatch, DeepLinkError>, delay: TimeInterval = 0) {
        state.withLock {
            $0.install = result
            $0.installDelay = delay
        }
    }

    /// Link creation fails with `failure` from now on (`nil`: links are made again).
    public func scriptLinkCreation(_ failure: DeepLinkError?) {
        state.withLock { $0.linkCreationFailure = failure }
    }

    /// Adding a late Apple Ads token gives `result` from now on (``addAppleAdsToken(_:toInstall:context:)``).
    public func scriptLateAppleAdsToken(_ result: Result<Void, DeepLinkError>) {
        state.withLock { $0.lateTokenResult = result }
    }

    /// Sending an event gives `result` from now on.
    public func scriptEventSending(_ result: Result<Void, DeepLinkError>) {
        state.withLock { $0.sendResult = result }
    }

    /// Every call so far, in order.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// Every event the client told this backend it published
    /// (``/LinkRelay/LinkEventObservingBackend/didPublish(_:at:context:)``), in order.
    public var observedEvents: [DeepLinkEvent] { state.withLock { $0.observed } }

    /// The links among ``observedEvents``: what the client delivered.
    public var deliveredLinks: [DeepLink] { observedEvents.compactMap(\.link) }

    /// Returns once the client has told this backend about at least `count` published events (or
    /// the calling task is cancelled).
    public func waitForObservedEvents(count: Int) async {
        await observationWaiters.wait(until: count) { [state] in state.withLock { $0.observed.count } }
    }

    public func didPublish(_ event: DeepLinkEvent, at date: Date, context: BackendContext) async {
        let count = state.withLock { state -> Int in
            state.observed.append(event)
            return state.observed.count
        }
        observationWaiters.update(count)
    }

    /// The context of every call so far, in order.
    public var contexts: [BackendContext] { state.withLock { $0.contexts } }

    /// How many install matches were asked for.
    public var installMatchCount: Int {
        calls.filter { $0 == .matchInstall }.count
    }

    /// The URLs resolved so far, in order.
    public var resolvedURLs: [URL] {
        calls.compactMap { if case .resolve(let url) = $0 { url } else { nil } }
    }

    /// The late Apple Ads tokens the client added so far, in order, with the install each went to.
    public var lateAppleAdsTokens: [(token: String, installID: String)] {
        calls.compactMap { if case .addAppleAdsToken(let token, let installID) = $0 { (token, installID) } else { nil } }
    }

    /// The events sent so far, in order.
    public var sentEvents: [ConversionEvent] {
        calls.compactMap { if case .send(let event) = $0 { event } else { nil } }
    }

    /// Links, deferred links, events and link creation; and the Apple Ads token when
    /// ``acceptsAppleAdsToken``, a late one when ``acceptsLateAppleAdsToken``.
    public var capabilities: BackendCapabilities {
        var capabilities: BackendCapabilities = [.linkResolution, .deferredLinks, .eventTracking, .linkCreation]
        if acceptsAppleAdsToken { capabilities.insert(.appleAdsToken) }
        if acceptsLateAppleAdsToken { capabilities.insert(.lateAppleAdsToken) }
        return capabilities
    }

    public func canHandle(_ url: URL) -> Bool {
        HostPattern.claims(url, hosts: hosts, schemes: appSchemes)
    }

    public func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
        let url = link.url
        let script = state.withLock { state -> Script in
            state.calls.append(.resolve(url))
            state.contexts.append(context)
            return state.scripts[url] ?? Script(resolution: state.unscripted, delay: 0)
        }
        if script.delay > 0 { try await context.clock.sleep(for: script.delay) }
        switch script.resolution {
        case .link(let link): return link
        case .parsed: return link.deepLink(provider: id, resolution: .server)
        case .failure(let error): throw error
        }
    }

    public func matchInstall(context: BackendContext) async throws -> InstallMatch {
        let (result, delay) = state.withLock { state in
            state.calls.append(.matchInstall)
            state.contexts.append(context)
            return (state.install, state.installDelay)
        }
        if delay > 0 { try await context.clock.sleep(for: delay) }
        return try result.get()
    }

    public func send(_ event: ConversionEvent, context: BackendContext) async throws {
        let result = state.withLock { state in
            state.calls.append(.send(event))
            state.contexts.append(context)
            return state.sendResult
        }
        try result.get()
    }

    public func createLink(_ request: LinkRequest, context: BackendContext) async throws -> CreatedLink {
        let (host, failure) = state.withLock { state in
            state.calls.append(.createLink(request))
            state.contexts.append(context)
            return (hosts.sorted().first ?? "links.example.com", state.linkCreationFailure)
        }
        if let failure { throw failure }
        let code = request.customCode ?? String(UUID().uuidString.prefix(8)).lowercased()
        guard let url = URL(string: "https://\(host)/\(code)") else {
            throw DeepLinkError(.invalidArgument, "The custom code cannot be part of a URL.", backend: id)
        }
        return CreatedLink(url: url, shortCode: code, linkID: code)
    }

    public func addAppleAdsToken(_ token: String, toInstall installID: String, context: BackendContext) async throws {
        let result = state.withLock { state in
            state.calls.append(.addAppleAdsToken(token: token, installID: installID))
            state.contexts.append(context)
            return acceptsLateAppleAdsToken
                ? state.lateTokenResult
                : .failure(DeepLinkError(.unsupported, "This backend takes no Apple Ads token after its install report.", backend: id))
        }
        try result.get()
    }
}
