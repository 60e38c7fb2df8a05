import Foundation
import LinkRelay
import LinkRelayWire

// Paylisher's JSON, as on the wire.

/// The campaign resolve answer. Every field is optional; Mongo's extended-JSON wrappers
/// (`{"$oid": …}`, `{"$date": …}`) and plain values are both read, and one odd field never
/// fails the whole payload (Paylisher's SDK fails on a string `_id`).
struct PaylisherCampaign: Decodable, Equatable {
    var id: String?
    var teamId: String?
    var projectId: String?
    var sourceId: String?
    var type: String?
    var title: String?
    var keyName: String?
    var webUrl: String?
    var iosUrl: String?
    var androidUrl: String?
    var huaweiUrl: String?
    var fallbackUrl: String?
    var scheme: String?
    var iosUniversalUrl: String?
    var webhookUrl: String?
    var createdAt: String?
    var updatedAt: String?
    var version: Int?
    var adId: String?
    var metaData: [String: JSONValue]?
    var jid: String?

    enum CodingKeys: String, CodingKey {
        case id = "_id"
        case teamId, projectId, sourceId, type, title, keyName, webUrl, iosUrl, androidUrl, huaweiUrl, fallbackUrl
        case scheme, iosUniversalUrl, webhookUrl, createdAt, updatedAt
        case version = "__v"
        case adId, metaData, jid
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys, wrapper: String? = nil) -> String? {
            guard let value = container.lenient(JSONValue.self, forKey: key) else { return nil }
            switch value {
            case .string(let text): return text
            case .object(let object): return wrapper.flatMap { object[$0]?.scalarDescription }
            case .int, .double, .bool: return value.scalarDescription
            default: return nil
            }
        }
        id = text(.id, wrapper: "$oid")
        adId = text(.adId, wrapper: "$oid")
        createdAt = text(.createdAt, wrapper: "$date")
        updatedAt = text(.updatedAt, wrapper: "$date")
        teamId = text(.teamId)
        projectId = text(.projectId)
        sourceId = text(.sourceId)
        type = text(.type)
        title = text(.title)
        keyName = text(.keyName)
        webUrl = text(.webUrl)
        iosUrl = text(.iosUrl)
        androidUrl = text(.androidUrl)
        huaweiUrl = text(.huaweiUrl)
        fallbackUrl = text(.fallbackUrl)
        scheme = text(.scheme)
        iosUniversalUrl = text(.iosUniversalUrl)
        webhookUrl = text(.webhookUrl)
        jid = text(.jid)
        version = container.lenient(Int.self, forKey: .version) ?? text(.version).flatMap { Int($0) }
        metaData = container.lenient([String: JSONValue].self, forKey: .metaData)
    }
}

/// The deferred match answer, in snake_case or camelCase alike. `status` is required.
struct PaylisherDeferredResponse: Equatable {
    var status: String
    var url: String?
    var campaignKey: String?
    var jid: String?
    var clickTimestamp: String?
    var attributionWindow: Int?
    var metadata: [String: JSONValue]?
    var attributionMethod: String?
    var confidence: Double?

    init(json: Data) throws {
        let object = try WireJSON.decode([String: JSONValue].self, from: json)
        func value(_ snake: String, _ camel: String) -> JSONValue? { object[snake] ?? object[camel] }
        guard case .string(let status)? = object["status"] else {
            throw DeepLinkError(.decoding, "Paylisher's deferred answer has no status.", backend: .paylisher)
        }
        self.status = status
        url = object["url"]?.stringValue
        campaignKey = value("campaign_key", "campaignKey")?.stringValue
        jid = object["jid"]?.stringValue
        clickTimestamp = value("click_timestamp", "clickTimestamp")?.stringValue
        switch value("attribution_window", "attributionWindow") {
        case .int(let seconds)?: attributionWindow = seconds
        // `exactly`: a whole number past Int's range (1e300) is no window, not a trap.
        case .double(let seconds)?: attributionWindow = Int(exactly: seconds)
        default: attributionWindow = nil
        }
        if case .object(let metadata)? = object["metadata"] { self.metadata = metadata }
        attributionMethod = value("attribution_method", "attributionMethod")?.stringValue
        switch object["confidence"] {
        case .double(let value)?: confidence = value
        case .int(let value)?: confidence = Double(value)
        default: confidence = nil
        }
    }
}

/// `POST {host}/batch` body (sent gzip-compressed).
struct PaylisherBatch: Encodable, Equatable {
    var apiKey: String
    var batch: [PaylisherBatchEvent]
    var sentAt: String

    enum CodingKeys: String, CodingKey {
        case apiKey = "api_key"
        case batch
        case sentAt = "sent_at"
    }
}

/// One event of a batch.
struct PaylisherBatchEvent: Encodable, Equatable {
    var event: String
    var distinctId: String
    var properties: [String: JSONValue]
    var timestamp: String
    var uuid: String

    enum CodingKeys: String, CodingKey {
        case event
        case distinctId = "distinct_id"
        case properties, timestamp, uuid
    }
}
