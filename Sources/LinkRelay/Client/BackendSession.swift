import Foundation

/// What the client hands backends: the store, the transport and the device (each made on first
/// need), the signed-in user and the session's campaign.
struct BackendSession: Sendable {
    var store: (any PersistentStore)?
    /// Where the app's launch history is kept (see ``DeepLinkClient/launchHistoryStore()``).
    var launchHistoryStore: (any PersistentStore)?
    var transport: URLSessionTransport?
    var device: DeviceInfo?
    var externalUserID: String?
    var sessionAttribution: Campaign?
    /// Whether a rejected API key was reported (once per client; a clear keeps it).
    var credentialsRejectionReported = false

    /// Forgets the user and the session's campaign (``DeepLinkClient/clearData()``); the store,
    /// transport and device stay.
    mutating func reset() {
        externalUserID = nil
        sessionAttribution = nil
    }
}
