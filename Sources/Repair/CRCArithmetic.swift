/// Arithmetic on the registers of a CRC with no reflection, an initial value of 0 and no final xor
/// (Ogg's CRC-32, FLAC's CRC-16), read as polynomials over GF(2) modulo the CRC's generator.
///
/// Such a CRC is linear: the register after bytes A and then B is crc(A)·x^(8|B|) ⊕ crc(B), modulo
/// the generator. So the CRC of any stretch follows from the CRCs of two prefixes without reading
/// the stretch again: crc(a..<b) = crc(..<b) ⊕ crc(..<a)·x^(8(b−a)). The searches through damage
/// (`OggCRCWindow`, `FLACFrameEndIndex`) use this to test a candidate page or frame in a fixed number
/// of steps, where reading it would cost up to its whole claimed length (64 KiB for an Ogg page, up
/// to 2 MiB for a FLAC frame): a long run of false headers made those searches take seconds per
/// MiB (known-limits, until 2026-11-28).
struct CRCArithmetic<Word: FixedWidthInteger & UnsignedInteger & Sendable>: Sendable {
    /// The generator without its leading term (0x04C11DB7 for Ogg, 0x8005 for FLAC).
    let generator: Word
    /// The register after one byte, from 0: `byte`·x^width modulo the generator.
    private let table: [Word]
    /// x^(8·2^k) modulo the generator for k = 0, 1, …: carrying a register over n zero bytes takes
    /// one product per set bit of n.
    private let zeroBytePowers: [Word]

    init(generator: Word) {
        self.generator = generator
        table = (0..<256).map { index in
            var register = Word(index) << (Word.bitWidth - 8)
            for _ in 0..<8 {
                register = register >> (Word.bitWidth - 1) != 0 ? (register &<< 1) ^ generator : register &<< 1
            }
            return register
        }
        var powers = [Word(1) << 8]  // x^8: one zero byte
        for _ in 1..<48 { powers.append(Self.product(powers[powers.count - 1], powers[powers.count - 1], generator: generator)) }
        zeroBytePowers = powers
    }

    /// The register after `byte`, continuing from `register`.
    @inline(__always)
    func adding(_ byte: UInt8, to register: Word) -> Word {
        (register &<< 8) ^ table[Int(UInt8(truncatingIfNeeded: register >> (Word.bitWidth - 8)) ^ byte)]
    }

    /// a·b modulo the generator.
    func product(_ a: Word, _ b: Word) -> Word { Self.product(a, b, generator: generator) }

    private static func product(_ a: Word, _ b: Word, generator: Word) -> Word {
        // Horner over b's bits from the top: result = result·x + bit·a, reducing x^width as it
        // appears (the bit shifted out stands for x^width, which is `generator` modulo the generator).
        var result: Word = 0
        for bit in stride(from: Word.bitWidth - 1, through: 0, by: -1) {
            result = result >> (Word.bitWidth - 1) != 0 ? (result &<< 1) ^ generator : result &<< 1
            if (b >> bit) & 1 != 0 { result ^= a }
        }
        return result
    }

    /// `register` carried on over `count` zero bytes: register·x^(8·count).
    func shifted(_ register: Word, overZeroBytes count: Int) -> Word {
        precondition(count >= 0 && count < 1 << zeroBytePowers.count, "a stretch of \(count) bytes")
        var result = register, remaining = count, bit = 0
        while remaining > 0 {
            if remaining & 1 != 0 { result = product(result, zeroBytePowers[bit]) }
            remaining >>= 1
            bit += 1
        }
        return result
    }

    /// x^(−8) modulo the generator: undoes one zero byte. With the generator G = x^width + g and g's
    /// constant term 1 (every CRC in use), x·(G − 1)/x = G − 1 ≡ 1, so x^(−1) = (x^width + g − 1)/x,
    /// which is g shifted down a bit with x^(width−1) set; x^(−8) is that squared three times.
    func zeroByteInverse() -> Word {
        precondition(generator & 1 == 1, "x is not invertible modulo \(generator)")
        let inverseOfX = (generator >> 1) | (Word(1) << (Word.bitWidth - 1))
        let squared = product(inverseOfX, inverseOfX), fourth = product(squared, squared)
        return product(fourth, fourth)
    }
}
