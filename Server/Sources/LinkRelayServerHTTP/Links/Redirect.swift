import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage
import NIOCore

/// The browser's side of a link: `GET /{code}` and `GET /{templateSlug}/{code}` (E9).
///
/// - A phone's browser first gets a tiny page that adds what the deferred match compares
///   (`fp_tz`, `fp_lang`, and `fp_sw`/`fp_sh` in the SDKs' units, pixels = points × scale) to
///   the same URL and loads it; only that second request is the click (a browser without
///   JavaScript comes back with `lf_fp=0`). LinkForty Core records only what a landing page
///   happened to add, so a plain tap on a link scores at most 60 there and never matches.
/// - The click is on disk before the answer (Core writes it after answering).
/// - Crawlers and link-preview fetchers get the link's preview (Open Graph); their clicks
///   are kept as bots and never match an install.
/// - Then, as Core: targeting (devices, languages, and countries when a proxy names the
///   country in `CF-IPCountry` or `X-Country-Code`; there is no GeoIP database here), the
///   interstitial that tries the app's scheme and falls back after 1.5 s, or a `302` to the
///   universal/app link, the store or the web, with `utm_*`, the link's parameters and
///   `lf_click` on every target but a store page.
/// - Where the link or its project turns it on (off by default), an iPhone that would go to the
///   App Store gets the pasteboard landing page instead (``landingPage(_:settings:store:copied:nonce:)``):
///   one button that, in its click handler, copies the link with a click token naming this
///   click, then opens the store; the app reads the link on its first launch and its install is
///   attributed with certainty. A browser without JavaScript (`lf_fp=0`) cannot copy: no page.
struct Redirect: Sendable {
    let store: any ServerStore
    let configuration: ServerConfiguration
    let clock: any LinkRelayClock
    let limiter: ClickLimiter

    /// `GET /{code}` and `GET /{templateSlug}/{code}`, open.
    func register(on groups: RouteGroups) {
        // The router needs one name for a first segment: each route says its own pattern for the
        // log and the metrics.
        groups.open.get(":first") { request, context in
            context.name(route: "/{code}")
            return try await follow(request, context, code: context.parameters.require("first"), templateSlug: nil)
        }
        groups.open.get(":first/:second") { request, context in
            context.name(route: "/{templateSlug}/{code}")
            return try await follow(
                request, context, code: context.parameters.require("second"), templateSlug: context.parameters.require("first"))
        }
    }

    /// The tap's answer, as ``RedirectPlan`` decides it; the click on disk before the answer.
    func follow(_ request: Request, _ context: ServerContext, code: String, templateSlug: String?) async throws -> Response {
        let now = clock.currentDate
        guard !LinkRules.reservedSegments.contains((templateSlug ?? code).lowercased()),
            let link = try await store.link(project: nil, shortCode: code, templateSlug: templateSlug), link.isLive(at: now)
        else { throw APIError.linkNotFound }
        let agent = LowercasedText(request.headers[.userAgent])
        let tap = RedirectTap(request, agent: agent)
        switch RedirectPlan.first(link, tap) {
        case .notFound:
            throw APIError.linkNotFound
        case .collect:
            let nonce = Self.nonce()
            return Self.html(try Self.collectingPage(path: request.uri.path, query: request.uri.query, nonce: nonce), nonce: nonce)
        case .preview, .click:
            break
        }
        let click = Fingerprint.click(on: link, request: request, context: context, configuration: configuration, at: now, agent: agent)
        let recorded = try await limiter.record(click, from: context.clientAddress, in: store, at: now)
        if tap.isBot { return ClickLimiter.marked(Self.html(try Self.previewPage(link, url: request.uri.path)), recorded: recorded) }
        let settings =
            RedirectPlan.mayShowLandingPage(link, tap, recorded: recorded) ? try await store.landingPage(project: link.projectID) : nil
        switch RedirectPlan.destination(link, tap, clickID: click.id, recorded: recorded, projectLandingPage: settings?.enabled) {
        case .landingPage(let storeURL):
            // A token naming the click just stored, copied by the page's button.
            let token = ClickTokens.make()
            try await store.insertClickToken(
                ClickTokenRecord(
                    tokenHash: ClickTokens.hash(token), projectID: link.projectID, linkID: link.id, clickID: click.id, clickedAt: now,
                    expiresAt: now.addingTimeInterval(TimeInterval(link.attributionWindowHours) * 3600)))
            let settings = settings ?? LandingPageSettings()
            let nonce = Self.nonce()
            let page = try Self.landingPage(
                link, settings: settings, store: storeURL, copied: copiedURL(link, request: request, token: token), nonce: nonce)
            return Self.html(page, nonce: nonce, images: settings.appIconURL != nil)
        case .interstitial(let scheme, let fallback):
            let nonce = Self.nonce()
            return ClickLimiter.marked(
                Self.html(try Self.interstitial(link, scheme: scheme, fallback: fallback, nonce: nonce), nonce: nonce), recorded: recorded)
        case .redirect(let url):
            return ClickLimiter.marked(Response(status: .found, headers: [.location: url, .cacheControl: "no-store"]), recorded: recorded)
        case .preview:
            return ClickLimiter.marked(Self.html(try Self.previewPage(link, url: request.uri.path)), recorded: recorded)
        }
    }

    /// The link the landing page copies: `https://{host}/{code}?lr_click={token}` (the
    /// configured public URL, else the request's origin), which the app's backend claims.
    func copiedURL(_ link: LinkRecord, request: Request, token: String) -> String {
        let shared = link.shareURL(on: configuration.shareOrigin(for: request))
        var components = URLComponents(url: shared, resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: ClickTokens.parameter, value: token)]
        return components?.string ?? shared.absoluteString
    }

    // MARK: Pages

    /// A page, with a policy that runs only its own script (the one carrying `nonce`), loads
    /// nothing, and cannot be framed.
    static func html(_ page: String, nonce: String? = nil, images: Bool = false) -> Response {
        let scripts = nonce.map { "script-src 'nonce-\($0)'; style-src 'nonce-\($0)'; " } ?? ""
        let imageSources = images ? "img-src https:; " : ""
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .contentSecurityPolicy:
                    "default-src 'none'; \(scripts)\(imageSources)base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            ],
            body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// A fresh nonce for one page's script: 22 base62 characters (131 bits).
    static func nonce() -> String {
        APIKeys.randomString(22, alphabet: APIKeys.base62)
    }

    /// A string as a JavaScript literal that cannot end its `<script>`.
    static func script(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }

    static func collectingPage(path: String, query: String?, nonce: String) throws -> String {
        let separator = (query?.isEmpty ?? true) ? "?" : "&"
        let noScript = path + (query.map { $0.isEmpty ? "" : "?" + $0 } ?? "") + separator + "lf_fp=0"
        return try RedirectPages.render("collecting", PageView(values: ["noScript": noScript, "nonce": nonce]))
    }

    static func interstitial(_ link: LinkRecord, scheme: String, fallback: String?, nonce: String) throws -> String {
        var values = [
            "title": link.ogTitle ?? link.title ?? "Opening the app…", "scheme": scheme, "schemeScript": script(scheme), "nonce": nonce,
        ]
        if let fallback {
            values["fallback"] = fallback
            values["fallbackScript"] = script(fallback)
        }
        return try RedirectPages.render("interstitial", PageView(values: values))
    }

    /// The pasteboard landing page: the app's icon and name where the project gives them, the
    /// link's title, one button. Its click handler writes `copied` to the clipboard (Safari
    /// allows it only inside the tap) and then opens `store`, also when the write fails or
    /// takes more than a second; should script not run, the button is the plain store link. The
    /// page says what the button copies.
    static func landingPage(
        _ link: LinkRecord, settings: LandingPageSettings, store: String, copied: String, nonce: String
    ) throws
        -> String
    {
        let app = settings.appName.flatMap { $0.isEmpty ? nil : $0 }
        var values = [
            "title": link.ogTitle ?? link.title ?? app ?? "Get the app", "button": app.map { "Get \($0)" } ?? "Get the app",
            "who": app ?? "the app", "store": store, "copied": copied, "nonce": nonce,
        ]
        values["description"] = link.ogDescription ?? link.description
        values["icon"] = settings.appIconURL
        return try RedirectPages.render("landing", PageView(values: values))
    }

    /// The link's Open Graph preview, for crawlers and link-preview fetchers.
    static func previewPage(_ link: LinkRecord, url: String) throws -> String {
        var values = ["title": link.ogTitle ?? link.title ?? link.shortCode, "url": url]
        values["description"] = link.ogDescription ?? link.description
        values["image"] = link.ogImageURL
        return try RedirectPages.render("preview", PageView(values: values))
    }
}

extension RedirectTap {
    /// What `request` says about the tap: its platform, whether a crawler or an app's browser
    /// sent it (from `agent`, its user agent lower-cased), its first language, the country the
    /// proxy in front names, and whether the collecting page was passed.
    init(_ request: Request, agent: LowercasedText) {
        let query = request.uri.queryParameters
        let language = request.headers[.acceptLanguage]?.split(separator: ",").first?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).prefix(2).lowercased()
        let country = request.headers.first { ["cf-ipcountry", "x-country-code"].contains($0.name.canonicalName) }?.value.lowercased()
        self.init(
            platform: Fingerprint.platform(agent), isBot: Fingerprint.isBot(agent), inAppBrowser: agent.containsAny(Self.inAppTokens),
            language: language, country: country, collected: query.contains { $0.key.hasPrefix("fp_") || $0.key == "lf_fp" },
            scriptless: query.contains { $0.key == "lf_fp" && $0.value == "0" })
    }
}
