import Foundation

/// Sends each link to the first backend that claims it; install matching, events and link
/// creation go to the primary (the first) backend.
///
/// Use it during a migration, so that links of the previous provider keep working beside the
/// new one's, or to put your own ``LocalBackend`` links beside a provider:
///
/// ```swift
/// let backend = RoutingBackend(newProvider, [oldProvider, LocalBackend(.init(schemes: ["myapp"]))])
/// ```
///
/// Its ``id`` is the primary's, so persisted values stay where they are when you add or remove
/// the others.
public struct RoutingBackend: EventBatchingBackend, LinkCreatingBackend, LinkEventObservingBackend, LateAppleAdsTokenBackend {
    /// The backend that matches installs and receives events and link requests.
    public let primary: any DeepLinkBackend
    /// The backends tried after the primary, in order.
    public let others: [any DeepLinkBackend]

    /// Routes to `primary` first, then to `others` in order.
    public init(_ primary: any DeepLinkBackend, _ others: [any DeepLinkBackend]) {
        self.primary = primary
        self.others = others
    }

    public var id: BackendID { primary.id }

    public var appSchemes: Set<String> {
        others.reduce(primary.appSchemes) { $0.union($1.appSchemes) }
    }

    public var secrets: [String] {
        others.reduce(primary.secrets) { $0 + $1.secrets }
    }

    /// Every member's importers, the primary's first.
    public var previousSDKImporters: [any PreviousSDKImporter] {
        others.reduce(primary.previousSDKImporters) { $0 + $1.previousSDKImporters }
    }

    /// The primary's: the install match is the primary's.
    public var needsInstallReport: Bool { primary.needsInstallReport }

    /// Link resolution if any member resolves links; deferred links, link creation and the Apple
    /// Ads token (in the report and late) if the primary offers them (the install match and link
    /// requests are the primary's); event tracking if any member tracks events, and event
    /// batching if that member (``eventTrackingMember``) batches.
    public var capabilities: BackendCapabilities {
        let members = [primary] + others
        var capabilities = primary.capabilities.intersection([.deferredLinks, .linkCreation, .appleAdsToken, .lateAppleAdsToken])
        if members.contains(where: { $0.capabilities.contains(.linkResolution) }) { capabilities.insert(.linkResolution) }
        if let tracking = eventTrackingMember {
            capabilities.insert(.eventTracking)
            if tracking.capabilities.contains(.eventBatching) { capabilities.insert(.eventBatching) }
        }
        return capabilities
    }

    /// The member that claims `url`, or the primary.
    public func provider(for url: URL) -> BackendID {
        backend(for: url)?.id ?? id
    }

    /// The backend that claims `url`, if any.
    public func backend(for url: URL) -> (any DeepLinkBackend)? {
        if primary.canHandle(url) { return primary }
        return others.first { $0.canHandle(url) }
    }

    public func canHandle(_ url: URL) -> Bool {
        backend(for: url) != nil
    }

    public func resolveOnDevice(_ link: ParsedLink) -> DeepLink? {
        backend(for: link.url)?.resolveOnDevice(link)
    }

    public func resolveOnDevice(_ url: URL) -> DeepLink? {
        backend(for: url)?.resolveOnDevice(url)
    }

    /// The claiming member's local link.
    public func localLink(for url: URL, parsed: ParsedLink, reason: DeepLink.LocalReason) -> DeepLink {
        guard let backend = backend(for: url) else {
            return parsed.deepLink(provider: id, resolution: .local(reason))
        }
        return backend.localLink(for: url, parsed: parsed, reason: reason)
    }

    public func resolve(_ link: ParsedLink, context: BackendContext) async throws -> DeepLink {
        guard let backend = backend(for: link.url) else {
            throw DeepLinkError(.invalidURL, "No backend claims this link.", backend: id, url: link.url)
        }
        return try await backend.resolve(link, context: context)
    }

    public func matchInstall(context: BackendContext) async throws -> InstallMatch {
        try await primary.matchInstall(context: context)
    }

    /// Tells the backend a link came from (its ``DeepLink/provider``); everything else goes to
    /// the primary.
    public func didPublish(_ event: DeepLinkEvent, at date: Date, context: BackendContext) async throws {
        let provider: BackendID? =
            switch event {
            case .link(let link), .authenticationRequired(let link), .pendingLinkDropped(let link, _): link.provider
            case .install, .failure: nil
            }
        let owner = provider.flatMap { id in ([primary] + others).first { $0.id == id } } ?? primary
        try await owner.linkEventObserver?.didPublish(event, at: date, context: context)
    }

    /// The member events go to: the first that reports events, the primary first. `nil` when
    /// none does (then ``DeepLinkClient/track(_:properties:)`` does nothing, with a warning).
    /// The install match is the primary's, so a member whose events need the install id of
    /// its own install report (`needsInstallReport`, LinkForty) should be the
    /// primary; otherwise its events wait for an id that never comes.
    public var eventTrackingMember: (any EventTrackingBackend)? {
        for member in [primary] + others where member.capabilities.contains(.eventTracking) {
            if let tracking = member as? any EventTrackingBackend { return tracking }
        }
        return nil
    }

    /// Sends through ``eventTrackingMember``.
    public func send(_ event: ConversionEvent, context: BackendContext) async throws {
        guard let tracking = eventTrackingMember else {
            throw DeepLinkError(.unsupported, "No member of the routing backend reports events.", backend: id)
        }
        try await tracking.send(event, context: context)
    }

    /// The batching of ``eventTrackingMember`` when it sends in batches (``capabilities`` then
    /// has ``BackendCapabilities/eventBatching``); else ``EventBatching/oneByOne``.
    public var eventBatching: EventBatching {
        (eventTrackingMember as? any EventBatchingBackend)?.eventBatching ?? .oneByOne
    }

    /// Sends `events` through ``eventTrackingMember``: in one request when it batches, else
    /// one request each, in order.
    public func send(_ events: [ConversionEvent], context: BackendContext) async throws {
        if let batching = eventTrackingMember as? any EventBatchingBackend {
            try await batching.send(events, context: context)
            return
        }
        for event in events { try await send(event, context: context) }
    }

    public func createLink(_ request: LinkRequest, context: BackendContext) async throws -> CreatedLink {
        guard primary.capabilities.contains(.linkCreation), let creating = primary as? any LinkCreatingBackend else {
            throw DeepLinkError(.unsupported, "The primary backend does not create links.", backend: id)
        }
        return try await creating.createLink(request, context: context)
    }

    /// The primary's: the install is the primary's.
    public func addAppleAdsToken(_ token: String, toInstall installID: String, context: BackendContext) async throws {
        guard primary.capabilities.contains(.lateAppleAdsToken), let receiving = primary as? any LateAppleAdsTokenBackend else {
            throw DeepLinkError(.unsupported, "The primary backend takes no Apple Ads token after its install report.", backend: id)
        }
        try await receiving.addAppleAdsToken(token, toInstall: installID, context: context)
    }
}
