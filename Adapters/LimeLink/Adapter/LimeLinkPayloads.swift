import Foundation
import LinkRelay
import LinkRelayWire

// LimeLink's JSON, exactly as on the wire.

/// `dynamic_link` answer: `{"uri": "myapp://product/123"}`. A string `uri` is what says
/// "resolved"; anything else in the body is ignored.
struct LimeLinkResolveResponse: Decodable {
    var uri: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uri = container.lenient(String.self, forKey: .uri)
    }

    enum CodingKeys: String, CodingKey { case uri }
}

/// Legacy resolver answer: `{"deeplinkUrl": "…"}` (iOS), or `deeplink_url` (Android docs).
struct LimeLinkLegacyResponse: Decodable {
    var deeplinkURL: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        deeplinkURL = container.lenient(String.self, forKey: .camel) ?? container.lenient(String.self, forKey: .snake)
    }

    enum CodingKeys: String, CodingKey {
        case camel = "deeplinkUrl"
        case snake = "deeplink_url"
    }
}

/// Deferred step 1 answer: `{"suffix": "…", "full_request_url": "…"}`; a `null` suffix is no
/// match. Wrong types (a numeric suffix) fail the decode, as they do in LimeLink's SDK.
struct LimeLinkDeferredResponse: Decodable, Equatable {
    var suffix: String?
    var fullRequestURL: String?

    enum CodingKeys: String, CodingKey {
        case suffix
        case fullRequestURL = "full_request_url"
    }
}

/// `POST api/v1/stats/event` body; `handle` is left out when absent.
struct LimeLinkStatsRequest: Codable, Equatable {
    var privateKey: String
    var suffix: String
    var handle: String?
    var eventType: String
    var operatingSystem: String

    enum CodingKeys: String, CodingKey {
        case privateKey = "private_key"
        case suffix, handle
        case eventType = "event_type"
        case operatingSystem = "operating_system"
    }
}

/// What is kept between the two deferred steps, so that a failed second step does not lose a
/// match the server has already used up.
struct LimeLinkPendingMatch: Codable, Equatable {
    var suffix: String
    var fullRequestURL: String?
}
