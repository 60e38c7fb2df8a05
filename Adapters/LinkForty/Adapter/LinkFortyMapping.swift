import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayWire

/// The one place where LinkForty's field names meet LinkRelay's model.
enum LinkFortyMapping {
    // MARK: Device → install body and resolve fingerprint

    /// `"<AppName>/<AppVersion> <OS>/<OSVersion>"`, as LinkForty's SDK sends it: the same string
    /// goes into the install body and the `User-Agent` of every request, so a resolve click and a
    /// later install from the same device match on it.
    static func userAgent(device: DeviceInfo, appName: String) -> String {
        "\(appName)/\(device.appVersion ?? "1.0.0") \(device.osName)/\(device.osVersion)"
    }

    /// The locale in ICU form (`en_US`), at most 10 characters (Core stores it in a VARCHAR(10);
    /// a longer one fails the install with a 500).
    static func language(_ device: DeviceInfo) -> String? {
        guard let preferred = device.preferredLanguages.first, !preferred.isEmpty else { return nil }
        let base = preferred.split(separator: "@").first.map(String.init) ?? preferred
        let icu = base.replacing("-", with: "_")
        if icu.count <= 10 { return icu }
        let parts = icu.split(separator: "_")
        let short = [parts.first, parts.count > 1 ? parts.last : nil].compactMap { $0 }.joined(separator: "_")
        return String(short.prefix(10))
    }

    static func installRequest(device: DeviceInfo, appName: String, attributionWindowHours: Int) -> LinkFortyInstallRequest {
        LinkFortyInstallRequest(
            userAgent: userAgent(device: device, appName: appName),
            timezone: device.timeZoneIdentifier,
            language: language(device),
            screenWidth: device.screen?.pixelWidth,
            screenHeight: device.screen?.pixelHeight,
            platform: device.osName,
            platformVersion: device.osVersion,
            appVersion: device.appVersion,
            deviceId: device.advertisingID?.uuidString,
            attributionWindowHours: attributionWindowHours)
    }

    /// `fp_tz, fp_lang, fp_sw, fp_sh, fp_platform, fp_pv`, in that order; unknown values are
    /// left out.
    static func fingerprintQuery(device: DeviceInfo) -> [(String, String)] {
        var items: [(String, String)] = [("fp_tz", device.timeZoneIdentifier)]
        if let language = language(device) { items.append(("fp_lang", language)) }
        if let screen = device.screen {
            items.append(("fp_sw", String(screen.pixelWidth)))
            items.append(("fp_sh", String(screen.pixelHeight)))
        }
        items.append(("fp_platform", device.osName))
        items.append(("fp_pv", device.osVersion))
        return items
    }

    // MARK: Responses → model

    /// Whether `name` is one LinkForty keeps out of the app's parameters (§12.1): `utm_*` (read
    /// into the link's UTM instead), `fp_*` (the fingerprint the redirect page appends) and
    /// `lf_click` (Core's click id), in any case.
    static func isReserved(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.hasPrefix("utm_") || lowered.hasPrefix("fp_") || lowered == "lf_click"
    }

    /// `parameters` without LinkForty's reserved names.
    static func customParameters(_ parameters: [String: String]) -> [String: String] {
        parameters.filter { !isReserved($0.key) }
    }

    /// LinkForty scores are 0, 70, 80, 90 or 100 (70 is its match threshold), so its own scale
    /// sets the level: 90 and up high, 80 medium, below that low.
    static func confidence(_ score: Double?) -> InstallAttribution.Confidence? {
        guard let score, score.isFinite else { return nil }
        // Clamped before the conversion: a score past Int's range would trap.
        let value = Int(min(max(score, 0), 100).rounded())
        return .init(score: value, level: value >= 90 ? .high : value >= 80 ? .medium : .low)
    }

    static func installMatch(_ response: LinkFortyInstallResponse, base: URL) -> InstallMatch {
        let data = response.deepLinkData
        let clickedAt = data?.clickedAt.flatMap(ISO8601Timestamp.parse)
        let attribution = InstallAttribution(
            installID: response.installId,
            isAttributed: response.attributed,
            confidence: confidence(response.confidenceScore),
            matchedFactors: response.matchedFactors,
            method: response.attributed ? .fingerprint : .none,
            clickedAt: clickedAt)
        guard response.attributed, let data else { return InstallMatch(attribution: attribution, link: nil) }
        return InstallMatch(
            attribution: attribution, link: deferredLink(data, parameters: data.deepLinkParameters, base: base))
    }

    /// The deferred link of an install's link data (the install answer's `deepLinkData`, or
    /// what LinkForty's SDK stored of it), `nil` without a short code.
    static func deferredLink(_ data: LinkFortyLinkData, parameters: [String: JSONValue]?, base: URL) -> DeepLink? {
        guard let shortCode = data.shortCode, !shortCode.isEmpty else { return nil }
        let clicked = LinkFortyEndpoints.url(base, path: "/" + shortCode)
        var link = DeepLink(
            url: clicked, origin: .deferred, provider: .linkForty, resolution: .server,
            pathSegments: [shortCode], parameters: customParameters(stringify(parameters ?? [:])),
            utm: utm(data.utmParameters), shortCode: shortCode, linkID: data.linkId,
            clickedAt: data.clickedAt.flatMap(ISO8601Timestamp.parse), metadata: metadata(data))
        applyRoute(data, to: &link)
        return link
    }

    /// A deferred link routed by its link's resolve answer: the path and destination of its
    /// `deepLinkPath` and `appScheme`, the link's configured parameters (reserved names left
    /// out), its id; the install answer's own fields (UTM, `clickedAt`) stay, and the resolve
    /// answer's fields join the metadata where the install answer had none.
    static func routedDeferredLink(_ link: DeepLink, by data: LinkFortyLinkData) -> DeepLink {
        var link = link
        applyRoute(data, to: &link)
        if let parameters = data.customParameters { link.parameters = customParameters(stringify(parameters)) }
        if link.linkID == nil { link.linkID = data.linkId }
        for (key, value) in metadata(data) where link.metadata[key] == nil { link.metadata[key] = value }
        return link
    }

    /// A resolved link, as LinkForty's current SDKs and Core merge it (§12.1–12.3): the link's
    /// configured `customParameters` with the clicked URL's own query items over them (the URL
    /// wins a collision), reserved names left out; UTM as the server sent it (the URL's `utm_*`
    /// never overwrite it).
    static func resolvedLink(_ data: LinkFortyLinkData, url: URL, parsed: ParsedLink, templateSlug: String?) -> DeepLink {
        var parameters = stringify(data.customParameters ?? [:])
        for (name, value) in parsed.parameters { parameters[name] = value }
        parameters = customParameters(parameters)
        let merged = utm(data.utmParameters)
        var metadata = metadata(data)
        if let templateSlug { metadata["templateSlug"] = .string(templateSlug) }
        var link = DeepLink(
            url: url, origin: parsed.origin, provider: .linkForty, resolution: .server,
            pathSegments: parsed.pathSegments, parameters: parameters, utm: merged, campaign: parsed.campaign,
            shortCode: data.shortCode, linkID: data.linkId, clickedAt: data.clickedAt.flatMap(ISO8601Timestamp.parse),
            requiresAuthentication: parsed.requiresAuthentication, metadata: metadata)
        applyRoute(data, to: &link)
        return link
    }

    /// `deepLinkPath` becomes the link's path, and with `appScheme` its destination
    /// (`acmeshop://product/42`).
    private static func applyRoute(_ data: LinkFortyLinkData, to link: inout DeepLink) {
        guard let path = data.deepLinkPath, !path.isEmpty else { return }
        let segments = path.split(separator: "/").map { String($0).percentDecoded ?? String($0) }
        link.setPathSegments(segments)
        if let scheme = data.appScheme, !scheme.isEmpty {
            let trimmed = path.hasPrefix("/") ? String(path.dropFirst()) : path
            link.destination = URL(string: "\(scheme)://\(trimmed)")
        }
    }

    private static func utm(_ payload: LinkFortyUTM?) -> UTMParameters {
        UTMParameters(
            source: payload?.source, medium: payload?.medium, campaign: payload?.campaign, term: payload?.term,
            content: payload?.content)
    }

    /// Every field of LinkForty's payload, as sent, so that nothing is lost.
    private static func metadata(_ data: LinkFortyLinkData) -> [String: JSONValue] {
        var metadata: [String: JSONValue] = [:]
        let strings: [(String, String?)] = [
            ("originalUrl", data.originalUrl), ("deepLinkPath", data.deepLinkPath), ("appScheme", data.appScheme),
            ("iosUrl", data.iosUrl), ("androidUrl", data.androidUrl), ("webUrl", data.webUrl),
            ("webFallbackUrl", data.webFallbackUrl), ("clickedAt", data.clickedAt),
        ]
        for (key, value) in strings { if let value { metadata[key] = .string(value) } }
        if let parameters = data.customParameters { metadata["customParameters"] = .object(parameters) }
        if let parameters = data.deepLinkParameters { metadata["deepLinkParameters"] = .object(parameters) }
        if let rules = data.targetingRules { metadata["targetingRules"] = rules }
        if let utm = data.utmParameters {
            let fields: [(String, String?)] = [
                ("source", utm.source), ("medium", utm.medium), ("campaign", utm.campaign), ("term", utm.term),
                ("content", utm.content),
            ]
            metadata["utmParameters"] = .object(
                Dictionary(uniqueKeysWithValues: fields.compactMap { key, value in value.map { (key, JSONValue.string($0)) } }))
        }
        return metadata
    }

    /// Scalars as text (`42`, `true`); arrays and objects as their JSON. `null` is left out.
    static func stringify(_ values: [String: JSONValue]) -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in values {
            if let scalar = value.scalarDescription {
                result[key] = scalar
            } else if case .null = value {
                continue
            } else if let data = try? JSONEncoder().encode(value) {
                result[key] = String(decoding: data, as: UTF8.self)
            }
        }
        return result
    }

    // MARK: Model → requests

    static func eventRequest(_ event: ConversionEvent, installID: String) -> LinkFortyEventRequest {
        var data = event.properties
        if let revenue = event.revenue {
            data["revenue"] = .double(NSDecimalNumber(decimal: revenue.amount).doubleValue)
            data["currency"] = .string(revenue.currency)
        }
        return LinkFortyEventRequest(
            installId: installID, eventName: event.name, eventData: data,
            timestamp: ISO8601Timestamp.string(from: event.timestamp))
    }

    static func createLinkRequest(_ request: LinkRequest) -> LinkFortyCreateLinkRequest {
        let utm =
            request.utm.isEmpty
            ? nil
            : LinkFortyUTM(
                source: request.utm.source, medium: request.utm.medium, campaign: request.utm.campaign,
                term: request.utm.term, content: request.utm.content)
        return LinkFortyCreateLinkRequest(
            templateId: request.templateID, templateSlug: request.templateSlug,
            originalUrl: request.fallbackURL?.absoluteString, deepLinkPath: request.deepLinkPath,
            deepLinkParameters: request.parameters.isEmpty ? nil : request.parameters, title: request.title,
            description: request.description, customCode: request.customCode, utmParameters: utm, externalUserId: request.externalUserID)
    }

    // MARK: Errors

    /// A non-2xx response as a ``/LinkRelay/DeepLinkError``, with LinkForty's own error text when it sent one.
    static func error(for response: HTTPResponse, _ what: String, url: URL? = nil, now: Date) -> DeepLinkError {
        var message = "LinkForty answered \(response.status) to \(what)."
        if let text = ProviderErrorBody.text(in: response.body) { message += " \(text.prefix(200))" }
        if response.status == 404, what == "the resolve request" {
            return DeepLinkError(.notFound, message, backend: .linkForty, status: 404, url: url)
        }
        return response.serverError(message, backend: .linkForty, url: url, now: now)
    }
}
