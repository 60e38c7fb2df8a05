import Foundation
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerStorage

/// What an admin key manages besides links: templates and the apps the association files
/// name; and the association files themselves.
struct AdminRoutes: Sendable {
    let store: any ServerStore
    let configuration: ServerConfiguration
    let clock: any LinkRelayClock

    /// Templates, apps and destination hosts behind an admin key; the association files open.
    func register(on groups: RouteGroups) {
        groups.admin.post("api/templates") { try await createTemplate($0, $1) }
        groups.admin.post("api/apps") { try await createApp($0, $1) }
        groups.admin.get("api/destination-hosts") { try await destinationHosts($0, $1) }
        groups.admin.put("api/destination-hosts") { try await setDestinationHosts($0, $1) }
        groups.admin.get("api/landing-page") { try await landingPage($0, $1) }
        groups.admin.get("api/installs/:id") { request, context in try await install(request, context, id: context.parameters.require("id"))
        }
        groups.admin.put("api/landing-page") { try await setLandingPage($0, $1) }
        groups.open.get(".well-known/apple-app-site-association") { try await appleAppSiteAssociation($0, $1) }
        groups.open.get("apple-app-site-association") { try await appleAppSiteAssociation($0, $1) }
        groups.open.get(".well-known/assetlinks.json") { try await assetLinks($0, $1) }
    }

    /// `POST /api/templates`: `{"name", "slug"?, "iosAppStoreUrl"?, "androidAppStoreUrl"?, "webFallbackUrl"?}`;
    /// a slug is made (8 of `a–z0–9`, as Core's) when none is given; a taken one is a 409.
    func createTemplate(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let body = try await JSONBody.read(request, timeout: configuration.bodyTimeout)
        let name = try body.string("name", required: true, maxLength: 256) ?? ""
        let slug = try body.string("slug", maxLength: 20)
        if let slug, !Self.isValidSlug(slug) {
            throw APIError.field("slug", "must be 1 to 20 characters of a-z 0-9 _ - and not a reserved word")
        }
        var template = TemplateRecord(
            projectID: key.projectID, slug: slug ?? Self.randomSlug(), name: name, iosAppStoreURL: try body.webURL("iosAppStoreUrl"),
            androidAppStoreURL: try body.webURL("androidAppStoreUrl"), webFallbackURL: try body.webURL("webFallbackUrl"),
            createdAt: clock.currentDate
        )
        for attempt in 1...10 {
            do {
                try await store.insertTemplate(template)
                try await store.learnDestinations(of: template)
                return TemplateAnswer(template).response(status: .created)
            } catch let error as StoreError where error.kind == .conflict {
                if slug != nil { throw APIError(.conflict, "The slug '\(template.slug)' is taken.", field: "slug") }
                if attempt == 10 { break }
                template.slug = Self.randomSlug()
            }
        }
        throw APIError(.serviceUnavailable, "No free slug was found; try again.")
    }

    /// `GET /api/destination-hosts`: `{"mode": "learned" | "listed" | "any", "hosts": […]}`, where
    /// links made with an SDK key may send people (``DestinationHosts``).
    func destinationHosts(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        return ServerHTTP.json(DestinationHostsAnswer(try await store.destinationHosts(project: key.projectID)))
    }

    /// `PUT /api/destination-hosts` `{"mode": "listed", "hosts": ["acme.example", "*.acme.example"]}`:
    /// replaces them (at most 100; `*.` covers every subdomain). `mode` may be left out with a
    /// list (`listed`); `"any"` allows every host, and an empty list without a mode is refused
    /// (before 0.7 it meant any host).
    func setDestinationHosts(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let body = try await JSONBody.read(request, timeout: configuration.bodyTimeout)
        let hosts = try Self.destinationHosts(body)
        try await store.setDestinationHosts(project: key.projectID, hosts)
        return ServerHTTP.json(DestinationHostsAnswer(hosts))
    }

    /// The mode and hosts `body` sets (``DestinationHosts/requested(mode:hosts:)``).
    static func destinationHosts(_ body: JSONBody) throws -> DestinationHosts {
        let mode = try body.string("mode", maxLength: 16)
        let hosts: [String]?
        switch body.object["hosts"] {
        case nil, .null?: hosts = nil
        case .array(let items)? where items.count <= DestinationHosts.maxHosts:
            hosts = try items.map { item in
                guard let host = item.stringValue else {
                    throw APIError.field("hosts", "must hold host names such as acme.example or *.acme.example")
                }
                return host
            }
        default: throw APIError.field("hosts", "must be a list of at most \(DestinationHosts.maxHosts) host names")
        }
        do {
            return try DestinationHosts.requested(mode: mode, hosts: hosts ?? [])
        } catch {
            throw APIError(error)
        }
    }

    /// `GET /api/landing-page`: `{"enabled", "appName", "appIconUrl"}`, the project's pasteboard
    /// landing page.
    func landingPage(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        return ServerHTTP.json(LandingPageAnswer(try await store.landingPage(project: key.projectID)))
    }

    /// `PUT /api/landing-page` `{"enabled": true, "appName"?: "Acme Shop", "appIconUrl"?: "https://…"}`:
    /// whether the project's links show an iPhone without the app the page whose button copies
    /// the link with its click token before the App Store (a link's `landingPage` overrides
    /// it), and the app's name and icon on it. Fields left out keep their value; `null` clears
    /// the name or the icon.
    func setLandingPage(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let body = try await JSONBody.read(request, timeout: configuration.bodyTimeout)
        var settings = try await store.landingPage(project: key.projectID)
        if body.object.keys.contains("enabled") {
            guard let enabled = try body.bool("enabled") else { throw APIError.field("enabled", "must be true or false") }
            settings.enabled = enabled
        }
        if body.object.keys.contains("appName") { settings.appName = try body.string("appName", maxLength: 128) }
        if body.object.keys.contains("appIconUrl") {
            settings.appIconURL = try body.webURL("appIconUrl")
            if let icon = settings.appIconURL, URL(string: icon)?.scheme?.lowercased() != "https" {
                throw APIError.field("appIconUrl", "must be an https URL (the page loads nothing else)")
            }
        }
        for name in body.object.keys where !["enabled", "appName", "appIconUrl"].contains(name) {
            throw APIError.field(name, "is not a landing page setting (enabled, appName, appIconUrl)")
        }
        try await store.setLandingPage(project: key.projectID, settings)
        return ServerHTTP.json(LandingPageAnswer(settings))
    }

    /// `GET /api/installs/{id}`: one install of the project as stored: how it was attributed
    /// (method, confidence, factors, link and click), the device's signals, and the Apple Ads
    /// token its report carried. Another project's install is `404`, as one that does not exist.
    func install(_ request: Request, _ context: ServerContext, id: String) async throws -> Response {
        let key = try context.requireAPIKey()
        guard let install = try await store.install(project: key.projectID, id: id) else {
            throw APIError(.notFound, "No install \(id) in this project.")
        }
        return ServerHTTP.json(InstallDetails(install))
    }

    /// `POST /api/apps`: `{"platform": "ios", "appId": "TEAMID.bundle.id", "paths"?: ["/*"]}`,
    /// `{"platform": "appclip", "appId": "TEAMID.bundle.id.Clip"}` or
    /// `{"platform": "android", "packageName": "…", "sha256CertFingerprints": ["AB:CD:…"]}`.
    func createApp(_ request: Request, _ context: ServerContext) async throws -> Response {
        let key = try context.requireAPIKey()
        let body = try await JSONBody.read(request, timeout: configuration.bodyTimeout)
        let app: AppRecord
        switch try body.string("platform", required: true, maxLength: 16) {
        case "appclip":
            let appID = try Self.appleAppID(body)
            app = AppRecord(projectID: key.projectID, platform: .appClip, identifier: appID, createdAt: clock.currentDate)
        case "ios":
            let appID = try Self.appleAppID(body)
            let paths = try Self.strings(body, "paths") ?? ["/*"]
            guard paths.allSatisfy({ $0.hasPrefix("/") || $0 == "*" }) else { throw APIError.field("paths", "must start with /") }
            app = AppRecord(projectID: key.projectID, platform: .ios, identifier: appID, paths: paths, createdAt: clock.currentDate)
        case "android":
            let package = try body.string("packageName", required: true, maxLength: 256) ?? ""
            guard package.split(separator: ".").count >= 2 else {
                throw APIError.field("packageName", "must be a package name (com.acme.shop)")
            }
            let fingerprints = try Self.strings(body, "sha256CertFingerprints") ?? []
            guard !fingerprints.isEmpty,
                fingerprints.allSatisfy({
                    $0.count == 95 && $0.split(separator: ":").allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
                })
            else { throw APIError.field("sha256CertFingerprints", "must list SHA-256 fingerprints (AB:CD:… , 32 pairs)") }
            app = AppRecord(
                projectID: key.projectID, platform: .android, identifier: package,
                certificateFingerprints: fingerprints.map { $0.uppercased() },
                createdAt: clock.currentDate)
        default:
            throw APIError.field("platform", "must be ios, appclip or android")
        }
        do {
            try await store.insertApp(app)
        } catch let error as StoreError where error.kind == .conflict {
            throw APIError(
                .conflict, "The app \(app.identifier) is registered already.", field: app.platform == .android ? "packageName" : "appId")
        }
        return AppAnswer(app).response(status: .created)
    }

    /// The body's `appId`: `TEAMID.bundle.id`, a 10-character team id then the bundle id.
    static func appleAppID(_ body: JSONBody) throws -> String {
        let appID = try body.string("appId", required: true, maxLength: 256) ?? ""
        let parts = appID.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else {
            throw APIError.field("appId", "must be TEAMID.bundle.id (a 10-character team id, then the bundle id)")
        }
        return appID
    }

    /// `/.well-known/apple-app-site-association`: every registered iOS app, with its paths, in
    /// both the current (`components`) and the older (`paths`) form; and the App Clips, in
    /// `appclips` (left out when there is none).
    func appleAppSiteAssociation(_ request: Request, _ context: ServerContext) async throws -> Response {
        ServerHTTP.json(AppleAppSiteAssociationFile(try await store.apps()))
    }

    /// `/.well-known/assetlinks.json`: every registered Android app.
    func assetLinks(_ request: Request, _ context: ServerContext) async throws -> Response {
        ServerHTTP.json(AssetLinksFile(try await store.apps()))
    }

    private static func strings(_ body: JSONBody, _ name: String) throws -> [String]? {
        guard let value = body.object[name], value != .null else { return nil }
        guard case .array(let items) = value, items.count <= 100 else {
            throw APIError.field(name, "must be a list of at most 100 strings")
        }
        return try items.map { item in
            guard let text = item.stringValue, (1...512).contains(text.utf8.count) else {
                throw APIError.field(name, "must be a list of strings")
            }
            return text
        }
    }

    static func isValidSlug(_ slug: String) -> Bool {
        (1...20).contains(slug.count) && !LinkRules.reservedSegments.contains(slug)
            && slug.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" }
    }

    static func randomSlug() -> String {
        APIKeys.randomString(8, alphabet: Array("abcdefghijklmnopqrstuvwxyz0123456789"))
    }
}
