import Foundation
import HTTPTypes
import Hummingbird
import LinkRelay
import LinkRelayServerCore

/// A JSON answer of the API as a typed value: its stored properties are the wire's fields (their
/// names the wire's, through `CodingKeys` where Swift's would differ), so a handler cannot answer
/// a field the type does not have. Written by hand rather than generated from `openapi.json`:
/// LinkForty's answers carry quirks a generator would not keep (the same values under snake_case
/// and camelCase in a link's row, `null` for an empty column where an `Optional` would leave the
/// field out, a resolve's falsy fields left out). Each type is listed in ``WireTypes/all`` with
/// its schema's name in the description and an example with every field present;
/// `WireTypeTests` checks the two against each other field by field, both ways.
package protocol WireAnswer: Encodable, Sendable, ResponseGenerator {
    /// The same JSON built by hand, for an answer on a hot path (the install, a resolve):
    /// written by ``JSONText`` it costs about a quarter of Foundation's encoder, which took 3 to
    /// 4 % of the install's throughput. `nil` (the default): Foundation's encoder writes the
    /// value. `WireTypeTests` checks the two agree on every example.
    var json: JSONValue? { get }
}

extension WireAnswer {
    package var json: JSONValue? { nil }
}

extension WireAnswer {
    /// `200` with the value as JSON (``ServerHTTP/json(_:status:)-swift.method``).
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        ServerHTTP.json(self)
    }

    /// The value as JSON with `status`.
    package func response(status: HTTPResponse.Status) -> Response {
        ServerHTTP.json(self, status: status)
    }
}

/// A field written `null` when it has no value (LinkForty Core writes an empty column so), where
/// an `Optional` property would be left out of the answer.
package struct Nullable<Wrapped: Encodable & Sendable>: Encodable, Sendable, ExpressibleByNilLiteral {
    /// The value, or `nil` for `null`.
    package var value: Wrapped?

    /// `value`, or `null` when `nil`.
    package init(_ value: Wrapped?) {
        self.value = value
    }

    /// `null`.
    package init(nilLiteral: ()) {
        value = nil
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}

/// An answer's type as the check against the description reads it: its schema's name under
/// `components.schemas`, and a value with every field present (each optional one set).
package struct WireExample: Sendable {
    package let schema: String
    package let example: any WireAnswer

    package init(_ schema: String, _ example: any WireAnswer) {
        self.schema = schema
        self.example = example
    }
}

/// Every JSON answer of the API, for the check against `openapi.json`: a type answered by a
/// route must be listed here (`OpenAPITests` also fails when a schema that a `2xx` answer of the
/// description names has no type here).
package enum WireTypes {
    package static let all: [WireExample] = [
        WireExample(Health.schema, Health.example),
        WireExample(ErrorAnswer.schema, ErrorAnswer.example),
        WireExample(Success.schema, Success.example),
        WireExample(InstallAnswer.schema, InstallAnswer.example),
        WireExample(LateAppleAdsTokenAnswer.schema, LateAppleAdsTokenAnswer.example),
        WireExample(EventAnswer.schema, EventAnswer.example),
        WireExample(AttributionLookup.schema, AttributionLookup.example),
        WireExample(ResolvedLink.schema, ResolvedLink.example),
        WireExample(SDKLink.schema, SDKLink.example),
        WireExample(LinkRow.schema, LinkRow.example),
        WireExample(CreatedLinkRow.schema, CreatedLinkRow.example),
        WireExample(Analytics.schema, Analytics.example),
        WireExample(TemplateAnswer.schema, TemplateAnswer.example),
        WireExample(AppAnswer.schema, AppAnswer.example),
        WireExample(InstallDetails.schema, InstallDetails.example),
        WireExample(DestinationHostsAnswer.schema, DestinationHostsAnswer.example),
        WireExample(LandingPageAnswer.schema, LandingPageAnswer.example),
        WireExample(AppleAppSiteAssociationFile.schema, AppleAppSiteAssociationFile.example),
        WireExample(AssetLinksFile.schema, AssetLinksFile.example),
    ]

    /// A link with every field set, for the examples.
    static let exampleLink = LinkRecord(
        id: "0b6f8a7e-5a0c-4d1e-9e61-6f1c2d3e4f50", projectID: "p", templateSlug: "k3m9x2qa", shortCode: "spring",
        originalURL: "https://acme.example/spring", deepLinkPath: "/products/42", appScheme: "acme",
        iosAppStoreURL: "https://apps.apple.com/app/id1", androidAppStoreURL: "https://play.google.com/store/apps/details?id=com.acme",
        webFallbackURL: "https://acme.example/web", utmParameters: ["utm_source": "mail"], deepLinkParameters: ["productId": "42"],
        attributionWindowHours: 168, isActive: true, expiresAt: Date(timeIntervalSince1970: 1_800_000_000),
        createdAt: Date(timeIntervalSince1970: 1_780_000_000), templateID: "5a1e7c3d-0b92-4f48-8e6a-c2d9f1a0b347", title: "Spring",
        description: "The spring sale", iosUniversalLink: "https://acme.example/ul", androidAppLink: "https://acme.example/al",
        targetingRules: ["countries": ["US"]], ogTitle: "Spring", ogDescription: "The sale", ogImageURL: "https://acme.example/og.png",
        appendClickID: true, landingPage: true)

    /// An attributed install of ``exampleLink`` with every field set.
    static let exampleInstall = InstallRecord(
        id: "7d1c9a44-2f0e-4b8e-a1a3-5b0c6d7e8f90", projectID: "p", linkID: exampleLink.id, clickID: "c1", confidence: 85,
        matchedFactors: ["ip", "user_agent"], method: .fingerprint, installedAt: Date(timeIntervalSince1970: 1_780_000_100),
        device: DeviceSignals(
            ip: "203.0.113.7", networkPrefix: "203.0.113", userAgent: "Mozilla/5.0", timezone: "Europe/Paris", language: "fr-FR",
            screenWidth: 390, screenHeight: 844),
        platform: .ios, platformVersion: "18.1", deviceID: "idfv", fingerprintHash: String(repeating: "a", count: 64),
        attributionWindowHours: 168,
        deepLinkData: DeepLinkData.deepLinkData(
            exampleLink, clickID: "c1", clickedAt: Date(timeIntervalSince1970: 1_780_000_000), confidence: 85,
            factors: ["ip", "user_agent"]),
        appleAdsToken: "token")
}

/// `GET /api/sdk/v1/health`: `{"status":"healthy","version":"v1","timestamp":"…"}`.
package struct Health: WireAnswer, Decodable {
    package var status: String
    package var version: String
    package var timestamp: String
    /// Why the server is unhealthy; absent when healthy.
    package var reason: String?

    package static let schema = "Health"
    package static let example = Health(
        status: "unhealthy", version: "v1", timestamp: "2026-03-01T10:15:30.123Z", reason: "The disk is full.")
}

/// Every error: `{"error": "…", "field"?: "…"}` (``APIError``).
package struct ErrorAnswer: WireAnswer {
    /// The sentence the client reads.
    package var error: String
    /// The request's field at fault, for a `400`.
    package var field: String?

    package static let schema = "Error"
    package static let example = ErrorAnswer(error: "deepLinkPath must start with /.", field: "deepLinkPath")
}

/// `{"success": true}`: a link deleted.
package struct Success: WireAnswer {
    package var success: Bool

    package static let schema = "Success"
    package static let example = Success(success: true)
}
