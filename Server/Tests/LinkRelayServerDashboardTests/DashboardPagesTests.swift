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

/// The dashboard's pages past the links: keys, events, apps, installs and the CSV exports.
extension DashboardTests {
    @Test(
        "keys: one made with a scope is shown once and works; listed by prefix only; revoked, it is refused at once",
        arguments: TestEngine.available)
    func keys(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let page = try await browser.get(client, "/dashboard/keys")
                let made = try await browser.post(
                    client, "/dashboard/keys", [("csrf", Self.csrf(page) ?? ""), ("name", "CI <b>"), ("scope", "admin")])
                let html = String(buffer: made.body)
                #expect(made.status == .ok && html.contains("It is shown once"))
                guard let start = html.range(of: "<code id=\"new-secret\">") else {
                    Issue.record("no secret shown")
                    return
                }
                let secret = String(html[start.upperBound...].prefix { $0 != "<" })
                #expect(secret.hasPrefix("lr_admin_") && html.contains("CI &lt;b&gt;"))
                #expect(try await HTTPTest.request(client, "/api/links", key: secret).status == .ok, "the new key works")
                let listed = String(buffer: try await browser.get(client, "/dashboard/keys").body)
                #expect(!listed.contains(secret) && listed.contains(String(secret.prefix(17))), "listed by its prefix, never whole")

                let stored = try #require(try await world.store.keys(project: world.project.id).first { $0.name == "CI <b>" })
                let refused = try await browser.post(client, "/dashboard/keys/\(stored.id)/revoke", [("csrf", "wrong")])
                #expect(refused.status == .forbidden)
                let revoked = try await browser.post(client, "/dashboard/keys/\(stored.id)/revoke", [("csrf", Self.csrf(page) ?? "")])
                #expect(revoked.status == .seeOther && revoked.headers[.location] == "/dashboard/keys")
                #expect(try await HTTPTest.request(client, "/api/links", key: secret).status == .unauthorized)
                let bad = try await browser.post(
                    client, "/dashboard/keys", [("csrf", Self.csrf(page) ?? ""), ("name", "x"), ("scope", "root")])
                #expect(bad.status == .badRequest && String(buffer: bad.body).contains("The scope must be sdk or admin."))
                // Issue 63, 12: "one character" of 18,001 bytes was a key's name.
                let marks = "E" + String(repeating: "\u{301}", count: 3_000)
                let long = try await browser.post(
                    client, "/dashboard/keys", [("csrf", Self.csrf(page) ?? ""), ("name", marks), ("scope", "sdk")])
                #expect(long.status == .badRequest && String(buffer: long.body).contains("at most 100 characters"))
                #expect(try await world.store.keys(project: world.project.id).allSatisfy { $0.name.utf8.count <= 400 })
            }
        }
    }

    @Test(
        "issue 63, 7: where SDK-key links may go, on the keys page; any host is warned about there and on the overview",
        arguments: TestEngine.available)
    func destinations(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let page = try await browser.get(client, "/dashboard/keys")
                let html = String(buffer: page.body)
                #expect(
                    html.contains("value=\"learned\" checked") && html.contains("acme.example\n*.acme.example")
                        && !html.contains("id=\"any-host\""))
                #expect(!String(buffer: try await browser.get(client, "/dashboard").body).contains("id=\"any-host\""))
                let csrf = Self.csrf(page) ?? ""
                let any = try await browser.post(client, "/dashboard/destination-hosts", [("csrf", csrf), ("mode", "any"), ("hosts", "")])
                #expect(any.status == .seeOther)
                #expect(String(buffer: try await browser.get(client, "/dashboard").body).contains("id=\"any-host\""))
                #expect(String(buffer: try await browser.get(client, "/dashboard/keys").body).contains("value=\"any\" checked"))
                let listed = try await browser.post(
                    client, "/dashboard/destination-hosts",
                    [("csrf", csrf), ("mode", "listed"), ("hosts", "Shop.example\r\n*.acme.example, x.example")])
                #expect(listed.status == .seeOther)
                #expect(
                    try await world.store.destinationHosts(project: world.project.id)
                        == DestinationHosts(mode: .listed, hosts: ["shop.example", "*.acme.example", "x.example"]))
                let bad = try await browser.post(
                    client, "/dashboard/destination-hosts", [("csrf", csrf), ("mode", "listed"), ("hosts", "https://evil.example/")])
                #expect(bad.status == .badRequest && String(buffer: bad.body).contains("host names such as acme.example"))
                let forged = try await browser.post(client, "/dashboard/destination-hosts", [("csrf", "wrong"), ("mode", "any")])
                #expect(forged.status == .forbidden)
                #expect(try await world.store.destinationHosts(project: world.project.id).mode == .listed)
            }
        }
    }

    @Test("events: counts and revenue by name and by day, summed exactly per currency", arguments: TestEngine.available)
    func events(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let install = InstallRecord(
                projectID: world.project.id, linkID: nil, clickID: nil, confidence: 0, matchedFactors: [], method: .none,
                installedAt: world.clock.date, device: DeviceSignals(), platform: .ios, platformVersion: "17.4", deviceID: nil,
                fingerprintHash: "h",
                attributionWindowHours: nil, deepLinkData: [:])
            try await world.store.recordInstall(install)
            let purchases: [[String: JSONValue]] = [
                ["revenue": 29.99, "currency": "USD"], ["revenue": 29.99, "currency": "USD"], ["revenue": 5, "currency": "EUR"],
                ["revenue": "lots", "currency": "USD"], [:],
            ]
            for (index, properties) in purchases.enumerated() {
                _ = try await world.store.recordEvent(
                    EventRecord(
                        projectID: world.project.id, installID: install.id, name: properties.isEmpty ? "signup" : "revenue",
                        properties: properties,
                        occurredAt: world.clock.date.addingTimeInterval(-Double(index)), receivedAt: world.clock.date,
                        dedupeKey: "e\(index)"))
            }
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let html = String(buffer: try await browser.get(client, "/dashboard/events").body)
                #expect(html.contains("<tr><td>revenue</td><td>4</td><td>5.00 EUR, 59.98 USD</td></tr>"), "\(html)")
                #expect(html.contains("<tr><td>signup</td><td>1</td><td></td></tr>"))
            }
        }
    }

    @Test("apps: the association files as served, with the doctor's verdict on a link of the project", arguments: TestEngine.available)
    func apps(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            try await world.link("spring")
            for app in [
                AppRecord(
                    projectID: world.project.id, platform: .ios, identifier: "ABCDE12345.com.acme.shop", paths: ["/*"],
                    createdAt: world.clock.date),
                AppRecord(
                    projectID: world.project.id, platform: .ios, identifier: "com.acme.noteam", paths: ["/help/*"],
                    createdAt: world.clock.date),
                AppRecord(
                    projectID: world.project.id, platform: .appClip, identifier: "ABCDE12345.com.acme.shop.Clip",
                    createdAt: world.clock.date),
                AppRecord(
                    projectID: world.project.id, platform: .android, identifier: "com.acme.shop", certificateFingerprints: ["AA:BB"],
                    createdAt: world.clock.date),
            ] {
                try await world.store.insertApp(app)
            }
            var configuration = world.configuration()
            configuration.publicBaseURL = URL(string: "https://go.acme.app")
            try await world.app(configuration).test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let html = String(buffer: try await browser.get(client, "/dashboard/apps").body)
                #expect(html.contains("A link such as https://go.acme.app/spring"))
                #expect(html.contains("<td class=\"verdict\">opens the app (by {&quot;/&quot;: &quot;/*&quot;})</td>"), "\(html)")
                #expect(html.contains("<td class=\"verdict\">stays in Safari: no path matches</td>"))
                #expect(html.contains("no: an app ID is TEAMID.bundle.id"))
                #expect(html.contains("<code>ABCDE12345.com.acme.shop.Clip</code>") && html.contains("<code>com.acme.shop</code>"))
                #expect(html.contains("&quot;applinks&quot;"), "the file, escaped")
            }
        }
    }

    @Test(
        "CSV exports stream page after page: 2,500 clicks of a link in order, the links and the installs; fields quoted and formulas defused",
        arguments: TestEngine.available)
    func csvExports(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var link = try await world.link("spring")
            link.title = "=HYPERLINK(\"x\"), \"quoted\""
            _ = try await world.store.updateLink(link)
            let start = world.clock.date.addingTimeInterval(-10_000)
            var clicks: [ClickRecord] = []
            for index in 0..<2500 {
                clicks.append(
                    ClickRecord(
                        linkID: link.id, projectID: world.project.id, clickedAt: start.addingTimeInterval(Double(index)),
                        device: DeviceSignals(
                            ip: "203.0.113.7", networkPrefix: "203.0.113",
                            userAgent: index == 0 ? "Agent, \"with\" quotes\nand a line" : "UA"),
                        platform: .ios, isBot: false,
                        source: ClickSource(referrerHost: "news.example.com", country: "DE", utmSource: "mail")))
            }
            try await world.store.importClicks(clicks)
            let (linkID, clickTimes) = (link.id, clicks.map(\.clickedAt))
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let export = try await browser.get(client, "/dashboard/links/\(linkID)/clicks.csv")
                #expect(export.status == .ok && export.headers[.contentType] == "text/csv; charset=utf-8")
                #expect(export.headers[.contentDisposition] == "attachment; filename=\"spring-clicks.csv\"")
                let text = String(buffer: export.body)
                let lines = text.components(separatedBy: "\r\n")
                #expect(lines.first == "clicked_at,platform,country,referrer,utm_source,bot,network,user_agent")
                #expect(lines.count == 2502, "a header, 2,500 rows and the final line break: \(lines.count)")
                #expect(lines[1].hasSuffix(",ios,DE,news.example.com,mail,no,203.0.113,\"Agent, \"\"with\"\" quotes\nand a line\""))
                #expect(lines[2500].hasPrefix(ServerHTTP.timestamp(clickTimes[2499])), "in time order to the last")

                let links = String(buffer: try await browser.get(client, "/dashboard/links.csv").body)
                #expect(links.contains(",\"'=HYPERLINK(\"\"x\"\"), \"\"quoted\"\"\",active,2500,"), "\(links)")
                let installs = try await browser.get(client, "/dashboard/installs.csv")
                #expect(
                    String(buffer: installs.body)
                        == "installed_at,id,link_id,method,confidence,matched_factors,platform,platform_version\r\n")
            }
        }
        #expect(CSV.field("plain") == "plain" && CSV.field("-1") == "'-1" && CSV.field("@x") == "'@x" && CSV.field("a,b") == "\"a,b\"")
        // Issue 63, 9: where Excel's separator is `;` (German, French), or a program splits anyway.
        #expect(CSV.field("x;=cmd|' /C calc'!A0") == "\"x;'=cmd|' /C calc'!A0\"")
        #expect(CSV.field("a\tb") == "\"a\tb\"" && CSV.field("a|+1") == "\"a|'+1\"" && CSV.field("a;b") == "\"a;b\"")
        #expect(
            CSV.field("1,-2") == "\"1,'-2\"" && CSV.field("line\n=x") == "\"line\n'=x\"" && CSV.field("say \"hi\"") == "\"say \"\"hi\"\"\"")
    }

    @Test("installs: attributed and organic by method over 30 days, the newest with why they matched", arguments: TestEngine.available)
    func installsPage(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            for (method, factors) in [(AttributionMethod.fingerprint, ["address", "user_agent"]), (.none, [])] {
                try await world.store.recordInstall(
                    InstallRecord(
                        projectID: world.project.id, linkID: method == .none ? nil : link.id, clickID: nil,
                        confidence: method == .none ? 0 : 85,
                        matchedFactors: factors, method: method, installedAt: world.clock.date, device: DeviceSignals(), platform: .ios,
                        platformVersion: "17.4", deviceID: nil, fingerprintHash: "h", attributionWindowHours: nil, deepLinkData: [:]))
            }
            try await world.app().test(.live) { client in
                let browser = Browser()
                _ = try await Self.signIn(browser, client, key: world.adminKey)
                let html = String(buffer: try await browser.get(client, "/dashboard/installs").body)
                #expect(html.contains("<span id=\"attributed\">1</span> attributed, <span id=\"organic\">1</span> organic"))
                #expect(html.contains("<tr><td>fingerprint</td><td>1</td></tr>") && html.contains("<tr><td>organic</td><td>1</td></tr>"))
                #expect(html.contains(">spring</a>") && html.contains("the same address and the same device and OS version"))
            }
        }
    }
}
