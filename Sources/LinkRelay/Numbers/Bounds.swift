import Foundation

extension Double {
    /// This value as a duration LinkRelay can wait for: NaN and anything below zero count as
    /// zero; everything else, `.infinity` included (no limit), stays as it is.
    package var clampedDuration: TimeInterval { self > 0 ? self : 0 }

    /// This value rounded toward zero as an `Int`: NaN is 0, and values beyond `Int`'s range are
    /// its bounds. `Int(_:)` on a `Double` traps on all three, so no value from outside (a
    /// screen size, a server's number, a configured duration) goes through it.
    package var saturatingInt: Int {
        guard !isNaN else { return 0 }
        // `Double(Int.max)` is 2^63, one past `Int.max`: anything that large does not fit.
        if self >= Double(Int.max) { return .max }
        if self <= Double(Int.min) { return .min }
        return Int(self)
    }
}
