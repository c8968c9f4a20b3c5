/// The checksums of FLAC, table-driven, pure functions over bytes. (Ogg's CRC-32 is `Encoding`'s
/// `OggPage.crc32`, which hark's own Ogg page uses too.)
///
/// - FLAC frame header: CRC-8, polynomial x⁸+x²+x¹+1 (0x07), initial value 0 (RFC 9639 §9.1.8).
/// - FLAC frame: CRC-16, polynomial x¹⁶+x¹⁵+x²+1 (0x8005), initial value 0 (RFC 9639 §9.3). With
///   no final xor and no reflection, the CRC of a frame *including* its stored big-endian CRC is 0,
///   which is how `FLACFrameWalker` finds where a frame ends without decoding it.
enum Checksums {
    static let crc8Table: [UInt8] = (0..<256).map { index in
        var crc = UInt8(index)
        for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        return crc
    }

    static let crc16Table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x8005 : crc << 1 }
        return crc
    }

    static func crc8<Bytes: Sequence>(_ bytes: Bytes) -> UInt8 where Bytes.Element == UInt8 {
        var crc: UInt8 = 0
        for byte in bytes { crc = crc8Table[Int(crc ^ byte)] }
        return crc
    }

    /// Continues a FLAC CRC-16 over `bytes`.
    static func crc16<Bytes: Sequence>(_ bytes: Bytes, startingAt start: UInt16 = 0) -> UInt16 where Bytes.Element == UInt8 {
        var crc = start
        for byte in bytes { crc = (crc << 8) ^ crc16Table[Int(UInt8(crc >> 8) ^ byte)] }
        return crc
    }

    @inline(__always)
    static func crc16(_ crc: UInt16, adding byte: UInt8) -> UInt16 {
        (crc << 8) ^ crc16Table[Int(UInt8(crc >> 8) ^ byte)]
    }
}
