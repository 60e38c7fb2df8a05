import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

/// The one place where Paylisher's field names and rules meet LinkRelay's model.
enum PaylisherMapping {
    /// A link as Paylisher reads it.
    struct Parsed: Equatable {
        var parsed: ParsedLink
        /// A custom-scheme link's host, or a universal link's path without its outer slashes.
        var destination: String
        var campaignKey: String?
        var isShortLink: Bool
        var campaignID: String?
        var journeyID: String?
        var source: String?
        var canonicalSource: String
        var requiresAuthentication: Bool
    }

    /// Paylisher's parsing (its SDK's `parseURL` and `extractCampaignKey`), with two corrections:
    /// a bare single path segment is a campaign key only on a short-link host, so `/home` or
    /// `myapp://product/1234` do not send a campaign lookup; and the `/campaign/X`, `/c/X` rules
    /// read the normalised path, a custom scheme's host included.
    static func parse(_ url: URL, configuration: PaylisherBackend.Configuration) throws -> Parsed {
        try parse(try LinkParser.parse(url), configuration: configuration)
    }

    /// ``parse(_:configuration:)`` for a link the client parsed already.
    static func parse(_ parsed: ParsedLink, configuration: PaylisherBackend.Configuration) throws -> Parsed {
        let url = parsed.url
        let isWeb = parsed.origin == .universalLink
        let destination: String
        if isWeb {
            destination = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        } else {
            destination = parsed.host ?? ""
        }
        guard !destination.isEmpty else {
            throw DeepLinkError(.invalidURL, "The link names no destination.", backend: .paylisher, url: url)
        }
        let isShortLink = isWeb && configuration.shortLinkHosts.contains(parsed.host ?? "")
        // The marker rules read the normalised path, where `yourapp://campaign/X` and
        // `https://…/campaign/X` look the same (Paylisher's SDK leaves a custom scheme's host out).
        let components = parsed.pathSegments
        var key = parsed.firstValue(of: "keyName", "key", "k")
        for marker in ["campaign", "c"] where key == nil {
            if let index = components.firstIndex(of: marker), index + 1 < components.count { key = components[index + 1] }
        }
        if key == nil, isShortLink, components.count == 1 { key = components[0] }
        let source = parsed.firstValue(of: "source", "utm_source")
        let auth = parsed.parameters["auth"]?.lowercased() == "required"
        return Parsed(
            parsed: parsed, destination: destination, campaignKey: key, isShortLink: isShortLink,
            campaignID: parsed.firstValue(of: "campaign", "campaign_id", "utm_campaign"), journeyID: parsed.firstValue(of: "jid"),
            source: source,
            canonicalSource: canonicalSource([source, parsed.firstValue(of: "referrer", "ref")]),
            requiresAuthentication: auth || configuration.authRequiredDestinations.contains(destination))
    }

    /// Paylisher's canonical traffic source: `instagram`, `facebook`, `twitter`, `tiktok`, `qr`,
    /// `direct` or `unknown`, from the first signal that classifies.
    static func canonicalSource(_ signals: [String?]) -> String {
        let present = signals.compactMap { $0?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !present.isEmpty else { return "direct" }
        for signal in present { if let token = classify(signal) { return token } }
        return "unknown"
    }

    static func classify(_ signal: String) -> String? {
        let value = signal.lowercased()
        func has(_ words: [String]) -> Bool { words.contains { value.contains($0) } }
        if has(["instagram"]) || value == "ig" { return "instagram" }
        if has(["facebook", "messenger", "katana", "orca"]) || ["fb", "meta"].contains(value) { return "facebook" }
        if has(["tiktok", "musically", "zhiliaoapp", "ugc.trill"]) || value == "tt" { return "tiktok" }
        if has(["twitter", "tweetie"]) { return "twitter" }
        if ["qr", "qrcode", "qr_code"].contains(value) || value.contains("qr-code") { return "qr" }
        let host = URL(string: value)?.host ?? value
        func anchored(_ domain: String) -> Bool { host == domain || host.hasSuffix("." + domain) }
        if ["x", "x.com", "t.co"].contains(where: anchored) { return "twitter" }
        if ["fb.com", "fb.me"].contains(where: anchored) { return "facebook" }
        if has(["safari", "chrome", "firefox", "mobilemail", "mobilesms", "messaging", "whatsapp", "telegram", "gmail"])
            || ["mail", "sms", "browser", "website", "web", "direct"].contains(value)
        {
            return "direct"
        }
        return nil
    }

    /// Where a resolved campaign sends the app (Paylisher's `resolvedDestination` rules): the
    /// campaign's `scheme` URL (its host for an app scheme, its last path segment for a web URL),
    /// else its `iosUniversalUrl` by the same rule. Returns the URL and the route it gives.
    static func resolvedDestination(_ campaign: PaylisherCampaign) -> (url: URL, route: String)? {
        for candidate in [campaign.scheme, campaign.iosUniversalUrl] {
            guard let url = URL.absolute(candidate), let scheme = url.scheme?.lowercased() else { continue }
            let route =
                (scheme == "http" || scheme == "https")
                ? url.path.split(separator: "/").last.map(String.init) : url.host
            if let route, !route.isEmpty { return (url, route) }
        }
        return nil
    }

    /// The link, and what a resolved campaign adds to it.
    static func deepLink(_ link: Parsed, campaign: PaylisherCampaign?, origin: DeepLink.Origin? = nil) -> DeepLink {
        var deepLink = link.parsed.deepLink(
            provider: .paylisher, resolution: campaign == nil ? .local(.onDevice) : .server, origin: origin)
        deepLink.requiresAuthentication = link.requiresAuthentication
        var metadata: [String: JSONValue] = [
            "destination": .string(link.destination), "campaign_source": .string(link.canonicalSource),
            "is_short_link": .bool(link.isShortLink),
        ]
        if let campaign {
            if let target = resolvedDestination(campaign) {
                deepLink.destination = target.url
                metadata["resolved_destination"] = .string(target.route)
            }
            metadata["campaign"] = .object(properties(campaign))
        }
        deepLink.metadata = metadata
        let resolvedCampaign = Campaign(
            id: link.campaignID, key: campaign?.keyName ?? link.campaignKey, name: campaign?.title,
            journeyID: campaign?.jid ?? link.journeyID, source: link.source == nil ? nil : link.canonicalSource)
        deepLink.campaign = resolvedCampaign.isEmpty ? nil : resolvedCampaign
        deepLink.shortCode = link.isShortLink ? link.campaignKey : nil
        return deepLink
    }

    /// The campaign as Paylisher flattens it for events: every field, absent ones as `""`.
    static func properties(_ campaign: PaylisherCampaign) -> [String: JSONValue] {
        let strings: [(String, String?)] = [
            ("_id", campaign.id), ("teamId", campaign.teamId), ("projectId", campaign.projectId), ("sourceId", campaign.sourceId),
            ("type", campaign.type), ("title", campaign.title), ("keyName", campaign.keyName), ("webUrl", campaign.webUrl),
            ("iosUrl", campaign.iosUrl), ("androidUrl", campaign.androidUrl), ("huaweiUrl", campaign.huaweiUrl),
            ("fallbackUrl", campaign.fallbackUrl), ("scheme", campaign.scheme), ("iosUniversalUrl", campaign.iosUniversalUrl),
            ("webhookUrl", campaign.webhookUrl), ("createdAt", campaign.createdAt), ("updatedAt", campaign.updatedAt),
            ("adId", campaign.adId),
        ]
        var properties = Dictionary(uniqueKeysWithValues: strings.map { ($0.0, JSONValue.string($0.1 ?? "")) })
        properties["__v"] = .int(campaign.version ?? 0)
        properties["metaData"] = .object(campaign.metaData ?? [:])
        for (key, value) in campaign.metaData ?? [:] { properties["meta_\(key)"] = value }
        if let jid = campaign.jid { properties["jid"] = .string(jid) }
        return properties
    }

    // MARK: Deferred

    /// Paylisher's fingerprint: SHA-256 of `family|timezone|language`, lower-case hex. The family
    /// is `UIDevice.model` (``/LinkRelay/DeviceInfo/deviceFamily``: `iPhone`, `iPad`, `iPod touch`), else
    /// derived from the model identifier, else `iPhone`; the language the
    /// two-letter code (`en` when unknown, as Paylisher's web page assumes).
    static func fingerprint(_ device: DeviceInfo) -> String {
        let language =
            device.preferredLanguages.first
            .map { String($0.split(whereSeparator: { $0 == "-" || $0 == "_" }).first ?? "") }
            .flatMap { $0.isEmpty ? nil : $0.lowercased() } ?? "en"
        return SHA256Digest.hex(Data("\(family(device))|\(device.timeZoneIdentifier)|\(language)".utf8))
    }

    static func family(_ device: DeviceInfo) -> String {
        device.deviceFamily ?? DeviceInfo.family(ofModel: device.deviceModel) ?? "iPhone"
    }

    /// The matched URL with `keyName` and `jid` appended when it does not carry them already.
    static func enrich(_ url: URL, campaignKey: String?, jid: String?) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        var items = components.queryItems ?? []
        let names = Set(items.map(\.name))
        if let campaignKey, names.isDisjoint(with: ["keyName", "key", "k"]) {
            items.append(URLQueryItem(name: "keyName", value: campaignKey))
        }
        if let jid, !names.contains("jid") { items.append(URLQueryItem(name: "jid", value: jid)) }
        components.queryItems = items.isEmpty ? nil : items
        return components.url ?? url
    }

    static func attribution(_ response: PaylisherDeferredResponse, matched: Bool) -> InstallAttribution {
        let deterministic: Set<String> = ["signed_token", "click_id", "idfa", "gaid"]
        let method: InstallAttribution.Method =
            !matched ? .none : deterministic.contains(response.attributionMethod ?? "") ? .deviceIdentifier : .fingerprint
        return InstallAttribution(
            isAttributed: matched, confidence: matched ? response.confidence.map { .init(fraction: $0) } : nil,
            matchedFactors: response.attributionMethod.map { [$0] } ?? [], method: method,
            clickedAt: response.clickTimestamp.flatMap(ISO8601Timestamp.parse))
    }

    // MARK: Analytics

    /// An event as Paylisher's batch carries it: the event's own properties, under the device's
    /// context, the library's name, and the session's campaign attribution, which (as in
    /// Paylisher's SDK) win over same-named event properties.
    static func batchEvent(
        _ event: ConversionEvent, distinctID: String, device: DeviceInfo, session: Campaign?
    ) -> PaylisherBatchEvent {
        var properties = event.properties
        if let revenue = event.revenue {
            properties["revenue"] = .double(NSDecimalNumber(decimal: revenue.amount).doubleValue)
            properties["currency"] = .string(revenue.currency)
        }
        var context: [String: JSONValue] = [
            "$lib": "paylisher-ios", "$lib_version": "1.8.9", "$os_name": .string(device.osName),
            "$os_version": .string(device.osVersion), "$timezone": .string(device.timeZoneIdentifier),
            "$device_manufacturer": "Apple", "$linkrelay_version": .string(LinkRelayVersion.string),
        ]
        if let model = device.deviceModel { context["$device_model"] = .string(model) }
        if let version = device.appVersion { context["$app_version"] = .string(version) }
        if let build = device.appBuild { context["$app_build"] = .string(build) }
        if let language = device.preferredLanguages.first {
            context["$locale"] = .string(String(language.split(whereSeparator: { $0 == "-" || $0 == "_" }).first ?? ""))
        }
        if let screen = device.screen {
            context["$screen_width"] = .double(screen.width)
            context["$screen_height"] = .double(screen.height)
        }
        if let key = session?.key {
            context["campaign_key"] = .string(key)
            context["deeplink_key"] = .string(key)
            if let source = session?.source { context["campaign_source"] = .string(source) }
        }
        if let journey = session?.journeyID {
            context["jid"] = .string(journey)
            context["journey_source"] = "deeplink"
        }
        for (key, value) in context { properties[key] = value }
        return PaylisherBatchEvent(
            event: event.name, distinctId: distinctID, properties: properties,
            timestamp: ISO8601Timestamp.string(from: event.timestamp, fractional: true), uuid: wireUUID(event).uuidString.uppercased())
    }

    /// The event's `uuid`: its id when that is already a UUIDv7 (an event imported from Paylisher's
    /// SDK keeps the uuid it was queued with, so the server can tell it apart), else a UUIDv7 of
    /// its time with the id's random bits.
    static func wireUUID(_ event: ConversionEvent) -> UUID {
        event.id.uuid.6 >> 4 == 7 ? event.id : UUID.version7(at: event.timestamp, random: event.id)
    }

    // MARK: Errors

    static func error(for response: HTTPResponse, _ what: String, url: URL? = nil, now: Date) -> DeepLinkError {
        let text = ProviderErrorBody.text(in: response.body).map { " \($0.prefix(200))" } ?? ""
        let message = "Paylisher answered \(response.status) to \(what).\(text)"
        if response.status == 404, url != nil {
            return DeepLinkError(.notFound, message, backend: .paylisher, status: 404, url: url)
        }
        return response.serverError(message, backend: .paylisher, url: url, now: now)
    }
}
