import Foundation
import LinkRelay
import LinkRelaySimulatorCore
import LinkRelayWire

/// Paylisher's servers, emulated from its SDK's protocol and backend spec: campaign resolution on
/// the API host and the short-link hosts (payloads with Mongo extended-JSON wrappers, 404 for
/// unknown keys), the deferred match by fingerprint with single-use clicks (so a reinstall does
/// not match the same click again), and `/batch`, which unpacks gzip and keeps the events.
///
/// ```swift
/// let paylisher = simulator.addPaylisher(apiKey: "phc_…")
/// paylisher.createCampaign(keyName: "SUMMER", title: "Summer Sale", scheme: "diyetim://products/42")
/// try paylisher.recordWebClick(url: URL(string: "diyetim://products/42?color=red")!, campaignKey: "SUMMER", from: device)
/// ```
public final class PaylisherEmulation: ProviderEmulation, WebClickRecording {
    /// An event received in a batch.
    public struct ReceivedEvent: Sendable, Hashable {
        /// The event's name ("Deep Link Opened", `purchase`).
        public var event: String
        /// The `distinct_id` it was sent for.
        public var distinctID: String
        /// Its properties, as received.
        public var properties: [String: JSONValue]
        /// The event's `uuid`, which the SDK sets so a resent event can be recognised.
        public var uuid: String
    }

    private struct Click: Sendable {
        var fingerprint: String
        var url: String
        var campaignKey: String?
        var jid: String?
        var at: Date
        var consumed = false
    }

    private struct State: Sendable {
        var campaigns: [String: JSONValue] = [:]
        var clicks: [Click] = []
        var events: [ReceivedEvent] = []
    }

    private let state = Locked(State())
    /// The key the deferred match's Bearer token and the batches' `api_key` must be.
    public let apiKey: String
    /// The clock a web click is dated on when no date is given: the simulator's, for an
    /// emulation added with the simulator's `add…` method.
    public let clock: any LinkRelayClock
    /// How long a click can be matched. Default 30 minutes, as Paylisher's fix recommends.
    public let attributionWindow: TimeInterval

    /// Paylisher's servers, accepting `apiKey`, matching clicks up to `attributionWindow` seconds
    /// old (default 30 minutes), dating clicks recorded without a date on `clock`.
    public init(apiKey: String, attributionWindow: TimeInterval = 1800, clock: any LinkRelayClock = SystemClock()) {
        self.clock = clock
        self.apiKey = apiKey
        self.attributionWindow = attributionWindow
    }

    // MARK: Scripting

    /// Creates a campaign resolvable by its key.
    public func createCampaign(
        keyName: String, title: String? = nil, scheme: String? = nil, iosUniversalUrl: String? = nil, jid: String? = nil,
        metaData: [String: JSONValue] = [:]
    ) {
        var payload: [String: JSONValue] = [
            "_id": ["$oid": .string(String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(24)).lowercased())],
            "keyName": .string(keyName), "type": "promotion", "metaData": .object(metaData), "__v": 0,
            "createdAt": ["$date": "2026-06-01T08:00:00.000Z"], "updatedAt": ["$date": "2026-07-01T08:00:00.000Z"],
        ]
        if let title { payload["title"] = .string(title) }
        if let scheme { payload["scheme"] = .string(scheme) }
        if let iosUniversalUrl { payload["iosUniversalUrl"] = .string(iosUniversalUrl) }
        if let jid { payload["jid"] = .string(jid) }
        state.withLock { $0.campaigns[keyName] = .object(payload) }
    }

    /// Records a tap in a phone's browser that hands on the app URL `url`: Paylisher's bridge
    /// page stores it with the device's fingerprint (model family, time zone, language). The
    /// match does not use the address.
    public func recordWebClick(url: URL, from device: DeviceInfo, ip: String, at date: Date) throws {
        try recordWebClick(url: url, campaignKey: nil, from: device, ip: ip, at: date)
    }

    /// Records a tap on a campaign's link: as ``recordWebClick(url:from:ip:at:)``, with the
    /// campaign's key and journey id, which the deferred answer carries; without a date, at
    /// ``clock``'s current date.
    ///
    /// - Throws: ``/LinkRelaySimulatorCore/UnknownLinkError`` when `campaignKey` names no campaign.
    public func recordWebClick(
        url: URL, campaignKey: String?, jid: String? = nil, from device: DeviceInfo, ip: String = ProviderSimulator.defaultClientIP,
        at date: Date? = nil
    ) throws {
        let date = date ?? clock.currentDate
        if let campaignKey, state.withLock({ $0.campaigns[campaignKey] == nil }) {
            throw UnknownLinkError(provider: "Paylisher", url: url)
        }
        let click = Click(fingerprint: Self.fingerprint(device), url: url.absoluteString, campaignKey: campaignKey, jid: jid, at: date)
        state.withLock { $0.clicks.append(click) }
    }

    /// Every event received, in order.
    public var events: [ReceivedEvent] { state.withLock { $0.events } }

    /// The bridge page's fingerprint: SHA-256 of `family|timezone|language`.
    static func fingerprint(_ device: DeviceInfo) -> String {
        let family = device.deviceFamily ?? DeviceInfo.family(ofModel: device.deviceModel) ?? "iPhone"
        let language = device.preferredLanguages.first.map { String($0.prefix { $0 != "-" && $0 != "_" }).lowercased() } ?? "en"
        return SHA256Digest.hex(Data("\(family)|\(device.timeZoneIdentifier)|\(language.isEmpty ? "en" : language)".utf8))
    }

    // MARK: Serving

    public func handle(_ request: ProviderSimulator.Request) -> HTTPResponse {
        let path = request.http.url.path
        let segments = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        switch (request.http.method, segments.count) {
        case (.get, 3) where segments[0] == "campaign" && segments[1] == "resolve": return campaign(segments[2])
        case (.get, 2) where segments[0] == "resolve": return campaign(segments[1])
        case (.get, 2) where segments == ["v1", "deferred-deeplink"]: return deferred(request)
        case (.post, 1) where segments[0] == "batch": return batch(request.http)
        default: return .json(["error": "Not found", "statusCode": 404], status: 404)
        }
    }

    private func campaign(_ key: String) -> HTTPResponse {
        guard let payload = state.withLock({ $0.campaigns[key] }) else {
            return .json(["error": "Campaign not found", "statusCode": 404], status: 404)
        }
        return .json(payload)
    }

    private func deferred(_ request: ProviderSimulator.Request) -> HTTPResponse {
        guard request.http.headers["Authorization"] == "Bearer \(apiKey)" else {
            return .json(["status": "error", "error_code": "UNAUTHORIZED", "message": "Invalid API key"], status: 401)
        }
        let fingerprint =
            URLComponents(url: request.http.url, resolvingAgainstBaseURL: false)?.queryItems?
            .first { $0.name == "fingerprint" }?.value ?? ""
        return state.withLock { state in
            // Newest unconsumed click within the window; consumed at once (single use).
            guard
                let index = state.clicks.lastIndex(where: {
                    !$0.consumed && $0.fingerprint == fingerprint && request.receivedAt.timeIntervalSince($0.at) <= attributionWindow
                })
            else {
                return .json(["status": "no_match", "message": "No deferred deeplink found for this device"])
            }
            state.clicks[index].consumed = true
            let click = state.clicks[index]
            var body: [String: JSONValue] = [
                "status": "match", "url": .string(click.url), "attribution_window": .int(attributionWindow.saturatingInt),
                "click_timestamp": .string(ISO8601Timestamp.string(from: click.at, fractional: true)),
                "attribution_method": "fingerprint", "confidence": 0.3,
            ]
            if let key = click.campaignKey { body["campaign_key"] = .string(key) }
            if let jid = click.jid { body["jid"] = .string(jid) }
            return .json(.object(body))
        }
    }

    private func batch(_ request: HTTPRequest) -> HTTPResponse {
        var body = request.body ?? Data()
        if request.headers["Content-Encoding"]?.lowercased() == "gzip" {
            guard let inflated = try? Gzip.decompress(body) else { return .json(["error": "Invalid gzip body"], status: 400) }
            body = inflated
        }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: body), case .object(let object) = value,
            case .array(let batch)? = object["batch"]
        else {
            return .json(["error": "Invalid batch"], status: 400)
        }
        guard object["api_key"]?.stringValue == apiKey else { return .json(["error": "Invalid API key"], status: 401) }
        let received = batch.compactMap { item -> ReceivedEvent? in
            guard case .object(let event) = item, let name = event["event"]?.stringValue else { return nil }
            var properties: [String: JSONValue] = [:]
            if case .object(let values)? = event["properties"] { properties = values }
            return ReceivedEvent(
                event: name, distinctID: event["distinct_id"]?.stringValue ?? "", properties: properties,
                uuid: event["uuid"]?.stringValue ?? "")
        }
        state.withLock { $0.events += received }
        return .json(["status": 1])
    }
}

extension ProviderSimulator {
    /// Adds Paylisher: the campaign API, the short-link hosts (which also serve the deferred
    /// match) and the analytics host.
    @discardableResult
    public func addPaylisher(
        apiKey: String, apiHost: String = "api.paylisher.com",
        shortLinkHosts: Set<String> = ["link.paylisher.com", "link.usepublisher.com"],
        analyticsHost: String = "us.i.paylisher.com"
    ) -> PaylisherEmulation {
        let emulation = PaylisherEmulation(apiKey: apiKey, clock: clock)
        register(emulation, hosts: shortLinkHosts.union([apiHost, analyticsHost]))
        return emulation
    }
}
