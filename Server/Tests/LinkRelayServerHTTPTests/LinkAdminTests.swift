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

/// The admin API LinkForty Core has for links and analytics: list (pages, search, filters),
/// read, delete, duplicate, the overview and one link's numbers, on both engines, over the
/// key's own project only.
@Suite("Managing links through the admin API")
struct LinkAdminTests {
    static let desktop = LinkEditTests.desktop
    static let slackbot = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"

    static func array(_ response: TestResponse) throws -> [[String: JSONValue]] {
        try JSONDecoder().decode([[String: JSONValue]].self, from: Data(String(buffer: response.body).utf8))
    }

    /// The `cursor` of a `Link: <…>; rel="next"` header, and the header's address.
    static func next(_ response: TestResponse) -> String? {
        guard let header = response.headers[LinkAdmin.linkHeader], header.hasSuffix("; rel=\"next\""), header.hasPrefix("<") else {
            return nil
        }
        return String(header.dropFirst().prefix { $0 != ">" })
    }

    /// A click on `link`, stored as the redirect stores one.
    static func click(
        _ world: ServerWorld, _ link: LinkRecord, at date: Date, ip: String = "203.0.113.7", platform: DevicePlatform = .web,
        source: ClickSource = ClickSource(), bot: Bool = false
    ) async throws {
        try await world.store.recordClick(
            ClickRecord(
                linkID: link.id, projectID: link.projectID, clickedAt: date, device: DeviceSignals(ip: ip, networkPrefix: "203.0.113"),
                platform: platform, isBot: bot, source: source))
    }

    @Test(
        "GET /api/links: newest first in pages with a Link header, searched and filtered, each with its clicks (bots not counted)",
        arguments: TestEngine.available)
    func listing(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var made: [LinkRecord] = []
            for code in ["spring", "summer", "autumn", "winter", "sale_50%"] {
                made.append(try await world.link(code))
                world.clock.advance(hours: 1)
            }
            var off = made[2]
            off.isActive = false
            off.title = "Autumn Leaves"
            _ = try await world.store.updateLink(off)
            try await Self.click(world, made[0], at: world.clock.date)
            try await Self.click(world, made[0], at: world.clock.date, ip: "198.51.100.4")
            try await Self.click(world, made[0], at: world.clock.date, bot: true)
            // Another project's link is never listed.
            try await world.store.insertLink(
                LinkRecord(
                    projectID: world.otherProject.id, shortCode: "theirs", originalURL: "https://other.example", createdAt: world.clock.date
                ))

            try await world.app().test(.live) { client in
                let all = try await HTTPTest.request(client, "/api/links", key: world.adminKey)
                #expect(all.status == .ok && all.headers[.contentType] == "application/json; charset=utf-8")
                let rows = try Self.array(all)
                #expect(rows.map { $0["short_code"] } == ["sale_50%", "winter", "autumn", "summer", "spring"].map(JSONValue.string))
                #expect(rows.last?["clickCount"] == 2 && rows.first?["clickCount"] == 0)
                #expect(rows.first?["utmParameters"] == .object(["source": "mail"]), "Core's camelCase copies")
                #expect(Self.next(all) == nil)

                // Pages of two, followed to the end.
                var codes: [JSONValue?] = []
                var uri: String? = "/api/links?limit=2&active=true"
                var pages = 0
                while let page = uri {
                    let response = try await HTTPTest.request(client, page, key: world.adminKey)
                    #expect(response.status == .ok)
                    codes += try Self.array(response).map { $0["short_code"] }
                    uri = Self.next(response)
                    pages += 1
                }
                #expect(pages == 2 && codes == ["sale_50%", "winter", "summer", "spring"].map(JSONValue.string))

                for (query, expected) in [
                    ("search=SUM", ["summer"]), ("search=leaves", ["autumn"]), ("search=50%25", ["sale_50%"]), ("search=_", ["sale_50%"]),
                    ("active=false", ["autumn"]), ("template=none", []), ("search=acme.example&limit=1", ["sale_50%"]),
                ] {
                    let response = try await HTTPTest.request(client, "/api/links?\(query)", key: world.adminKey)
                    #expect(try Self.array(response).map { $0["short_code"] } == expected.map(JSONValue.string), "\(query)")
                }

                for (query, field) in [
                    ("limit=0", "limit"), ("limit=501", "limit"), ("limit=ten", "limit"), ("active=yes", "active"),
                    ("cursor=%21%21", "cursor"),
                ] {
                    let response = try await HTTPTest.request(client, "/api/links?\(query)", key: world.adminKey)
                    #expect(response.status == .badRequest, "\(query)")
                    #expect(try HTTPTest.object(response.body)["field"] == .string(field), "\(query)")
                }
                #expect(try await HTTPTest.request(client, "/api/links", key: world.sdkKey).status == .forbidden)
                #expect(try await HTTPTest.request(client, "/api/links", key: nil).status == .unauthorized)
            }
        }
    }

    @Test(
        "GET and DELETE /api/links/:id, and POST …/duplicate: another project's link is not found; a deleted link's code answers 404",
        arguments: TestEngine.available)
    func readDeleteDuplicate(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            var spring = try await world.link("spring")
            spring.title = "Spring sale"
            _ = try await world.store.updateLink(spring)
            let link = spring
            try await Self.click(world, link, at: world.clock.date)
            let theirs = LinkRecord(
                projectID: world.otherProject.id, shortCode: "theirs", originalURL: "https://other.example", createdAt: world.clock.date)
            try await world.store.insertLink(theirs)

            try await world.app().test(.live) { client in
                let read = try await HTTPTest.request(client, "/api/links/\(link.id)", key: world.adminKey)
                let row = try HTTPTest.object(read.body)
                #expect(read.status == .ok && row["short_code"] == "spring" && row["title"] == "Spring sale" && row["clickCount"] == 1)
                for method in [HTTPRequest.Method.get, .delete] {
                    let foreign = try await HTTPTest.request(client, "/api/links/\(theirs.id)", key: world.adminKey, method: method)
                    #expect(try foreign.status == .notFound && HTTPTest.object(foreign.body)["error"] == "Link not found")
                }
                #expect(
                    try await HTTPTest.request(client, "/api/links/\(theirs.id)/duplicate", key: world.adminKey, method: .post).status
                        == .notFound)

                world.clock.advance(hours: 1)
                let copied = try await HTTPTest.request(client, "/api/links/\(link.id)/duplicate", key: world.adminKey, method: .post)
                let copy = try HTTPTest.object(copied.body)
                #expect(copied.status == .created && copy["title"] == "Spring sale (Copy)" && copy["clickCount"] == 0)
                #expect(copy["id"] != row["id"] && copy["short_code"] != "spring" && copy["original_url"] == row["original_url"])
                #expect(copy["deep_link_parameters"] == row["deep_link_parameters"] && copy["utm_parameters"] == row["utm_parameters"])
                guard case .string(let copyCode) = copy["short_code"] else { throw APIError.linkNotFound }
                #expect(try await LinkEditTests.tap(client, copyCode) == (.found, "https://acme.example/p/42"))

                let deleted = try await HTTPTest.request(client, "/api/links/\(link.id)", key: world.adminKey, method: .delete)
                #expect(try deleted.status == .ok && HTTPTest.object(deleted.body) == ["success": true])
                #expect(try await HTTPTest.request(client, "/api/links/\(link.id)", key: world.adminKey).status == .notFound)
                #expect(
                    try await HTTPTest.request(client, "/api/links/\(link.id)", key: world.adminKey, method: .delete).status == .notFound)
                #expect(try await LinkEditTests.tap(client, "spring").0 == .notFound)
            }
            #expect(try await world.store.clicks(link: link.id).isEmpty)
            #expect(try await world.store.link(id: theirs.id) != nil)
        }
    }

    @Test(
        "analytics: Core's overview and per-link shapes, by day, platform, country (the proxy's header), referring host and utm_source; bots and older clicks left out",
        arguments: TestEngine.available)
    func analytics(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let spring = try await world.link("spring")
            let summer = try await world.link("summer")
            // 40 days ago: outside the default 30 days.
            try await Self.click(world, spring, at: world.clock.date.addingTimeInterval(-40 * 86_400), source: ClickSource(country: "FR"))
            try await Self.click(world, spring, at: world.clock.date.addingTimeInterval(-86_400), ip: "198.51.100.9", platform: .ios)
            try await Self.click(world, summer, at: world.clock.date)
            // An install attributed to spring, an organic one.
            for (link, method) in [(spring.id, AttributionMethod.fingerprint), (nil, .none)] as [(String?, AttributionMethod)] {
                try await world.store.recordInstall(
                    InstallRecord(
                        projectID: world.project.id, linkID: link, clickID: nil, confidence: link == nil ? 0 : 80, matchedFactors: [],
                        method: method, installedAt: world.clock.date, device: DeviceSignals(), platform: .ios, platformVersion: "17.4",
                        deviceID: nil, fingerprintHash: "h", attributionWindowHours: nil, deepLinkData: [:]))
            }
            var configuration = world.configuration()
            configuration.countryHeader = .init("CF-IPCountry")!
            try await world.app(configuration).test(.live) { client in
                // Taps through the redirect: the page they came from, the campaign, the country.
                let extra: HTTPFields = [.referer: "https://news.example.com/story?id=7&token=secret", .init("CF-IPCountry")!: "de"]
                try await RedirectTests.get(client, "/spring?utm_source=newsletter", userAgent: Self.desktop, headers: extra) {
                    #expect($0.status == .found)
                }
                try await RedirectTests.get(client, "/spring", userAgent: Self.desktop, ip: "203.0.113.99") { #expect($0.status == .found) }
                try await RedirectTests.get(client, "/spring", userAgent: Self.slackbot) { _ in }

                let one = try HTTPTest.object(
                    try await HTTPTest.request(client, "/api/analytics/links/\(spring.id)", key: world.adminKey).body)
                #expect(one["linkId"] == .string(spring.id) && one["days"] == 30)
                #expect(one["totalClicks"] == 3 && one["uniqueClicks"] == 3)
                let today = Timestamp.date(ofDay: Int(world.clock.date.timeIntervalSince1970 / 86_400))
                let yesterday = Timestamp.date(ofDay: Int(world.clock.date.timeIntervalSince1970 / 86_400) - 1)
                #expect(one["clicksByDate"] == [["date": .string(yesterday), "clicks": 1], ["date": .string(today), "clicks": 2]])
                #expect(one["clicksByPlatform"] == [["platform": "web", "clicks": 2], ["platform": "ios", "clicks": 1]])
                #expect(
                    one["clicksByCountry"] == [
                        ["countryCode": "Unknown", "country": "Unknown", "clicks": 2], ["countryCode": "DE", "country": "DE", "clicks": 1],
                    ])
                #expect(one["clicksByReferrer"] == [["referrer": .null, "clicks": 2], ["referrer": "news.example.com", "clicks": 1]])
                // The link's own utm_source unless the tap names another; none for the click stored without.
                #expect(
                    one["clicksByUtmSource"] == [
                        ["utmSource": .null, "clicks": 1], ["utmSource": "mail", "clicks": 1], ["utmSource": "newsletter", "clicks": 1],
                    ])
                #expect(
                    one["installs"] == ["total": 1, "attributed": 1, "organic": 0, "byMethod": [["method": "fingerprint", "installs": 1]]])

                let longer = try HTTPTest.object(
                    try await HTTPTest.request(client, "/api/analytics/links/\(spring.id)?days=60", key: world.adminKey).body)
                #expect(longer["totalClicks"] == 4)

                let overview = try HTTPTest.object(try await HTTPTest.request(client, "/api/analytics/overview", key: world.adminKey).body)
                #expect(overview["totalClicks"] == 4)
                guard case .array(let top) = overview["topLinks"], top.count == 2, case .object(let first) = top[0] else {
                    Issue.record("topLinks: \(String(describing: overview["topLinks"]))")
                    return
                }
                #expect(first["shortCode"] == "spring" && first["totalClicks"] == 3 && first["uniqueClicks"] == 3)
                #expect(
                    overview["installs"] == [
                        "total": 2, "attributed": 1, "organic": 1,
                        "byMethod": [["method": "fingerprint", "installs": 1], ["method": "none", "installs": 1]],
                    ])

                for uri in [
                    "/api/analytics/overview?days=0", "/api/analytics/overview?days=366", "/api/analytics/links/\(spring.id)?days=x",
                ] {
                    let response = try await HTTPTest.request(client, uri, key: world.adminKey)
                    #expect(try response.status == .badRequest && HTTPTest.object(response.body)["field"] == "days", "\(uri)")
                }
                #expect(try await HTTPTest.request(client, "/api/analytics/links/nope", key: world.adminKey).status == .notFound)
                #expect(try await HTTPTest.request(client, "/api/analytics/overview", key: world.sdkKey).status == .forbidden)
            }
            // The referring page's path and query are never stored.
            let stored = try await world.store.clicks(link: spring.id)
            #expect(stored.contains { $0.source.referrerHost == "news.example.com" })
        }
    }

    @Test(
        "GET /api/links/:id/qr: the share URL as an SVG QR code a decoder reads back; size, level and format checked",
        arguments: TestEngine.available)
    func qrCode(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("spring")
            var configuration = world.configuration()
            configuration.publicBaseURL = URL(string: "https://go.acme.app")
            try await world.app(configuration).test(.live) { client in
                let response = try await HTTPTest.request(client, "/api/links/\(link.id)/qr?size=512&level=h", key: world.adminKey)
                #expect(response.status == .ok && response.headers[.contentType] == "image/svg+xml")
                #expect(response.headers[.contentDisposition] == "inline; filename=\"spring.svg\"")
                let svg = String(buffer: response.body)
                #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"512\" height=\"512\""))
                if FileManager.default.isExecutableFile(atPath: QRCodeTests.rsvg),
                    FileManager.default.isExecutableFile(atPath: QRCodeTests.zbar)
                {
                    let folder = try Scratch()
                    try svg.write(toFile: folder.path + "/qr.svg", atomically: true, encoding: .utf8)
                    #expect(try QRCodeTests.run(QRCodeTests.rsvg, ["-o", folder.path + "/qr.png", folder.path + "/qr.svg"]).status == 0)
                    #expect(
                        try QRCodeTests.run(QRCodeTests.zbar, ["--raw", "-q", folder.path + "/qr.png"]).output
                            == "https://go.acme.app/spring\n")
                }
                for (query, field) in [("format=png", "format"), ("size=63", "size"), ("size=4097", "size"), ("level=X", "level")] {
                    let refused = try await HTTPTest.request(client, "/api/links/\(link.id)/qr?\(query)", key: world.adminKey)
                    #expect(try refused.status == .badRequest && HTTPTest.object(refused.body)["field"] == .string(field), "\(query)")
                }
                #expect(try await HTTPTest.request(client, "/api/links/nope/qr", key: world.adminKey).status == .notFound)
                #expect(try await HTTPTest.request(client, "/api/links/\(link.id)/qr", key: world.sdkKey).status == .forbidden)
            }
        }
    }

    @Test("a click's source as the request tells it: the referring host only, a two-letter country, a bounded utm_source")
    func sources() {
        #expect(ClickSource.referrerHost("https://News.Example.com/a?b=c") == "news.example.com")
        for bad in [
            nil, "", "android-app://com.google.android.gm/", "javascript:alert(1)", "https://", "https://exa mple.com/", "not a url",
        ] as [String?] {
            #expect(ClickSource.referrerHost(bad) == nil, "\(String(describing: bad))")
        }
        #expect(ClickSource.country("de") == "DE" && ClickSource.country("XX") == nil && ClickSource.country("T1") == nil)
        #expect(ClickSource.country("DEU") == nil && ClickSource.country(nil) == nil)
        #expect(ClickSource.utmSource(" mail ") == "mail" && ClickSource.utmSource("") == nil)
        #expect(ClickSource.utmSource(String(repeating: "a", count: 101)) == nil && ClickSource.utmSource("a\u{7}b") == nil)
    }
}
