import Foundation
import LinkRelay
import LinkRelaySimulatorCore
import LinkRelayWire

extension LinkFortyEmulation {
    public func handle(_ request: ProviderSimulator.Request) -> HTTPResponse {
        let path = request.http.url.path
        let method = request.http.method
        let segments = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        if let apiKeys, segments.first == "api", !apiKeys.contains(bearer(request.http) ?? "") {
            return .json(["error": "Unauthorized", "message": "A valid API key is required"], status: 401)
        }
        switch (method, path) {
        case (.post, "/api/sdk/v1/install"): return install(request)
        case (.post, "/api/sdk/v1/event"): return event(request)
        case (.post, "/api/links"): return createLink(request)
        case (.post, "/api/sdk/v1/links") where emulatesCloud: return createCloudLink(request)
        case (.get, "/api/sdk/v1/health"):
            return .json([
                "status": "healthy", "version": "v1",
                "timestamp": .string(ISO8601Timestamp.string(from: request.receivedAt, fractional: true)),
            ])
        default: break
        }
        if method == .get, segments.count >= 5, segments.count <= 6, Array(segments.prefix(4)) == ["api", "sdk", "v1", "resolve"] {
            return resolve(request, slug: segments.count == 6 ? segments[4] : nil, code: segments[segments.count - 1])
        }
        if method == .get, segments.first != "api", (1...2).contains(segments.count) {
            return redirect(request, slug: segments.count == 2 ? segments[0] : nil, code: segments[segments.count - 1])
        }
        return FastifyErrors.routeNotFound(method: method, path: path)
    }

    // MARK: E1 install

    private func install(_ request: ProviderSimulator.Request) -> HTTPResponse {
        let body: [String: JSONValue]
        switch FastifyErrors.jsonBody(request.http) {
        case .success(let object): body = object;
        case .failure(let rejection): return rejection.response
        }
        let issues = ZodSchema(
            required: ["userAgent": .string],
            optional: [
                "ipAddress": .string, "timezone": .string, "language": .string, "platform": .string,
                "platformVersion": .string, "deviceId": .string, "sdkName": .string, "sdkVersion": .string,
                "appToken": .string, "screenWidth": .number, "screenHeight": .number, "attributionWindowHours": .number,
            ]
        ).validate(body)
        guard issues.isEmpty else { return FastifyErrors.validation(issues) }
        let language = body["language"]?.stringValue
        if let language, language.count > 10 {
            return .json(
                ["error": "Failed to record install event", "message": "value too long for type character varying(10)"],
                status: 500)
        }
        let fingerprint = LinkFortyMatcher.Fingerprint(
            ip: request.clientIP, userAgent: body["userAgent"]?.stringValue, timezone: body["timezone"]?.stringValue,
            language: language, screenWidth: body["screenWidth"]?.intValue, screenHeight: body["screenHeight"]?.intValue)
        return state.withLock { state in
            let candidates = state.clicks.map { click in
                LinkFortyMatcher.Candidate(
                    clickID: click.id, clickedAt: click.clickedAt,
                    attributionWindowHours: state.links.first { $0.id == click.linkID }?.attributionWindowHours,
                    fingerprint: click.fingerprint)
            }
            let match = matcher.match(fingerprint, among: candidates, now: request.receivedAt)
            let installID = UUID().uuidString.lowercased()
            state.installs.append(Install(id: installID, fingerprint: fingerprint, match: match, receivedAt: request.receivedAt))
            var deepLinkData: JSONValue = [:]
            if let match, let click = state.clicks.first(where: { $0.id == match.clickID }),
                let link = state.links.first(where: { $0.id == click.linkID })
            {
                deepLinkData = .object([
                    "shortCode": .string(link.shortCode), "originalUrl": .string(link.originalURL),
                    "iosUrl": Self.nullable(link.iosAppStoreURL), "androidUrl": Self.nullable(link.androidAppStoreURL),
                    "webFallbackUrl": Self.nullable(link.webFallbackURL),
                    "utmParameters": .object((link.utmParameters ?? [:]).mapValues(JSONValue.string)),
                    "targetingRules": [:], "deepLinkParameters": .object(link.deepLinkParameters ?? [:]),
                    "clickedAt": .string(ISO8601Timestamp.string(from: match.clickedAt, fractional: true)),
                    "confidenceScore": .int(match.score), "matchedFactors": .array(match.matchedFactors.map(JSONValue.string)),
                ])
            }
            var response: [String: JSONValue] = [
                "installId": .string(installID), "attributed": .bool(match != nil), "confidenceScore": .int(match?.score ?? 0),
                "matchedFactors": .array((match?.matchedFactors ?? []).map(JSONValue.string)), "deepLinkData": deepLinkData,
            ]
            if let reported = body["ipAddress"]?.stringValue { response["clientReportedIp"] = .string(reported) }
            return .json(.object(response))
        }
    }

    // MARK: E2/E3 resolve and E9 redirect

    private func findLink(slug: String?, code: String, at date: Date, in state: State) -> Link? {
        state.links.first { link in
            link.shortCode == code && link.isActive && (link.expiresAt.map { $0 > date } ?? true)
                && (slug == nil || link.templateSlug == slug)
        }
    }

    /// The click's fingerprint as Core records it: `fp_*` query items, else the request's headers.
    private func clickFingerprint(_ request: ProviderSimulator.Request) -> LinkFortyMatcher.Fingerprint {
        let items = URLComponents(url: request.http.url, resolvingAgainstBaseURL: false)?.percentEncodedQueryItems ?? []
        func item(_ name: String) -> String? {
            // Core decodes queries as forms: a literal "+" is a space, "%2B" a plus.
            items.first { $0.name == name }?.value?.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        let acceptLanguage = request.http.headers["Accept-Language"]?.split(separator: ",").first
            .map { String($0.split(separator: ";").first ?? $0).trimmingCharacters(in: .whitespaces) }
        return .init(
            ip: request.clientIP, userAgent: request.http.headers["User-Agent"], timezone: item("fp_tz"),
            language: item("fp_lang") ?? acceptLanguage, screenWidth: item("fp_sw").flatMap { Int($0) },
            screenHeight: item("fp_sh").flatMap { Int($0) })
    }

    private func resolve(_ request: ProviderSimulator.Request, slug: String?, code: String) -> HTTPResponse {
        state.withLock { state in
            guard let link = findLink(slug: slug, code: code, at: request.receivedAt, in: state) else {
                return .json(["error": "Link not found"], status: 404)
            }
            state.clicks.append(
                Click(
                    id: UUID().uuidString.lowercased(), linkID: link.id, clickedAt: request.receivedAt,
                    fingerprint: clickFingerprint(request)))
            var body: [String: JSONValue] = [
                "shortCode": .string(link.shortCode), "linkId": .string(link.id),
                "clickedAt": .string(ISO8601Timestamp.string(from: request.receivedAt, fractional: true)),
            ]
            let optional: [(String, String?)] = [
                ("deepLinkPath", link.deepLinkPath), ("appScheme", link.appScheme), ("iosUrl", link.iosAppStoreURL),
                ("androidUrl", link.androidAppStoreURL), ("webUrl", link.webFallbackURL),
            ]
            for (key, value) in optional { if let value, !value.isEmpty { body[key] = .string(value) } }
            if let utm = link.utmParameters { body["utmParameters"] = .object(utm.mapValues(JSONValue.string)) }
            if let parameters = link.deepLinkParameters { body["customParameters"] = .object(parameters) }
            return .json(.object(body))
        }
    }

    private func redirect(_ request: ProviderSimulator.Request, slug: String?, code: String) -> HTTPResponse {
        state.withLock { state in
            guard let link = findLink(slug: slug, code: code, at: request.receivedAt, in: state) else {
                return .json(["error": "Link not found"], status: 404)
            }
            state.clicks.append(
                Click(
                    id: UUID().uuidString.lowercased(), linkID: link.id, clickedAt: request.receivedAt,
                    fingerprint: clickFingerprint(request)))
            return HTTPResponse(status: 302, headers: ["Location": link.originalURL])
        }
    }

    // MARK: E4 event

    private func event(_ request: ProviderSimulator.Request) -> HTTPResponse {
        let body: [String: JSONValue]
        switch FastifyErrors.jsonBody(request.http) {
        case .success(let object): body = object;
        case .failure(let rejection): return rejection.response
        }
        let issues = ZodSchema(
            required: ["installId": .uuid, "eventName": .string],
            optional: [
                "eventData": .object, "timestamp": .datetime, "attributedLinkId": .uuid, "attributedClickId": .uuid,
                "linkOpenedAt": .datetime, "sessionId": .uuid, "sdkName": .string, "sdkVersion": .string,
            ]
        ).validate(body)
        guard issues.isEmpty else { return FastifyErrors.validation(issues) }
        let installID = body["installId"]?.stringValue?.lowercased() ?? ""
        return state.withLock { state in
            guard state.installs.contains(where: { $0.id == installID }) else {
                return .json(["error": "Install event not found"], status: 404)
            }
            let event = Event(
                id: UUID().uuidString.lowercased(), installID: installID, name: body["eventName"]?.stringValue ?? "",
                data: body["eventData"]?.objectValue ?? [:], timestamp: body["timestamp"]?.stringValue,
                receivedAt: request.receivedAt)
            state.events.append(event)
            return .json(["eventId": .string(event.id), "acknowledged": true])
        }
    }

    // MARK: E5/E6 link creation

    private func createLink(_ request: ProviderSimulator.Request) -> HTTPResponse {
        let body: [String: JSONValue]
        switch FastifyErrors.jsonBody(request.http) {
        case .success(let object): body = object;
        case .failure(let rejection): return rejection.response
        }
        let issues = ZodSchema(
            required: ["originalUrl": .url],
            optional: [
                "templateId": .uuid, "title": .string, "description": .string, "deepLinkPath": .string,
                "appScheme": .string, "customCode": .string, "deepLinkParameters": .object, "utmParameters": .object,
                "attributionWindowHours": .number, "iosAppStoreUrl": .string, "androidAppStoreUrl": .string,
                "webFallbackUrl": .string,
            ]
        ).validate(body)
        guard issues.isEmpty else { return FastifyErrors.validation(issues) }
        let templateID = body["templateId"]?.stringValue?.lowercased()
        let slug = templateID.flatMap { id in state.withLock { $0.templates[id] } }
        if templateID != nil, slug == nil {
            return .json(
                ["error": "Failed to create link", "message": "insert or update on table \"links\" violates foreign key constraint"],
                status: 500)
        }
        let link = store(body, templateID: templateID, templateSlug: slug, externalUserID: nil)
        var row: [String: JSONValue] = [
            "id": .string(link.id), "short_code": .string(link.shortCode), "original_url": .string(link.originalURL),
            "template_id": Self.nullable(link.templateID), "deep_link_path": Self.nullable(link.deepLinkPath),
            "app_scheme": Self.nullable(link.appScheme), "ios_app_store_url": Self.nullable(link.iosAppStoreURL),
            "android_app_store_url": Self.nullable(link.androidAppStoreURL),
            "web_fallback_url": Self.nullable(link.webFallbackURL),
            "deep_link_parameters": .object(link.deepLinkParameters ?? [:]),
            "utm_parameters": .object((link.utmParameters ?? [:]).mapValues(JSONValue.string)),
            "targeting_rules": [:], "is_active": true, "expires_at": nil,
            "attribution_window_hours": .int(link.attributionWindowHours ?? 168), "clickCount": 0,
        ]
        row["utmParameters"] = row["utm_parameters"]
        row["deepLinkParameters"] = row["deep_link_parameters"]
        row["targetingRules"] = [:]
        return .json(.object(row))
    }

    /// The key of `Authorization: Bearer <key>`, if the request has one.
    private func bearer(_ request: HTTPRequest) -> String? {
        guard let authorization = request.headers["Authorization"], authorization.hasPrefix("Bearer ") else { return nil }
        let key = String(authorization.dropFirst(7))
        return key.isEmpty ? nil : key
    }

    private func createCloudLink(_ request: ProviderSimulator.Request) -> HTTPResponse {
        guard bearer(request.http) != nil else {
            return .json(["error": "Unauthorized", "message": "A valid API key is required"], status: 401)
        }
        let body: [String: JSONValue]
        switch FastifyErrors.jsonBody(request.http) {
        case .success(let object): body = object;
        case .failure(let rejection): return rejection.response
        }
        let externalUserID = body["externalUserId"]?.stringValue
        let slug = body["templateSlug"]?.stringValue
        let parameters = body["deepLinkParameters"]?.objectValue
        let path = body["deepLinkPath"]?.stringValue
        // Cloud's per-user dedupe: the same user sharing the same target gets the same link.
        if let externalUserID,
            let existing = links.first(where: {
                $0.externalUserID == externalUserID && $0.deepLinkParameters == parameters && $0.deepLinkPath == path
                    && $0.templateSlug == slug
            })
        {
            return .json(cloudLink(existing, deduplicated: true))
        }
        let templateID = slug.map { slug in createTemplateIfNeeded(slug) }
        let link = store(body, templateID: templateID, templateSlug: slug, externalUserID: externalUserID)
        return .json(cloudLink(link, deduplicated: false))
    }

    private func createTemplateIfNeeded(_ slug: String) -> String {
        state.withLock { state in
            if let id = state.templates.first(where: { $0.value == slug })?.key { return id }
            let id = UUID().uuidString.lowercased()
            state.templates[id] = slug
            return id
        }
    }

    private func cloudLink(_ link: Link, deduplicated: Bool) -> JSONValue {
        let path = [link.templateSlug, link.shortCode].compactMap { $0 }.joined(separator: "/")
        return [
            "url": .string("https://\(host)/\(path)"), "shortCode": .string(link.shortCode), "linkId": .string(link.id),
            "deduplicated": .bool(deduplicated),
        ]
    }

    private func store(_ body: [String: JSONValue], templateID: String?, templateSlug: String?, externalUserID: String?) -> Link {
        state.withLock { state in
            let link = Link(
                id: UUID().uuidString.lowercased(), shortCode: Self.uniqueCode(body["customCode"]?.stringValue, in: state),
                templateID: templateID, templateSlug: templateSlug,
                originalURL: body["originalUrl"]?.stringValue ?? "https://\(host)/",
                deepLinkPath: body["deepLinkPath"]?.stringValue, appScheme: body["appScheme"]?.stringValue,
                iosAppStoreURL: body["iosAppStoreUrl"]?.stringValue, androidAppStoreURL: body["androidAppStoreUrl"]?.stringValue,
                webFallbackURL: body["webFallbackUrl"]?.stringValue,
                utmParameters: body["utmParameters"]?.objectValue?.compactMapValues(\.stringValue),
                deepLinkParameters: body["deepLinkParameters"]?.objectValue,
                attributionWindowHours: body["attributionWindowHours"]?.intValue ?? 168, isActive: true, expiresAt: nil,
                externalUserID: externalUserID)
            state.links.append(link)
            return link
        }
    }

    static func nullable(_ value: String?) -> JSONValue {
        value.map(JSONValue.string) ?? .null
    }
}
