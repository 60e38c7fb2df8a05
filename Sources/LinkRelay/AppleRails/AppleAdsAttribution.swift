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
/// The client asks for the token once per first-launch run, as soon as the run knows the
/// install is not matched yet (in parallel with the rest of the first launch, on a queue of its
/// own), and the install report waits for it until ``timeout`` after it was asked. A token that
/// comes later is kept (it is valid for 24 hours) and added to the install afterwards where the
/// backend can take it (``BackendCapabilities/lateAppleAdsToken``: LinkRelay Server); a missing
/// or malformed one is left out. Links never wait for it. The token is never logged.
public struct AppleAdsAttribution: Sendable {
    /// Where the token comes from.
    public var source: any AppleAdsTokenSource
    /// How long, in seconds on the client's clock after the token was asked for, the install
    /// report waits for it. Default 2 s: the call has been measured at 1.5 s on a device
    /// (brave-browser #46501), and is slower still offline (purchases-ios #3280). At most 5 s
    /// (larger values and `.infinity` count as 5 s); `0`, negative values and NaN: the token is
    /// not asked for.
    public var timeout: TimeInterval

    /// The longest wait ``timeout`` allows.
    public static let maximumTimeout: TimeInterval = 5

    /// The longest token accepted, in bytes (Apple's are about 1 KB of Base64); a longer one is
    /// left out.
    public static let maximumTokenLength = 4096

    /// Tokens from `source`, waited for at most `timeout` seconds.
    public init(source: any AppleAdsTokenSource, timeout: TimeInterval = 2) {
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

/// A token the install report went without because the system gave it late: kept in the
/// install record until it reaches the install (``LateAppleAdsTokenBackend``), for as long as
/// Apple keeps it valid.
struct LateAppleAdsToken: Sendable, Hashable, Codable {
    /// How long Apple's attribution API takes a token after the system gave it.
    static let validity: TimeInterval = 24 * 60 * 60

    var token: String
    /// When the system gave it (the client's wall clock).
    var receivedAt: Date

    /// Whether Apple still takes it at `now`: less than ``validity`` after ``receivedAt`` (a
    /// clock set back before it counts as expired).
    func isValid(at now: Date) -> Bool {
        let age = now.timeIntervalSince(receivedAt)
        return age >= 0 && age < Self.validity
    }
}

/// The system call for the token, asked once per first-launch run as soon as the run knows the
/// install is not matched yet: in parallel with the rest of the first launch, so the install
/// report's wait counts from then.
struct AppleAdsTokenRequest: Sendable {
    /// The token (checked with ``AppleAdsAttribution/isSendable(_:)``), `nil` when the system
    /// gave none or one that cannot be sent.
    let task: Task<String?, Never>
    /// The uptime until which the install report waits for it.
    let deadline: TimeInterval
}

extension DeepLinkClient {
    /// Whether this client asks for the token: a backend that takes it, ``Configuration/appleAds``
    /// set with a timeout above 0, in the app (not an App Clip or an extension).
    var asksForAppleAdsToken: Bool {
        guard backend.capabilities.contains(.appleAdsToken), let ads = configuration.appleAds, ads.timeout > 0 else { return false }
        return configuration.processKind.decidesInstall
    }

    /// Asks the system for the token now, unless this run already did: the install report then
    /// waits for it only what is left of its timeout.
    @discardableResult
    func askForAppleAdsToken(generation: UInt64) -> AppleAdsTokenRequest? {
        guard asksForAppleAdsToken, let ads = configuration.appleAds else { return nil }
        if let request = firstLaunch.appleAdsRequest { return request }
        let source = ads.source
        let task = Task.detached(priority: .utility) { [weak self] () -> String? in
            // The system call blocks its thread, and may not come back: the report's deadline
            // does not wait for it, and the token is still kept when it comes.
            let result: Result<String, any Error>
            do { result = .success(try await source.attributionToken()) } catch { result = .failure(error) }
            return await self?.appleAdsTokenCame(result, generation: generation)
        }
        let request = AppleAdsTokenRequest(task: task, deadline: clock.uptime + ads.timeout)
        firstLaunch.appleAdsRequest = request
        return request
    }

    /// The Apple Ads token for the install report: the one this run was given, else the system
    /// call's answer (asked now if not yet) waited for until its deadline; `nil` when it is
    /// late (it is then added to the install when it comes, where the backend can take it),
    /// missing or malformed.
    func appleAdsToken(generation: UInt64) async -> String? {
        guard asksForAppleAdsToken, let timeout = configuration.appleAds?.timeout else { return nil }
        if let kept = firstLaunch.appleAdsToken { return kept }
        guard !firstLaunch.appleAdsAnswered, let request = askForAppleAdsToken(generation: generation) else { return nil }
        do {
            let token = try await withDeadline(
                request.deadline, on: clock,
                timeoutError: { DeepLinkError(.timedOut, "The Apple Ads token did not come within \(timeout) s.") },
                operation: { await request.task.value })
            if token != nil { forgetLateAppleAdsToken() }
            return token
        } catch {
            firstLaunch.appleAdsReportWentWithout = true
            let later =
                backend.capabilities.contains(.lateAppleAdsToken)
                ? "it is added to the install when it comes" : "this backend cannot take it later"
            logger.info("The Apple Ads token did not come within \(timeout) s; the install report goes without it, and \(later).")
            return nil
        }
    }

    /// The system answered: the token, kept for this run (and, when the report already went
    /// without it, in the install record until it reaches the install). Returns it when it
    /// can be sent.
    private func appleAdsTokenCame(_ result: Result<String, any Error>, generation: UInt64) async -> String? {
        guard firstLaunch.isCurrent(generation) else { return nil }
        firstLaunch.appleAdsAnswered = true
        let token: String
        switch result {
        case .success(let given): token = given
        case .failure(let error):
            // The system's error says only why (no network, internal, unsupported); never the token.
            logger.info(
                "The system gave no Apple Ads token (\((error as NSError).domain) \((error as NSError).code)); the install report goes without it."
            )
            return nil
        }
        guard AppleAdsAttribution.isSendable(token) else {
            logger.warning("The Apple Ads token is not one that can be sent (\(token.utf8.count) bytes); left out.")
            return nil
        }
        firstLaunch.appleAdsToken = token
        if firstLaunch.appleAdsReportWentWithout, !isShutDown {
            guard backend.capabilities.contains(.lateAppleAdsToken) else {
                logger.info("The Apple Ads token came after the install report; this backend cannot take it later, so it is dropped.")
                return token
            }
            var record = loadInstallRecord()
            record.lateAppleAdsToken = LateAppleAdsToken(token: token, receivedAt: clock.currentDate)
            saveInstallRecord(record)
            await addLateAppleAdsToken(generation: generation)
        }
        return token
    }

    /// Returns once this run's system call for the token has been answered and what follows
    /// from the answer (a late token added to the install) is done. For tests.
    package func appleAdsTokenSettled() async {
        _ = await firstLaunch.appleAdsRequest?.task.value
    }

    /// A report that carried a token: an older late one has nothing left to do.
    private func forgetLateAppleAdsToken() {
        guard var record = readInstallRecord(), record.lateAppleAdsToken != nil else { return }
        record.lateAppleAdsToken = nil
        saveInstallRecord(record)
    }

    /// Adds the late token in the install record to the install, once the install has an id:
    /// dropped when it has expired (24 hours) or the backend cannot take it, kept for a later
    /// launch when the request fails.
    func addLateAppleAdsToken(generation: UInt64) async {
        guard mayCommit(generation), !firstLaunch.addingLateAppleAdsToken, var record = readInstallRecord(),
            let late = record.lateAppleAdsToken, let installID = record.installID
        else { return }
        guard late.isValid(at: clock.currentDate) else {
            logger.info("The late Apple Ads token expired (24 hours) before it reached the install; dropped.")
            record.lateAppleAdsToken = nil
            saveInstallRecord(record)
            return
        }
        guard backend.capabilities.contains(.lateAppleAdsToken), let receiving = backend as? any LateAppleAdsTokenBackend else {
            logger.info("This backend takes no Apple Ads token after its install report; the late token is dropped.")
            record.lateAppleAdsToken = nil
            saveInstallRecord(record)
            return
        }
        firstLaunch.addingLateAppleAdsToken = true
        defer { firstLaunch.addingLateAppleAdsToken = false }
        var context = await makeContext()
        context.installID = installID
        let retryPolicy = configuration.retryPolicy
        let outcome: DeepLinkError?
        do {
            try await retryPolicy.run(clock: clock, logger: logger, what: "Adding the Apple Ads token") {
                try await receiving.addAppleAdsToken(late.token, toInstall: installID, context: context)
            }
            outcome = nil
        } catch {
            outcome = DeepLinkError.wrapping(
                error, as: .network, "The Apple Ads token could not be added to the install.", backend: backend.id
            )
            .redacted(by: redactor)
        }
        guard mayCommit(generation), var current = readInstallRecord(), current.lateAppleAdsToken == late else { return }
        if let outcome, outcome.code != .unsupported {
            logger.info("The late Apple Ads token did not reach the install (tried again on the next launch): \(outcome.description)")
            return
        }
        if let outcome {
            logger.info("The server takes no Apple Ads token after the install report (\(outcome.description)); the late token is dropped.")
        } else {
            logger.info("The late Apple Ads token was added to the install.")
        }
        current.lateAppleAdsToken = nil
        saveInstallRecord(current)
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
