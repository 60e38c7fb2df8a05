import Foundation
import LinkRelay
import LinkRelayDoctor
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("linkrelay doctor")
struct DoctorTests {
    static let claims = BackendClaims(provider: "linkforty", domains: ["go.acme.app"], schemes: ["acme"])

    func input(
        aasa: String? = "modern.json", entitlements: String? = "App.entitlements", plist: String? = "Info.plist",
        claims: BackendClaims = DoctorTests.claims, fetch: FetchReport? = nil
    ) throws -> DoctorInput {
        DoctorInput(
            appID: appID, backend: claims, associationFile: try aasa.map(fixture), associationSource: aasa, fetch: fetch,
            entitlements: try entitlements.map(fixture), infoPlist: try plist.map(fixture))
    }

    @Test("--expect-web: a page that must open Safari fails when a rule sends it to the app, passes when excluded or unmatched")
    func expectWeb() throws {
        var checked = try input()
        checked.webOnlyLinks = [
            URL(string: "https://go.acme.app/admin/users")!,  // excluded by the first rule
            URL(string: "https://go.acme.app/privacy")!,  // matched by nothing
            URL(string: "https://go.acme.app/k3m9x2qa/terms")!,  // caught by /k3m9x2qa/*
        ]
        let checks = Doctor.run(checked).checks("aasa.web-link")
        #expect(checks.map(\.status) == [.pass, .pass, .failure])
        #expect(
            checks[0].message
                == "https://go.acme.app/admin/users opens Safari: excluded by component #1 of ABCDE12345.com.acme.shop, {\"/\": \"/admin/*\", \"exclude\": true}."
        )
        #expect(
            checks[2].message
                == "https://go.acme.app/k3m9x2qa/terms must open Safari, but it opens the app: matched component #2 of ABCDE12345.com.acme.shop, {\"/\": \"/k3m9x2qa/*\"}."
        )
        #expect(checks[2].fix == "Add {\"/\": \"/k3m9x2qa/terms\", \"exclude\": true} before that rule, or narrow the rule.")
    }

    @Test(
        "a link no rule matches gets a narrow pattern as advice, never /*",
        arguments: [
            ("https://go.acme.app/spring", "/spring"), ("https://go.acme.app/products/42", "/products/*"), ("https://go.acme.app", "/"),
        ])
    func narrowAdvice(_ link: String, _ pattern: String) throws {
        let claims = BackendClaims(provider: "linkforty", domains: ["go.acme.app"], schemes: ["acme"], links: [URL(string: link)!])
        let failures = Doctor.run(try input(claims: claims)).checks("aasa.link").filter { $0.status == .failure }
        #expect(failures.count == 1)
        #expect(failures.first?.fix?.hasPrefix("Add a component such as {\"/\": \"\(pattern)\"}") == true, "\(failures)")
    }

    @Test("a consistent app passes every check")
    func healthy() throws {
        let report = Doctor.run(try input())
        #expect(report.status == .pass, "\(report.checks.filter { $0.status != .pass })")
        #expect(
            report.checks("aasa.link").map(\.message) == [
                "https://go.acme.app/k3m9x2qa/Xk9_2bQz opens the app: matched component #2 of ABCDE12345.com.acme.shop, {\"/\": \"/k3m9x2qa/*\"}."
            ])
        #expect(report.checks("entitlements.applinks").map(\.status) == [.pass])
        #expect(report.checks("info-plist.schemes").map(\.status) == [.pass])
        #expect(report.checks("backend.claims").count == 2)  // the universal link and acme://open
    }

    /// A configuration mistake and the check that must fail (or warn) because of it.
    struct Mistake: CustomTestStringConvertible, Sendable {
        let name: String
        let check: String
        let status: Check.Status
        let make: @Sendable (DoctorTests) throws -> DoctorInput
        var testDescription: String { name }
    }

    static let mistakes: [Mistake] = [
        Mistake(name: "the AASA lists another app", check: "aasa.app-id", status: .failure) { try $0.input(aasa: "other-app.json") },
        Mistake(name: "the AASA excludes the link", check: "aasa.link", status: .failure) { try $0.input(aasa: "excludes-all.json") },
        Mistake(name: "no AASA rule matches the link", check: "aasa.link", status: .failure) {
            // The legacy file lists /k3m9x2qa/* and /sale/*, not short links without a template.
            try $0.input(
                aasa: "legacy.json",
                claims: BackendClaims(
                    provider: "linkforty", domains: ["go.acme.app"], links: [URL(string: "https://go.acme.app/Xk9_2bQz")!]))
        },
        Mistake(name: "the AASA is malformed", check: "aasa.json", status: .failure) { try $0.input(aasa: "malformed.json") },
        Mistake(name: "the AASA is an HTML page", check: "aasa.json", status: .failure) { try $0.input(aasa: "html.json") },
        Mistake(name: "the legacy form", check: "aasa.form", status: .warning) { try $0.input(aasa: "legacy-no-apps.json") },
        Mistake(name: "no associated domains", check: "entitlements.applinks", status: .failure) {
            try $0.input(entitlements: "NoDomains.entitlements")
        },
        Mistake(name: "developer mode in the entitlements", check: "entitlements.mode", status: .warning) {
            try $0.input(entitlements: "DeveloperMode.entitlements")
        },
        Mistake(name: "an associated domain the backend does not claim", check: "entitlements.unclaimed", status: .warning) {
            try $0.input(entitlements: "DeveloperMode.entitlements")
        },
        Mistake(name: "the scheme is not registered", check: "info-plist.schemes", status: .failure) {
            try $0.input(plist: "NoSchemes.plist")
        },
        Mistake(name: "a link on a host the backend does not claim", check: "backend.claims", status: .failure) {
            try $0.input(
                claims: BackendClaims(provider: "linkforty", domains: ["go.acme.app"], links: [URL(string: "https://acme.app/k3m9x2qa/x")!])
            )
        },
        Mistake(name: "an unknown provider", check: "backend.configuration", status: .failure) {
            try $0.input(claims: BackendClaims(provider: "branch", domains: ["go.acme.app"]))
        },
        Mistake(name: "the file comes through a redirect", check: "aasa.fetch", status: .failure) {
            try $0.input(
                fetch: FetchReport(
                    url: URL(string: "https://go.acme.app/.well-known/apple-app-site-association")!, status: 301, contentType: nil,
                    redirect: "https://www.acme.app/.well-known/apple-app-site-association"))
        },
        Mistake(name: "the file is served as .json", check: "aasa.fetch", status: .failure) {
            try $0.input(
                fetch: FetchReport(
                    url: URL(string: "https://go.acme.app/apple-app-site-association.json")!, status: 200, contentType: "application/json",
                    redirect: nil))
        },
        Mistake(name: "the file is served as text/html", check: "aasa.content-type", status: .warning) {
            try $0.input(
                fetch: FetchReport(
                    url: URL(string: "https://go.acme.app/.well-known/apple-app-site-association")!, status: 200, contentType: "text/html",
                    redirect: nil))
        },
        Mistake(name: "the file came from another domain", check: "aasa.domain", status: .warning) {
            try $0.input(
                fetch: FetchReport(
                    url: URL(string: "https://acme.app/.well-known/apple-app-site-association")!, status: 200,
                    contentType: "application/json", redirect: nil))
        },
    ]

    @Test("each mistake is found, with a fix", arguments: mistakes)
    func mistake(_ mistake: Mistake) throws {
        let report = Doctor.run(try mistake.make(self))
        let found = report.checks(mistake.check).filter { $0.status == mistake.status }
        #expect(!found.isEmpty, "\(report.checks)")
        #expect(found.allSatisfy { $0.fix?.isEmpty == false })
        #expect(report.status >= mistake.status)
    }

    /// Answers every request with one response, and remembers the URLs asked for.
    final class OneAnswer: HTTPTransport, Sendable {
        let response: HTTPResponse
        let asked = Locked<[URL]>([])
        init(_ response: HTTPResponse) { self.response = response }
        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            asked.withLock { $0.append(request.url) }
            return response
        }
    }

    @Test("fetching: a bare domain asks /.well-known/, and a redirect is reported as a failure")
    func fetching() async throws {
        let body = try fixture("modern.json")
        let good = OneAnswer(HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: body))
        let (data, report) = try await FetchReport.fetch(URL(string: "https://go.acme.app")!, over: good)
        #expect(good.asked.withLock { $0 } == [URL(string: "https://go.acme.app/.well-known/apple-app-site-association")!])
        #expect(data == body)
        var input = try input()
        input.fetch = report
        #expect(Doctor.run(input).checks("aasa.fetch").map(\.status) == [.pass])

        let moved = OneAnswer(
            HTTPResponse(status: 301, headers: ["Location": "https://www.acme.app/.well-known/apple-app-site-association"]))
        let (_, redirected) = try await FetchReport.fetch(URL(string: "https://go.acme.app/")!, over: moved)
        #expect(redirected.redirect == "https://www.acme.app/.well-known/apple-app-site-association")
        input.fetch = redirected
        #expect(Doctor.run(input).checks("aasa.fetch").map(\.status) == [.failure])
    }

    /// Answers by path: 200 with `body` at `servedAt`, 404 elsewhere.
    final class ServedAt: HTTPTransport {
        let body: Data
        let servedAt: String
        let asked = Locked<[String]>([])
        init(_ body: Data, at path: String) {
            self.body = body
            self.servedAt = path
        }
        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            asked.withLock { $0.append(request.url.path) }
            return request.url.path == servedAt
                ? HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: body) : HTTPResponse(status: 404)
        }
    }

    @Test("a file served only at the legacy root path is found and warned about; one over plain http fails")
    func legacyRootAndHTTPS() async throws {
        let body = try fixture("modern.json")
        let root = ServedAt(body, at: "/apple-app-site-association")
        let (data, report) = try await FetchReport.fetch(URL(string: "https://go.acme.app")!, over: root)
        #expect(root.asked.withLock { $0 } == ["/.well-known/apple-app-site-association", "/apple-app-site-association"])
        #expect(data == body)
        #expect(report.fromLegacyRoot)
        var input = try input()
        input.fetch = report
        let checks = Doctor.run(input)
        #expect(checks.checks("aasa.location").map(\.status) == [.warning])
        #expect(checks.checks("aasa.fetch").map(\.status) == [.pass])

        let wellKnown = ServedAt(body, at: "/.well-known/apple-app-site-association")
        let (_, direct) = try await FetchReport.fetch(URL(string: "https://go.acme.app")!, over: wellKnown)
        #expect(!direct.fromLegacyRoot)
        #expect(wellKnown.asked.withLock { $0.count } == 1)

        input.fetch = FetchReport(
            url: URL(string: "http://go.acme.app/.well-known/apple-app-site-association")!, status: 200, contentType: "application/json",
            redirect: nil)
        #expect(Doctor.run(input).checks("aasa.fetch").map(\.status).contains(.failure))
    }

    @Test("what iOS ignores or refuses in the file is reported; the app is found by its bundle ID alone")
    func structureFindings() throws {
        var input = try input()
        input.associationFile = Data(
            #"{"applinks": {"apps": ["x"], "details": [{"appIDs": ["ABCDE12345.com.acme.shop"], "components": [{"/": "/k3m9x2qa/*", "exlude": true}]}]}}"#
                .utf8)
        let report = Doctor.run(input)
        #expect(report.checks("aasa.structure").map(\.status) == [.failure, .warning])
        #expect(report.status == .failure)
        // The bundle ID alone finds the app under any team.
        input.appID = "com.acme.shop"
        input.associationFile = try fixture("modern.json")
        let byBundle = Doctor.run(input)
        #expect(byBundle.checks("aasa.app-id").map(\.status) == [.pass])
        #expect(byBundle.checks("aasa.app-id").first?.message.contains("as ABCDE12345.com.acme.shop") == true)
        #expect(byBundle.checks("aasa.link").map(\.status) == [.pass])
    }

    @Test(
        "the size: over 100 KB a warning, over Apple's 128 KB limit a failure",
        arguments: [(AssociationFile.recommendedSize, Check.Status.warning), (AssociationFile.maximumSize, .failure)])
    func size(_ padding: Int, _ status: Check.Status) throws {
        var data = try fixture("modern.json")
        data.append(Data(repeating: UInt8(ascii: " "), count: padding))
        var input = try input()
        input.associationFile = data
        #expect(Doctor.run(input).checks("aasa.size").map(\.status) == [status])
    }

    @Test(
        "each provider's typical link is claimed by its adapter", arguments: ["linkforty", "limelink", "dynalinks", "paylisher", "local"])
    func providers(_ provider: String) throws {
        let domain = provider == "limelink" ? "shop.limelink.org" : provider == "dynalinks" ? "acme.dynalinks.app" : "go.acme.app"
        let claims = BackendClaims(provider: provider, domains: [domain], schemes: ["acme"])
        let report = Doctor.run(DoctorInput(appID: appID, backend: claims))
        #expect(report.checks("backend.configuration").map(\.status) == [.pass])
        #expect(report.checks("backend.claims").map(\.status) == [.pass, .pass])
    }

    @Test("the command line: a readable report, JSON with --json, exit 1 on a failure, 0 when only warnings")
    func commandLine() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path
        let common = [
            "doctor", "--app-id", appID, "--provider", "linkforty", "--domain", "go.acme.app", "--scheme", "acme",
            "--aasa", "\(folder)/modern.json", "--entitlements", "\(folder)/App.entitlements",
        ]
        let healthy = try run(common + ["--info-plist", "\(folder)/Info.plist"])
        #expect(healthy.status == 0)
        #expect(healthy.output.contains("✔ https://go.acme.app/k3m9x2qa/Xk9_2bQz opens the app"))
        #expect(healthy.output.contains("0 failed"))
        // No Info.plist: a warning only.
        #expect(try run(common).status == 0)
        let broken = try run(common + ["--info-plist", "\(folder)/NoSchemes.plist", "--json"])
        #expect(broken.status == 1)
        let json = try JSONSerialization.jsonObject(with: Data(broken.output.utf8)) as? [String: Any]
        #expect(json?["status"] as? String == "failure")
        // The same settings from a --config file, with the links to check.
        let configured = try run(["doctor", "--config", "\(folder)/checks.json", "--aasa", "\(folder)/modern.json", "--json"])
        #expect(configured.status == 1)  // the second link is excluded by the admin rule
        let checks = try JSONSerialization.jsonObject(with: Data(configured.output.utf8)) as? [String: Any]
        let links = (checks?["checks"] as? [[String: Any]] ?? []).filter { $0["id"] as? String == "aasa.link" }
        #expect(links.map { $0["status"] as? String } == ["pass", "failure"])
        let usage = try run(["doctor", "--provider"])
        #expect(usage.status == 64)
        let parsed = try run(["parse", "acme://products/42?utm_source=mail"])
        #expect(parsed.status == 0)
        #expect(parsed.output.contains("\"pathSegments\" : [\n    \"products\",\n    \"42\"\n  ]"))
    }

    /// Runs the built `linkrelay` with `arguments`.
    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        // Linux runs the tests as an executable in the build folder; macOS loads them as a
        // bundle there into Xcode's `xctest`, so `Bundle.main` would be Xcode's folder.
        #if canImport(Darwin)
            var folder = Bundle(for: BuildFolderMarker.self).bundleURL
        #else
            var folder = Bundle.main.executableURL ?? URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
        #endif
        var tool: URL?
        for _ in 0..<5 where tool == nil {
            folder.deleteLastPathComponent()
            let candidate = folder.appendingPathComponent("linkrelay")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { tool = candidate }
        }
        guard let tool else { throw DoctorError("linkrelay is not built next to the tests") }
        #if os(macOS) || os(Linux)
            let process = Process()
            process.executableURL = tool
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = Pipe()
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        #else
            throw DoctorError("no processes on this platform: the command-line tests run on macOS and Linux")
        #endif
    }
}

/// A class of the test bundle, to find the bundle (and the build folder beside it) on macOS.
private final class BuildFolderMarker {}

/// `--app-clip-id`: the association file's `appclips` section, which an App Clip's invocation
/// (and so the hand-off of its link to the full app) needs.
@Suite("linkrelay doctor: the App Clip")
struct DoctorAppClipTests {
    static let clip = "ABCDE12345.com.acme.shop.Clip"

    func run(_ file: String, clip: String? = DoctorAppClipTests.clip) throws -> [Check] {
        var input = DoctorInput(appID: appID, backend: DoctorTests.claims, associationFile: Data(file.utf8), associationSource: "inline")
        input.appClipID = clip
        // What the file's reading found (`aasa.structure`) and the App Clip check.
        return Doctor.run(input).checks.filter { ["aasa.structure", "aasa.appclips"].contains($0.id) }
    }

    static let links = #""applinks": {"details": [{"appIDs": ["ABCDE12345.com.acme.shop"], "components": [{"/": "/*"}]}]}"#

    @Test("a file listing the App Clip passes; one without the section, or listing another Clip, fails with the section to add")
    func listed() throws {
        let good = try run(#"{\#(Self.links), "appclips": {"apps": ["ABCDE12345.com.acme.shop.Clip"]}}"#)
        #expect(good.map(\.status) == [.pass])
        #expect(good.first?.message == "The file lists the App Clip ABCDE12345.com.acme.shop.Clip in appclips.apps.")
        let missing = try run("{\(Self.links)}")
        #expect(missing.map(\.status) == [.failure])
        #expect(missing.first?.fix == #"Add "appclips": {"apps": ["ABCDE12345.com.acme.shop.Clip"]} to the file."#)
        let other = try run(#"{\#(Self.links), "appclips": {"apps": ["ABCDE12345.com.other.Clip"]}}"#)
        #expect(other.map(\.status) == [.failure])
        #expect(other.first?.message == "appclips.apps lists ABCDE12345.com.other.Clip, not the App Clip ABCDE12345.com.acme.shop.Clip.")
    }

    @Test("a malformed section or id is reported; a Clip id that is not the app's bundle id and a suffix fails")
    func malformed() throws {
        let notObject = try run(#"{\#(Self.links), "appclips": ["ABCDE12345.com.acme.shop.Clip"]}"#)
        #expect(notObject.contains { $0.status == .failure && $0.message == "appclips must be an object with an \"apps\" array." })
        let badID = try run(#"{\#(Self.links), "appclips": {"apps": ["com.acme.shop.Clip"]}}"#)
        #expect(badID.contains { $0.status == .failure && $0.message.contains("\"com.acme.shop.Clip\", which is not TEAMID.bundle.id") })
        let unrelated = try run(#"{\#(Self.links), "appclips": {"apps": ["ABCDE12345.com.acme.clip"]}}"#, clip: "ABCDE12345.com.acme.clip")
        #expect(unrelated.first?.status == .failure)
        #expect(
            unrelated.first?.message
                == "The App Clip's id ABCDE12345.com.acme.clip does not start with the app's, ABCDE12345.com.acme.shop, and a dot: App Store Connect refuses such a Clip."
        )
    }

    @Test("without --app-clip-id, a file that lists the app's Clip says so; one without the section says nothing")
    func notAsked() throws {
        let listed = try run(#"{\#(Self.links), "appclips": {"apps": ["ABCDE12345.com.acme.shop.Clip"]}}"#, clip: nil)
        #expect(listed.map(\.status) == [.pass])
        #expect(listed.first?.message == "The file lists the App Clip ABCDE12345.com.acme.shop.Clip (check it with --app-clip-id).")
        #expect(try run("{\(Self.links)}", clip: nil).isEmpty)
    }
}
