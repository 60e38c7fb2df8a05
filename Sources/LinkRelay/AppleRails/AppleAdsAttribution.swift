import Foundation

/// Where the Apple Ads attribution token comes from: `AAAttribution.attributionToken()` on
/// Apple platforms (`SystemAppleAdsTokenSource`), a double in tests. A small protocol so the
/// logic around it (once per install, a bounded wait, never holding a link) is tested on every
/// platform.
public protocol AppleAdsTokenSource: Sendable {
    /// A token for this install. Throws when the system has none to give (no network, an
    /// internal error, an unsupported platform).
    func attributionToken() async throws -> String
}

/// The Apple Ads attribution token (AdServices, iOS 14.3 and later), sent in the install report
/// of a backend that takes it (``BackendCapabilities/appleAdsToken``: LinkForty, which LinkRelay
/// Server stores with the install; LinkForty Core ignores it). With it the provider, or your
/// own server, can ask Apple's attribution API whether an Apple Ads campaign brought the
/// install: certain, and without the App Tracking Transparency prompt.
///
/// The client asks for the token once per first-launch run, off the caller's thread, and the
/// install report waits for it at most ``timeout``; a token that is late, missing or malformed
/// is left out. Links never wait for it. The token is never logged.
public struct AppleAdsAttribution: Sendable {
    /// Where the token comes from.
    public var source: any AppleAdsTokenSource
    /// How long, in seconds on the client's clock, the install report waits for the token
    /// (the system call has been seen to hang). Default 0.5 s. At most 5 s (larger values and
    /// `.infinity` count as 5 s); `0`, negative values and NaN: the token is not asked for.
    public var timeout: TimeInterval

    /// The longest wait ``timeout`` allows.
    public static let maximumTimeout: TimeInterval = 5

    /// The longest token accepted, in bytes (Apple's are about 1 KB of Base64); a longer one is
    /// left out.
    public static let maximumTokenLength = 4096

    /// Tokens from `source`, waited for at most `timeout` seconds.
    public init(source: any AppleAdsTokenSource, timeout: TimeInterval = 0.5) {
        self.source = source
        self.timeout = timeout
    }

    /// The values the client runs with: ``timeout`` clamped to 0…``maximumTimeout``.
    func clamped() -> AppleAdsAttribution {
        AppleAdsAttribution(source: source, timeout: min(timeout.clampedDuration, Self.maximumTimeout))
    }

    /// Whether `token` can be sent: not empty, at most ``maximumTokenLength`` bytes of
    /// printable ASCII (Base64).
    static func isSendable(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= maximumTokenLength && token.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

extension DeepLinkClient {
    /// The Apple Ads token for the install report, when the backend takes it and
    /// ``Configuration/appleAds`` is set: asked once per first-launch run off the caller's
    /// thread, waited for at most its timeout; `nil` when it is late, missing or malformed.
    func appleAdsToken() async -> String? {
        guard backend.capabilities.contains(.appleAdsToken), let ads = configuration.appleAds, ads.timeout > 0 else { return nil }
        if let kept = firstLaunch.appleAdsToken { return kept }
        let source = ads.source
        let timeout = ads.timeout
        let token: String
        do {
            // The system call blocks its thread, and may not come back.
            token = try await askSystem(for: "The Apple Ads token", within: timeout, on: clock) { try await source.attributionToken() }
        } catch let error as DeepLinkError where error.code == .timedOut {
            logger.info("The Apple Ads token did not come within \(timeout) s; the install report goes without it.")
            return nil
        } catch {
            // The system's error says only why (no network, internal, unsupported); never the token.
            logger.info("The system gave no Apple Ads token (\((error as NSError).domain) \((error as NSError).code)); the install report goes without it.")
            return nil
        }
        guard AppleAdsAttribution.isSendable(token) else {
            logger.warning("The Apple Ads token is not one that can be sent (\(token.utf8.count) bytes); left out.")
            return nil
        }
        firstLaunch.appleAdsToken = token
        return token
    }
}

extension AppleAdsAttribution {
    /// The default: the system's token where AdServices exists (iOS), none elsewhere.
    static let platformDefault: AppleAdsAttribution? = {
        #if canImport(AdServices) && os(iOS)
            return .system
        #else
            return nil
        #endif
    }()
}
