import Foundation

/// A provider adapter: it maps one provider's wire protocol onto LinkRelay's model.
///
/// Adapters only map requests and responses and classify errors. The client owns everything
/// else: deadlines, retries, the local-parse fallback, first-launch detection, persistence,
/// de-duplication, authentication gating and delivery.
///
/// ```swift
/// struct AcmeBackend: DeepLinkBackend {
///     let id: BackendID = "acme"
///     func canHandle(_ url: URL) -> Bool { url.host == "go.acme.app" }
///     func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
///         let response = try await context.transport.send(HTTPRequest(method: .get, url: …))
///         …
///     }
///     func matchInstall(context: BackendContext) async throws -> InstallMatch { … }
/// }
/// ```
public protocol DeepLinkBackend: Sendable {
    /// The backend's name; also the folder its persisted values live in.
    var id: BackendID { get }

    /// The app's own URL schemes this backend claims (`myapp`). Resolved destinations with these
    /// schemes are allowed by default. Default: none.
    var appSchemes: Set<String> { get }

    /// Values that must never appear in a log line or an error message, such as API keys.
    /// Default: none.
    var secrets: [String] { get }

    /// What is allowed but almost certainly a mistake in this backend's configuration (a
    /// server's admin key shipped in an app), each a sentence that names no secret. The client
    /// logs each at `warning` level when it is created. Default: none.
    var configurationWarnings: [String] { get }

    /// Whether the URL is one of this backend's links. Called on the caller's thread from
    /// ``DeepLinkClient/handle(_:)``: it must be fast and must not block.
    func canHandle(_ url: URL) -> Bool

    /// Resolves a link with the provider. `link` is the URL as it was handed over
    /// (``ParsedLink/url``), already parsed on the device by ``LinkParser``: read what the
    /// provider needs from it (a short code, a campaign key) without parsing it again. Throw a
    /// ``DeepLinkError`` with code ``DeepLinkError/Code-swift.struct/notFound`` for a link the
    /// provider does not know; the client then delivers the locally parsed link.
    func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink

    /// A link this backend answers on the device, with no request (a ``LocalBackend``'s links,
    /// an app-scheme link that is already the route). `link` is the handed-over URL
    /// (`link.url`), already parsed by the client. The client delivers the answer at once,
    /// without a context, a deadline or retries. Return `nil` for links that need
    /// ``resolve(_:context:)``. Called from the client's own task: it must be fast and must not
    /// block. Default: the URL form, ``resolveOnDevice(_:)-(URL)``, of `link.url`.
    func resolveOnDevice(_ link: ParsedLink) -> DeepLink?

    /// The form of ``resolveOnDevice(_:)-(ParsedLink)`` that takes the URL, from before the
    /// client handed backends the parsed link: still asked (through the parsed form's default)
    /// for a backend that implements it. Implement the parsed form instead. Default: `nil` for
    /// every link.
    func resolveOnDevice(_ url: URL) -> DeepLink?

    /// The link delivered when the provider cannot answer: it failed (after retries), does not
    /// know the link, answered something unreadable, or missed the link's deadline.
    ///
    /// `parsed` is the URL as ``LinkParser`` reads it. Complete it with what this provider's own
    /// SDK reads from the URL on the device (a short code in the path, a campaign key), so that
    /// the app gets the same fields with or without the provider. Called on the client's actor:
    /// it must be fast, must not block and makes no request. Default:
    /// `parsed.deepLink(provider: provider(for: url), resolution: .local(reason))`.
    func localLink(for url: URL, parsed: ParsedLink, reason: DeepLink.LocalReason) -> DeepLink

    /// Asks the provider whether this install matches a click (deferred deep linking).
    /// A missing match is ``InstallMatch/organic(_:)``, not an error.
    func matchInstall(context: BackendContext) async throws -> InstallMatch

    /// The backend a link belongs to, for a link the client delivers parsed on the device.
    /// Default: ``id``; ``RoutingBackend`` names the member that claims the URL.
    func provider(for url: URL) -> BackendID

    /// The importers of the SDKs an app may have used for this backend's provider before
    /// LinkRelay (its provider's own SDK), run once per device on the first launch. Default:
    /// none; ``RoutingBackend`` gives its members'.
    var previousSDKImporters: [any PreviousSDKImporter] { get }

    /// Whether the provider names the install (the id its events need) only in its answer to
    /// the install match, as LinkForty does. For an existing user whose install id was not
    /// imported, the client then makes the install match even under
    /// ``ExistingUserPolicy/skipInstallMatch``, and delivers no deferred link from it. Default
    /// `false`.
    var needsInstallReport: Bool { get }

    /// What the provider offers beyond delivering links (``BackendCapabilities``), for the app
    /// to ask before it calls. Default: link resolution and deferred links, with event tracking
    /// for an ``EventTrackingBackend``, event batching for an ``EventBatchingBackend`` and link
    /// creation for a ``LinkCreatingBackend``.
    var capabilities: BackendCapabilities { get }

    /// The backend as a ``LinkEventObservingBackend`` when it is one (the client then tells it
    /// about every event it publishes), `nil` otherwise. Both defaults are right; there is no
    /// reason to implement it. It is a requirement so the client finds out without a dynamic
    /// cast, whose first use in a process makes the runtime scan every conformance it knows
    /// (about 470,000 instructions, on the thread that creates the client).
    var linkEventObserver: (any LinkEventObservingBackend)? { get }
}

extension DeepLinkBackend {
    public var appSchemes: Set<String> { [] }
    public var secrets: [String] { [] }
    public var configurationWarnings: [String] { [] }
    public func provider(for url: URL) -> BackendID { id }
    public func resolveOnDevice(_ link: ParsedLink) -> DeepLink? { resolveOnDevice(link.url) }
    public func resolveOnDevice(_ url: URL) -> DeepLink? { nil }
    public var previousSDKImporters: [any PreviousSDKImporter] { [] }
    public var needsInstallReport: Bool { false }
    public var linkEventObserver: (any LinkEventObservingBackend)? { nil }
    public var capabilities: BackendCapabilities {
        var capabilities: BackendCapabilities = [.linkResolution, .deferredLinks]
        if self is any EventTrackingBackend { capabilities.insert(.eventTracking) }
        if self is any EventBatchingBackend { capabilities.insert(.eventBatching) }
        if self is any LinkCreatingBackend { capabilities.insert(.linkCreation) }
        return capabilities
    }
    public func localLink(for url: URL, parsed: ParsedLink, reason: DeepLink.LocalReason) -> DeepLink {
        parsed.deepLink(provider: provider(for: url), resolution: .local(reason))
    }
}

/// A backend that hears about every event the client published to the app: for providers that
/// follow a link's life (LimeLink's stats after `.link`; Paylisher's "Deep Link Opened",
/// "… Completed" (a `.link` whose ``DeepLink/requiresAuthentication`` is set), "… Cancelled" and
/// "… Timeout" (`.pendingLinkDropped`), "… Failed", "Deferred Deep Link Match" (`.install`)).
///
/// Only backends that conform are told, so the others cost nothing per event.
public protocol LinkEventObservingBackend: DeepLinkBackend {
    /// Called after `event` was published, in order, one call at a time from a task of its own,
    /// each cut off after ``DeepLinkClient/Configuration/requestTimeout``: nothing a backend does
    /// here can delay or undo what the app receives. `date` is when the event was published (the
    /// call may come later). Events of the backend's own go into the client's queue through
    /// ``BackendContext/enqueueEvent``. Throw a ``DeepLinkError`` when the provider refused a
    /// report (a 401 or 403 then reaches the app as a rejected API key); it is logged, never
    /// retried.
    func didPublish(_ event: DeepLinkEvent, at date: Date, context: BackendContext) async throws
}

extension LinkEventObservingBackend {
    /// `self`: the client tells this backend about published events.
    public var linkEventObserver: (any LinkEventObservingBackend)? { self }
}

/// The former name of ``LinkEventObservingBackend``.
@available(*, deprecated, renamed: "LinkEventObservingBackend")
public typealias EventObservingBackend = LinkEventObservingBackend

/// A backend that reports ``ConversionEvent``s to its provider.
public protocol EventTrackingBackend: DeepLinkBackend {
    /// Sends one event. Throw a ``DeepLinkError`` classifying the failure; the client decides
    /// whether to keep the event queued and retry.
    func send(_ event: ConversionEvent, context: BackendContext) async throws
}

/// A backend that reports several ``ConversionEvent``s in one request, as Paylisher's `/batch`
/// does.
///
/// The client sends its queue in batches of up to ``EventBatching/maximumBatchSize`` events,
/// in order, and starts sending on its own when ``EventBatching/flushAt`` events wait or the
/// oldest has waited ``EventBatching/flushInterval`` (``DeepLinkClient/flushEvents()`` sends at
/// once). A batch succeeds or fails whole:
///
/// - accepted: every event in it is removed from the queue;
/// - a retryable failure (``DeepLinkError/isRetryable``, `.cancelled`, `.notStarted`): every
///   event stays queued, and automatic sending pauses ``EventBatching/pause(afterFailures:)``;
/// - HTTP 413 (`.server(413)`, the request was too large): the events stay queued, the batch
///   size and ``EventBatching/flushAt`` are halved (down to 1) for the rest of the client's
///   life, and sending pauses; a single event refused with 413 can never be sent and is dropped;
/// - any other failure: the batch is dropped and a ``DeepLinkEvent/failure(_:)`` published.
///
/// Its single-event ``EventTrackingBackend/send(_:context:)`` sends a batch of one.
public protocol EventBatchingBackend: EventTrackingBackend {
    /// How many events a request carries and when the client sends on its own.
    var eventBatching: EventBatching { get }

    /// Sends `events` (one or more, at most ``EventBatching/maximumBatchSize``, oldest first)
    /// in one request. Return when the provider accepted all of them; throw a ``DeepLinkError``
    /// classifying the failure otherwise.
    func send(_ events: [ConversionEvent], context: BackendContext) async throws
}

extension EventBatchingBackend {
    /// Sends `event` as a batch of one.
    public func send(_ event: ConversionEvent, context: BackendContext) async throws {
        try await send([event], context: context)
    }
}

/// How an ``EventBatchingBackend`` sends: batch size, when sending starts on its own, and how
/// long it pauses after a failure. Every value is accepted; `clamped()` says how.
public struct EventBatching: Sendable, Hashable {
    /// The most events one request carries. Values below 1 count as 1.
    public var maximumBatchSize: Int
    /// Sending starts on its own once this many events wait. Values below 1 count as 1 (every
    /// event is sent as it is tracked).
    public var flushAt: Int
    /// Sending starts on its own once the oldest waiting event has waited this long, in
    /// seconds. `0` (and NaN or below) sends every event as it is tracked; `.infinity` never
    /// sends on a timer (only at ``flushAt`` and on ``DeepLinkClient/flushEvents()``).
    public var flushInterval: TimeInterval
    /// After the n-th failed batch in a row, automatic sending pauses n × this, in seconds
    /// (NaN or below 0 counts as 0).
    public var pauseStep: TimeInterval
    /// The longest pause after failures, in seconds (NaN or below 0 counts as 0; `.infinity`:
    /// no limit).
    public var maximumPause: TimeInterval

    /// Paylisher's defaults: 50 events per request, sent at 20 waiting or every 30 seconds,
    /// pausing 5 seconds more per failure in a row, at most 30.
    public init(
        maximumBatchSize: Int = 50, flushAt: Int = 20, flushInterval: TimeInterval = 30, pauseStep: TimeInterval = 5,
        maximumPause: TimeInterval = 30
    ) {
        self.maximumBatchSize = maximumBatchSize
        self.flushAt = flushAt
        self.flushInterval = flushInterval
        self.pauseStep = pauseStep
        self.maximumPause = maximumPause
    }

    /// Every event sent as it is tracked, one per request.
    public static let oneByOne = EventBatching(maximumBatchSize: 1, flushAt: 1, flushInterval: 0)

    /// The values the client uses: counts at least 1, durations NaN or negative as 0.
    @_spi(Backend) public func clamped() -> EventBatching {
        EventBatching(
            maximumBatchSize: max(1, maximumBatchSize), flushAt: max(1, flushAt), flushInterval: flushInterval.clampedDuration,
            pauseStep: pauseStep.clampedDuration, maximumPause: maximumPause.clampedDuration)
    }

    /// How long automatic sending pauses after `failures` failed batches in a row:
    /// `min(failures × pauseStep, maximumPause)`, never NaN (`0 × .infinity` is 0).
    public func pause(afterFailures failures: Int) -> TimeInterval {
        let clamped = self.clamped()
        guard failures > 0, clamped.pauseStep > 0 else { return 0 }
        return min(Double(failures) * clamped.pauseStep, clamped.maximumPause)
    }
}

/// A backend that creates links with its provider.
public protocol LinkCreatingBackend: DeepLinkBackend {
    /// Creates a link.
    func createLink(_ request: LinkRequest, context: BackendContext) async throws -> CreatedLink
}

/// A backend that adds an Apple Ads token to an install it has already been told of
/// (``BackendCapabilities/lateAppleAdsToken``): the system gave the token after the install
/// report went without it. The client calls it at most once per token, with its retries, while
/// the token is valid (24 hours after the system gave it); on a later launch when the network
/// was down.
public protocol LateAppleAdsTokenBackend: DeepLinkBackend {
    /// Adds `token` to the install the provider named `installID`. Throw ``DeepLinkError`` with
    /// code `.unsupported` when the server has no way to take it (the client then drops the
    /// token), any other error to have it tried again on a later launch.
    func addAppleAdsToken(_ token: String, toInstall installID: String, context: BackendContext) async throws
}

/// What a backend's install match found: the attribution and, when a click matched, the link
/// that was clicked (delivered as a deferred link).
public struct InstallMatch: Sendable, Hashable, Codable {
    /// What the provider said about the install.
    public var attribution: InstallAttribution
    /// The clicked link, with ``DeepLink/origin`` `.deferred`, when the install was attributed.
    /// An attributed match without one (the provider named no link the app can open) is
    /// reported as ``InstallOutcome/attributedWithoutLink(_:)``, never as organic; set
    /// ``InstallAttribution/linkID`` when the provider names the link.
    public var link: DeepLink?

    /// A match with its attribution and, when a click matched, the clicked link.
    public init(attribution: InstallAttribution, link: DeepLink?) {
        self.attribution = attribution
        self.link = link
    }

    /// No click matched.
    public static func organic(_ attribution: InstallAttribution = .organic()) -> InstallMatch {
        InstallMatch(attribution: attribution, link: nil)
    }
}
