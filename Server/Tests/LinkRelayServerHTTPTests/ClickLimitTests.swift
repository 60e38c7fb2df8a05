import Foundation
import Hummingbird
import HummingbirdTesting
import LinkRelay
import LinkRelayTesting
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

/// Clicks per address, as a flooding client and a busy carrier address meet them.
@Suite("Clicks per address")
struct ClickLimitTests {
    @Test("a minute's worth, then one per 60/limit seconds; addresses apart; 0 is no limit; the clock going back refills nothing")
    func bucket() {
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        let limiter = ClickLimiter(perMinute: 60)
        #expect((0..<60).allSatisfy { _ in limiter.allow("203.0.113.7", at: start) })
        #expect(!limiter.allow("203.0.113.7", at: start))
        #expect(limiter.allow("203.0.113.8", at: start), "another address has its own minute")
        #expect(!limiter.allow("203.0.113.7", at: start.addingTimeInterval(-3600)))
        #expect(
            limiter.allow("203.0.113.7", at: start.addingTimeInterval(1)) && !limiter.allow("203.0.113.7", at: start.addingTimeInterval(1)))
        let unlimited = ClickLimiter(perMinute: 0)
        #expect((0..<10_000).allSatisfy { _ in unlimited.allow("x", at: start) })
        let small = ClickLimiter(perMinute: 1, trackedLimit: 100)
        for index in 0..<1000 { _ = small.allow("198.51.100.\(index)", at: start) }
        #expect(small.trackedCount <= 100, "tracking stays bounded")
        #expect(!small.allow("198.51.100.999", at: start), "the address just counted is still tracked")
    }

    @Test("an IPv6 client is limited by its /64: a subscriber's whole prefix, whatever address it picks in it")
    func ipv6Prefix() {
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        let limiter = ClickLimiter(perMinute: 60)
        #expect((0..<60).allSatisfy { limiter.allow(ClickLimiter.key(for: "2001:db8:7:1::\(String($0 + 1, radix: 16))"), at: start) })
        #expect(!limiter.allow(ClickLimiter.key(for: "2001:db8:7:1:ffff::1"), at: start), "another address of the same /64")
        #expect(limiter.allow(ClickLimiter.key(for: "2001:db8:7:2::1"), at: start), "another /64")
        #expect(ClickLimiter.key(for: "203.0.113.7") == "203.0.113.7" && ClickLimiter.key(for: nil) == "-")
        #expect(ClickLimiter.key(for: "not an address") == "not an address")
    }

    @Test(
        "past the limit a tap still reaches its destination, its click is not stored and the answer says so",
        arguments: TestEngine.available)
    func redirect(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let link = try await world.link("Xk9_2bQz", scheme: nil)
            var configuration = world.configuration()
            configuration.clicksPerAddressPerMinute = 3
            try await world.app(configuration).test(.live) { client in
                for index in 0..<5 {
                    try await RedirectTests.get(client, "/Xk9_2bQz?fp_tz=UTC&fp_lang=en&fp_sw=1&fp_sh=1", userAgent: HTTPTest.safari) {
                        response in
                        #expect(response.status == .found && response.headers[.location] == "https://apps.apple.com/app/id1")
                        #expect((response.headers[.init("X-LinkRelay-Click-Recorded")!] == "false") == (index >= 3))
                    }
                }
                try await RedirectTests.get(
                    client, "/Xk9_2bQz?fp_tz=UTC&fp_lang=en&fp_sw=1&fp_sh=1", userAgent: HTTPTest.safari, ip: "198.51.100.4"
                ) {
                    #expect($0.headers[.init("X-LinkRelay-Click-Recorded")!] == nil)
                }
            }
            #expect(try await world.store.clicks(link: link.id).count == 4)
        }
    }
}
