import Foundation

/// The identifiers of the rows written under load (clicks, installs, events): UUIDs of version
/// 7 (RFC 9562), whose first 48 bits are the row's time in milliseconds, so ids made later sort
/// later. A new row's index entry then goes where the previous one went: with random (version
/// 4) ids every click dirtied a page of its own in the primary key's index, and under load
/// SQLite wrote about 13 KiB a click (245 MB/s of WAL and checkpoints at 18,000 clicks/s).
/// Still a UUID as LinkForty's SDKs and every client expect, lower-case as before.
package enum RecordID {
    /// A version 7 UUID for a row made at `date` (clamped to 1970…10889, the 48 bits' range; NaN
    /// is 1970), its other 74 bits random.
    package static func timeOrdered(at date: Date) -> String {
        // The stored time's milliseconds (NaN and infinities already bounded there), within 48 bits.
        let stamp = min(UInt64(clamping: EpochMilliseconds.of(date)), 281_474_976_710_655)
        var generator = SystemRandomNumberGenerator()
        let random: UInt64 = generator.next()
        let more: UInt64 = generator.next()
        let high = stamp << 16 | 0x7000 | (random >> 52 & 0x0FFF)
        let low = 0x8000_0000_0000_0000 | (more & 0x3FFF_FFFF_FFFF_FFFF)
        return format(high: high, low: low)
    }

    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lower-case hex.
    static func format(high: UInt64, low: UInt64) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var bytes = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        var position = 0
        for (word, count) in [(high, 16), (low, 16)] {
            for index in 0..<count {
                if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
                bytes[position] = digits[Int(word >> UInt64(60 - 4 * index) & 0xF)]
                position += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A date as whole milliseconds since 1970, as every stored time is kept: NaN is 0, and the
/// value is clamped to ±10,000 years before the conversion (an infinity is the bound on its side).
package enum EpochMilliseconds {
    package static func of(_ date: Date) -> Int {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard !value.isNaN else { return 0 }
        return Int(min(max(value, -315_537_897_600_000), 315_537_897_600_000))
    }
}

extension Date {
    /// The date as stored: whole milliseconds (what both engines keep), so a record made in
    /// memory equals the one read back.
    package var storedPrecision: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }
}
