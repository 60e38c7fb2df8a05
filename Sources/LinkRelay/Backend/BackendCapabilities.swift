/// What a backend's provider offers beyond delivering links, so an app can ask before it calls.
///
/// Every backend delivers links; providers differ in the rest. After a switch of provider the
/// same app code still compiles and runs, and this tells it which calls now reach a server:
///
/// ```swift
/// if client.capabilities.contains(.linkCreation) {
///     shareButton.isHidden = false   // createLink(_:) would throw .unsupported otherwise
/// }
/// if !client.capabilities.contains(.eventTracking) {
///     // track(_:) and trackRevenue(amount:currency:) do nothing on this provider
/// }
/// ```
///
/// | Backend | ``linkResolution`` | ``deferredLinks`` | ``eventTracking`` | ``linkCreation`` | ``eventBatching`` | ``appleAdsToken`` | ``lateAppleAdsToken`` |
/// |---|---|---|---|---|---|---|---|
/// | LinkForty | yes | yes | yes | yes | no | yes | yes (LinkRelay Server; LinkForty Core cannot) |
/// | LimeLink | yes | yes | no | no | no | no | no |
/// | Dynalinks | yes | yes | no | no | no | no | no |
/// | Paylisher | yes | yes | yes | no | yes | no | no |
/// | ``LocalBackend`` | no (on the device) | no | no | no | no | no | no |
///
/// A ``RoutingBackend`` offers what its members do: link resolution if any member resolves,
/// deferred links, link creation and the Apple Ads token if its primary does (the install
/// report is the primary's, and so is a late token), event tracking (and batching) as the member its events go to does.
public struct BackendCapabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// The provider's server resolves the backend's links (a link it cannot reach is still
    /// delivered, parsed on the device).
    public static let linkResolution = BackendCapabilities(rawValue: 1 << 0)
    /// The install match can bring a deferred link (a link tapped before the app was installed).
    public static let deferredLinks = BackendCapabilities(rawValue: 1 << 1)
    /// ``DeepLinkClient/track(_:properties:)`` and ``DeepLinkClient/trackRevenue(amount:currency:properties:)``
    /// reach the provider; without it they do nothing (one warning per client).
    public static let eventTracking = BackendCapabilities(rawValue: 1 << 2)
    /// ``DeepLinkClient/createLink(_:)`` creates links; without it, it throws `.unsupported`.
    public static let linkCreation = BackendCapabilities(rawValue: 1 << 3)

    /// Events travel in batches (an ``EventBatchingBackend``: Paylisher): the client sends the
    /// queue several events per request, on its own as the backend's
    /// ``EventBatchingBackend/eventBatching`` says. Without it, one event per request, each as
    /// it is tracked. Only with ``eventTracking``.
    public static let eventBatching = BackendCapabilities(rawValue: 1 << 4)

    /// The install report carries the Apple Ads attribution token
    /// (``DeepLinkClient/Configuration/appleAds``, ``BackendContext/appleAdsToken``): LinkForty
    /// (LinkRelay Server stores it with the install; LinkForty Core ignores the key).
    public static let appleAdsToken = BackendCapabilities(rawValue: 1 << 5)

    /// A token that came after the install report went without it is added to the install
    /// afterwards (a ``LateAppleAdsTokenBackend``; the token is valid for 24 hours): LinkForty
    /// against LinkRelay Server (`POST /api/sdk/v1/install/apple-ads-token`). LinkForty Core
    /// has no such endpoint: it answers 404, and the late token is dropped with one log line.
    /// Only with ``appleAdsToken``.
    public static let lateAppleAdsToken = BackendCapabilities(rawValue: 1 << 6)

    /// Everything LinkRelay knows of.
    public static let all: BackendCapabilities = [
        .linkResolution, .deferredLinks, .eventTracking, .linkCreation, .eventBatching, .appleAdsToken, .lateAppleAdsToken,
    ]

    /// The names of what it contains, for logs and the demo: `[linkResolution, eventTracking]`.
    public var description: String {
        let names: [(BackendCapabilities, String)] = [
            (.linkResolution, "linkResolution"), (.deferredLinks, "deferredLinks"), (.eventTracking, "eventTracking"),
            (.linkCreation, "linkCreation"), (.eventBatching, "eventBatching"), (.appleAdsToken, "appleAdsToken"),
            (.lateAppleAdsToken, "lateAppleAdsToken"),
        ]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}
