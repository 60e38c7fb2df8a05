import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// `GET /{code}` and `GET /{templateSlug}/{code}`, and the association files.
@Suite("Redirect")
struct RedirectTests {
    static func get(
        _ client: some TestClientProtocol, _ path: String, userAgent: String, ip: String = "203.0.113.7", headers extra: HTTPFields = [:],
        _ check: (TestResponse) async throws -> Void
    ) async throws {
        var headers = HTTPTest.headers(key: nil, ip: ip, userAgent: userAgent)
        headers.append(contentsOf: extra)
        let response = try await client.execute(uri: path, method: .get, headers: headers) { (response: TestResponse) async throws in
            response
        }
        try await check(response)
    }

    @Test(
        "a phone's first request gets the page that adds the fingerprint; only the request with it is the click",
        arguments: TestEngine.available)
    func collectsTheFingerprint(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("Xk9_2bQz", scheme: nil)
            try await world.app().test(.live) { client in
                try await Self.get(client, "/Xk9_2bQz?ref=friend", userAgent: HTTPTest.safari) { response in
                    #expect(response.status == .ok && response.headers[.contentType]?.hasPrefix("text/html") == true)
                    let page = String(buffer: response.body)
                    #expect(
                        page.contains("fp_tz") && page.contains("devicePixelRatio") && page.contains("/Xk9_2bQz?ref=friend&amp;lf_fp=0"))
                }
                #expect(try await world.store.clicks(link: link.id).isEmpty)
                try await Self.get(
                    client, "/Xk9_2bQz?ref=friend&fp_tz=America/New_York&fp_lang=en-US&fp_sw=1179&fp_sh=2556", userAgent: HTTPTest.safari
                ) {
                    response in
                    #expect(response.status == .found)
                    #expect(response.headers[.location] == "https://apps.apple.com/app/id1", "the store first in Safari")
                }
                let clicks = try await world.store.clicks(link: link.id)
                #expect(
                    clicks.count == 1 && clicks.first?.device.screenWidth == 1179 && clicks.first?.device.timezone == "America/New_York")
                #expect(clicks.first?.device.networkPrefix == "203.0.113" && clicks.first?.isBot == false)
                try await Self.get(client, "/Xk9_2bQz?lf_fp=0", userAgent: HTTPTest.safari) { #expect($0.status == .found) }
                #expect(try await world.store.clicks(link: link.id).count == 2, "without JavaScript the click still counts")
            }
        }
    }

    @Test(
        "the app's scheme: the interstitial tries it, then falls back to the store; the web gets a 302 with utm_*, parameters and lf_click",
        arguments: TestEngine.available)
    func targets(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var link = try await world.link("Xk9_2bQz")
            try await world.app().test(.live) { client in
                try await Self.get(client, "/Xk9_2bQz?fp_tz=UTC", userAgent: HTTPTest.safari) { response in
                    #expect(response.status == .ok)
                    let page = String(buffer: response.body)
                    #expect(page.contains(#"window.location.href = "acmeshop:\/\/product\/42?productId=42""#), "\(page)")
                    #expect(page.contains(#"https:\/\/apps.apple.com\/app\/id1"#) && page.contains("1500"))
                }
                try await Self.get(client, "/Xk9_2bQz", userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/124.0 Safari/537.36") {
                    response in
                    #expect(response.status == .found)
                    #expect(response.headers[.location] == "https://acme.example/p/42?utm_source=mail&productId=42")
                }
            }
            link.shortCode = "tracked"
            link.id = UUID().uuidString.lowercased()
            link.appendClickID = true
            try await world.store.insertLink(link)
            let trackedID = link.id
            try await world.app().test(.live) { client in
                try await Self.get(client, "/tracked", userAgent: "Mozilla/5.0 (Macintosh) Firefox/125.0") { response in
                    let location = response.headers[.location] ?? ""
                    let clicks = try await world.store.clicks(link: trackedID)
                    #expect(location.hasSuffix("&lf_click=\(clicks.first?.id ?? "?")"), "\(location)")
                }
            }
        }
    }

    @Test("a path with spaces, quotes or a stray % becomes a valid scheme URL, never a crash")
    func oddPaths() {
        for path in ["/sale/50% off", "/a b/\"c\"", "/%zz", "/ünïcode/<x>"] {
            let link = LinkRecord(projectID: "p", shortCode: "c", originalURL: "", deepLinkPath: path, appScheme: "acme", createdAt: Date())
            let scheme = RedirectPlan.targets(link, RedirectTap(platform: .ios)).scheme
            #expect(scheme.flatMap(URL.init(string:)) != nil, "\(path) → \(scheme ?? "nil")")
            #expect(scheme?.hasPrefix("acme://") == true)
        }
    }

    /// An iPhone's tap with `userAgent`, as the redirect reads it.
    static func tap(_ userAgent: String) -> RedirectTap {
        RedirectTap(platform: .ios, inAppBrowser: LowercasedText(userAgent).containsAny(RedirectTap.inAppTokens))
    }

    @Test("in an app's own browser the web page comes before the store")
    func inAppBrowser() {
        let link = LinkRecord(
            projectID: "p", shortCode: "c", originalURL: "https://acme.example", iosAppStoreURL: "https://apps.apple.com/app/id1",
            webFallbackURL: "https://acme.example/web", createdAt: Date())
        #expect(RedirectPlan.targets(link, Self.tap(HTTPTest.safari)).fallback == "https://apps.apple.com/app/id1")
        #expect(
            RedirectPlan.targets(link, Self.tap(HTTPTest.safari + " Instagram 300.0")).fallback == "https://acme.example/web")
        var universal = link
        universal.iosUniversalLink = "https://app.acme.example/p/1"
        #expect(RedirectPlan.targets(universal, Self.tap(HTTPTest.safari)) == (nil, "https://app.acme.example/p/1"))
    }

    @Test("a crawler gets the preview (escaped), its click is kept as a bot and never matches", arguments: TestEngine.available)
    func preview(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var link = try await world.link("Xk9_2bQz")
            link.id = UUID().uuidString.lowercased()
            link.shortCode = "preview"
            link.ogTitle = "Spring <sale> & more"
            link.ogImageURL = "https://acme.example/i.png"
            try await world.store.insertLink(link)
            try await world.app().test(.live) { client in
                try await Self.get(
                    client, "/preview", userAgent: "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
                ) {
                    response in
                    #expect(response.status == .ok)
                    let page = String(buffer: response.body)
                    #expect(page.contains(#"<meta property="og:title" content="Spring &lt;sale&gt; &amp; more">"#))
                    #expect(page.contains(#"og:image" content="https://acme.example/i.png""#) && !page.contains("<sale>"))
                }
            }
            let clicks = try await world.store.clicks(link: link.id)
            #expect(clicks.count == 1 && clicks.first?.isBot == true)
            let candidates = try await world.store.matchCandidates(
                project: world.project.id, networkPrefix: "203.0.113", since: .distantPast, limit: 10)
            #expect(candidates.isEmpty)
        }
    }

    @Test(
        "targeting: a device, language or country the link is not for gets 404 Link not found; unknown, inactive, reserved too",
        arguments: TestEngine.available)
    func targeting(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var link = try await world.link("Xk9_2bQz")
            link.id = UUID().uuidString.lowercased()
            link.shortCode = "targeted"
            link.targetingRules = ["devices": ["ios"], "languages": ["de"], "countries": ["DE", "AT"]]
            try await world.store.insertLink(link)
            try await world.app().test(.live) { client in
                let german: HTTPFields = [.acceptLanguage: "de-DE,de;q=0.9"]
                let english: HTTPFields = [.acceptLanguage: "en-US"]
                var american = german
                american[.init("CF-IPCountry")!] = "US"
                try await Self.get(client, "/targeted?lf_fp=0", userAgent: HTTPTest.safari, headers: german) { #expect($0.status == .ok) }
                for (agent, headers) in [
                    ("Mozilla/5.0 (Windows NT 10.0) Chrome/124.0", german), (HTTPTest.safari, english), (HTTPTest.safari, american),
                ] as [(String, HTTPFields)] {
                    try await Self.get(client, "/targeted?lf_fp=0", userAgent: agent, headers: headers) { response throws in
                        #expect(response.status == .notFound)
                        #expect(try HTTPTest.object(response.body) == ["error": "Link not found"])
                    }
                }
                for path in ["/nope", "/wrong/Xk9_2bQz", "/api", "/api/nothing/here"] {
                    try await Self.get(client, path, userAgent: HTTPTest.safari) { #expect($0.status == .notFound, "\(path)") }
                }
            }
        }
    }

    @Test("the association files name every registered app; the admin API refuses malformed ones", arguments: TestEngine.available)
    func associationFiles(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                try await LinkCreationTests.post(
                    client, "/api/apps", key: world.adminKey, ["platform": "ios", "appId": "ABCDE12345.com.acme.shop"]
                ) {
                    response, _ in #expect(response.status == .created)
                }
                let fingerprint = (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":")
                try await LinkCreationTests.post(
                    client, "/api/apps", key: world.adminKey,
                    ["platform": "android", "packageName": "com.acme.shop", "sha256CertFingerprints": [.string(fingerprint)]]
                ) { response, _ in #expect(response.status == .created) }
                for body: [String: JSONValue] in [
                    ["platform": "ios", "appId": "com.acme.shop"], ["platform": "android", "packageName": "shop"],
                    ["platform": "android", "packageName": "com.acme.x", "sha256CertFingerprints": ["AB:CD"]], ["platform": "windows"],
                    ["platform": "ios", "appId": "ABCDE12345.com.acme.shop", "paths": ["no-slash"]],
                ] {
                    try await LinkCreationTests.post(client, "/api/apps", key: world.adminKey, body) { response, answer in
                        #expect(response.status == .badRequest && answer["field"] != nil, "\(body)")
                    }
                }
                try await LinkCreationTests.post(
                    client, "/api/apps", key: world.adminKey, ["platform": "ios", "appId": "ABCDE12345.com.acme.shop"]
                ) {
                    response, _ in #expect(response.status == .conflict)
                }
                try await client.execute(uri: "/.well-known/apple-app-site-association", method: .get) { response in
                    #expect(response.status == .ok && response.headers[.contentType]?.hasPrefix("application/json") == true)
                    let file = try HTTPTest.object(response.body)
                    #expect(
                        file == [
                            "applinks": [
                                "apps": [],
                                "details": [
                                    [
                                        "appIDs": ["ABCDE12345.com.acme.shop"], "appID": "ABCDE12345.com.acme.shop",
                                        "components": [["/": "/*"]],
                                        "paths": ["/*"],
                                    ]
                                ],
                            ]
                        ])
                }
                // An App Clip: listed in `appclips`, so links here can invoke it.
                try await LinkCreationTests.post(
                    client, "/api/apps", key: world.adminKey, ["platform": "appclip", "appId": "ABCDE12345.com.acme.shop.Clip"]
                ) {
                    response, _ in #expect(response.status == .created)
                }
                try await LinkCreationTests.post(
                    client, "/api/apps", key: world.adminKey, ["platform": "appclip", "appId": "com.acme.shop.Clip"]
                ) {
                    response, answer in #expect(response.status == .badRequest && answer["field"] == "appId")
                }
                try await client.execute(uri: "/.well-known/apple-app-site-association", method: .get) { response in
                    let file = try HTTPTest.object(response.body)
                    #expect(file["appclips"] == ["apps": ["ABCDE12345.com.acme.shop.Clip"]])
                    guard case .object(let links)? = file["applinks"], case .array(let details)? = links["details"] else { return }
                    #expect(details.count == 1, "the Clip is no applinks entry")
                }
                try await client.execute(uri: "/.well-known/assetlinks.json", method: .get) { response in
                    let statements = try JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: response.body).utf8))
                    #expect(
                        statements == [
                            [
                                "relation": ["delegate_permission/common.handle_all_urls"],
                                "target": [
                                    "namespace": "android_app", "package_name": "com.acme.shop",
                                    "sha256_cert_fingerprints": [.string(fingerprint)],
                                ],
                            ]
                        ])
                }
            }
        }
    }
}

/// The redirect's four pages, rendered from their templates (`Links/Pages/*.mustache`) with
/// every optional part given, and with text that would break out of HTML or a script.
@Suite("The redirect's pages")
struct RedirectPageTests {
    static let hostile = "<b>\"Sale\" & 'more'</b>"
    static let escaped = "&lt;b&gt;&quot;Sale&quot; &amp; &#39;more&#39;&lt;/b&gt;"

    static let link: LinkRecord = {
        var link = LinkRecord(
            projectID: "p", shortCode: "spring", originalURL: "https://acme.example/", iosAppStoreURL: "https://apps.apple.com/app/id1",
            createdAt: Date(timeIntervalSince1970: 0))
        link.ogTitle = hostile
        link.ogDescription = hostile
        link.ogImageURL = "https://acme.example/og.png?a=1&b=2"
        return link
    }()

    @Test("the preview: title, description and image once each, every value escaped; without them, none of their tags")
    func preview() throws {
        let page = try Redirect.previewPage(Self.link, url: "/spring?x=<y>")
        #expect(page.components(separatedBy: "<meta property=\"og:description\" content=\"\(Self.escaped)\">").count == 2)
        #expect(page.contains("<meta property=\"og:image\" content=\"https://acme.example/og.png?a=1&amp;b=2\">"))
        #expect(page.contains("<meta name=\"twitter:card\" content=\"summary_large_image\">"))
        #expect(page.contains("<meta property=\"og:url\" content=\"/spring?x=&lt;y&gt;\">"))
        #expect(page.contains("<h1>\(Self.escaped)</h1><p>\(Self.escaped)</p></body></html>"))
        #expect(!page.contains(Self.hostile) && !page.hasSuffix("\n"))
        let bare = try Redirect.previewPage(
            LinkRecord(projectID: "p", shortCode: "plain", originalURL: "https://acme.example/", createdAt: Date()), url: "/plain")
        #expect(!bare.contains("og:description") && !bare.contains("og:image") && !bare.contains("twitter:card"))
        #expect(bare.contains("<title>plain</title>") && bare.contains("<h1>plain</h1></body>"))
    }

    @Test("the interstitial: the scheme as a link and as a script literal that cannot end the script; the fallback only when there is one")
    func interstitial() throws {
        let page = try Redirect.interstitial(
            Self.link, scheme: "acme://p?q=</script>", fallback: "https://acme.example/w?a=1&b=2", nonce: "N1")
        #expect(page.contains("<a href=\"acme://p?q=&lt;/script&gt;\">Open in the app</a>"))
        #expect(page.contains("<script nonce=\"N1\">window.location.href = \"acme:\\/\\/p?q=\\u003c\\/script>\";"))
        #expect(page.contains("<p><a href=\"https://acme.example/w?a=1&amp;b=2\">Continue</a></p>"))
        #expect(page.contains("setTimeout(function () { window.location.replace(\"https:\\/\\/acme.example\\/w?a=1&b=2\"); }, 1500);"))
        #expect(page.contains("<title>\(Self.escaped)</title>"))
        let alone = try Redirect.interstitial(Self.link, scheme: "acme://p", fallback: nil, nonce: "N2")
        #expect(!alone.contains("Continue") && !alone.contains("setTimeout"))
    }

    @Test(
        "the landing page: icon, description and the app's name where given, the copied link in the button, the nonce on style and script")
    func landing() throws {
        let settings = LandingPageSettings(enabled: true, appName: "Acme & Co", appIconURL: "https://acme.example/i.png")
        let page = try Redirect.landingPage(
            Self.link, settings: settings, store: "https://apps.apple.com/app/id1", copied: "https://go.acme.example/spring?lr_click=T&x=1",
            nonce: "N3")
        #expect(
            page.contains(
                "<img src=\"https://acme.example/i.png\" alt=\"\" width=\"96\" height=\"96\"><h1>\(Self.escaped)</h1><p>\(Self.escaped)</p>"
            ))
        #expect(page.contains("data-link=\"https://go.acme.example/spring?lr_click=T&amp;x=1\">Get Acme &amp; Co</a>"))
        #expect(page.contains("so that Acme &amp; Co opens it once installed."))
        #expect(page.contains("<style nonce=\"N3\">") && page.contains("<script nonce=\"N3\">"))
        let plain = try Redirect.landingPage(
            LinkRecord(projectID: "p", shortCode: "s", originalURL: "https://acme.example/", createdAt: Date()),
            settings: LandingPageSettings(enabled: true), store: "https://apps.apple.com/app/id1", copied: "https://go/s", nonce: "N4")
        #expect(!plain.contains("<img") && plain.contains("<h1>Get the app</h1>\n") && plain.contains(">Get the app</a>"))
    }

    @Test("the collecting page: the way back without script keeps the query and says lf_fp=0")
    func collecting() throws {
        let page = try Redirect.collectingPage(path: "/spring", query: "a=1&b=<2>", nonce: "N5")
        #expect(page.contains("<meta http-equiv=\"refresh\" content=\"0;url=/spring?a=1&amp;b=&lt;2&gt;&amp;lf_fp=0\">"))
        #expect(page.contains("<script nonce=\"N5\">"))
        #expect(try Redirect.collectingPage(path: "/s", query: nil, nonce: "N").contains("url=/s?lf_fp=0\""))
    }
}
