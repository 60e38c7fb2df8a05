import Foundation
import LinkRelay

extension UUID {
    /// A version 7 UUID (RFC 9562 §5.7): `date`'s Unix time in milliseconds in the first 48 bits
    /// (before 1970 counts as 1970, past the year 10889 as its end), then `random`'s own bits,
    /// with the version and variant set. The same date and the same `random` give the same
    /// UUID, so an event's id can be sent again unchanged.
    package static func version7(at date: Date, random: UUID = UUID()) -> UUID {
        // saturatingInt: NaN is 0 and ±infinity the bounds, then clamped into 48 bits.
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down).saturatingInt
        let time = UInt64(min(max(milliseconds, 0), (1 << 48) - 1))
        var bytes = random.uuid
        bytes.0 = UInt8(truncatingIfNeeded: time >> 40)
        bytes.1 = UInt8(truncatingIfNeeded: time >> 32)
        bytes.2 = UInt8(truncatingIfNeeded: time >> 24)
        bytes.3 = UInt8(truncatingIfNeeded: time >> 16)
        bytes.4 = UInt8(truncatingIfNeeded: time >> 8)
        bytes.5 = UInt8(truncatingIfNeeded: time)
        bytes.6 = 0x70 | (bytes.6 & 0x0F)
        bytes.8 = 0x80 | (bytes.8 & 0x3F)
        return UUID(uuid: bytes)
    }
}
