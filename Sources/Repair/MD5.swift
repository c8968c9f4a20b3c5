/// MD5 (RFC 1321), for FLAC's STREAMINFO signature: the MD5 of the decoded samples, each as a
/// little-endian signed integer of (bits + 7) / 8 bytes, channels interleaved. libFLAC computes it
/// while encoding but does not export its MD5 functions, so a repair computes it here.
///
/// Not for security: MD5 is what the FLAC format fixes, nothing more.
struct MD5 {
    private var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476)
    /// Bytes not yet making up a 64-byte block (fewer than 64).
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    private static let shifts: [UInt32] = [7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                           5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
                                           4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                           6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21]
    /// floor(|sin(i + 1)| × 2³²), as RFC 1321 defines them.
    private static let constants: [UInt32] = (0..<64).map { UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4_294_967_296)) }

    init() { pending.reserveCapacity(64) }

    mutating func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        Array(bytes).withUnsafeBytes { update($0) }
    }

    /// Whole blocks are compressed straight from `bytes`; only a tail waits in `pending`.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var index = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<take])
            index = take
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress($0.baseAddress!) }
            pending.removeAll(keepingCapacity: true)
        }
        while index + 64 <= bytes.count {
            compress(bytes.baseAddress! + index)
            index += 64
        }
        if index < bytes.count { pending.append(contentsOf: bytes[index...]) }
    }

    /// The 16-byte digest of everything passed to `update` so far.
    func digest() -> [UInt8] {
        var copy = self
        return copy.finish()
    }

    private mutating func finish() -> [UInt8] {
        let bitLength = length &* 8
        var tail: [UInt8] = [0x80]
        let afterPad = (pending.count + 1) % 64
        tail += [UInt8](repeating: 0, count: afterPad <= 56 ? 56 - afterPad : 120 - afterPad)
        for shift in stride(from: 0, to: 64, by: 8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        update(tail)
        var digest: [UInt8] = []
        for word in [state.0, state.1, state.2, state.3] {
            for shift in stride(from: 0, to: 32, by: 8) { digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return digest
    }

    /// One 64-byte block: its sixteen little-endian words, four rounds of sixteen steps.
    private mutating func compress(_ block: UnsafeRawPointer) {
        var words: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
                    UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(start: block, count: 64)) }
        var (a, b, c, d) = state
        Self.constants.withUnsafeBufferPointer { constants in
            Self.shifts.withUnsafeBufferPointer { shifts in
                withUnsafeBytes(of: &words) { raw in
                    let word = raw.bindMemory(to: UInt32.self)
                    for round in 0..<64 {
                        var f: UInt32
                        let g: Int
                        switch round {
                        case 0..<16: f = (b & c) | (~b & d); g = round
                        case 16..<32: f = (d & b) | (~d & c); g = (5 &* round &+ 1) & 15
                        case 32..<48: f = b ^ c ^ d; g = (3 &* round &+ 5) & 15
                        default: f = c ^ (b | ~d); g = (7 &* round) & 15
                        }
                        f = f &+ a &+ constants[round] &+ UInt32(littleEndian: word[g])
                        a = d
                        d = c
                        c = b
                        let shift = shifts[round]
                        b = b &+ ((f << shift) | (f >> (32 - shift)))
                    }
                }
            }
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}

#if canImport(Glibc)
import Glibc
#endif
