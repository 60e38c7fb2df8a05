import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

/// The one place where Dynalinks' field names meet LinkRelay's model.
enum DynalinksMapping {
    // MARK: Device → fingerprint

    static func fingerprint(_ device: DeviceInfo) -> DynalinksFingerprint {
        DynalinksFingerprint(
            screenWidth: device.screen.map { $0.width.saturatingInt }, screenHeight: device.screen.map { $0.height.saturatingInt },
            devicePixelRatio: device.screen?.scale, osVersion: threePartVersion(device.osVersion),
            timezone: device.timeZoneIdentifier, calendar: device.calendarIdentifier.map(calendarName),
            language: device.preferredLanguages.first.map { $0.replacing("_", with: "-") },
            languages: device.preferredLanguages.isEmpty ? nil : device.preferredLanguages.map { $0.replacing("_", with: "-") },
            countryCode: device.regionCode, deviceModel: device.deviceModel, idfv: device.vendorID?.uuidString,
            appVersion: device.appVersion, appBuild: device.appBuild, simulator: device.isSimulator)
    }

    /// Exactly three numeric parts: `17` → `17.0.0`, `17.4` → `17.4.0`, a fourth part dropped.
    static func threePartVersion(_ version: String) -> String {
        var parts = version.split(separator: ".").prefix(3).map { part in String(part.prefix { $0.isNumber }) }
        parts = parts.map { $0.isEmpty ? "0" : $0 }
        while parts.count < 3 { parts.append("0") }
        return parts.joined(separator: ".")
    }

    /// Foundation's calendar identifier in BCP-47 / JavaScript `Intl` terms, as a web page reports
    /// it; anything unknown is `gregory`.
    static func calendarName(_ identifier: String) -> String {
        switch identifier {
        case "gregorian": "gregory"
        case "buddhist", "chinese", "coptic", "hebrew", "indian", "islamic", "japanese", "persian", "iso8601": identifier
        case "ethiopicAmeteMihret": "ethiopic"
        case "ethiopicAmeteAlem": "ethioaa"
        case "islamicCivil": "islamic-civil"
        case "islamicTabular": "islamic-tbla"
        case "islamicUmmAlQura": "islamic-umalqura"
        case "republicOfChina": "roc"
        default: "gregory"
        }
    }

    // MARK: Responses → model

    static func confidence(level: String?, score: Double?) -> InstallAttribution.Confidence? {
        let parsedLevel = level.flatMap { InstallAttribution.Confidence.Level(rawValue: $0.lowercased()) }
        // Clamped before the conversion: a score past Int's range would trap.
        let parsedScore = score.flatMap { $0.isFinite ? Int(min(max($0, 0), 100).rounded()) : nil }
        switch (parsedScore, parsedLevel) {
        case (let score?, let level?): return .init(score: score, level: level)
        case (let score?, nil): return .init(score: score)
        case (nil, let level?): return .init(level: level)
        case (nil, nil): return nil
        }
    }

    /// The deferred match. The link's URL is its `full_url`, else its path on the project's host
    /// (what `full_url` is made of), else its destination `url`.
    static func installMatch(_ result: DynalinksResult, projectHost: String?) -> InstallMatch {
        guard result.matched else { return .organic() }
        var attribution = InstallAttribution(
            isAttributed: true, confidence: confidence(level: result.confidence, score: result.matchScore), method: .fingerprint)
        guard let data = result.link else { return InstallMatch(attribution: attribution, link: nil) }
        // A link with only its id is still the match (both Dynalinks SDKs treat it as one, §3).
        attribution.linkID = data.id
        var onProjectHost: URL?
        if let projectHost, let path = data.path {
            onProjectHost = URL.absolute("https://\(projectHost)\(path.hasPrefix("/") ? path : "/" + path)")
        }
        // A field that is not an absolute URL counts as absent, as in Dynalinks' SDK (§3.2).
        let clicked = URL.absolute(data.fullURL) ?? onProjectHost ?? URL.absolute(data.url)
        guard let clicked, let parsed = try? LinkParser.parse(clicked) else {
            return InstallMatch(attribution: attribution, link: nil)
        }
        return InstallMatch(attribution: attribution, link: link(data, url: clicked, parsed: parsed, origin: .deferred))
    }

    /// A link from Dynalinks' data. The route is `deep_link_value` (else `path`): an absolute URL
    /// there is the destination; a path is the link's path, and `url` its destination.
    /// Parameters: the opened URL's own query under `url`'s; UTM: the opened URL's, then
    /// `referrer`'s, then `url`'s.
    static func link(_ data: DynalinksLink, url: URL, parsed: ParsedLink, origin: DeepLink.Origin) -> DeepLink {
        var link = parsed.deepLink(provider: .dynalinks, resolution: .server, origin: origin)
        let target = URL.absolute(data.url)
        let targetParsed = target.flatMap { try? LinkParser.parse($0) }
        link.destination = target
        if let route = data.deepLinkValue ?? data.path, !route.isEmpty {
            if let absolute = URL.absolute(route), let routeParsed = try? LinkParser.parse(absolute) {
                link.destination = absolute
                link.setPathSegments(routeParsed.pathSegments)
            } else {
                link.setPathSegments(route.split(separator: "/").map { String($0).percentDecoded ?? String($0) })
            }
        }
        for (name, value) in targetParsed?.parameters ?? [:] { link.parameters[name] = value }
        let referrer = data.referrer.flatMap { try? LinkParser.parse("dynalinks://referrer?" + $0) }?.utm ?? UTMParameters()
        let fromTarget = targetParsed?.utm ?? UTMParameters()
        let own = parsed.utm
        link.utm = UTMParameters(
            source: own.source ?? referrer.source ?? fromTarget.source, medium: own.medium ?? referrer.medium ?? fromTarget.medium,
            campaign: own.campaign ?? referrer.campaign ?? fromTarget.campaign, term: own.term ?? referrer.term ?? fromTarget.term,
            content: own.content ?? referrer.content ?? fromTarget.content)
        link.shortCode = data.shortenedPath ?? data.path?.split(separator: "/").last.map(String.init)
        link.linkID = data.id
        var campaign = link.campaign ?? Campaign()
        campaign.id = campaign.id ?? data.campaignToken
        campaign.name = campaign.name ?? data.name
        campaign.source = campaign.source ?? link.utm.source
        link.campaign = campaign.isEmpty ? nil : campaign
        link.metadata = metadata(data)
        return link
    }

    /// Every field of the link, as sent.
    private static func metadata(_ data: DynalinksLink) -> [String: JSONValue] {
        var metadata: [String: JSONValue] = ["id": .string(data.id)]
        let strings: [(String, String?)] = [
            ("name", data.name), ("path", data.path), ("shortened_path", data.shortenedPath), ("url", data.url),
            ("full_url", data.fullURL), ("deep_link_value", data.deepLinkValue), ("android_fallback_url", data.androidFallbackURL),
            ("ios_fallback_url", data.iosFallbackURL), ("social_title", data.socialTitle),
            ("social_description", data.socialDescription), ("social_image_url", data.socialImageURL),
            ("referrer", data.referrer), ("provider_token", data.providerToken), ("campaign_token", data.campaignToken),
        ]
        for (key, value) in strings { if let value { metadata[key] = .string(value) } }
        if let value = data.iosDeferredDeepLinkingEnabled { metadata["ios_deferred_deep_linking_enabled"] = .bool(value) }
        if let value = data.enableForcedRedirect { metadata["enable_forced_redirect"] = .bool(value) }
        if let value = data.clicks { metadata["clicks"] = .int(value) }
        return metadata
    }

    // MARK: Errors

    /// A non-2xx answer: 401 and 429 with fixed, clear messages (429 is retried by the client,
    /// honouring `Retry-After`); others with Dynalinks' `error` or `message`.
    static func error(for response: HTTPResponse, _ what: String, url: URL? = nil, now: Date) -> DeepLinkError {
        let message: String
        switch response.status {
        case 401: message = "Dynalinks rejected the client API key (HTTP 401)."
        case 429: message = "Dynalinks' rate limit was exceeded (HTTP 429)."
        default:
            let text = ProviderErrorBody.text(in: response.body).map { " \($0.prefix(200))" } ?? ""
            message = "Dynalinks answered \(response.status) to \(what).\(text)"
        }
        return response.serverError(message, backend: .dynalinks, url: url, now: now)
    }
}
