/// What the client tells the app, through ``DeepLinkClient/linkEvents()``.
///
/// ```swift
/// for await event in client.linkEvents() {
///     switch event {
///     case .link(let link): router.open(link)
///     case .authenticationRequired(let link): showLogin(for: link)
///     case .pendingLinkDropped(let link, let reason): log("\(link.path) dropped: \(reason)")
///     case .install(let outcome): analytics.record(outcome)
///     case .failure(let error): log(error)
///     }
/// }
/// ```
public enum DeepLinkEvent: Sendable, Hashable, Codable {
    /// A link to open: direct or deferred (``DeepLink/origin`` says which).
    case link(DeepLink)
    /// The install's first-launch outcome: exactly once per install, and replayed to every new
    /// subscriber.
    case install(InstallOutcome)
    /// A link that needs a signed-in user. It is held until
    /// ``DeepLinkClient/completePendingLink()`` delivers it as ``link(_:)``, or it is dropped.
    case authenticationRequired(DeepLink)
    /// A held authentication-gated link that will not be delivered.
    case pendingLinkDropped(DeepLink, PendingLinkDropReason)
    /// Something failed; the error carries the URL where there is one.
    case failure(DeepLinkError)

    /// The link, for ``link(_:)`` events.
    public var link: DeepLink? {
        if case .link(let link) = self { return link }
        return nil
    }
}

/// Why a held authentication-gated link was dropped.
public enum PendingLinkDropReason: String, Sendable, Hashable, Codable {
    /// The app called ``DeepLinkClient/cancelPendingLink()``.
    case cancelled
    /// ``DeepLinkClient/Configuration/pendingLinkTimeout`` passed without sign-in.
    case expired
    /// A newer gated link arrived and took its place.
    case replaced
}
