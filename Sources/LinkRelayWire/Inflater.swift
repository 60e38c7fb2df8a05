import Foundation
import LinkRelay

/// DEFLATE decoding (RFC 1951): stored, fixed-code and dynamic-code blocks, with a bound on the
/// output so that a small hostile body cannot inflate without limit.
struct Inflater {
    private let bytes: [UInt8]
    private let end: Int
    private let maximumSize: Int
    private var index: Int
    private var bitBuffer = 0
    private var bitCount = 0
    private var output: [UInt8] = []

    init(bytes: [UInt8], start: Int, end: Int, maximumSize: Int) {
        self.bytes = bytes
        self.index = start
        self.end = end
        self.maximumSize = maximumSize
    }

    /// A canonical Huffman code: how many codes of each length, and the symbols in code order.
    private struct Huffman {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int] = []

        init(lengths: [Int]) throws {
            for length in lengths { counts[length] += 1 }
            counts[0] = 0
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<16 { offsets[length] = offsets[length - 1] + counts[length - 1] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in lengths.enumerated() where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }
    }

    mutating func run() throws -> [UInt8] {
        var final = false
        while !final {
            final = try bits(1) == 1
            switch try bits(2) {
            case 0: try storedBlock()
            case 1:
                try codesBlock(
                    literals: Huffman(lengths: DeflateTables.fixedLiteralLengths),
                    distances: Huffman(lengths: [Int](repeating: 5, count: 30)))
            case 2: try dynamicBlock()
            default: throw DeepLinkError(.decoding, "The gzip body has an invalid DEFLATE block.")
            }
        }
        return output
    }

    private mutating func bits(_ count: Int) throws -> Int {
        while bitCount < count {
            guard index < end else { throw Gzip.truncated }
            bitBuffer |= Int(bytes[index]) << bitCount
            index += 1
            bitCount += 8
        }
        let value = bitBuffer & ((1 << count) - 1)
        bitBuffer >>= count
        bitCount -= count
        return value
    }

    private mutating func emit(_ byte: UInt8) throws {
        guard output.count < maximumSize else {
            throw DeepLinkError(.responseTooLarge, "The gzip body inflates to more than \(maximumSize) bytes.")
        }
        output.append(byte)
    }

    private mutating func storedBlock() throws {
        bitBuffer = 0
        bitCount = 0
        guard index + 4 <= end else { throw Gzip.truncated }
        let length = Int(bytes[index]) | Int(bytes[index + 1]) << 8
        let complement = Int(bytes[index + 2]) | Int(bytes[index + 3]) << 8
        guard length == ~complement & 0xffff else { throw DeepLinkError(.decoding, "A stored DEFLATE block is corrupt.") }
        index += 4
        guard index + length <= end else { throw Gzip.truncated }
        for byte in bytes[index..<(index + length)] { try emit(byte) }
        index += length
    }

    private mutating func decode(_ code: Huffman) throws -> Int {
        var value = 0
        var first = 0
        var position = 0
        for length in 1..<16 {
            value |= try bits(1)
            let count = code.counts[length]
            if value - count < first { return code.symbols[position + value - first] }
            position += count
            first = (first + count) << 1
            value <<= 1
        }
        throw DeepLinkError(.decoding, "The gzip body has an invalid Huffman code.")
    }

    private mutating func codesBlock(literals: Huffman, distances: Huffman) throws {
        while true {
            let symbol = try decode(literals)
            if symbol < 256 {
                try emit(UInt8(symbol))
            } else if symbol == 256 {
                return
            } else {
                let lengthCode = symbol - 257
                guard lengthCode < DeflateTables.lengthBase.count else { throw DeepLinkError(.decoding, "Invalid DEFLATE length.") }
                let length = DeflateTables.lengthBase[lengthCode] + (try bits(DeflateTables.lengthExtra[lengthCode]))
                let distanceCode = try decode(distances)
                guard distanceCode < DeflateTables.distanceBase.count else { throw DeepLinkError(.decoding, "Invalid DEFLATE distance.") }
                let distance = DeflateTables.distanceBase[distanceCode] + (try bits(DeflateTables.distanceExtra[distanceCode]))
                guard distance <= output.count else { throw DeepLinkError(.decoding, "A DEFLATE distance points before the data.") }
                for _ in 0..<length { try emit(output[output.count - distance]) }
            }
        }
    }

    private mutating func dynamicBlock() throws {
        let literalCount = try bits(5) + 257
        let distanceCount = try bits(5) + 1
        let codeLengthCount = try bits(4) + 4
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        var codeLengths = [Int](repeating: 0, count: 19)
        for position in 0..<codeLengthCount { codeLengths[order[position]] = try bits(3) }
        let lengthCode = try Huffman(lengths: codeLengths)
        var lengths: [Int] = []
        while lengths.count < literalCount + distanceCount {
            let symbol = try decode(lengthCode)
            switch symbol {
            case 0..<16: lengths.append(symbol)
            case 16:
                guard let last = lengths.last else { throw DeepLinkError(.decoding, "A DEFLATE code repeats nothing.") }
                lengths += Array(repeating: last, count: 3 + (try bits(2)))
            case 17: lengths += Array(repeating: 0, count: 3 + (try bits(3)))
            default: lengths += Array(repeating: 0, count: 11 + (try bits(7)))
            }
        }
        guard lengths.count == literalCount + distanceCount else { throw DeepLinkError(.decoding, "DEFLATE code lengths overflow.") }
        try codesBlock(
            literals: Huffman(lengths: Array(lengths[0..<literalCount])),
            distances: Huffman(lengths: Array(lengths[literalCount...])))
    }
}
