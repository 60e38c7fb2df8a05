import Foundation
import LinkRelay
import Logging
import Testing

@testable import LinkRelayServer

/// The click store stays bounded by the longest attribution window.
@Suite("Click retention")
struct RetentionTests {
    @Test("a sweep deletes, batch by batch, every click past the retention and nothing younger; less than 90 days is raised to 90", arguments: TestEngine.available)
    func sweep(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("abc")
            let now = world.clock.date
            let ages: [Double] = [1, 24 * 30, 24 * 89, 24 * 91, 24 * 120, 24 * 365, 24 * 400, 24 * 500, 24 * 900]
            try await world.store.importClicks(
                ages.enumerated().map { index, hours in
                    ClickRecord(
                        id: "c\(index)", linkID: link.id, projectID: world.project.id, clickedAt: now.addingTimeInterval(-hours * 3600), ip: nil,
                        networkPrefix: nil, userAgent: nil, timezone: nil, language: nil, screenWidth: nil, screenHeight: nil, platform: nil,
                        isBot: false)
                })
            let retention = ClickRetention(store: world.store, retention: 86_400, batch: 2, clock: world.clock.function, logger: Logger(label: "test"))
            #expect(try await retention.sweep() == 6, "past 90 days: 91, 120, 365, 400, 500, 900 (a day was raised to 90)")
            #expect(Set(try await world.store.clicks(link: link.id).map(\.id)) == ["c0", "c1", "c2"])
            #expect(try await retention.sweep() == 0)
        }
    }

    @Test("retentions: NaN is the default 90 days, infinity forever, zero or negative raised to 90 days")
    func clamped() async throws {
        #expect(ServerConfiguration(clickRetention: .nan).clickRetention == DeferredMatcher.lookback)
        #expect(ServerConfiguration(clickRetention: .infinity).clickRetention == nil)
        #expect(ServerConfiguration(clickRetention: 0).clickRetention == DeferredMatcher.lookback)
        #expect(ServerConfiguration(clickRetention: -5).clickRetention == DeferredMatcher.lookback)
        let twoHundredDays: TimeInterval = 200 * 86_400
        #expect(ServerConfiguration(clickRetention: twoHundredDays).clickRetention == twoHundredDays)
        #expect(ServerConfiguration(clickRetention: nil).clickRetention == nil)
    }
}
