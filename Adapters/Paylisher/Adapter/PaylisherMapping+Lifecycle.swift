import Foundation
import LinkRelay
import LinkRelayWire

/// Paylisher's lifecycle events, named and shaped as its SDK's event catalogue gives them.
extension PaylisherMapping {
    struct LifecycleEvent: Equatable {
        var name: String
        var properties: [String: JSONValue]
    }

    /// "Deep Link Opened": once per link, when it is delivered, or held for sign-in.
    static func opened(_ link: DeepLink) -> LifecycleEvent {
        var properties: [String: JSONValue] = [
            "destination": link.metadata["destination"] ?? .string(link.path),
            "scheme": .string(link.url.scheme ?? ""), "full_url": .string(link.url.absoluteString),
            "auth_required": .bool(link.requiresAuthentication),
            "campaign_source": link.metadata["campaign_source"] ?? "direct",
            "has_campaign_key": .bool(link.campaign?.key != nil),
        ]
        let optional: [(String, String?)] = [
            ("jid", link.campaign?.journeyID), ("campaign_id", link.campaign?.id),
            ("source", link.parameters["source"] ?? link.parameters["utm_source"]),
            ("utm_medium", link.parameters["utm_medium"] ?? link.parameters["medium"]),
            ("referrer", link.parameters["referrer"] ?? link.parameters["ref"]), ("campaign_key", link.campaign?.key),
        ]
        for (key, value) in optional { if let value { properties[key] = .string(value) } }
        var resolved = false
        if case .object(let campaign)? = link.metadata["campaign"] {
            resolved = true
            for (key, value) in campaign { properties[key] = value }  // the payload's scheme and jid win, as in the SDK
        }
        properties["campaign_resolved"] = .bool(resolved)
        if !link.parameters.isEmpty { properties["parameters"] = .object(link.parameters.mapValues(JSONValue.string)) }
        return LifecycleEvent(name: "Deep Link Opened", properties: properties)
    }

    /// "Deep Link Completed", "… Cancelled" or "… Timeout" for a held link, `seconds` after it was
    /// held.
    static func holdEnded(_ link: DeepLink, as name: String, after seconds: TimeInterval) -> LifecycleEvent {
        var properties: [String: JSONValue] = [
            "destination": link.metadata["destination"] ?? .string(link.path), "scheme": .string(link.url.scheme ?? ""),
        ]
        switch name {
        case "Deep Link Completed":
            properties["was_pending"] = true
            properties["time_to_complete"] = .double(seconds)
        case "Deep Link Cancelled":
            properties["full_url"] = .string(link.url.absoluteString)
            properties["time_before_cancel"] = .double(seconds)
        default:
            properties["full_url"] = .string(link.url.absoluteString)
            properties["timeout_seconds"] = .double(seconds.rounded())
            properties["waited_seconds"] = .double(seconds)
        }
        if let id = link.campaign?.id { properties["campaign_id"] = .string(id) }
        return LifecycleEvent(name: name, properties: properties)
    }

    /// A link Paylisher cannot parse (no destination) that the client still delivered, parsed on
    /// the device: Paylisher reports it as failed, not opened.
    static func isUnparseable(_ link: DeepLink) -> Bool {
        if case .local(.failed(let error)) = link.resolution { return error.code == .invalidURL }
        return false
    }

    /// "Deep Link Failed" for a link that could not be parsed.
    static func failed(_ url: URL) -> LifecycleEvent {
        var properties: [String: JSONValue] = [
            "url": .string(url.absoluteString), "scheme": .string(url.scheme ?? "unknown"), "failure_reason": "parse_error",
        ]
        let attempted = url.host ?? url.path.split(separator: "/").last.map(String.init)
        if let attempted, !attempted.isEmpty { properties["attempted_destination"] = .string(attempted) }
        return LifecycleEvent(name: "Deep Link Failed", properties: properties)
    }

    /// "Deferred Deep Link Match", "… Check" or "… Error" for the install's outcome.
    static func deferred(_ outcome: InstallOutcome) -> LifecycleEvent? {
        switch outcome {
        case .attributed(let link, let attribution):
            var properties: [String: JSONValue] = [
                "url": link.metadata["deferred_url"] ?? .string(link.url.absoluteString),
                "campaign_key": .string(link.campaign?.key ?? ""), "jid": .string(link.campaign?.journeyID ?? ""),
                "source": "deferred_deeplink", "destination": link.metadata["destination"] ?? .string(link.path),
                "is_first_launch": true,
            ]
            if case .object(let answer)? = link.metadata["deferred"] {
                // The deferred answer's own key and journey, not the campaign payload's.
                for key in ["campaign_key", "jid", "attribution_window_seconds", "click_timestamp", "attribution_method", "metadata"] {
                    if let value = answer[key] { properties[key] = value }
                }
            }
            if let confidence = attribution.confidence { properties["attribution_confidence"] = .double(Double(confidence.score) / 100) }
            return LifecycleEvent(name: "Deferred Deep Link Match", properties: properties)
        case .attributedWithoutLink:
            // Paylisher's SDK reports a match without a URL as an error to the app
            // (matchFoundButURLIsNil) and sends no event for it (paylisher.md §6.5).
            return nil
        case .organic:
            return LifecycleEvent(name: "Deferred Deep Link Check", properties: ["is_first_launch": true, "status": "no_match"])
        case .failed(let error):
            return LifecycleEvent(
                name: "Deferred Deep Link Error",
                properties: ["is_first_launch": true, "status": "error", "error_message": .string(error.message)])
        case .timedOut, .existingUser:
            // No deferred check was answered (or, for an existing user, made).
            return nil
        }
    }

    /// The diagnostics `deeplink_resolved` / `deeplink_resolve_failed` for a keyed link.
    static func diagnostic(_ link: DeepLink, at date: Date) -> LifecycleEvent? {
        guard let key = link.campaign?.key else { return nil }
        let timestamp = JSONValue.string(ISO8601Timestamp.string(from: date))
        let source = JSONValue.string(link.url.scheme ?? "")
        guard case .object(let campaign)? = link.metadata["campaign"] else {
            var reason = "not resolved"
            if case .local(let why) = link.resolution { reason = "\(why)" }
            return LifecycleEvent(
                name: "deeplink_resolve_failed",
                properties: [
                    "source": source, "timestamp": timestamp, "full_url": .string(link.url.absoluteString),
                    "campaign_key": .string(key), "error_description": .string(reason), "error_type": "PaylisherCampaignAPIError",
                ])
        }
        var properties: [String: JSONValue] = [
            "source": source, "timestamp": timestamp, "opened_full_url": .string(link.url.absoluteString),
            "opened_scheme": source, "opened_host": .string(link.url.host ?? ""), "opened_path": .string(link.url.path),
        ]
        for (key, value) in campaign { properties[key] = value }
        func has(_ field: String) -> JSONValue { .bool(!(campaign[field]?.stringValue ?? "").isEmpty) }
        properties["has_web_url"] = has("webUrl")
        properties["has_ios_url"] = has("iosUrl")
        properties["has_android_url"] = has("androidUrl")
        properties["has_fallback_url"] = has("fallbackUrl")
        properties["has_custom_scheme"] = has("scheme")
        properties["has_webhook"] = has("webhookUrl")
        if case .object(let metadata)? = campaign["metaData"] {
            properties["has_metadata"] = .bool(!metadata.isEmpty)
        } else {
            properties["has_metadata"] = false
        }
        return LifecycleEvent(name: "deeplink_resolved", properties: properties)
    }
}
