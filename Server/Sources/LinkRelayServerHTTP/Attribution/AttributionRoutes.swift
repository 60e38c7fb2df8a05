import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage

/// The SDK's attribution routes: install (E1, the deferred match), a late Apple Ads token for
/// an install, event (E4) and the attribution lookup (E8).
struct AttributionRoutes: Sendable {
    let store: any ServerStore
    let configuration: ServerConfiguration
    let clock: any LinkRelayClock

    /// Install, event and the attribution lookup, behind the SDK key.
    func register(on groups: RouteGroups) {
        groups.sdk.post("api/sdk/v1/install") { try await install($0, $1) }
        groups.sdk.post("api/sdk/v1/install/apple-ads-token") { try await lateAppleAdsToken($0, $1) }
        groups.sdk.post("api/sdk/v1/event") { try await event($0, $1) }
        groups.sdk.get("api/sdk/v1/attribution/:hash") { request, context in
            try await attribution(request, context, hash: context.parameters.require("hash"))
        }
    }

    // MARK: Install

    /// §3 of LinkForty's protocol: the install report, matched against the clicks of its
    /// network, stored (on disk before the answer), answered as Core answers
    /// (``AttributionService``, ``InstallAttribution``).
    func install(_ request: Request, _ context: ServerContext) async throws -> LinkRelayServerCore.InstallAttribution {
        let key = try context.requireAPIKey()
        let body = try await JSONBody.read(request, timeout: configuration.bodyTimeout)
        let report = try InstallReport(body, clientAddress: context.clientAddress, matchPrivateNetworks: configuration.matchPrivateNetworks)
        let attribution = try await AttributionService(store: store, matcher: configuration.matcher).attribute(
            report, project: key.projectID, at: clock.currentDate)
        if !attribution.repeated { configuration.metrics.install(method: attribution.install.method.rawValue) }
        return attribution
    }

    /// LinkRelay's own (LinkForty Core has no such route): the Apple Ads token the app got after
    /// its install report went without it (AdServices' call has been measured at 1.5 s, and the
    /// token is valid for 24 hours), stored with the install the report made, for the exchange
    /// with Apple's attribution API. `{"installId", "appleAdsToken"}`; an install that has a
    /// token keeps it (a retry, or a token the report carried). Answers
    /// `{"installId", "success": true}`, 404 for an install the project does not have.
    func lateAppleAdsToken(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let body = try await JSONBody.read(request, timeout: configuration.bodyTimeout)
        let installID = try body.string("installId", required: true, maxLength: 64) ?? ""
        let token = try body.string("appleAdsToken", required: true, maxLength: 4096) ?? ""
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw APIError.field("appleAdsToken", "must be the token AdServices gave, as it gave it")
        }
        guard try await store.addAppleAdsToken(token, install: installID, project: key.projectID) else {
            throw APIError(.notFound, "Install not found")
        }
        return ServerHTTP.json(LateAppleAdsTokenAnswer(installId: installID, success: true))
    }

    // MARK: Events

    /// §6 of LinkForty's protocol: an event of one of the project's installs, stored once. A
    /// client that retries sends the same install, name, timestamp and data, so its retry is
    /// the event stored before (answered with that event's id and `"duplicate": true`); an
    /// event without a `timestamp` cannot be told from a second one, so it is always new. On
    /// disk before the answer. An unknown install is a 404 (as Core), unless the server adopts
    /// unknown installs (``ServerConfiguration/adoptUnknownInstalls``, for moving an app from
    /// another server). The answer carries Core's `eventId` and `acknowledged`, and the
    /// `success` LinkForty's iOS SDK 1.1.3 decodes (without it that SDK re-queues every event
    /// it sent, and sends it again).
    func event(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let body = try await JSONBody.read(request, timeout: configuration.bodyTimeout)
        let installID = try body.string("installId", required: true, maxLength: 64) ?? ""
        let name = try body.string("eventName", required: true, maxLength: 256) ?? ""
        let data = try body.object("eventData") ?? [:]
        let timestamp = try body.date("timestamp")
        let attributedLinkID = try body.string("attributedLinkId", maxLength: 64)
        let attributedClickID = try body.string("attributedClickId", maxLength: 64)
        let linkOpenedAt = try body.date("linkOpenedAt")
        let sessionID = try body.string("sessionId", maxLength: 64)
        let sdk = [try body.string("sdkName", maxLength: 50), try body.string("sdkVersion", maxLength: 50)].compactMap { $0 }
        let now = clock.currentDate
        if try await store.install(project: key.projectID, id: installID) == nil {
            guard configuration.adoptUnknownInstalls, UUID(uuidString: installID) != nil else {
                throw APIError(.notFound, "Install event not found")
            }
            try await adopt(installID, project: key.projectID, request: request, context: context, at: now)
        }
        let id = RecordID.timeOrdered(at: now)
        let dedupeKey = timestamp.map { Self.dedupeKey(installID: installID, name: name, timestamp: $0, data: data) } ?? "new:" + id
        let outcome = try await store.recordEvent(
            EventRecord(
                id: id, projectID: key.projectID, installID: installID, name: name, properties: data, occurredAt: timestamp ?? now,
                receivedAt: now, dedupeKey: dedupeKey, attributedLinkID: attributedLinkID, attributedClickID: attributedClickID,
                linkOpenedAt: linkOpenedAt, sessionID: sessionID, sdk: sdk.isEmpty ? nil : sdk.joined(separator: "/")))
        let duplicate = if case .duplicate = outcome { true } else { false }
        return ServerHTTP.json(EventAnswer(eventId: outcome.record.id, acknowledged: true, success: true, duplicate: duplicate))
    }

    /// Takes an install another server made (the app's users from before a move) as this
    /// project's, unattributed (`method` `adopted`), so its events are kept. Two events of it
    /// arriving at once adopt it once.
    private func adopt(_ installID: String, project: String, request: Request, context: ServerContext, at now: Date) async throws {
        let ip = context.clientAddress
        let device = DeviceSignals(
            ip: ip, networkPrefix: ip.flatMap { ClientAddress.networkPrefix(of: $0, includingPrivate: configuration.matchPrivateNetworks) },
            userAgent: request.headers[.userAgent].map { Fingerprint.prefix($0, bytes: Fingerprint.maxUserAgentBytes) })
        let install = InstallRecord(
            id: installID, projectID: project, linkID: nil, clickID: nil, confidence: 0, matchedFactors: [], method: .adopted,
            installedAt: now, device: device, platform: nil, platformVersion: nil, deviceID: nil, fingerprintHash: "",
            attributionWindowHours: nil, deepLinkData: [:])
        do {
            try await store.recordInstall(install)
        } catch let error as StoreError where error.kind == .conflict {
            // Adopted meanwhile by another event, or the id is another project's install.
            guard try await store.install(project: project, id: installID) != nil else {
                throw APIError(.notFound, "Install event not found")
            }
        }
    }

    /// The hex SHA-256 of the install, name, time (to the millisecond) and data (keys sorted).
    static func dedupeKey(installID: String, name: String, timestamp: Date, data: [String: JSONValue]) -> String {
        let text = [installID, name, String(EpochMilliseconds.of(timestamp)), JSONText.encode(data)].joined(separator: "\u{0}")
        return sha256Hex(text)
    }

    // MARK: Attribution lookup

    /// E8: the newest install of the caller's project with LinkForty's fingerprint hash.
    func attribution(_ request: Request, _ context: ServerContext, hash: String) async throws -> Response {
        let key = try context.requireAPIKey()
        guard hash.count == 64, hash.allSatisfy(\.isHexDigit),
            let install = try await store.latestInstall(project: key.projectID, fingerprintHash: hash.lowercased())
        else { throw APIError(.notFound, "No install event found for this fingerprint") }
        let link = try await install.linkID.asyncFlatMap { try await store.link(id: $0) }
        return ServerHTTP.json(AttributionLookup(install, link: link))
    }
}
