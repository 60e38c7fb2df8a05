/// A QR code (ISO/IEC 18004) of bytes: byte mode, versions 1 to 40, error-correction levels L, M,
/// Q and H, the mask chosen by the standard's four penalty rules. Written for the links' QR
/// codes (the admin API's `GET /api/links/{id}/qr`, the dashboard) and proved against a real
/// decoder (`zbarimg`) in the tests.
package struct QRCode: Sendable, Hashable {
    /// How much of the symbol may be damaged and still read: about 7 %, 15 %, 25 % and 30 %.
    package enum Level: String, Sendable, Hashable, CaseIterable {
        case low = "L", medium = "M", quartile = "Q", high = "H"

        /// The two bits the format information gives the level.
        fileprivate var formatBits: Int {
            switch self {
            case .low: 1
            case .medium: 0
            case .quartile: 3
            case .high: 2
            }
        }

        fileprivate var index: Int {
            switch self {
            case .low: 0
            case .medium: 1
            case .quartile: 2
            case .high: 3
            }
        }
    }

    /// Why bytes cannot become a QR code.
    package struct TooLong: Error, Sendable, Hashable {
        /// How many bytes were given, and the most the level holds (in version 40).
        package let bytes: Int
        package let capacity: Int
    }

    /// The version (1…40): the symbol is `17 + 4 × version` modules a side.
    package let version: Int
    /// The error-correction level.
    package let level: Level
    /// The mask applied (0…7).
    package let mask: Int
    /// The modules, row by row: `true` is dark.
    package let modules: [[Bool]]

    /// Modules a side.
    package var size: Int { modules.count }

    /// The smallest symbol of `level` that holds `bytes`.
    /// - Throws: ``TooLong`` when even version 40 cannot.
    package init(bytes: [UInt8], level: Level = .medium) throws(TooLong) {
        guard
            let version = (1...40).first(where: {
                Self.dataCodewords(version: $0, level: level) * 8 >= Self.bitsNeeded(bytes.count, version: $0)
            })
        else {
            throw TooLong(bytes: bytes.count, capacity: Self.capacity(level: level))
        }
        var matrix = Matrix(version: version)
        matrix.drawFunctionPatterns()
        matrix.place(Self.codewords(bytes, version: version, level: level))
        var best: (penalty: Int, mask: Int, modules: [[Bool]])?
        for mask in 0..<8 {
            var candidate = matrix
            candidate.apply(mask: mask)
            candidate.drawFormat(level: level, mask: mask)
            let penalty = candidate.penalty()
            if best.map({ penalty < $0.penalty }) ?? true { best = (penalty, mask, candidate.modules) }
        }
        self.version = version
        self.level = level
        self.mask = best?.mask ?? 0
        self.modules = best?.modules ?? matrix.modules
    }

    /// The text's UTF-8 as a QR code.
    package init(text: String, level: Level = .medium) throws(TooLong) {
        try self.init(bytes: Array(text.utf8), level: level)
    }

    /// The most bytes a symbol of `level` holds (version 40).
    package static func capacity(level: Level) -> Int {
        (dataCodewords(version: 40, level: level) * 8 - 4 - 16) / 8
    }

    // MARK: The data

    /// Bits for byte mode: the mode, the count, the bytes.
    private static func bitsNeeded(_ count: Int, version: Int) -> Int {
        4 + countBits(version) + count * 8
    }

    /// The length field's width in byte mode: 8 bits up to version 9, 16 after.
    private static func countBits(_ version: Int) -> Int {
        version <= 9 ? 8 : 16
    }

    /// The data and error-correction codewords in the order they are placed: the data blocks
    /// interleaved, then their error-correction codewords interleaved.
    private static func codewords(_ bytes: [UInt8], version: Int, level: Level) -> [UInt8] {
        let capacity = dataCodewords(version: version, level: level)
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: countBits(version))
        for byte in bytes { bits.append(Int(byte), count: 8) }
        bits.append(0, count: min(4, capacity * 8 - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var data = bits.bytes
        var pad: UInt8 = 0xEC
        while data.count < capacity {
            data.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }

        let blockCount = Tables.blocks[level.index][version]
        let eccLength = Tables.eccPerBlock[level.index][version]
        let total = rawModules(version) / 8
        let shortBlocks = blockCount - total % blockCount
        let shortLength = total / blockCount
        let generator = ReedSolomon.generator(degree: eccLength)
        var blocks: [(data: [UInt8], ecc: [UInt8])] = []
        var offset = 0
        for index in 0..<blockCount {
            let length = shortLength - eccLength + (index < shortBlocks ? 0 : 1)
            let block = Array(data[offset..<offset + length])
            offset += length
            blocks.append((block, ReedSolomon.remainder(block, generator: generator)))
        }
        var result: [UInt8] = []
        result.reserveCapacity(total)
        for index in 0..<(shortLength - eccLength + 1) {
            for block in blocks where index < block.data.count { result.append(block.data[index]) }
        }
        for index in 0..<eccLength {
            for block in blocks { result.append(block.ecc[index]) }
        }
        return result
    }

    /// The data codewords a symbol holds (the rest correct errors).
    static func dataCodewords(version: Int, level: Level) -> Int {
        rawModules(version) / 8 - Tables.eccPerBlock[level.index][version] * Tables.blocks[level.index][version]
    }

    /// The modules that carry codewords (and the few remainder bits): all but the function
    /// patterns, the format and the version information.
    static func rawModules(_ version: Int) -> Int {
        var result = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            result -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { result -= 36 }
        }
        return result
    }

    /// The centres of the alignment patterns along each axis.
    static func alignmentPositions(_ version: Int) -> [Int] {
        guard version > 1 else { return [] }
        let count = version / 7 + 2
        let step = version == 32 ? 26 : (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
        let size = 17 + 4 * version
        return [6] + (1..<count).map { size - 7 - (count - 1 - $0) * step }
    }
}

/// Bits appended most significant first.
private struct BitBuffer {
    private(set) var count = 0
    private(set) var bytes: [UInt8] = []

    mutating func append(_ value: Int, count length: Int) {
        guard length > 0 else { return }
        for shift in stride(from: length - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (count % 8)) }
            count += 1
        }
    }
}

/// Reed–Solomon over GF(2⁸) with the QR code's polynomial x⁸ + x⁴ + x³ + x² + 1.
private enum ReedSolomon {
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var product = 0
        for bit in stride(from: 7, through: 0, by: -1) {
            product = (product << 1) ^ ((product >> 7) * 0x11D)
            if (Int(b) >> bit) & 1 == 1 { product ^= Int(a) }
        }
        return UInt8(product & 0xFF)
    }

    /// The generator of `degree`: the product of (x − αⁱ) for i below `degree`, its leading 1
    /// left out, highest power first.
    static func generator(degree: Int) -> [UInt8] {
        var coefficients = [UInt8](repeating: 0, count: degree)
        coefficients[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                coefficients[index] = multiply(coefficients[index], root)
                if index + 1 < degree { coefficients[index] ^= coefficients[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return coefficients
    }

    /// The error-correction codewords of `data`: its remainder by the generator.
    static func remainder(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for index in 0..<result.count { result[index] ^= multiply(generator[index], factor) }
        }
        return result
    }
}

/// The symbol being built: its modules and which are function patterns.
private struct Matrix {
    let version: Int
    let size: Int
    var modules: [[Bool]]
    var isFunction: [[Bool]]

    init(version: Int) {
        self.version = version
        size = 17 + 4 * version
        modules = Array(repeating: Array(repeating: false, count: size), count: size)
        isFunction = modules
    }

    mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y][x] = dark
        isFunction[y][x] = true
    }

    mutating func drawFunctionPatterns() {
        for index in 0..<size {
            set(6, index, index % 2 == 0)
            set(index, 6, index % 2 == 0)
        }
        for (x, y) in [(3, 3), (size - 4, 3), (3, size - 4)] { drawFinder(x, y) }
        let positions = QRCode.alignmentPositions(version)
        for (i, x) in positions.enumerated() {
            for (j, y) in positions.enumerated() {
                let corner = (i == 0 && j == 0) || (i == 0 && j == positions.count - 1) || (i == positions.count - 1 && j == 0)
                if !corner { drawAlignment(x, y) }
            }
        }
        // Reserved now, written once the mask is known.
        drawFormat(level: .medium, mask: 0)
        drawVersion()
    }

    /// A finder pattern centred at (x, y), with its light separator.
    private mutating func drawFinder(_ x: Int, _ y: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let (column, row) = (x + dx, y + dy)
                guard (0..<size).contains(column), (0..<size).contains(row) else { continue }
                let distance = max(abs(dx), abs(dy))
                set(column, row, distance != 2 && distance != 4)
            }
        }
    }

    private mutating func drawAlignment(_ x: Int, _ y: Int) {
        for dy in -2...2 {
            for dx in -2...2 { set(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
        }
    }

    /// The format information (level and mask, BCH-coded) in both copies, and the dark module.
    mutating func drawFormat(level: QRCode.Level, mask: Int) {
        let data = level.formatBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        for index in 0...5 { set(8, index, bit(index)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for index in 9..<15 { set(14 - index, 8, bit(index)) }
        for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
        set(8, size - 8, true)
    }

    /// The version information (versions 7 and above), BCH-coded, in both corners.
    private mutating func drawVersion() {
        guard version >= 7 else { return }
        var remainder = version
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        let bits = version << 12 | remainder
        for index in 0..<18 {
            let dark = (bits >> index) & 1 == 1
            let (a, b) = (size - 11 + index % 3, index / 3)
            set(a, b, dark)
            set(b, a, dark)
        }
    }

    /// The codewords in the zigzag of two-module columns, right to left, skipping the timing
    /// column and every function module.
    mutating func place(_ codewords: [UInt8]) {
        var bitIndex = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for offset in 0..<2 {
                    let x = right - offset
                    let upward = (right + 1) & 2 == 0
                    let y = upward ? size - 1 - vertical : vertical
                    guard !isFunction[y][x], bitIndex < codewords.count * 8 else { continue }
                    modules[y][x] = (codewords[bitIndex >> 3] >> (7 - UInt8(bitIndex & 7))) & 1 == 1
                    bitIndex += 1
                }
            }
            right -= 2
        }
    }

    /// Flips the data modules where mask `mask`'s condition holds.
    mutating func apply(mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y][x] {
                let flip: Bool =
                    switch mask {
                    case 0: (x + y) % 2 == 0
                    case 1: y % 2 == 0
                    case 2: x % 3 == 0
                    case 3: (x + y) % 3 == 0
                    case 4: (x / 3 + y / 2) % 2 == 0
                    case 5: x * y % 2 + x * y % 3 == 0
                    case 6: (x * y % 2 + x * y % 3) % 2 == 0
                    default: ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                if flip { modules[y][x].toggle() }
            }
        }
    }

    /// The standard's penalty: runs of five or more, 2×2 blocks, finder-like patterns, and the
    /// dark share's distance from half.
    func penalty() -> Int {
        var result = 0
        let columns = (0..<size).map { x in (0..<size).map { modules[$0][x] } }
        for line in modules + columns {
            var run = 1
            for index in 1..<line.count {
                if line[index] == line[index - 1] {
                    run += 1
                } else {
                    if run >= 5 { result += 3 + run - 5 }
                    run = 1
                }
            }
            if run >= 5 { result += 3 + run - 5 }
            // 1:1:3:1:1 with four light modules on one side (the quiet zone counts as light).
            let padded = [Bool](repeating: false, count: 4) + line + [Bool](repeating: false, count: 4)
            for start in 0...(padded.count - 11) {
                let window = padded[start..<start + 11]
                if window.elementsEqual(Self.finderBefore) || window.elementsEqual(Self.finderAfter) { result += 40 }
            }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let color = modules[y][x]
                if modules[y][x + 1] == color && modules[y + 1][x] == color && modules[y + 1][x + 1] == color { result += 3 }
            }
        }
        let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
        let total = size * size
        result += abs(dark * 20 - total * 10) / total * 10
        return result
    }

    static let finderBefore = [false, false, false, false, true, false, true, true, true, false, true]
    static let finderAfter = [true, false, true, true, true, false, true, false, false, false, false]
}

/// The error-correction codewords per block and the blocks, by level (L, M, Q, H) and version
/// (index 0 unused), from ISO/IEC 18004's table 9.
private enum Tables {
    static let eccPerBlock: [[Int]] = [
        [
            -1, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28, 28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30,
            30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        [
            -1, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
            28, 28, 28, 28, 28, 28, 28, 28, 28,
        ],
        [
            -1, 13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30, 28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30,
            30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        [
            -1, 17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28, 30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30,
            30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
    ]
    static let blocks: [[Int]] = [
        [
            -1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8, 8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21,
            22, 24, 25,
        ],
        [
            -1, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37,
            38, 40, 43, 45, 47, 49,
        ],
        [
            -1, 1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20, 23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51,
            53, 56, 59, 62, 65, 68,
        ],
        [
            -1, 1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25, 25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57,
            60, 63, 66, 70, 74, 77, 81,
        ],
    ]
}

extension QRCode {
    /// The symbol as SVG, `pixels` wide and high (at least one pixel a module), with the
    /// four-module quiet zone the standard asks for: one path of dark squares on white.
    package func svg(pixels: Int) -> String {
        let side = size + 8
        var path = ""
        for (y, row) in modules.enumerated() {
            for (x, dark) in row.enumerated() where dark { path += "M\(x + 4) \(y + 4)h1v1h-1z" }
        }
        let width = max(pixels, side)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(width)" viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">\
            <rect width="\(side)" height="\(side)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>
            """
    }
}
