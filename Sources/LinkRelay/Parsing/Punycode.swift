/// Decodes internationalised host labels (RFC 3492 punycode, `xn--…`).
///
/// Foundation turns a custom-scheme link such as `myapp://商品/1` into `myapp://xn--jvrxl/1`.
/// For a custom scheme the host is the first path segment, so ``LinkParser`` decodes it back to
/// what the link's author wrote.
enum Punycode {
    /// `host` with each `xn--` label decoded; a label that does not decode is kept as it is.
    static func decodeHost(_ host: String) -> String {
        guard containsACEPrefix(host) else { return host }
        return host.split(separator: ".", omittingEmptySubsequences: false)
            .map { label in
                guard label.lowercased().hasPrefix("xn--"), let decoded = decodeLabel(label.dropFirst(4)) else {
                    return String(label)
                }
                return decoded
            }
            .joined(separator: ".")
    }

    /// Whether `host` has `xn--` in any case, without building a lower-cased copy (this runs
    /// for every custom-scheme link).
    private static func containsACEPrefix(_ host: String) -> Bool {
        let pattern: [UInt8] = [UInt8(ascii: "x"), UInt8(ascii: "n"), UInt8(ascii: "-"), UInt8(ascii: "-")]
        var matched = 0
        for byte in host.utf8 {
            // `| 0x20` lower-cases the two letters and leaves "-" as it is.
            let folded = byte | 0x20
            if folded == pattern[matched] {
                matched += 1
                if matched == pattern.count { return true }
            } else {
                matched = folded == pattern[0] ? 1 : 0
            }
        }
        return false
    }

    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700
    private static let initialBias = 72, initialN = 128

    static func decodeLabel(_ encoded: Substring) -> String? {
        guard !encoded.isEmpty else { return nil }
        var output: [Unicode.Scalar] = []
        var input = Array(encoded.unicodeScalars)
        if let delimiter = input.lastIndex(of: "-") {
            for scalar in input[..<delimiter] {
                guard scalar.isASCII else { return nil }
                output.append(scalar)
            }
            input = Array(input[(delimiter + 1)...])
        }
        var n = initialN, bias = initialBias, i = 0, position = 0
        while position < input.count {
            let oldI = i
            var weight = 1
            var k = base
            while true {
                guard position < input.count, let digit = digitValue(input[position]) else { return nil }
                position += 1
                let (product, overflow) = digit.multipliedReportingOverflow(by: weight)
                guard !overflow, i <= Int.max - product else { return nil }
                i += product
                let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if digit < t { break }
                weight *= base - t
                k += base
            }
            bias = adapt(delta: i - oldI, count: output.count + 1, first: oldI == 0)
            n += i / (output.count + 1)
            i %= output.count + 1
            guard let scalar = Unicode.Scalar(n) else { return nil }
            output.insert(scalar, at: i)
            i += 1
        }
        var result = ""
        result.unicodeScalars.append(contentsOf: output)
        return result
    }

    private static func digitValue(_ scalar: Unicode.Scalar) -> Int? {
        switch scalar.value {
        case 0x30...0x39: Int(scalar.value) - 0x30 + 26
        case 0x41...0x5A: Int(scalar.value) - 0x41
        case 0x61...0x7A: Int(scalar.value) - 0x61
        default: nil
        }
    }

    private static func adapt(delta: Int, count: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / count
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (((base - tMin + 1) * delta) / (delta + skew))
    }
}
