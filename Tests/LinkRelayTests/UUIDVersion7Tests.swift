import Foundation
import LinkRelayWire
import Testing

@testable import LinkRelay

@Suite("UUIDv7")
struct UUIDVersion7Tests {
    @Test("the time, version and variant are where RFC 9562 puts them; the rest is the random UUID's")
    func layout() throws {
        let random = try #require(UUID(uuidString: "F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6"))
        let uuid = UUID.version7(at: Date(timeIntervalSince1970: 1_784_711_643.512), random: random)
        #expect(uuid.uuidString == "019F891A-8178-71D0-A765-00A0C91E6BF6")
        #expect(UUID.version7(at: Date(timeIntervalSince1970: 1_784_711_643.512), random: random) == uuid)
    }

    @Test(
        "any date gives a UUID, never a trap",
        arguments: [
            -1e300, -1, 0, 1e300, .infinity, -.infinity, .nan, Date.distantFuture.timeIntervalSince1970,
        ])
    func anyDate(_ seconds: TimeInterval) {
        let uuid = UUID.version7(at: Date(timeIntervalSince1970: seconds)).uuid
        #expect(uuid.6 >> 4 == 7)
        #expect(uuid.8 >> 6 == 0b10)
        let time = [uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        if seconds.isNaN || seconds <= 0 {
            #expect(time == 0)
        } else if seconds >= 1e15 {
            #expect(time == (UInt64(1) << 48) - 1)
        } else {
            #expect(time == UInt64(seconds * 1000))
        }
    }
}
