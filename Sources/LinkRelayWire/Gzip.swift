import Foundation
import LinkRelay

/// gzip (RFC 1952) over DEFLATE (RFC 1951), with no dependencies: Foundation has no gzip on
/// Linux, and LinkRelay has no package dependencies. Paylisher's analytics endpoint takes
/// gzip-compressed batches; the simulator unpacks them.
///
/// Compression is LZ77 (a 32 KiB window, hash chains) with DEFLATE's fixed Huffman codes: smaller
/// than dynamic codes would give, but simple and ample for JSON batches. Decompression reads
/// every block type.
package enum Gzip {
    /// `data` as a gzip member.
    package static func compress(_ data: Data) -> Data {
        var output = Data([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff])
        output.append(contentsOf: Deflate.compress([UInt8](data)))
        appendLittleEndian(CRC32.checksum(data), to: &output)
        appendLittleEndian(UInt32(truncatingIfNeeded: data.count), to: &output)
        return output
    }

    /// The data in a gzip member. Throws ``DeepLinkError`` `.decoding` for anything that is not
    /// valid gzip (or whose checksum or length does not match), and `.responseTooLarge` when it
    /// inflates past `maximumSize`.
    package static func decompress(_ data: Data, maximumSize: Int = 16 << 20) throws -> Data {
        let bytes = [UInt8](data)
        guard bytes.count >= 18, bytes[0] == 0x1f, bytes[1] == 0x8b, bytes[2] == 0x08 else {
            throw DeepLinkError(.decoding, "The body is not gzip.")
        }
        let flags = bytes[3]
        var index = 10
        if flags & 0x04 != 0 {  // FEXTRA
            guard index + 2 <= bytes.count else { throw truncated }
            index += 2 + Int(bytes[index]) | Int(bytes[index + 1]) << 8
        }
        for flag in [UInt8(0x08), 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: zero-terminated
            while index < bytes.count, bytes[index] != 0 { index += 1 }
            index += 1
        }
        if flags & 0x02 != 0 { index += 2 }  // FHCRC
        guard index <= bytes.count - 8 else { throw truncated }
        var inflater = Inflater(bytes: bytes, start: index, end: bytes.count - 8, maximumSize: maximumSize)
        let output = try inflater.run()
        let trailer = bytes.count - 8
        let crc = readLittleEndian(bytes, at: trailer)
        let size = readLittleEndian(bytes, at: trailer + 4)
        let result = Data(output)
        guard crc == CRC32.checksum(result), size == UInt32(truncatingIfNeeded: output.count) else {
            throw DeepLinkError(.decoding, "The gzip body's checksum or length does not match its data.")
        }
        return result
    }

    static let truncated = DeepLinkError(.decoding, "The gzip body is truncated.")

    private static func appendLittleEndian(_ value: UInt32, to data: inout Data) {
        for shift in stride(from: 0, to: 32, by: 8) { data.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    private static func readLittleEndian(_ bytes: [UInt8], at index: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[index + $1]) << UInt32(8 * $1) }
    }
}

/// CRC-32 (IEEE 802.3), as gzip uses it.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    static func checksum(_ data: Data) -> UInt32 {
        ~data.reduce(UInt32.max) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8) }
    }
}

/// DEFLATE's tables, shared by the compressor and the inflater.
enum DeflateTables {
    static let lengthBase: [Int] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
    ]
    static let lengthExtra: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase: [Int] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
        8193, 12289, 16385, 24577,
    ]
    static let distanceExtra: [Int] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    /// The fixed literal/length code lengths (RFC 1951 3.2.6).
    static let fixedLiteralLengths: [Int] = (0..<288).map { $0 < 144 ? 8 : $0 < 256 ? 9 : $0 < 280 ? 7 : 8 }
}

/// LZ77 with fixed Huffman codes, one final block.
enum Deflate {
    static func compress(_ input: [UInt8]) -> [UInt8] {
        var writer = BitWriter()
        writer.write(1, count: 1)  // BFINAL
        writer.write(1, count: 2)  // BTYPE = fixed Huffman
        let windowSize = 32_768
        var head = [Int](repeating: -1, count: 1 << 15)
        var previous = [Int](repeating: -1, count: windowSize)
        var position = 0
        func hash(_ index: Int) -> Int {
            (Int(input[index]) << 10 ^ Int(input[index + 1]) << 5 ^ Int(input[index + 2])) & 0x7fff
        }
        func insert(_ index: Int) {
            guard index + 2 < input.count else { return }
            let key = hash(index)
            previous[index % windowSize] = head[key]
            head[key] = index
        }
        while position < input.count {
            var bestLength = 0
            var bestDistance = 0
            if position + 2 < input.count {
                var candidate = head[hash(position)]
                var chain = 0
                while candidate >= 0, position - candidate <= windowSize, chain < 64 {
                    var length = 0
                    while length < 258, position + length < input.count, input[candidate + length] == input[position + length] {
                        length += 1
                    }
                    if length > bestLength {
                        bestLength = length
                        bestDistance = position - candidate
                        if length == 258 { break }
                    }
                    candidate = previous[candidate % windowSize]
                    chain += 1
                }
            }
            if bestLength >= 3 {
                writeLength(bestLength, to: &writer)
                writeDistance(bestDistance, to: &writer)
                for index in position..<(position + bestLength) { insert(index) }
                position += bestLength
            } else {
                writeLiteral(Int(input[position]), to: &writer)
                insert(position)
                position += 1
            }
        }
        writeLiteral(256, to: &writer)  // end of block
        return writer.finish()
    }

    /// A fixed-code literal/length symbol, most significant bit first as Huffman codes are.
    private static func writeLiteral(_ symbol: Int, to writer: inout BitWriter) {
        switch symbol {
        case 0..<144: writer.writeHuffman(0x30 + symbol, count: 8)
        case 144..<256: writer.writeHuffman(0x190 + symbol - 144, count: 9)
        case 256..<280: writer.writeHuffman(symbol - 256, count: 7)
        default: writer.writeHuffman(0xC0 + symbol - 280, count: 8)
        }
    }

    private static func writeLength(_ length: Int, to writer: inout BitWriter) {
        var code = DeflateTables.lengthBase.count - 1
        while DeflateTables.lengthBase[code] > length { code -= 1 }
        writeLiteral(257 + code, to: &writer)
        writer.write(length - DeflateTables.lengthBase[code], count: DeflateTables.lengthExtra[code])
    }

    private static func writeDistance(_ distance: Int, to writer: inout BitWriter) {
        var code = DeflateTables.distanceBase.count - 1
        while DeflateTables.distanceBase[code] > distance { code -= 1 }
        writer.writeHuffman(code, count: 5)
        writer.write(distance - DeflateTables.distanceBase[code], count: DeflateTables.distanceExtra[code])
    }
}

/// Bits, least significant first, as DEFLATE packs them.
struct BitWriter {
    private var bytes: [UInt8] = []
    private var buffer: UInt32 = 0
    private var filled = 0

    mutating func write(_ value: Int, count: Int) {
        guard count > 0 else { return }
        buffer |= UInt32(value) << UInt32(filled)
        filled += count
        while filled >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: buffer))
            buffer >>= 8
            filled -= 8
        }
    }

    /// A Huffman code: its bits go out most significant first.
    mutating func writeHuffman(_ code: Int, count: Int) {
        var reversed = 0
        for bit in 0..<count where code & (1 << bit) != 0 { reversed |= 1 << (count - 1 - bit) }
        write(reversed, count: count)
    }

    mutating func finish() -> [UInt8] {
        if filled > 0 { bytes.append(UInt8(truncatingIfNeeded: buffer)) }
        return bytes
    }
}
