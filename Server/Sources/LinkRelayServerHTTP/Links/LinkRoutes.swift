import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage

/// The SDK's link routes: resolve (`GET /api/sdk/v1/resolve/{code}` and
/// `/{templateSlug}/{code}`).
struct LinkRoutes: Sendable {
    let store: any ServerStore
    let configuration: ServerConfiguration
    let clock: any LinkRelayClock
    let limiter: ClickLimiter

    /// `GET /api/sdk/v1/resolve/{code}` and `…/{templateSlug}/{code}`, behind the SDK key. One
    /// parameter name per position: the router's tree needs the first segment named the same in
    /// both forms (a short code alone, or a template slug before the code).
    func register(on groups: RouteGroups) {
        groups.sdk.get("api/sdk/v1/resolve/:first") { request, context in
            context.name(route: "/api/sdk/v1/resolve/{code}")
            return try await resolve(request, context, code: context.parameters.require("first"), templateSlug: nil)
        }
        groups.sdk.get("api/sdk/v1/resolve/:first/:second") { request, context in
            context.name(route: "/api/sdk/v1/resolve/{templateSlug}/{code}")
            return try await resolve(
                request, context, code: context.parameters.require("second"), templateSlug: context.parameters.require("first"))
        }
    }

    /// §5.2–5.3 of LinkForty's protocol: the link of the caller's project, live, answered with
    /// its fields (falsy ones omitted); the click and its fingerprint are on disk before the
    /// answer goes out (LinkForty Core writes them after answering, so a crash loses them).
    func resolve(_ request: Request, _ context: ServerContext, code: String, templateSlug: String?) async throws -> Response {
        let key = try context.requireAPIKey()
        let now = clock.currentDate
        guard let link = try await store.link(project: key.projectID, shortCode: code, templateSlug: templateSlug), link.isLive(at: now)
        else { throw APIError.linkNotFound }
        let click = Fingerprint.click(on: link, request: request, context: context, configuration: configuration, at: now)
        let recorded = try await limiter.record(click, from: context.clientAddress, in: store, at: now)
        return ClickLimiter.marked(ServerHTTP.json(ResolvedLink(link, at: now)), recorded: recorded)
    }
}

extension Fingerprint {
    /// What a click tells about the device, read from the request.
    /// - Parameter agent: the request's user agent, lower-cased already (the redirect made it to
    ///   decide its answer); made here when `nil`.
    static func click(
        on link: LinkRecord, request: Request, context: ServerContext, configuration: ServerConfiguration, at date: Date,
        agent: LowercasedText? = nil
    ) -> ClickRecord {
        let query = request.uri.queryParameters
        let ip = context.clientAddress
        let prefix = ip.flatMap { ClientAddress.networkPrefix(of: $0, includingPrivate: configuration.matchPrivateNetworks) }
        let userAgent = request.headers[.userAgent].map { Fingerprint.prefix($0, bytes: Fingerprint.maxUserAgentBytes) }
        let agent = agent ?? LowercasedText(userAgent)
        let acceptLanguage = request.headers[.acceptLanguage]?.split(separator: ",").first?.split(separator: ";").first
            .map { $0.trimmingCharacters(in: .whitespaces) }.flatMap(bounded)
        let device = DeviceSignals(
            ip: prefix == nil ? nil : ip, networkPrefix: prefix, userAgent: userAgent, timezone: query.get("fp_tz").flatMap(bounded),
            language: query.get("fp_lang").flatMap(bounded) ?? acceptLanguage, screenWidth: query.get("fp_sw").flatMap(screenSize),
            screenHeight: query.get("fp_sh").flatMap(screenSize))
        let source = ClickSource(
            referrerHost: ClickSource.referrerHost(request.headers[.referer]),
            // Believed on the same terms as X-Forwarded-For: behind the operator's own proxy.
            country: configuration.trustProxy ? configuration.countryHeader.flatMap { ClickSource.country(request.headers[$0]) } : nil,
            utmSource: ClickSource.utmSource(query.get("utm_source")) ?? ClickSource.utmSource(link.utmParameters["source"]))
        return ClickRecord(
            linkID: link.id, projectID: link.projectID, clickedAt: date, device: device, platform: platform(agent), isBot: isBot(agent),
            source: source)
    }
}
