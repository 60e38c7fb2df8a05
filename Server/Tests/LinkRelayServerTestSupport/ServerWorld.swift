import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import LinkRelayTesting
import Synchronization
import Testing

/// A clock a test moves by hand: the SDK's `ManualClock` (the server's one clock protocol is
/// the SDK's `LinkRelayClock`), started at a fixed date.
final class TestClock: LinkRelayClock, Sendable {
    private let manual: ManualClock

    init(_ start: Date = Date(timeIntervalSince1970: 1_780_000_000)) {
        manual = ManualClock(date: start)
    }

    var date: Date { manual.currentDate }
    var currentDate: Date { manual.currentDate }
    var uptime: TimeInterval { manual.uptime }

    func sleep(untilUptime deadline: TimeInterval) async throws {
        try await manual.sleep(untilUptime: deadline)
    }

    func advance(hours: Double) {
        manual.advance(by: hours * 3600)
    }
}

/// A fresh database for a test, on either engine.
enum ScratchDatabase {
    /// Opens the database again, runs the body with it, and closes it.
    typealias Reopen = @Sendable (_ body: (SQLStore) async throws -> Void) async throws -> Void

    /// A fresh, empty database on `engine` (a file in a temporary folder, or a database of its
    /// own on the PostgreSQL that `LINKRELAY_TEST_POSTGRES` names), running while `body` runs,
    /// and a way to open it again; removed afterwards.
    static func with<T>(_ engine: TestEngine = .sqlite, _ body: (SQLStore, _ reopen: Reopen) async throws -> T) async throws -> T {
        switch engine {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkrelay-server-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("data.sqlite").path
            return try await SQLStore.sqlite(path: path).withRunning { store in
                try await body(store, { reopened in try await SQLStore.sqlite(path: path).withRunning { try await reopened($0) } })
            }
        case .postgres:
            let base = try #require(TestEngine.postgresURL, "LINKRELAY_TEST_POSTGRES names no PostgreSQL")
            let name = "lr_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
            components.path = "/" + name
            let url = try #require(components.url)
            return try await SQLStore.postgres(base).withRunning { admin in
                try await admin.execute("CREATE DATABASE \(name)")
                do {
                    let result = try await SQLStore.postgres(url).withRunning { store in
                        try await body(store, { reopened in try await SQLStore.postgres(url).withRunning { try await reopened($0) } })
                    }
                    try await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
                    return result
                } catch {
                    try? await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
                    throw error
                }
            }
        }
    }
}

/// A project with an SDK key and an admin key, a second project with its own SDK key, over a
/// fresh database on `engine`.
struct ServerWorld {
    let store: SQLStore
    let project: Project
    let sdkKey: String
    let adminKey: String
    let otherProject: Project
    let otherProjectKey: String
    let clock = TestClock()

    static func with(_ engine: TestEngine = .sqlite, _ body: (ServerWorld) async throws -> Void) async throws {
        try await ScratchDatabase.with(engine) { store, _ async throws in
            _ = try await store.migrate()
            let project = try await store.createProject(name: "acme", at: Date())
            let other = try await store.createProject(name: "other", at: Date())
            let sdk = APIKeys.issue(project: project.id, scope: .sdk, name: "iOS", at: Date())
            let admin = APIKeys.issue(project: project.id, scope: .admin, name: "CI", at: Date())
            let foreign = APIKeys.issue(project: other.id, scope: .sdk, name: "iOS", at: Date())
            for key in [sdk, admin, foreign] { try await store.insertKey(key.record) }
            // The hosts the tests' links use, as an admin's links would have taught the project;
            // the other project keeps the default (nothing learned yet).
            try await store.setDestinationHosts(
                project: project.id,
                DestinationHosts(
                    mode: .learned,
                    hosts: ["acme.example", "*.acme.example", "apps.apple.com", "play.google.com", "shop.example", "go.acme.app"]))
            try await body(
                ServerWorld(
                    store: store, project: project, sdkKey: sdk.secret, adminKey: admin.secret, otherProject: other,
                    otherProjectKey: foreign.secret))
        }
    }

    func configuration(matcher: DeferredMatcher = DeferredMatcher()) -> ServerConfiguration {
        ServerConfiguration(trustProxy: true, matcher: matcher)
    }

    func app(_ configuration: ServerConfiguration? = nil) -> some ApplicationProtocol {
        Application(
            router: ServerApplication.router(store: store, configuration: configuration ?? self.configuration(), clock: clock),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    /// A link of the project, stored.
    @discardableResult
    func link(
        _ code: String, slug: String = "", window: Int = 168, path: String? = "/product/42", scheme: String? = "acmeshop",
        parameters: [String: JSONValue] = ["productId": "42"]
    ) async throws -> LinkRecord {
        let link = LinkRecord(
            projectID: project.id, templateSlug: slug, shortCode: code, originalURL: "https://acme.example/p/42", deepLinkPath: path,
            appScheme: scheme, iosAppStoreURL: "https://apps.apple.com/app/id1", webFallbackURL: "https://acme.example/p/42",
            utmParameters: ["source": "mail"], deepLinkParameters: parameters, attributionWindowHours: window, createdAt: clock.date)
        try await store.insertLink(link)
        return link
    }
}

/// Requests and their answers.
enum HTTPTest {
    /// `method uri` with `key`, its answer.
    static func request(
        _ client: some TestClientProtocol, _ uri: String, key: String?, method: HTTPRequest.Method = .get
    ) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: headers(key: key)) { (response: TestResponse) async throws in
            response
        }
    }

    static func headers(key: String?, ip: String? = nil, userAgent: String? = nil, json: Bool = false) -> HTTPFields {
        var headers: HTTPFields = [:]
        if let key { headers[.authorization] = "Bearer \(key)" }
        if let ip { headers[.init("X-Forwarded-For")!] = ip }
        if let userAgent { headers[.userAgent] = userAgent }
        if json { headers[.contentType] = "application/json" }
        return headers
    }

    static func body(_ object: [String: JSONValue]) -> ByteBuffer {
        ByteBuffer(data: (try? JSONEncoder().encode(object)) ?? Data())
    }

    static func object(_ body: ByteBuffer) throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: Data(String(buffer: body).utf8))
    }

    /// LinkRelay's and LinkForty's install body from an iPhone 15 Pro in New York.
    static let installBody: [String: JSONValue] = [
        "userAgent": "Acme Shop/2.3.0 iOS/17.4.1", "timezone": "America/New_York", "language": "en_US", "screenWidth": 1179,
        "screenHeight": 2556, "platform": "iOS", "platformVersion": "17.4.1", "appVersion": "2.3.0", "attributionWindowHours": 168,
    ]

    /// The resolve query LinkForty's SDKs send from that phone.
    static let fingerprintQuery = "?fp_tz=America/New_York&fp_lang=en_US&fp_sw=1179&fp_sh=2556&fp_platform=iOS&fp_pv=17.4.1"

    static let sdkUserAgent = "AcmeShop/412 CFNetwork/1494.0.7 Darwin/23.4.0"

    /// The app on the phone resolving `code` as LinkForty's SDKs do (its fingerprint in the
    /// query, URLSession's user agent), from `ip` (through the trusted proxy) or the loopback.
    static func resolveOnPhone(_ client: some TestClientProtocol, code: String, key: String, ip: String? = nil) async throws {
        try await client.execute(
            uri: "/api/sdk/v1/resolve/\(code)" + fingerprintQuery, method: .get, headers: headers(key: key, ip: ip, userAgent: sdkUserAgent)
        ) { #expect($0.status == .ok) }
    }
    static let safari =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
}

/// The engines the storage and HTTP tests run on: SQLite always; PostgreSQL when
/// `LINKRELAY_TEST_POSTGRES` names one (`Server/scripts/with-postgres swift test` starts one,
/// and `.ci/run` does).
enum TestEngine: String, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    static let postgresURL: URL? = ProcessInfo.processInfo.environment["LINKRELAY_TEST_POSTGRES"].flatMap { URL(string: $0) }

    static let available: [TestEngine] = postgresURL == nil ? [.sqlite] : [.sqlite, .postgres]

    var testDescription: String { rawValue }
}
