import Foundation
@_spi(Backend) import LinkRelay
import LinkRelayTesting
import LinkRelayWire
import Testing

@testable import LinkRelayLimeLink

func url(_ string: String) -> URL {
    guard let url = URL(string: string) else { preconditionFailure("Not a URL: \(string)") }
    return url
}

/// An iPhone 15 on iOS 18.7, as in the reference's examples.
let iPhone15 = DeviceInfo(
    screen: .init(width: 393, height: 852, scale: 3), osName: "iOS", osVersion: "18.7", timeZoneIdentifier: "Asia/Seoul",
    preferredLanguages: ["ko-KR"])

let apiKey = "lk_live_4f9c2a7e"

struct Harness {
    let transport = StubTransport()
    let store = InMemoryStore()
    let backend: LimeLinkBackend
    var context: BackendContext

    init(device: DeviceInfo = iPhone15, linkDomains: Set<String> = ["go.brand.example"], appSchemes: Set<String> = ["myapp"]) throws {
        backend = LimeLinkBackend(try .init(apiKey: apiKey, linkDomains: linkDomains, appSchemes: appSchemes))
        context = BackendContext(
            transport: transport, clock: ManualClock(), device: device, storage: BackendStorage(store: store))
    }
}

/// Percent-decoding by RFC 3986, as LimeLink's server does (no "+" to space).
func queryValue(_ url: URL?, _ name: String) -> String? {
    URLComponents(url: url!, resolvingAgainstBaseURL: false)?.percentEncodedQueryItems?
        .first { $0.name == name }?.value?.removingPercentEncoding
}

@Suite("LimeLink wire protocol: resolve")
struct LimeLinkResolveTests {
    @Test("subdomain link with a query (9.1): HEAD, five headers forwarded, full_request_url preserved, uri as destination")
    func subdomainLink() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .head, "/",
            .status(
                200,
                headers: [
                    "x-request-id": "7d3f0a52-1c9e-4b4e-9f0e-2f6a1c0b9e11", "X-Forwarded-For": "203.0.113.42",
                    "X-User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 18_7 like Mac OS X)", "Server": "limelink-edge",
                ]))
        harness.transport.stub(
            .get, "/api/v1/app/dynamic_link/summer-sale",
            .json(#"{"uri":"abc123app://promo/summer?utm_source=instagram&utm_campaign=s25"}"#))
        let clicked = url("https://abc123.limelink.org/link/summer-sale?utm_source=instagram&utm_campaign=s25&ref=a+b")
        let link = try await harness.backend.resolve(clicked, context: harness.context)
        let requests = harness.transport.requests
        #expect(requests.map(\.method) == [.head, .get])
        #expect(requests[0].url.absoluteString == "https://abc123.limelink.org/")
        let get = requests[1]
        #expect(get.url.host == "limelink.org")
        #expect(get.url.path == "/api/v1/app/dynamic_link/summer-sale")
        #expect(queryValue(get.url, "full_request_url") == clicked.absoluteString)
        #expect(get.headers["X-Request-ID"] == "7d3f0a52-1c9e-4b4e-9f0e-2f6a1c0b9e11")
        #expect(get.headers.fields.contains { $0.name == "X-Request-ID" })
        #expect(get.headers["X-Forwarded-For"] == "203.0.113.42")
        #expect(get.headers["X-User-Agent"] == "Mozilla/5.0 (iPhone; CPU iPhone OS 18_7 like Mac OS X)")
        #expect(get.headers["Server"] == nil)
        #expect(get.headers["Content-Type"] == "application/json")
        #expect(link.url == clicked)
        #expect(link.destination == url("abc123app://promo/summer?utm_source=instagram&utm_campaign=s25"))
        #expect(link.resolution == .server)
        #expect(link.shortCode == "summer-sale")
        #expect(link.pathSegments == ["link", "summer-sale"])
        #expect(link.parameters == ["utm_source": "instagram", "utm_campaign": "s25", "ref": "a+b"])
        #expect(link.utm == UTMParameters(source: "instagram", campaign: "s25"))
        #expect(link.metadata["project"] == "abc123")
    }

    @Test("a failed HEAD does not stop the resolve; it goes out without forwarded headers")
    func headFailure() async throws {
        let harness = try Harness()
        harness.transport.stub(.head, "/", .failure(DeepLinkError(.network, "refused")))
        harness.transport.stub(.get, "/api/v1/app/dynamic_link/x", .json(#"{"uri":"myapp://x"}"#))
        let link = try await harness.backend.resolve(url("https://abc.limelink.org/link/x"), context: harness.context)
        #expect(link.destination == url("myapp://x"))
        #expect(harness.transport.requests[1].headers.fields.map(\.name) == ["Content-Type"])
    }

    @Test("direct API-path URLs (9.2): no HEAD, both path forms give the same request")
    func directPaths() async throws {
        for path in ["/api/v1/app/dynamic_link/prod-789", "/universal-link/app/dynamic_link/prod-789"] {
            let harness = try Harness()
            harness.transport.stub(.get, "/api/v1/app/dynamic_link/prod-789", .json(#"{"uri":"https://shop.example.com/p/789/reviews"}"#))
            let link = try await harness.backend.resolve(url("https://limelink.org\(path)"), context: harness.context)
            #expect(harness.transport.requests.map(\.method) == [.get])
            #expect(harness.transport.requests[0].url.path == "/api/v1/app/dynamic_link/prod-789")
            #expect(link.destination == url("https://shop.example.com/p/789/reviews"))
        }
    }

    @Test(
        "www (9.9): LinkRelay treats www.limelink.org as LimeLink's own domain and resolves the suffix (LimeLink's SDK asks for a link called 'www')"
    )
    func wwwIsDirect() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/api/v1/app/dynamic_link/prod-789", .json(#"{"uri":"myapp://p/789"}"#))
        let link = try await harness.backend.resolve(
            url("https://www.limelink.org/universal-link/app/dynamic_link/prod-789"), context: harness.context)
        #expect(harness.transport.requests.map(\.url.path) == ["/api/v1/app/dynamic_link/prod-789"])
        #expect(link.destination == url("myapp://p/789"))
    }

    @Test("another path on a project host resolves the project label, without HEAD; another path on limelink.org sends nothing")
    func otherPaths() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/api/v1/app/dynamic_link/abc", .json(#"{"uri":"myapp://home"}"#))
        _ = try await harness.backend.resolve(url("https://ABC.LimeLink.org/other/path"), context: harness.context)
        #expect(harness.transport.requests.map(\.url.path) == ["/api/v1/app/dynamic_link/abc"])
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.resolve(url("https://limelink.org/pricing"), context: harness.context)
        }
        #expect(error?.code == .notFound)
        #expect(harness.transport.requests.count == 1)
    }

    @Test("suffixes with spaces, unicode and slashes are encoded as path segments")
    func suffixEncoding() async throws {
        let harness = try Harness()
        harness.transport.stub(.head, "/", .status(200))
        harness.transport.stub(.get, "/api/v1/app/dynamic_link/sommer sale/größe", .json(#"{"uri":"myapp://x"}"#))
        _ = try await harness.backend.resolve(url("https://abc.limelink.org/link/sommer%20sale/gr%C3%B6%C3%9Fe"), context: harness.context)
        let get = try #require(harness.transport.requests.last)
        #expect(get.url.absoluteString.hasPrefix("https://limelink.org/api/v1/app/dynamic_link/sommer%20sale/gr%C3%B6%C3%9Fe?"))
    }

    @Test(
        "unresolvable (9.3): 404 without uri is notFound; a 404 with a uri is resolved; a 200 without uri is notFound; 5xx is a retryable server error"
    )
    func statusAndURI() async throws {
        let cases: [(StubTransport.Reply, DeepLinkError.Code?)] = [
            (.json(#"{"message":"dynamic link not found","statusCode":404}"#, status: 404), .notFound),
            (.json(#"{"uri":"myapp://x"}"#, status: 404), nil),
            (.json(#"{"other":1}"#), .notFound),
            (.json(#"{"uri":null}"#), .notFound),
            (.status(503, body: Data("upstream timeout".utf8)), .server(status: 503)),
            (.json(#"{"message":"bad"}"#, status: 400), .server(status: 400)),
            (.status(200, body: Data("<html>".utf8)), .decoding),
        ]
        for (reply, expected) in cases {
            let harness = try Harness()
            harness.transport.stub(.get, "/api/v1/app/dynamic_link/x", reply)
            do {
                let link = try await harness.backend.resolve(
                    url("https://limelink.org/api/v1/app/dynamic_link/x"), context: harness.context)
                #expect(expected == nil, "resolved, expected \(String(describing: expected))")
                #expect(link.destination == url("myapp://x"))
            } catch let error as DeepLinkError {
                #expect(error.code == expected, "got \(error.code)")
            }
        }
    }

    @Test("legacy host (9.4): the legacy resolver with subdomain, path and platform, decoding deeplinkUrl")
    func legacyHost() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/link", .json(#"{"deeplinkUrl":"brandapp://offer/spring"}"#))
        let link = try await harness.backend.resolve(url("https://go.brand.example/spring/offer"), context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(request.url.absoluteString == "https://deep.limelink.org/link?subdomain=go&path=/spring/offer&platform=ios")
        #expect(link.destination == url("brandapp://offer/spring"))
        #expect(link.metadata["resolvedBy"] == "legacy")
    }

    @Test("the legacy path is fully encoded, so '&' and '=' stay inside it; deeplink_url is accepted too")
    func legacyEncoding() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/link", .json(#"{"deeplink_url":"brandapp://x"}"#))
        _ = try await harness.backend.resolve(url("https://go.brand.example/a%20b/c&d=1"), context: harness.context)
        let request = try #require(harness.transport.requests.first)
        #expect(queryValue(request.url, "path") == "/a b/c&d=1")
        #expect(queryValue(request.url, "d") == nil)
    }

    @Test("custom scheme with original-url (9.8): legacy call with the scheme's host, parameters from the original URL")
    func customSchemeOriginalURL() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/link", .json(#"{"deeplinkUrl":"myapp://coupon/SAVE10"}"#))
        let link = try await harness.backend.resolve(
            url("myapp://open?original-url=https%3A%2F%2Fabc123.limelink.org%2Flink%2Fsummer-sale%3Fcoupon%3DSAVE10"),
            context: harness.context)
        #expect(harness.transport.requests.first?.url.absoluteString == "https://deep.limelink.org/link?subdomain=open&path=&platform=ios")
        #expect(link.parameters == ["coupon": "SAVE10"])
        #expect(link.metadata["original_url"] == "https://abc123.limelink.org/link/summer-sale?coupon=SAVE10")
        #expect(link.destination == url("myapp://coupon/SAVE10"))
    }

    @Test("what the backend claims")
    func claims() throws {
        let backend = try Harness().backend
        for claimed in [
            "https://abc.limelink.org/link/x", "https://limelink.org/api/v1/app/dynamic_link/x", "https://WWW.limelink.org/x",
            "https://go.brand.example/x", "myapp://open?x=1", "myapp:///no-host", "myapp:",
        ] {
            #expect(backend.canHandle(url(claimed)), "\(claimed)")
        }
        for foreign in ["https://limelink.org.evil.example/x", "https://other.example/x", "otherapp://x"] {
            #expect(!backend.canHandle(url(foreign)), "\(foreign)")
        }
        // An app-scheme URL without a host names no LimeLink link: delivered on the device.
        #expect(backend.resolveOnDevice(try LinkParser.parse(url("myapp:///no-host")))?.pathSegments == ["no-host"])
        #expect(backend.resolveOnDevice(try LinkParser.parse(url("myapp://open?x=1"))) == nil)
    }
}

@Suite("LimeLink full_request_url encoding")
struct LimeLinkEncodingTests {
    @Test(
        "the server recovers the original URL byte for byte",
        arguments: [
            "https://abc.limelink.org/link/x?utm_source=google&product_id=789",
            "https://abc.limelink.org/link/x?q=a b+c#frag",
            "https://abc.limelink.org/link/x?a=%C3%BC&b=%2B&c=%26",
            "https://abc.limelink.org/link/x?name=日本&eq==&amp=&",
            "https://abc.limelink.org/link/x?path=/a/b?c:d@e",
        ])
    func roundTrip(_ original: String) throws {
        let link = try #require(
            URL(string: original) ?? URL(string: original.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed)!))
        let request = LimeLinkEndpoints.dynamicLink(
            base: url("https://limelink.org/"), suffix: "x", fullRequestURL: link.absoluteString, setup: false)
        #expect(queryValue(request, "full_request_url") == link.absoluteString)
        // A form decoder (plus as space) recovers it too: every "+" is escaped.
        #expect(!(request.query ?? "").contains("+"))
        for raw in ["&", "=", "#", " "] where link.absoluteString.contains(raw) {
            #expect(!(request.query ?? "").dropFirst("full_request_url=".count).contains(Character(raw)))
        }
    }
}

@Suite("LimeLink wire protocol: deferred and stats")
struct LimeLinkDeferredTests {
    @Test("deferred match (9.5): points, iOS 18_7, then dynamic_link with full_request_url and event_type=setup")
    func deferredMatch() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .get, "/api/v1/deferred-deep-link",
            .json(
                #"{"suffix":"summer-sale","full_request_url":"https://abc123.limelink.org/link/summer-sale?utm_source=google&product_id=789"}"#
            ))
        harness.transport.stub(.get, "/api/v1/app/dynamic_link/summer-sale", .json(#"{"uri":"abc123app://product/789"}"#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        let requests = harness.transport.requests
        #expect(
            requests[0].url.absoluteString == "https://limelink.org/api/v1/deferred-deep-link?width=393&height=852&user_agent=iOS%2018_7")
        #expect(
            queryValue(requests[1].url, "full_request_url")
                == "https://abc123.limelink.org/link/summer-sale?utm_source=google&product_id=789")
        #expect(queryValue(requests[1].url, "event_type") == "setup")
        let link = try #require(match.link)
        #expect(link.origin == .deferred)
        #expect(link.url == url("https://abc123.limelink.org/link/summer-sale?utm_source=google&product_id=789"))
        #expect(link.destination == url("abc123app://product/789"))
        #expect(link.parameters == ["utm_source": "google", "product_id": "789"])
        #expect(link.shortCode == "summer-sale")
        #expect(
            match.attribution == InstallAttribution(isAttributed: true, matchedFactors: ["screen", "os_version"], method: .fingerprint))
    }

    @Test(
        "a full_request_url that is not an absolute URL counts as absent: the link is the suffix's direct URL",
        arguments: [
            "not a url", "/link/summer-sale?x=1", "abc123.limelink.org/link/summer-sale", "https://",
        ])
    func relativeFullRequestURL(_ bad: String) async throws {
        let harness = try Harness()
        let quoted = String(decoding: try JSONEncoder().encode(bad), as: UTF8.self)
        harness.transport.stub(.get, "/api/v1/deferred-deep-link", .json(#"{"suffix":"summer-sale","full_request_url":"# + quoted + "}"))
        harness.transport.stub(.get, "/api/v1/app/dynamic_link/summer-sale", .json(#"{"uri":"abc123app://product/789"}"#))
        let link = try #require(try await harness.backend.matchInstall(context: harness.context).link)
        #expect(link.url == url("https://limelink.org/api/v1/app/dynamic_link/summer-sale"))
        #expect(link.destination == url("abc123app://product/789"))
        #expect(link.shortCode == "summer-sale")
    }

    @Test(
        "a uri that is not an absolute URL is a decoding error, not a destination", arguments: ["product/789", "https:product", "https://"])
    func relativeURI(_ bad: String) async throws {
        let harness = try Harness()
        let quoted = String(decoding: try JSONEncoder().encode(bad), as: UTF8.self)
        harness.transport.stub(.get, "/api/v1/app/dynamic_link/summer-sale", .json(#"{"uri":"# + quoted + "}"))
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.resolve(url("https://abc123.limelink.org/link/summer-sale"), context: harness.context)
        }
        #expect(error?.code == .decoding)
    }

    @Test("user_agent from OS versions", arguments: [("18.7", "iOS 18_7"), ("17.5.1", "iOS 17_5_1"), ("17.2.1", "iOS 17_2_1")])
    func userAgents(_ version: String, _ expected: String) {
        var device = iPhone15
        device.osVersion = version
        #expect(LimeLinkMapping.userAgent(device) == expected)
    }

    @Test("no match (9.6): suffix null is organic, not an error, and no second request")
    func noMatch() async throws {
        let harness = try Harness()
        harness.transport.stub(.get, "/api/v1/deferred-deep-link", .json(#"{"suffix":null,"full_request_url":null}"#))
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.link == nil)
        #expect(match.attribution.isAttributed == false)
        #expect(harness.transport.requests.count == 1)
    }

    @Test("server error (9.7): a non-200 is a failure with the status and LimeLink's text")
    func serverError() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .get, "/api/v1/deferred-deep-link", .status(503, body: Data("upstream timeout".utf8), headers: ["Content-Type": "text/plain"]))
        let error = await #expect(throws: DeepLinkError.self) { try await harness.backend.matchInstall(context: harness.context) }
        #expect(error?.code == .server(status: 503))
        #expect(error?.message.contains("upstream timeout") == true)
    }

    @Test("a numeric suffix is a decoding error; unknown screen sizes are left out, never invented")
    func decodingAndUnknownScreen() async throws {
        var linux = iPhone15
        linux.screen = nil
        let harness = try Harness(device: linux)
        harness.transport.stub(.get, "/api/v1/deferred-deep-link", .json(#"{"suffix":42}"#))
        let error = await #expect(throws: DeepLinkError.self) { try await harness.backend.matchInstall(context: harness.context) }
        #expect(error?.code == .decoding)
        #expect(harness.transport.requests.first?.url.query == "user_agent=iOS%2018_7")
    }

    @Test("a match survives a failed second step: the retry skips step one, which the server has used up")
    func pendingMatchSurvives() async throws {
        let harness = try Harness()
        harness.transport.stub(
            .get, "/api/v1/deferred-deep-link",
            [.json(#"{"suffix":"s","full_request_url":"https://a.limelink.org/link/s"}"#), .json(#"{"suffix":null}"#)])
        harness.transport.stub(.get, "/api/v1/app/dynamic_link/s", [.status(503), .json(#"{"uri":"myapp://s"}"#)])
        await #expect(throws: DeepLinkError.self) { try await harness.backend.matchInstall(context: harness.context) }
        let match = try await harness.backend.matchInstall(context: harness.context)
        #expect(match.link?.destination == url("myapp://s"))
        #expect(harness.transport.requests.filter { $0.url.path == "/api/v1/deferred-deep-link" }.count == 1)
        #expect(harness.store.keys.isEmpty)
    }

    @Test("stats: private_key in the body only, suffix and handle from the resolved uri, first_run then rerun")
    func stats() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/v1/stats/event", .json("{}"))
        let delivered = DeepLink(
            url: url("https://limelink.org/api/v1/app/dynamic_link/prod-789"), origin: .universalLink, provider: .limeLink,
            resolution: .server, destination: url("https://shop.example.com/p/789/reviews"), pathSegments: [])
        try await harness.backend.didPublish(.link(delivered), at: Date(), context: harness.context)
        try await harness.backend.didPublish(.link(delivered), at: Date(), context: harness.context)
        let bodies = try harness.transport.requests.map { try JSONDecoder().decode(LimeLinkStatsRequest.self, from: #require($0.body)) }
        #expect(
            bodies == [
                LimeLinkStatsRequest(privateKey: apiKey, suffix: "p", handle: "reviews", eventType: "first_run", operatingSystem: "ios"),
                LimeLinkStatsRequest(privateKey: apiKey, suffix: "p", handle: "reviews", eventType: "rerun", operatingSystem: "ios"),
            ])
        #expect(
            harness.transport.requests.allSatisfy {
                $0.headers["Authorization"] == nil && $0.url.absoluteString == "https://limelink.org/api/v1/stats/event"
            })
        let raw = String(decoding: harness.transport.requests[0].body ?? Data(), as: UTF8.self)
        #expect(raw.contains("\"private_key\""))
    }

    @Test("no stats for deferred links, local fallbacks, or a uri without a path; a failed stats call changes nothing")
    func noStats() async throws {
        let harness = try Harness()
        harness.transport.stub(.post, "/api/v1/stats/event", .status(500))
        let base = DeepLink(
            url: url("https://a.limelink.org/link/x"), origin: .universalLink, provider: .limeLink, resolution: .server,
            destination: url("myapp://home"), pathSegments: ["link", "x"])
        var deferred = base
        deferred.origin = .deferred
        deferred.destination = url("myapp://p/1")
        var local = base
        local.resolution = .local(.timedOut)
        for link in [base, deferred, local] { try await harness.backend.didPublish(.link(link), at: Date(), context: harness.context) }
        #expect(harness.transport.requests.isEmpty)
        var failing = base
        failing.destination = url("myapp://p/1")
        let error = await #expect(throws: DeepLinkError.self) {
            try await harness.backend.didPublish(.link(failing), at: Date(), context: harness.context)
        }
        #expect(error?.status == 500)
        #expect(harness.transport.requests.count == 1)
        #expect(harness.store.keys.isEmpty)  // first_run is still owed
    }

    @Test("events and link creation are not offered")
    func unsupported() async throws {
        let backend = try Harness().backend
        #expect(!((backend as any DeepLinkBackend) is any EventTrackingBackend))
        #expect((backend as any DeepLinkBackend) is any LinkEventObservingBackend)
        #expect(!((backend as any DeepLinkBackend) is any LinkCreatingBackend))
    }

    @Test("configuration: trailing slash added, path prefix kept, key never printed, fields validated")
    func configuration() throws {
        let configuration = try LimeLinkBackend.Configuration(apiKey: apiKey, apiBaseURL: url("https://api.example.com/prefix"))
        #expect(configuration.apiBaseURL.absoluteString == "https://api.example.com/prefix/")
        #expect(
            LimeLinkEndpoints.stats(base: configuration.apiBaseURL).absoluteString == "https://api.example.com/prefix/api/v1/stats/event")
        #expect(!configuration.description.contains(apiKey))
        for (make, field) in [
            ({ try LimeLinkBackend.Configuration(apiKey: "") }, "apiKey"),
            ({ try LimeLinkBackend.Configuration(apiKey: "k", apiBaseURL: url("http://limelink.org/")) }, "apiBaseURL"),
            (
                { try LimeLinkBackend.Configuration(apiKey: "k", legacyResolveURL: url("http://deep.limelink.org/link")) },
                "legacyResolveURL"
            ),
        ] as [(() throws -> LimeLinkBackend.Configuration, String)] {
            let error = #expect(throws: DeepLinkError.self) { try make() }
            #expect(error?.message.hasPrefix(field) == true)
        }
    }
}
