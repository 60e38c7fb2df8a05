import Foundation

/// What the install's attribution reads and writes (``AttributionService``): click tokens, the
/// links they and the clicks name, the deferred match's candidates and crowd, and installs. The
/// server's stores implement it on SQLite and PostgreSQL; the Core's tests on memory.
package protocol AttributionStore: Sendable {
    /// Takes the token with `hash` for `installID` if it is the project's, unused and not
    /// expired at `now`, and marks its click claimed (no fingerprint match takes it from then
    /// on); otherwise says why not.
    func useClickToken(hash: String, project: String, installID: String, at now: Date) async throws -> ClickTokenUse

    /// Gives back a token taken for `installID` (its install could not be stored), and its click.
    func releaseClickToken(hash: String, installID: String) async throws

    /// The link with `id`, kept in the process as long as links by code (``setLinkCacheTTL(_:)``)
    /// and forgotten at once by this process's edits: what the install's match reads.
    func cachedLink(id: String) async throws -> LinkRecord?

    /// The deferred match's candidates: `project`'s clicks from `networkPrefix` since `since`,
    /// bots left out, newest first, at most `limit`, each with its link's attribution window.
    func matchCandidates(project: String, networkPrefix: String, since: Date, limit: Int) async throws -> [MatchCandidate]

    /// The deferred match's candidates from one exact `address`: `project`'s clicks from it since
    /// `since`, bots left out, newest first, at most `limit`, each with its link's window.
    func matchCandidates(project: String, address: String, since: Date, limit: Int) async throws -> [MatchCandidate]

    /// How many distinct devices (``DeferredMatcher``'s device signature: user agent, time zone,
    /// language, screen) clicked from `networkPrefix` in `project` within their links' windows
    /// at `now` and no earlier than `since`, bots left out, among its newest
    /// ``DeferredMatcher/crowdRows`` such clicks, counted up to `limit`: the crowd
    /// ``DeferredMatcher/best(for:among:networkDevices:at:)`` weighs the address by.
    func networkDevices(project: String, networkPrefix: String, at now: Date, since: Date, limit: Int) async throws -> Int

    /// Stores an install; it is on disk when this returns.
    func recordInstall(_ install: InstallRecord) async throws

    /// The install of `project` with `id`.
    func install(project: String, id: String) async throws -> InstallRecord?

    /// Adds the Apple Ads token an app got after its install report to `project`'s install `id`,
    /// unless the install has one already (the first token stays): `false` when the project has
    /// no such install. On disk when this returns.
    func addAppleAdsToken(_ token: String, install id: String, project: String) async throws -> Bool
}

extension AttributionStore {
    /// The clicks `matcher` reads for `install` at `now`: within the fingerprint's window, from
    /// the install's exact address when an IPv4 install can only match it (the address first,
    /// without ``DeferredMatcher/scoresIPv4Networks``), from its network otherwise; none
    /// without a network.
    package func matchCandidates(
        for install: DeviceSignals, project: String, matcher: DeferredMatcher, at now: Date
    ) async throws -> [MatchCandidate] {
        guard let prefix = install.networkPrefix else { return [] }
        let since = now.addingTimeInterval(-min(DeferredMatcher.lookback, TimeInterval(matcher.fingerprintWindowHours) * 3600))
        if matcher.matchesAddressOnly(install) {
            guard let address = install.ip else { return [] }
            return try await matchCandidates(project: project, address: address, since: since, limit: matcher.candidateLimit)
        }
        return try await matchCandidates(project: project, networkPrefix: prefix, since: since, limit: matcher.candidateLimit)
    }
}
