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
///
/// Registers are `UInt32` whatever the width, so the code is the same for both CRCs and needs no
/// generic specialisation (the tests run a debug build, where generic arithmetic costs tenfold).
struct CRCArithmetic: Sendable {
    /// The register's width in bits: 16 or 32.
    let width: Int
    /// The generator without its leading term (0x04C11DB7 for Ogg, 0x8005 for FLAC).
    let generator: UInt32
    /// The register's bits.
    private let mask: UInt32
    /// The register after one byte, from 0: `byte`·x^width modulo the generator.
    private let table: [UInt32]
    /// x^(8·2^k) modulo the generator for k = 0, 1, …: carrying a register over n zero bytes takes
    /// one product per set bit of n.
    private let zeroBytePowers: [UInt32]

    static let ogg = CRCArithmetic(width: 32, generator: 0x04C1_1DB7)
    static let flac = CRCArithmetic(width: 16, generator: 0x8005)

    init(width: Int, generator: UInt32) {
        precondition(width == 16 || width == 32, "a CRC of \(width) bits")
        self.width = width
        self.generator = generator
        let mask = width == 32 ? UInt32.max : (1 << width) - 1
        self.mask = mask
        let top = UInt32(1) << (width - 1)
        table = (0..<256).map { index in
            var register = UInt32(index) << (width - 8)
            for _ in 0..<8 { register = register & top != 0 ? ((register << 1) ^ generator) & mask : (register << 1) & mask }
            return register
        }
        var powers: [UInt32] = [1 << 8]  // x^8: one zero byte
        for _ in 1..<48 {
            powers.append(Self.product(powers[powers.count - 1], powers[powers.count - 1], width: width, generator: generator, mask: mask))
        }
        zeroBytePowers = powers
    }

    /// The register after `byte`, continuing from `register`.
    @inline(__always)
    func adding(_ byte: UInt8, to register: UInt32) -> UInt32 {
        ((register << 8) & mask) ^ table[Int(UInt8(truncatingIfNeeded: register >> (width - 8)) ^ byte)]
    }

    /// a·b modulo the generator.
    func product(_ a: UInt32, _ b: UInt32) -> UInt32 { Self.product(a, b, width: width, generator: generator, mask: mask) }

    private static func product(_ a: UInt32, _ b: UInt32, width: Int, generator: UInt32, mask: UInt32) -> UInt32 {
        // Horner over b's bits from the top: result = result·x + bit·a, reducing x^width as it
        // appears (the bit shifted out stands for x^width, which is `generator` modulo the generator).
        let top = UInt32(1) << (width - 1)
        var result: UInt32 = 0
        for bit in stride(from: width - 1, through: 0, by: -1) {
            result = result & top != 0 ? ((result << 1) ^ generator) & mask : (result << 1) & mask
            if (b >> UInt32(bit)) & 1 != 0 { result ^= a }
        }
        return result
    }

    /// `register` carried on over `count` zero bytes: register·x^(8·count).
    func shifted(_ register: UInt32, overZeroBytes count: Int) -> UInt32 {
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
    func zeroByteInverse() -> UInt32 {
        precondition(generator & 1 == 1, "x is not invertible modulo \(generator)")
        let inverseOfX = (generator >> 1) | (UInt32(1) << (width - 1))
        let squared = product(inverseOfX, inverseOfX), fourth = product(squared, squared)
        return product(fourth, fourth)
    }
}
