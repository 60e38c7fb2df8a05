import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayDynalinks
import LinkRelayLimeLink
import LinkRelayLinkForty
import LinkRelayPaylisher

/// What the app's backend claims: its provider, link domains and schemes, and links to try.
public struct BackendClaims: Sendable, Equatable, Codable {
    /// `linkforty`, `limelink`, `dynalinks`, `paylisher` or `local`.
    public var provider: String
    /// The universal-link domains the backend is configured with (`go.acme.app`).
    public var domains: [String]
    /// The app's own URL schemes (`acme`).
    public var schemes: [String]
    /// Links to check end to end; when empty, a typical link of the provider on each domain.
    public var links: [URL]

    public init(provider: String, domains: [String], schemes: [String] = [], links: [URL] = []) {
        self.provider = provider.lowercased()
        self.domains = domains.map { $0.lowercased() }
        self.schemes = schemes.map { $0.lowercased() }
        self.links = links
    }

    /// The backends the tool can make, one per provider (each adapter's ``CommandLineBackend``
    /// conformance says how), and `local`.
    static let backends: [any CommandLineBackend.Type] = [
        LinkFortyBackend.self, LimeLinkBackend.self, DynalinksBackend.self, PaylisherBackend.self, LocalBackend.self,
    ]

    /// The providers' names on the command line.
    public static let providers = backends.map { $0.commandLineName }

    /// The real adapter, configured with these domains and schemes, and `apiKey` (a placeholder
    /// when `nil`: the doctor makes no request).
    public func makeBackend(apiKey: String? = nil) throws -> any DeepLinkBackend {
        guard let type = Self.backends.first(where: { $0.commandLineName == provider }) else {
            throw DoctorError("Unknown provider '\(provider)'. Use one of: \(Self.providers.joined(separator: ", ")).")
        }
        guard !domains.isEmpty || !type.needsLinkDomain else {
            throw DoctorError("Name at least one link domain of the \(provider) backend (--domain).")
        }
        do {
            return try type.make(domains: domains, schemes: Set(schemes), apiKey: apiKey)
        } catch let error as DeepLinkError where error.code == .invalidConfiguration {
            throw DoctorError(error.message)
        }
    }

    /// The links to check: those given, else a typical link of the provider on each domain and
    /// one per scheme.
    public var linksToCheck: [URL] {
        if !links.isEmpty { return links }
        let path = Self.backends.first { $0.commandLineName == provider }?.typicalLinkPath ?? "/products/42"
        return domains.compactMap { URL(string: "https://\($0)\(path)") } + schemes.compactMap { URL(string: "\($0)://open") }
    }
}

/// How the association file was fetched, when it came from a URL.
public struct FetchReport: Sendable, Equatable {
    public var url: URL
    public var status: Int
    public var contentType: String?
    /// Where a redirect pointed, when the server answered with one.
    public var redirect: String?
    /// Whether the file came from the legacy root path (`/apple-app-site-association`) because
    /// `/.well-known/` did not serve it.
    public var fromLegacyRoot: Bool

    public init(url: URL, status: Int, contentType: String?, redirect: String?, fromLegacyRoot: Bool = false) {
        self.url = url
        self.status = status
        self.contentType = contentType
        self.redirect = redirect
        self.fromLegacyRoot = fromLegacyRoot
    }
}

extension FetchReport {
    /// Fetches an association file: from the URL as given, or for a bare domain
    /// (`https://go.acme.app`) from `/.well-known/apple-app-site-association`, and when that
    /// does not answer 200, from the legacy root path `/apple-app-site-association` (reported:
    /// iOS 13 and later read only `/.well-known/`). Redirects are reported, not followed further
    /// than `transport` does (``URLSessionTransport`` follows only same-origin ones).
    ///
    /// - Throws: the transport's error when nothing answered.
    public static func fetch(_ url: URL, over transport: any HTTPTransport) async throws -> (Data, FetchReport) {
        let bare = url.path.isEmpty || url.path == "/"
        let target = bare ? url.appendingPathComponent(".well-known/apple-app-site-association") : url
        let response = try await transport.send(HTTPRequest(method: .get, url: target))
        if bare, response.status != 200 {
            let root = url.appendingPathComponent("apple-app-site-association")
            if let legacy = try? await transport.send(HTTPRequest(method: .get, url: root)), legacy.status == 200 {
                return (
                    legacy.body,
                    FetchReport(url: root, status: 200, contentType: legacy.headers["Content-Type"], redirect: nil, fromLegacyRoot: true)
                )
            }
        }
        let redirect = (300..<400).contains(response.status) ? response.headers["Location"] ?? "an unnamed location" : nil
        return (
            response.body,
            FetchReport(url: target, status: response.status, contentType: response.headers["Content-Type"], redirect: redirect)
        )
    }
}

/// Everything the doctor checks.
public struct DoctorInput: Sendable {
    public var appID: String
    public var backend: BackendClaims
    /// The association file's bytes, where it came from (a path or URL), and how it was fetched.
    public var associationFile: Data?
    public var associationSource: String?
    public var fetch: FetchReport?
    public var entitlements: Data?
    public var infoPlist: Data?
    /// Links that must open Safari, not the app (`--expect-web`): a web page on a link domain,
    /// such as a privacy policy or a help page. Checked against the association file.
    public var webOnlyLinks: [URL]
    /// The App Clip's id (`--app-clip-id`, `TEAMID.bundle.id.Clip`): the association file must
    /// list it in `appclips.apps` for the Clip to be invoked from the link domain, and so for
    /// its link to reach the full app (``AppClipHandoff``). `nil`: not checked.
    public var appClipID: String?

    public init(
        appID: String, backend: BackendClaims, associationFile: Data? = nil, associationSource: String? = nil, fetch: FetchReport? = nil,
        entitlements: Data? = nil, infoPlist: Data? = nil, webOnlyLinks: [URL] = []
    ) {
        self.webOnlyLinks = webOnlyLinks
        self.appID = appID
        self.backend = backend
        self.associationFile = associationFile
        self.associationSource = associationSource
        self.fetch = fetch
        self.entitlements = entitlements
        self.infoPlist = infoPlist
    }
}

/// One check's verdict.
public struct Check: Sendable, Equatable, Codable {
    public enum Status: String, Sendable, Codable, Comparable {
        case pass, warning, failure

        private var rank: Int {
            switch self {
            case .pass: 0
            case .warning: 1
            case .failure: 2
            }
        }

        public static func < (lhs: Status, rhs: Status) -> Bool { lhs.rank < rhs.rank }
    }

    /// A stable name (`aasa.app-id`), for CI scripts.
    public var id: String
    public var status: Status
    public var message: String
    /// One line saying how to fix it; `nil` for a pass.
    public var fix: String?
}

/// The doctor's findings.
public struct DoctorReport: Sendable, Equatable, Encodable {
    public var checks: [Check]

    private enum CodingKeys: String, CodingKey { case status, checks }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(checks, forKey: .checks)
    }

    /// The worst status of any check.
    public var status: Check.Status { checks.map(\.status).max() ?? .pass }

    /// The checks with this id.
    public func checks(_ id: String) -> [Check] { checks.filter { $0.id == id } }
}

/// Checks an app's link configuration offline: the association file, the entitlements, the
/// Info.plist and the backend's claims, against each other.
public enum Doctor {
    public static func run(_ input: DoctorInput) -> DoctorReport {
        var checks: [Check] = []
        func add(_ id: String, _ status: Check.Status, _ message: String, fix: String? = nil) {
            checks.append(Check(id: id, status: status, message: message, fix: status == .pass ? nil : fix))
        }
        let claims = input.backend
        let appIDValid = AssociationFile.isWellFormed(appID: input.appID)
        add(
            "app-id", appIDValid ? .pass : .warning, "The app id is \(input.appID).",
            fix: "Give the app id as TEAMID.bundle.id, with the 10-character team id from the developer account.")

        // The backend.
        var backend: (any DeepLinkBackend)?
        do {
            backend = try claims.makeBackend()
            add("backend.configuration", .pass, "The \(claims.provider) backend accepts these domains and schemes.")
        } catch {
            add(
                "backend.configuration", .failure, "The \(claims.provider) backend refuses this configuration: \(error)",
                fix: "Correct the domains or schemes given for the backend.")
        }
        if let backend {
            for link in claims.linksToCheck {
                let claimed = backend.canHandle(link)
                add(
                    "backend.claims", claimed ? .pass : .failure,
                    claimed
                        ? "The backend claims \(link.absoluteString)."
                        : "The backend does not claim \(link.absoluteString): handle(_:) would return false.",
                    fix: "Add \(link.host ?? link.scheme ?? "its host") to the backend's domains or schemes.")
            }
        }

        // The association file.
        let webLinks = claims.linksToCheck.filter { ["http", "https"].contains($0.scheme?.lowercased() ?? "") }
        if let fetch = input.fetch { checkFetch(fetch, add) }
        if let data = input.associationFile {
            checkAssociationFile(
                data, appID: input.appID, appClipID: input.appClipID, links: webLinks, source: input.associationSource, fetch: input.fetch,
                claims: claims, add)
            checkWebOnlyLinks(data, appID: input.appID, links: input.webOnlyLinks, add)
        } else {
            add(
                "aasa.present", .warning, "No association file was given, so universal links were not checked.",
                fix: "Pass --aasa with the file your link domain serves at /.well-known/apple-app-site-association.")
        }

        // The entitlements.
        if let data = input.entitlements {
            checkEntitlements(data, claims: claims, add)
        } else {
            add(
                "entitlements.present", .warning, "No entitlements file was given.",
                fix: "Pass --entitlements with the app target's .entitlements file.")
        }

        // The Info.plist.
        if let data = input.infoPlist {
            checkInfoPlist(data, claims: claims, appID: input.appID, add)
        } else if !claims.schemes.isEmpty {
            add(
                "info-plist.present", .warning, "No Info.plist was given, so the custom schemes were not checked.",
                fix: "Pass --info-plist with the app target's Info.plist.")
        }
        return DoctorReport(checks: checks)
    }

    private static func checkFetch(_ fetch: FetchReport, _ add: (String, Check.Status, String, String?) -> Void) {
        if fetch.url.scheme?.lowercased() != "https" {
            add(
                "aasa.fetch", .failure, "The file was fetched over \(fetch.url.scheme ?? "no scheme"); Apple fetches it only over HTTPS.",
                "Serve it at https://<domain>/.well-known/apple-app-site-association.")
        }
        if fetch.fromLegacyRoot {
            add(
                "aasa.location", .warning,
                "/.well-known/apple-app-site-association did not answer; the file was found only at the legacy root path \(fetch.url.path).",
                "Serve it at /.well-known/apple-app-site-association: iOS 13 and later read only that path.")
        }
        if fetch.url.path.hasSuffix(".json") {
            add(
                "aasa.fetch", .failure, "The file was fetched from a path ending in .json.",
                "Serve it at /.well-known/apple-app-site-association, with no extension.")
        }
        if let redirect = fetch.redirect {
            add(
                "aasa.fetch", .failure, "\(fetch.url.absoluteString) redirects to \(redirect); Apple's CDN does not follow redirects.",
                "Serve the file directly from the link domain, with status 200.")
        } else if fetch.status != 200 {
            add(
                "aasa.fetch", .failure, "\(fetch.url.absoluteString) answered \(fetch.status).",
                "Serve the file with status 200 at /.well-known/apple-app-site-association.")
        } else {
            add("aasa.fetch", .pass, "\(fetch.url.absoluteString) answered 200 without a redirect.", nil)
        }
        if let type = fetch.contentType, !type.lowercased().hasPrefix("application/json") {
            add("aasa.content-type", .warning, "The file is served as \(type).", "Serve it as application/json.")
        }
    }

    private static func checkAssociationFile(
        _ data: Data, appID: String, appClipID: String?, links: [URL], source: String?, fetch: FetchReport?, claims: BackendClaims,
        _ add: (String, Check.Status, String, String?) -> Void
    ) {
        let size = data.count
        add(
            "aasa.size", size <= AssociationFile.maximumSize ? (size <= AssociationFile.recommendedSize ? .pass : .warning) : .failure,
            "The file is \(size) bytes (Apple's limit: \(AssociationFile.maximumSize)).",
            "Shorten it: merge rules with wildcards, drop unused app ids.")
        let file: AssociationFile
        do {
            file = try AssociationFile(data: data)
            add("aasa.json", .pass, "The file is valid JSON with applinks.details.", nil)
            for finding in file.findings {
                add("aasa.structure", finding.status, finding.message, finding.fix)
            }
        } catch {
            add(
                "aasa.json", .failure, "\(error)",
                "Serve plain JSON of the form {\"applinks\": {\"details\": [{\"appIDs\": [\"\(appID)\"], \"components\": [{\"/\": \"/*\"}]}]}}."
            )
            return
        }
        guard let rules = file.rules(for: appID) else {
            let listed = file.details.flatMap(\.appIDs)
            add(
                "aasa.app-id", .failure,
                "The file does not list \(appID) (it lists \(listed.isEmpty ? "no app" : listed.joined(separator: ", "))).",
                "Add \"\(appID)\" to applinks.details[].appIDs (your provider's dashboard usually has a field for the team and bundle id).")
            return
        }
        let listedAs = file.details.flatMap(\.appIDs).filter { AssociationFile.appID($0, isApp: appID) }
        add(
            "aasa.app-id", .pass,
            "The file lists \(listedAs == [appID] ? appID : "\(appID) as \(listedAs.joined(separator: ", "))") with \(rules.count) rule\(rules.count == 1 ? "" : "s").",
            nil)
        if file.details.contains(where: { $0.isLegacy && $0.appIDs.contains { AssociationFile.appID($0, isApp: appID) } }) {
            add(
                "aasa.form", .warning, "The entry for \(appID) uses the legacy \"paths\" form.",
                "Use \"appIDs\" and \"components\" (iOS 13 and later); keep \"paths\" only for iOS 12.")
            if !file.hasAppsKey {
                add(
                    "aasa.form", .warning, "The legacy form needs \"apps\": [] in applinks for iOS 12 and earlier.",
                    "Add \"apps\": [] to applinks.")
            }
        }
        if let host = fetch?.url.host?.lowercased(), !claims.domains.contains(host) {
            add(
                "aasa.domain", .warning, "The file came from \(host), which the backend does not claim.",
                "Check the file of the domain your links use: \(claims.domains.joined(separator: ", ")).")
        }
        checkAppClip(file, appID: appID, clip: appClipID, add)
        for link in links {
            let decision = file.decision(for: link, appID: appID)
            let rule = decision.rule.map { "\($0.place), \($0.written)" } ?? ""
            switch decision.verdict {
            case .opensApp:
                add("aasa.link", .pass, "\(link.absoluteString) opens the app: matched \(rule).", nil)
            case .excluded:
                add(
                    "aasa.link", .failure, "\(link.absoluteString) is excluded by \(rule): it opens Safari.",
                    "Remove or narrow that exclude rule, or move it after the rule that should match.")
            case .noMatch:
                add(
                    "aasa.link", .failure, "No rule matches \(link.absoluteString): it opens Safari.",
                    "Add a component such as {\"/\": \"\(Self.suggestedPattern(for: link))\"} for \(appID) (name the paths your links use; \"/*\" would also open this domain's web pages in the app)."
                )
            case .appNotListed:
                break
            }
        }
    }

    /// The narrowest pattern that covers `link` and its siblings: `/products/*` for
    /// `/products/42`, the path itself for a one-segment link (`/spring`), `/` for none.
    /// The `appclips` section: the App Clip `clip` listed (when given), its id the app's bundle id
    /// and a suffix; without `clip`, the app's Clips the file lists, as information.
    private static func checkAppClip(
        _ file: AssociationFile, appID: String, clip: String?, _ add: (String, Check.Status, String, String?) -> Void
    ) {
        let section = #"Add "appclips": {"apps": ["\#(clip ?? "TEAMID.bundle.id.Clip")"]} to the file."#
        guard let clip else {
            let ours = (file.appClipIDs ?? []).filter { $0.hasPrefix(appID + ".") }
            if !ours.isEmpty {
                add(
                    "aasa.appclips", .pass, "The file lists the App Clip \(ours.joined(separator: ", ")) (check it with --app-clip-id).",
                    nil)
            }
            return
        }
        guard AssociationFile.isWellFormed(appID: clip) else {
            add(
                "aasa.appclips", .failure, "The App Clip's id \(clip) is not TEAMID.bundle.id.",
                "Give --app-clip-id as TEAMID.bundle.id.Clip.")
            return
        }
        if AssociationFile.isWellFormed(appID: appID), !clip.hasPrefix(appID + ".") {
            add(
                "aasa.appclips", .failure,
                "The App Clip's id \(clip) does not start with the app's, \(appID), and a dot: App Store Connect refuses such a Clip.",
                "Name the App Clip's bundle id after the app's, such as \(appID).Clip.")
        }
        guard let listed = file.appClipIDs, !listed.isEmpty else {
            add(
                "aasa.appclips", .failure, "The file has no appclips section, so links on this domain cannot invoke the App Clip \(clip).",
                section)
            return
        }
        if listed.contains(clip) {
            add("aasa.appclips", .pass, "The file lists the App Clip \(clip) in appclips.apps.", nil)
        } else {
            add("aasa.appclips", .failure, "appclips.apps lists \(listed.joined(separator: ", ")), not the App Clip \(clip).", section)
        }
    }

    static func suggestedPattern(for link: URL) -> String {
        let segments = link.path.split(separator: "/")
        guard let first = segments.first else { return "/" }
        return segments.count == 1 ? "/\(first)" : "/\(first)/*"
    }

    /// Each link that must open Safari: a failure naming the rule that sends it to the app.
    private static func checkWebOnlyLinks(_ data: Data, appID: String, links: [URL], _ add: (String, Check.Status, String, String?) -> Void)
    {
        guard !links.isEmpty, let file = try? AssociationFile(data: data), file.rules(for: appID) != nil else { return }
        for link in links {
            let decision = file.decision(for: link, appID: appID)
            let rule = decision.rule.map { "\($0.place), \($0.written)" } ?? ""
            switch decision.verdict {
            case .opensApp:
                add(
                    "aasa.web-link", .failure, "\(link.absoluteString) must open Safari, but it opens the app: matched \(rule).",
                    "Add {\"/\": \"\(link.path.isEmpty ? "/" : link.path)\", \"exclude\": true} before that rule, or narrow the rule.")
            case .excluded:
                add("aasa.web-link", .pass, "\(link.absoluteString) opens Safari: excluded by \(rule).", nil)
            case .noMatch:
                add("aasa.web-link", .pass, "\(link.absoluteString) opens Safari: no rule matches it.", nil)
            case .appNotListed:
                break
            }
        }
    }

    private static func checkEntitlements(_ data: Data, claims: BackendClaims, _ add: (String, Check.Status, String, String?) -> Void) {
        let entitlements: Entitlements
        do {
            entitlements = try Entitlements(data: data)
        } catch {
            add("entitlements.readable", .failure, "\(error)", "Pass the .entitlements file of the app target (a property list).")
            return
        }
        for domain in claims.domains {
            let covered = entitlements.appLinks.contains { $0.covers(domain) }
            add(
                "entitlements.applinks", covered ? .pass : .failure,
                covered
                    ? "The entitlements associate \(domain)."
                    : "The entitlements do not associate \(domain): its universal links open Safari.",
                "Add applinks:\(domain) to com.apple.developer.associated-domains (Signing & Capabilities → Associated Domains).")
        }
        for entry in entitlements.appLinks where entry.mode != nil {
            add(
                "entitlements.mode", .warning,
                "applinks:\(entry.host) uses ?mode=\(entry.mode ?? ""): only development builds on devices in developer mode use it.",
                "Remove ?mode=\(entry.mode ?? "") for release builds.")
        }
        for entry in entitlements.appLinks where !claims.domains.contains(where: { entry.covers($0) }) {
            add(
                "entitlements.unclaimed", .warning,
                "applinks:\(entry.host) is associated, but the backend does not claim it: its links reach the app but not LinkRelay's backend.",
                "Add \(entry.host) to the backend's domains, or remove the entry.")
        }
    }

    private static func checkInfoPlist(
        _ data: Data, claims: BackendClaims, appID: String, _ add: (String, Check.Status, String, String?) -> Void
    ) {
        let plist: InfoPlist
        do {
            plist = try InfoPlist(data: data)
        } catch {
            add("info-plist.readable", .failure, "\(error)", "Pass the Info.plist of the app target.")
            return
        }
        for scheme in claims.schemes {
            let registered = plist.urlSchemes.contains(scheme)
            add(
                "info-plist.schemes", registered ? .pass : .failure,
                registered ? "Info.plist registers \(scheme)://." : "Info.plist does not register \(scheme)://: such links do nothing.",
                "Add \(scheme) to CFBundleURLTypes → CFBundleURLSchemes (target → Info → URL Types).")
        }
        if let bundle = plist.bundleIdentifier,
            let expected = AssociationFile.isWellFormed(appID: appID)
                ? appID.split(separator: ".", maxSplits: 1).last.map(String.init) : appID,
            bundle != expected
        {
            add(
                "info-plist.bundle-id", .warning, "Info.plist's bundle id is \(bundle), the app id names \(expected).",
                "Check the app id: it must be TEAMID.\(bundle).")
        }
    }
}
