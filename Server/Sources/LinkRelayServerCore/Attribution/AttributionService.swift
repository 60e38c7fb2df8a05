import Foundation
import LinkRelay

/// An install report as the SDKs send it (§3 of LinkForty's protocol), read once, with the
/// address the request came from.
package struct InstallReport: Sendable {
    /// What the deferred match compares.
    package var signals: DeviceSignals
    package var platform: String?
    package var platformVersion: String?
    package var deviceID: String?
    /// The window the SDK asked for (1…2160 hours), stored with the install.
    package var attributionWindowHours: Int?
    /// The address the SDK says it has, answered back as `clientReportedIp` (never matched on).
    package var reportedIP: String?
    /// The click token of the tapped link, when the app read it from the pasteboard
    /// (`clickToken`, ``ClickTokens``).
    package var clickToken: String?
    /// The Apple Ads attribution token (`appleAdsToken`), stored with the install.
    package var appleAdsToken: String?
    /// `false` when the app withholds its fingerprint (`"fingerprint": false`: the user has not
    /// allowed tracking, LinkRelay's `FingerprintPolicy`): the install is matched by its click
    /// token only, never by its signals, and no signal of it is stored beyond the user agent.
    package var allowsFingerprint = true

    package init(
        signals: DeviceSignals, platform: String?, platformVersion: String?, deviceID: String? = nil, attributionWindowHours: Int? = nil,
        reportedIP: String? = nil, clickToken: String? = nil
    ) {
        self.clickToken = clickToken
        self.signals = signals
        self.platform = platform
        self.platformVersion = platformVersion
        self.deviceID = deviceID
        self.attributionWindowHours = attributionWindowHours
        self.reportedIP = reportedIP
    }

    /// LinkForty's fingerprint hash of the report (``DeferredMatcher/fingerprintHash(_:platform:platformVersion:)``).
    package var fingerprintHash: String {
        DeferredMatcher.fingerprintHash(signals, platform: platform, platformVersion: platformVersion)
    }
}

/// What the install endpoint does between reading a report and answering it: the deferred match
/// over the project's clicks, the link the match points at, and the install stored (on disk
/// before ``attribute(_:project:at:)`` returns). The benchmark calls the same, so what it times
/// is what the endpoint does.
package struct AttributionService: Sendable {
    package let store: any AttributionStore
    package let matcher: DeferredMatcher

    package init(store: any AttributionStore, matcher: DeferredMatcher) {
        self.store = store
        self.matcher = matcher
    }

    /// Matches `report` against the project's clicks at `now` and stores the install: by its
    /// click token when it carries one of the project's, unused and unexpired (certain,
    /// confidence 100, method `pasteboard`; the token is used up); else by its signals.
    ///
    /// A token another install used already still names the link that reached this one, as the
    /// app that holds the link says: the install is attributed to that link and click with
    /// certainty too (factor `click_token_used`; the click was the first install's to claim),
    /// unless the link's window has passed. The same install reporting again (its answer was
    /// lost: ``sameDevice(_:_:)`` as the token's install) is answered that install, and nothing
    /// is stored.
    package func attribute(_ report: InstallReport, project: String, at now: Date) async throws -> InstallAttribution {
        var tokenUse: ClickTokenUse?
        if let token = report.clickToken {
            guard ClickTokens.isWellFormed(token) else {
                return try await match(report, project: project, at: now, token: .unknown)
            }
            let hash = ClickTokens.hash(token)
            let installID = RecordID.timeOrdered(at: now)
            let use = try await store.useClickToken(hash: hash, project: project, installID: installID, at: now)
            switch use {
            case .accepted(let linkID, let clickID, let clickedAt):
                if let link = try await store.cachedLink(id: linkID) {
                    return try await certain(
                        report, id: installID, link: link, clickID: clickID, clickedAt: clickedAt, factors: ["click_token"], token: use,
                        project: project, at: now, givingBack: hash)
                }
                // A token whose link is gone counts as unknown; it stays used.
                tokenUse = .unknown
            case .used(let linkID, let clickID, let clickedAt, let first, let expired):
                if let earlier = try await store.install(project: project, id: first), Self.sameDevice(earlier, report) {
                    // A late Apple Ads token the first report went without joins it.
                    if let adsToken = report.appleAdsToken, earlier.appleAdsToken == nil {
                        _ = try await store.addAppleAdsToken(adsToken, install: earlier.id, project: project)
                    }
                    let timings = InstallAttribution.Timings(candidates: 0, read: .zero, scoring: .zero, write: .zero)
                    return InstallAttribution(
                        install: earlier, attributed: earlier.linkID != nil, reportedIP: report.reportedIP, timings: timings,
                        clickToken: .accepted(linkID: linkID, clickID: clickID, clickedAt: clickedAt), repeated: true)
                }
                if !expired, let link = try await store.cachedLink(id: linkID) {
                    return try await certain(
                        report, id: installID, link: link, clickID: clickID, clickedAt: clickedAt, factors: ["click_token_used"],
                        token: use, project: project, at: now, givingBack: nil)
                }
                tokenUse = expired ? .expired : .unknown
            case .expired, .unknown:
                tokenUse = use
            }
        }
        return try await match(report, project: project, at: now, token: tokenUse)
    }

    /// Whether `report` comes from the device `earlier` was reported from: the same agent, time
    /// zone, language, screen, platform and its version, and device id. Not the address: a report
    /// sent again on a later launch may come from another network.
    static func sameDevice(_ earlier: InstallRecord, _ report: InstallReport) -> Bool {
        let device = earlier.device, now = report.signals
        return device.userAgent == now.userAgent && device.timezone == now.timezone && device.language == now.language
            && device.screenWidth == now.screenWidth && device.screenHeight == now.screenHeight
            && earlier.platform == DevicePlatform(reported: report.platform) && earlier.platformVersion == report.platformVersion
            && earlier.deviceID == report.deviceID
    }

    /// The install attributed by its click token to `link`'s click `clickID`, stored; a failed
    /// write gives back the token `givingBack` (so the SDK's retry can use it).
    private func certain(
        _ report: InstallReport, id: String, link: LinkRecord, clickID: String, clickedAt: Date, factors: [String], token: ClickTokenUse,
        project: String, at now: Date, givingBack hash: String?
    ) async throws -> InstallAttribution {
        let install = InstallRecord(
            id: id, projectID: project, linkID: link.id, clickID: clickID, confidence: 100, matchedFactors: factors,
            method: .pasteboard, installedAt: now, device: report.signals, platform: DevicePlatform(reported: report.platform),
            platformVersion: report.platformVersion, deviceID: report.deviceID, fingerprintHash: report.fingerprintHash,
            attributionWindowHours: report.attributionWindowHours,
            deepLinkData: DeepLinkData.deepLinkData(link, clickID: clickID, clickedAt: clickedAt, confidence: 100, factors: factors),
            appleAdsToken: report.appleAdsToken)
        let writing = ContinuousClock.now
        do {
            try await store.recordInstall(install)
        } catch {
            if let hash { try? await store.releaseClickToken(hash: hash, installID: id) }
            throw error
        }
        let timings = InstallAttribution.Timings(candidates: 0, read: .zero, scoring: .zero, write: ContinuousClock.now - writing)
        return InstallAttribution(install: install, attributed: true, reportedIP: report.reportedIP, timings: timings, clickToken: token)
    }

    /// The deferred match by signals; `token` says what became of a click token the report
    /// carried.
    private func match(_ report: InstallReport, project: String, at now: Date, token: ClickTokenUse?) async throws -> InstallAttribution {
        let started = ContinuousClock.now
        // A report without its fingerprint is never matched by signals.
        let candidates =
            report.allowsFingerprint
            ? try await store.matchCandidates(for: report.signals, project: project, matcher: matcher, at: now) : []
        var read = ContinuousClock.now - started
        // The crowd (the last week, within the links' windows) is counted in the database, and
        // only when a click would match on a quiet network: a crowded one only lowers every
        // candidate's score alike, so what does not match there matches nowhere.
        var scoring = ContinuousClock.now
        var match = matcher.best(for: report.signals, among: candidates, networkDevices: 0, at: now)
        var scored = ContinuousClock.now - scoring
        if match != nil, let prefix = report.signals.networkPrefix {
            let counting = ContinuousClock.now
            let devices = try await store.networkDevices(
                project: project, networkPrefix: prefix, at: now, since: now.addingTimeInterval(-DeferredMatcher.crowdWindow),
                limit: matcher.sharedNetworkDevices)
            read += ContinuousClock.now - counting
            // Below the crowd's threshold the network is quiet: the match already made is the answer.
            if devices >= matcher.sharedNetworkDevices {
                scoring = ContinuousClock.now
                match = matcher.best(for: report.signals, among: candidates, networkDevices: devices, at: now)
                scored += ContinuousClock.now - scoring
            }
        }
        let link = try await match.asyncFlatMap { try await store.cachedLink(id: $0.click.linkID) }
        if link == nil { match = nil }
        var deepLinkData: [String: JSONValue] = [:]
        if let match, let link { deepLinkData = DeepLinkData.deepLinkData(link, match: match) }
        let install = InstallRecord(
            projectID: project, linkID: link?.id, clickID: match?.click.id, confidence: match?.confidence ?? 0,
            matchedFactors: match?.factors ?? [], method: match?.method ?? .none, installedAt: now, device: report.signals,
            platform: DevicePlatform(reported: report.platform), platformVersion: report.platformVersion, deviceID: report.deviceID,
            fingerprintHash: report.fingerprintHash, attributionWindowHours: report.attributionWindowHours, deepLinkData: deepLinkData,
            appleAdsToken: report.appleAdsToken)
        let writing = ContinuousClock.now
        try await store.recordInstall(install)
        let timings = InstallAttribution.Timings(
            candidates: candidates.count, read: read, scoring: scored, write: ContinuousClock.now - writing)
        return InstallAttribution(
            install: install, attributed: match != nil, reportedIP: report.reportedIP, timings: timings, clickToken: token)
    }
}

/// An install's outcome, answered as LinkForty Core answers it, with two fields more (§12.8):
/// the deferred link's `linkId`, `clickId`, `deepLinkPath` and `appScheme` in `deepLinkData`,
/// so a client needs no second request (and makes no second click) to route it; and
/// `attributionMethod`.
package struct InstallAttribution: Sendable {
    /// The install as stored.
    package let install: InstallRecord
    /// Whether a click was matched.
    package let attributed: Bool
    /// Answered back as `clientReportedIp`.
    package let reportedIP: String?
    /// Where the time went.
    package let timings: Timings
    /// What became of the report's click token, when it carried one: answered as `clickToken`
    /// (`accepted`, `used`, `expired`, `unknown`), so an install matched by its signals says
    /// why the token did not decide.
    package var clickToken: ClickTokenUse?
    /// Whether `install` was stored by an earlier report of the same install (one whose answer
    /// was lost), answered again: nothing was stored, and it is not counted again.
    package var repeated: Bool

    package init(
        install: InstallRecord, attributed: Bool, reportedIP: String?, timings: Timings, clickToken: ClickTokenUse? = nil,
        repeated: Bool = false
    ) {
        self.install = install
        self.attributed = attributed
        self.reportedIP = reportedIP
        self.timings = timings
        self.clickToken = clickToken
        self.repeated = repeated
    }

    /// Where an install's time went, for the benchmark's `--phases`.
    package struct Timings: Sendable {
        /// Clicks read as candidates.
        package var candidates: Int
        /// Reading the candidates and counting the crowd.
        package var read: Duration
        /// Scoring them.
        package var scoring: Duration
        /// The durable write.
        package var write: Duration
    }

}
