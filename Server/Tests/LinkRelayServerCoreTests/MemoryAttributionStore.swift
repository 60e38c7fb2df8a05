import Foundation
import Synchronization

@testable import LinkRelayServerCore

/// ``AttributionStore`` in memory, for the Core's tests: what the SQL stores do, without a
/// database. Clicks claimed by a click token are no candidates; a token is taken once; an
/// install write can be made to fail.
final class MemoryAttributionStore: AttributionStore {
    private struct State {
        var links: [String: LinkRecord] = [:]
        var clicks: [ClickRecord] = []
        var claimed: Set<String> = []
        var tokens: [String: (record: ClickTokenRecord, usedBy: String?)] = [:]
        var installs: [String: InstallRecord] = [:]
        var failsInstallWrites = false
        var released: [String] = []
    }

    private let state = Mutex(State())

    func add(_ link: LinkRecord) { state.withLock { $0.links[link.id] = link } }
    func add(_ click: ClickRecord) { state.withLock { $0.clicks.append(click) } }
    func add(_ token: ClickTokenRecord) { state.withLock { $0.tokens[token.tokenHash] = (token, nil) } }
    func failInstallWrites(_ fails: Bool) { state.withLock { $0.failsInstallWrites = fails } }
    var installs: [InstallRecord] { state.withLock { Array($0.installs.values) } }
    /// The installs whose tokens were given back.
    var released: [String] { state.withLock { $0.released } }

    func useClickToken(hash: String, project: String, installID: String, at now: Date) async throws -> ClickTokenUse {
        state.withLock { state in
            guard let (record, usedBy) = state.tokens[hash], record.projectID == project else { return .unknown }
            if let usedBy {
                return .used(
                    linkID: record.linkID, clickID: record.clickID, clickedAt: record.clickedAt, installID: usedBy,
                    expired: record.expiresAt <= now)
            }
            guard record.expiresAt > now else { return .expired }
            state.tokens[hash] = (record, installID)
            state.claimed.insert(record.clickID)
            return .accepted(linkID: record.linkID, clickID: record.clickID, clickedAt: record.clickedAt)
        }
    }

    func releaseClickToken(hash: String, installID: String) async throws {
        state.withLock { state in
            guard let (record, usedBy) = state.tokens[hash], usedBy == installID else { return }
            state.tokens[hash] = (record, nil)
            state.claimed.remove(record.clickID)
            state.released.append(installID)
        }
    }

    func cachedLink(id: String) async throws -> LinkRecord? { state.withLock { $0.links[id] } }

    func matchCandidates(project: String, networkPrefix: String, since: Date, limit: Int) async throws -> [MatchCandidate] {
        candidates(project: project, since: since, limit: limit) { $0.device.networkPrefix == networkPrefix }
    }

    func matchCandidates(project: String, address: String, since: Date, limit: Int) async throws -> [MatchCandidate] {
        candidates(project: project, since: since, limit: limit) { $0.device.ip == address }
    }

    func networkDevices(project: String, networkPrefix: String, at now: Date, since: Date, limit: Int) async throws -> Int {
        let devices = state.withLock { state in
            Set(
                state.clicks.filter { click in
                    click.projectID == project && click.device.networkPrefix == networkPrefix && !click.isBot && click.clickedAt >= since
                        && now.timeIntervalSince(click.clickedAt) <= TimeInterval(state.links[click.linkID]?.attributionWindowHours ?? 0)
                            * 3600
                }.map { DeferredMatcher.deviceSignature($0.device) })
        }
        return min(devices.count, limit)
    }

    func recordInstall(_ install: InstallRecord) async throws {
        try state.withLock { state in
            if state.failsInstallWrites { throw MemoryStoreError.writeFailed }
            state.installs[install.id] = install
        }
    }

    func install(project: String, id: String) async throws -> InstallRecord? {
        state.withLock { $0.installs[id].flatMap { $0.projectID == project ? $0 : nil } }
    }

    func addAppleAdsToken(_ token: String, install id: String, project: String) async throws -> Bool {
        state.withLock { state in
            guard var install = state.installs[id], install.projectID == project else { return false }
            if install.appleAdsToken == nil { install.appleAdsToken = token }
            state.installs[id] = install
            return true
        }
    }

    /// The project's clicks that `matches`, since `since`, not bots', not claimed, whose link is
    /// kept, newest first, at most `limit`, each with its link's window.
    private func candidates(project: String, since: Date, limit: Int, _ matches: (ClickRecord) -> Bool) -> [MatchCandidate] {
        state.withLock { state in
            state.clicks
                .filter { $0.projectID == project && $0.clickedAt >= since && !$0.isBot && !state.claimed.contains($0.id) && matches($0) }
                .sorted { ($0.clickedAt, $0.id) > ($1.clickedAt, $1.id) }
                .prefix(max(limit, 0))
                .compactMap { click in
                    state.links[click.linkID].map { MatchCandidate(click: click, windowHours: $0.attributionWindowHours) }
                }
        }
    }
}

enum MemoryStoreError: Error {
    case writeFailed
}
