import Foundation
import LinkRelay
import Testing

@testable import LinkRelayServerCore

/// The install's attribution (``AttributionService``) on the in-memory store: the whole trip from
/// a report to the install stored, without a server or a database.
@Suite("Attribution, in the Core")
struct AttributionServiceTests {
    static let now = Date(timeIntervalSince1970: 1_780_000_000)
    static let link = LinkRecord(
        id: "link-spring", projectID: "p", shortCode: "spring", originalURL: "https://acme.example/spring", deepLinkPath: "/sale",
        appScheme: "acme", createdAt: now.addingTimeInterval(-86_400))
    static let phone = DeviceSignals(
        ip: "203.0.113.7", networkPrefix: "203.0.113", userAgent: "Acme Shop/2.3.0 iOS/17.4.1", timezone: "America/New_York",
        language: "en_US", screenWidth: 1179, screenHeight: 2556)
    static let token = "AbCdEfGhIjKlMnOpQrStUvWxYz012345"

    /// The phone's tap in Safari, `hoursAgo` before ``now``.
    static func tap(_ id: String, hoursAgo: Double = 2, address: String = "203.0.113.7", width: Int = 1179) -> ClickRecord {
        ClickRecord(
            id: id, linkID: link.id, projectID: "p", clickedAt: now.addingTimeInterval(-hoursAgo * 3600),
            device: DeviceSignals(
                ip: address, networkPrefix: "203.0.113", userAgent: Agents.safari, timezone: "America/New_York", language: "en-US",
                screenWidth: width, screenHeight: 2556),
            platform: .ios, isBot: false)
    }

    static func store(clicks: [ClickRecord] = [], token: Bool = false) -> MemoryAttributionStore {
        let store = MemoryAttributionStore()
        store.add(link)
        for click in clicks { store.add(click) }
        if token, let click = clicks.first {
            store.add(
                ClickTokenRecord(
                    tokenHash: ClickTokens.hash(Self.token), projectID: "p", linkID: link.id, clickID: click.id, clickedAt: click.clickedAt,
                    expiresAt: click.clickedAt.addingTimeInterval(168 * 3600)))
        }
        return store
    }

    @Test("an install from the address of its tap is attributed to it by the address and stored, with its deferred link")
    func byAddress() async throws {
        let store = Self.store(clicks: [Self.tap("tap")])
        let service = AttributionService(store: store, matcher: DeferredMatcher())
        let answer = try await service.attribute(
            InstallReport(signals: Self.phone, platform: "iOS", platformVersion: "17.4.1"), project: "p", at: Self.now)
        #expect(answer.attributed && answer.install.clickID == "tap" && answer.install.method == .fingerprint)
        #expect(answer.install.matchedFactors.contains("address"))
        #expect(answer.install.deepLinkData["shortCode"] == "spring" && answer.install.deepLinkData["deepLinkPath"] == "/sale")
        #expect(store.installs == [answer.install])
        // Another address of the /24 is a neighbour's: organic, and stored as such.
        var elsewhere = Self.phone
        elsewhere.ip = "203.0.113.99"
        let organic = try await service.attribute(
            InstallReport(signals: elsewhere, platform: "iOS", platformVersion: "17.4.1"), project: "p", at: Self.now)
        #expect(!organic.attributed && organic.install.method == AttributionMethod.none && store.installs.count == 2)
    }

    @Test(
        "a click token decides with certainty; another phone holding it is attributed to the same click; the same phone reporting again gets its first install back, nothing stored"
    )
    func clickToken() async throws {
        // A look-alike's tap is newer: only the token says which click this install came from.
        let store = Self.store(
            clicks: [Self.tap("tokened", hoursAgo: 5), Self.tap("look-alike", hoursAgo: 1, address: "203.0.113.8")], token: true)
        let service = AttributionService(store: store, matcher: DeferredMatcher())
        var report = InstallReport(signals: Self.phone, platform: "iOS", platformVersion: "17.4.1", clickToken: Self.token)
        let first = try await service.attribute(report, project: "p", at: Self.now)
        #expect(
            first.attributed && first.install.clickID == "tokened" && first.install.method == .pasteboard && first.install.confidence == 100
        )
        #expect(first.install.matchedFactors == ["click_token"])
        // The same phone again (its answer was lost): the first install, nothing new.
        let again = try await service.attribute(report, project: "p", at: Self.now.addingTimeInterval(60))
        #expect(again.repeated && again.install.id == first.install.id && store.installs.count == 1)
        // Another phone with the copied link: the same click, as its app says.
        report.signals.screenWidth = 1290
        let other = try await service.attribute(report, project: "p", at: Self.now.addingTimeInterval(120))
        #expect(!other.repeated && other.install.clickID == "tokened" && other.install.matchedFactors == ["click_token_used"])
        #expect(store.installs.count == 2)
    }

    @Test("a report without its fingerprint (tracking not allowed) is never matched by its signals")
    func withoutFingerprint() async throws {
        let store = Self.store(clicks: [Self.tap("tap")])
        var report = InstallReport(
            signals: DeviceSignals(ip: nil, networkPrefix: nil, userAgent: Self.phone.userAgent), platform: "iOS", platformVersion: "17.4.1"
        )
        report.allowsFingerprint = false
        let answer = try await AttributionService(store: store, matcher: DeferredMatcher()).attribute(report, project: "p", at: Self.now)
        #expect(!answer.attributed && answer.timings.candidates == 0)
    }

    @Test("an install that cannot be stored gives its click token back, so the app's retry is attributed")
    func failedWrite() async throws {
        let store = Self.store(clicks: [Self.tap("tokened")], token: true)
        let service = AttributionService(store: store, matcher: DeferredMatcher())
        let report = InstallReport(signals: Self.phone, platform: "iOS", platformVersion: "17.4.1", clickToken: Self.token)
        store.failInstallWrites(true)
        await #expect(throws: MemoryStoreError.self) { try await service.attribute(report, project: "p", at: Self.now) }
        #expect(store.released.count == 1 && store.installs.isEmpty)
        store.failInstallWrites(false)
        let retried = try await service.attribute(report, project: "p", at: Self.now.addingTimeInterval(5))
        #expect(retried.install.method == .pasteboard && retried.install.clickID == "tokened")
    }
}
