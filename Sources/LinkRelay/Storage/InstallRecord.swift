import Foundation

/// What the client remembers about this install's first launch, under the store key
/// `install`.
struct InstallRecord: Sendable, Hashable, Codable {
    static let key = "install"

    /// The match's final result (attributed, with or without a link, or organic). Once set, later launches restore it
    /// and send no request.
    var matched: InstallOutcome?
    /// Launches on which the match was tried, counted before each try so a crash mid-request
    /// also counts.
    var matchLaunches = 0
    /// The last match failure, reported on launches after the bound.
    var lastFailure: DeepLinkError?
    /// Set before the deferred link is published: it is delivered at most once per install.
    var deferredLinkDelivered = false
    /// The fingerprint of the credentials the provider refused (401/403) for the match
    /// (FNV-1a of the backend's secrets; never the key): with the same key the match is not
    /// tried again, with another one it starts over.
    var rejectedCredentials: UInt64?
    /// The install's certain link (the pasteboard, the App Clip, a paste), kept as soon as it
    /// is found: a launch cut short before the outcome finds it again without reading the
    /// pasteboard a second time.
    var certainLink: CertainLink?
    /// Set while a backend that names the install only in its install report
    /// (``DeepLinkBackend/needsInstallReport``) has not answered the report of a certain
    /// link: a later launch sends it again (the link is not delivered again).
    var installReportPending: Bool?
    /// The Apple Ads token the system gave after the install report went without it, until it
    /// reaches the install (``LateAppleAdsTokenBackend``) or expires.
    var lateAppleAdsToken: LateAppleAdsToken?

    /// The provider's id for this install, from the matched attribution.
    var installID: String? { matched?.attribution?.installID }
}
