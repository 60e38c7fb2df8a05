import Foundation
import LinkRelay
import LinkRelayServerCore

/// `POST /api/sdk/v1/install`'s answer, as LinkForty Core answers it, with two fields more
/// (§12.8): `clickToken` (how the report's token was taken) and `clientReportedIp`.
package struct InstallAnswer: WireAnswer {
    package var installId: String
    package var attributed: Bool
    package var confidenceScore: Int
    package var matchedFactors: [String]
    package var attributionMethod: String
    /// The deferred link (``DeepLinkData``); absent for an organic install. Core sends `{}`,
    /// which LinkForty's iOS SDK 1.1.3 cannot decode (its `DeepLinkData` requires `shortCode`):
    /// `initialize()` throws on every organic install. Absent decodes in every LinkForty SDK.
    package var deepLinkData: [String: JSONValue]?
    /// `attributed`, `unknown`, `expired`, … for a report that carried a click token.
    package var clickToken: String?
    /// The address the app reported, when it reported one.
    package var clientReportedIp: String?

    package var json: JSONValue? {
        var answer: [String: JSONValue] = [
            "installId": .string(installId), "attributed": .bool(attributed), "confidenceScore": .int(confidenceScore),
            "matchedFactors": .array(matchedFactors.map(JSONValue.string)), "attributionMethod": .string(attributionMethod),
        ]
        if let deepLinkData { answer["deepLinkData"] = .object(deepLinkData) }
        if let clickToken { answer["clickToken"] = .string(clickToken) }
        if let clientReportedIp { answer["clientReportedIp"] = .string(clientReportedIp) }
        return .object(answer)
    }

    package static let schema = "InstallAnswer"
    package static let example = InstallAnswer(
        installId: WireTypes.exampleInstall.id, attributed: true, confidenceScore: 85, matchedFactors: ["ip", "user_agent"],
        attributionMethod: "fingerprint", deepLinkData: WireTypes.exampleInstall.deepLinkData, clickToken: "expired",
        clientReportedIp: "198.51.100.4")
}

extension InstallAnswer {
    /// The answer for `attribution`.
    package init(_ attribution: LinkRelayServerCore.InstallAttribution) {
        let install = attribution.install
        installId = install.id
        attributed = attribution.attributed
        confidenceScore = install.confidence
        matchedFactors = install.matchedFactors
        attributionMethod = install.method.rawValue
        deepLinkData = install.deepLinkData.isEmpty ? nil : install.deepLinkData
        clickToken = attribution.clickToken?.status
        clientReportedIp = attribution.reportedIP
    }
}

/// `POST /api/sdk/v1/install/apple-ads-token`: `{"installId", "success": true}`.
package struct LateAppleAdsTokenAnswer: WireAnswer {
    package var installId: String
    package var success: Bool

    package static let schema = "LateAppleAdsTokenAnswer"
    package static let example = LateAppleAdsTokenAnswer(installId: WireTypes.exampleInstall.id, success: true)
}

/// `POST /api/sdk/v1/event`: Core's `eventId` and `acknowledged`, the `success` LinkForty's iOS
/// SDK 1.1.3 decodes, and whether the event repeats one stored before.
package struct EventAnswer: WireAnswer {
    package var eventId: String
    package var acknowledged: Bool
    package var success: Bool
    package var duplicate: Bool

    package static let schema = "EventAnswer"
    package static let example = EventAnswer(eventId: "e1", acknowledged: true, success: true, duplicate: false)
}

/// `GET /api/sdk/v1/attribution/{fingerprintHash}` (E8): the newest install with the hash, its
/// click and its link, as Core answers them.
package struct AttributionLookup: WireAnswer {
    package struct InstallEvent: Encodable, Sendable {
        package var id: String
        package var installedAt: String
        package var firstOpenAt: String
        package var confidenceScore: Int
        package var deepLinkRetrieved: Bool
        package var matchedFactors: [String]
        package var attributionMethod: String
    }

    package struct ClickEvent: Encodable, Sendable {
        package var id: String
        /// As stored in the install's `deepLinkData`.
        package var clickedAt: JSONValue
    }

    package struct LinkData: Encodable, Sendable {
        package var shortCode: String
        package var originalUrl: String
        package var iosUrl: Nullable<String>
        package var androidUrl: Nullable<String>
        package var webFallbackUrl: Nullable<String>
        package var utmParameters: [String: String]
        package var deepLinkParameters: [String: JSONValue]
    }

    package var fingerprint: String
    package var attributed: Bool
    package var installEvent: InstallEvent
    package var clickEvent: Nullable<ClickEvent>
    package var linkData: Nullable<LinkData>

    /// The answer for `install`, attributed to `link` when it still exists.
    package init(_ install: InstallRecord, link: LinkRecord?) {
        fingerprint = install.fingerprintHash
        attributed = install.linkID != nil
        installEvent = InstallEvent(
            id: install.id, installedAt: ServerHTTP.timestamp(install.installedAt), firstOpenAt: ServerHTTP.timestamp(install.installedAt),
            confidenceScore: install.confidence, deepLinkRetrieved: install.linkID != nil, matchedFactors: install.matchedFactors,
            attributionMethod: install.method.rawValue)
        if let clickID = install.clickID, let clicked = install.deepLinkData["clickedAt"] {
            clickEvent = Nullable(ClickEvent(id: clickID, clickedAt: clicked))
        } else {
            clickEvent = nil
        }
        linkData = Nullable(
            link.map { link in
                LinkData(
                    shortCode: link.shortCode, originalUrl: link.originalURL, iosUrl: Nullable(link.iosAppStoreURL),
                    androidUrl: Nullable(link.androidAppStoreURL), webFallbackUrl: Nullable(link.webFallbackURL),
                    utmParameters: link.utmParameters, deepLinkParameters: link.deepLinkParameters)
            })
    }

    package static let schema = "AttributionLookup"
    package static let example = AttributionLookup(WireTypes.exampleInstall, link: WireTypes.exampleLink)
}

/// `GET /api/sdk/v1/resolve/{code}` (§5.2–5.3): the link's fields, falsy ones left out.
package struct ResolvedLink: WireAnswer {
    package var shortCode: String
    package var linkId: String
    package var deepLinkPath: String?
    package var appScheme: String?
    package var iosUrl: String?
    package var androidUrl: String?
    package var webUrl: String?
    package var utmParameters: [String: String]
    package var customParameters: [String: JSONValue]
    /// In whole seconds (``ServerHTTP/sdkTimestamp(_:)``), as LinkForty's iOS SDK reads it.
    package var clickedAt: String

    /// `link` resolved at `date`.
    package init(_ link: LinkRecord, at date: Date) {
        func nonEmpty(_ text: String?) -> String? { text?.isEmpty == false ? text : nil }
        shortCode = link.shortCode
        linkId = link.id
        deepLinkPath = nonEmpty(link.deepLinkPath)
        appScheme = nonEmpty(link.appScheme)
        iosUrl = nonEmpty(link.iosAppStoreURL)
        androidUrl = nonEmpty(link.androidAppStoreURL)
        webUrl = nonEmpty(link.webFallbackURL)
        utmParameters = link.utmParameters
        customParameters = link.deepLinkParameters
        clickedAt = ServerHTTP.sdkTimestamp(date)
    }

    package var json: JSONValue? {
        var answer: [String: JSONValue] = [
            "shortCode": .string(shortCode), "linkId": .string(linkId), "utmParameters": .object(utmParameters.mapValues(JSONValue.string)),
            "customParameters": .object(customParameters), "clickedAt": .string(clickedAt),
        ]
        for case (let name, let value?) in [
            ("deepLinkPath", deepLinkPath), ("appScheme", appScheme), ("iosUrl", iosUrl), ("androidUrl", androidUrl), ("webUrl", webUrl),
        ] {
            answer[name] = .string(value)
        }
        return .object(answer)
    }

    package static let schema = "ResolvedLink"
    package static let example = ResolvedLink(WireTypes.exampleLink, at: Date(timeIntervalSince1970: 1_780_000_000))
}
