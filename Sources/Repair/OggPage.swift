import Encoding

/// An Ogg page's header (RFC 3533 §6), read and checked, and new pages built for a repair.
struct OggPageHeader {
    static let continued: UInt8 = 0x01
    /// 2^40 samples at 48 kHz, 265 days: any larger granule is damage, not a position.
    static let maximumTrustedGranule: Int64 = 1 << 40
    static let beginningOfStream: UInt8 = 0x02
    static let endOfStream: UInt8 = 0x04
    static let fixedHeaderLength = 27

    let offset: Int
    let flags: UInt8
    /// -1 when no packet ends on the page.
    let granule: Int64
    let serial: UInt32
    let sequence: UInt32
    /// The segment table: a value under 255 ends a packet.
    let lacing: [UInt8]

    var headerLength: Int { Self.fixedHeaderLength + lacing.count }
    var bodyLength: Int { lacing.reduce(0) { $0 + Int($1) } }
    var length: Int { headerLength + bodyLength }
    var range: Range<Int> { offset..<(offset + length) }
    var bodyOffset: Int { offset + headerLength }
    var isContinued: Bool { flags & Self.continued != 0 }
    var isEndOfStream: Bool { flags & Self.endOfStream != 0 }

    /// The page at `offset` if it is whole and its CRC matches; nil otherwise.
    static func parse(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> OggPageHeader? {
        guard let page = header(bytes, at: offset), page.hasMatchingCRC(in: bytes) else { return nil }
        return page
    }

    /// The page at `offset` if its header reads as one and it is whole, its CRC not yet checked
    /// (the search through damage checks it with `OggCRCWindow`); nil otherwise.
    static func header(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> OggPageHeader? {
        guard offset + fixedHeaderLength <= bytes.count, bytes.matches("OggS", at: offset), bytes[offset + 4] == 0 else { return nil }
        let segments = Int(bytes[offset + 26])
        guard offset + fixedHeaderLength + segments <= bytes.count else { return nil }
        let lacing = Array(bytes[(offset + fixedHeaderLength)..<(offset + fixedHeaderLength + segments)])
        // A granule below -1 (the only "none") or past `maximumTrustedGranule` is taken for none:
        // such values overflowed the repair's sums (a trap until 2026-11-28).
        let granule = Int64(bitPattern: bytes.littleEndian(at: offset + 6, bytes: 8))
        let page = OggPageHeader(offset: offset, flags: bytes[offset + 5],
                                 granule: granule < -1 || granule > maximumTrustedGranule ? -1 : granule,
                                 serial: UInt32(bytes.littleEndian(at: offset + 14, bytes: 4)),
                                 sequence: UInt32(bytes.littleEndian(at: offset + 18, bytes: 4)), lacing: lacing)
        guard page.range.upperBound <= bytes.count else { return nil }
        return page
    }

    /// Whether the page's CRC, taken over its bytes with the CRC field as zeros, is the one stored.
    func hasMatchingCRC(in bytes: UnsafeRawBufferPointer) -> Bool {
        var crc = OggPage.crc32(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 22)]))
        crc = OggPage.crc32([0, 0, 0, 0], startingAt: crc)
        crc = OggPage.crc32(UnsafeRawBufferPointer(rebasing: bytes[(offset + 26)..<range.upperBound]), startingAt: crc)
        return crc == UInt32(bytes.littleEndian(at: offset + 22, bytes: 4))
    }

    /// A whole page with its CRC.
    static func build(flags: UInt8, granule: Int64, serial: UInt32, sequence: UInt32, lacing: [UInt8], body: [UInt8]) -> [UInt8] {
        var page = Array("OggS".utf8) + [0, flags]
        page.appendLittleEndian(UInt64(bitPattern: granule), bytes: 8)
        page.appendLittleEndian(UInt64(serial), bytes: 4)
        page.appendLittleEndian(UInt64(sequence), bytes: 4)
        page += [0, 0, 0, 0, UInt8(lacing.count)]
        page += lacing
        page += body
        page.putLittleEndian(UInt64(OggPage.crc32(page)), bytes: 4, at: 22)
        return page
    }

    /// The lacing values for a packet of `length` bytes: 255s, then the remainder (0 when a
    /// multiple of 255, so the packet's end is marked).
    static func lacing(forPacketOf length: Int) -> [UInt8] {
        [UInt8](repeating: 255, count: length / 255) + [UInt8(length % 255)]
    }
}

/// The number of 48 kHz samples an Opus packet decodes to, from its TOC byte and frame count
/// (RFC 6716 §3.1); 0 for a packet too short to say. For a multistream packet the first stream's
/// TOC speaks for all (every stream of a packet has the same duration).
func opusPacketSamples(_ first: UInt8, _ second: UInt8?) -> Int {
    let config = Int(first >> 3)
    let frameSamples: Int
    switch config {
    case 0..<12: frameSamples = [480, 960, 1920, 2880][config % 4]
    case 12..<16: frameSamples = [480, 960][config % 2]
    default: frameSamples = [120, 240, 480, 960][config % 4]
    }
    let frames: Int
    switch first & 0x3 {
    case 0: frames = 1
    case 1, 2: frames = 2
    default:
        guard let second else { return 0 }
        frames = Int(second & 0x3F)
    }
    return frameSamples * frames
}

/// Whether each elementary stream's part of a multistream Opus packet lasts as long as the first
/// (RFC 7845 §5.1.1: every stream codes the same time; libopus's decoder refuses a packet whose
/// parts differ, which its framing check alone lets through). Parts before the last are
/// self-delimited (RFC 6716 appendix B); false when one of them cannot be read.
func opusStreamsLastAlike(_ packet: [UInt8], streams: Int) -> Bool {
    var start = 0
    var durations: [Int] = []
    for _ in 0..<(streams - 1) {
        guard let (samples, next) = selfDelimitedOpusPart(packet, from: start) else { return false }
        durations.append(samples)
        start = next
    }
    guard start < packet.count else { return false }
    durations.append(opusPacketSamples(packet[start], start + 1 < packet.count ? packet[start + 1] : nil))
    return durations.allSatisfy { $0 == durations[0] }
}

/// One self-delimited Opus packet from `start`: its samples and where the next begins; nil when
/// its lengths run past the end. Frame lengths are one byte under 252, else two (b0 + 4 × b1).
private func selfDelimitedOpusPart(_ packet: [UInt8], from start: Int) -> (samples: Int, next: Int)? {
    var position = start + 1
    func length() -> Int? {
        guard position < packet.count else { return nil }
        let first = Int(packet[position])
        position += 1
        guard first >= 252 else { return first }
        guard position < packet.count else { return nil }
        defer { position += 1 }
        return first + 4 * Int(packet[position])
    }
    guard start < packet.count else { return nil }
    let toc = packet[start]
    var bytes: Int
    var frames = 1
    switch toc & 0x3 {
    case 0: guard let size = length() else { return nil }; bytes = size
    case 1: guard let size = length() else { return nil }; bytes = 2 * size; frames = 2
    case 2: guard let first = length(), let second = length() else { return nil }; bytes = first + second; frames = 2
    default:
        guard position < packet.count else { return nil }
        let count = packet[position]
        position += 1
        frames = Int(count & 0x3F)
        var padding = 0
        if count & 0x40 != 0 {
            while true {
                guard position < packet.count else { return nil }
                let byte = Int(packet[position])
                position += 1
                padding += byte == 255 ? 254 : byte
                if byte != 255 { break }
            }
        }
        if count & 0x80 != 0 {
            bytes = 0
            for _ in 0..<frames { guard let size = length() else { return nil }; bytes += size }
        } else {
            guard let size = length() else { return nil }
            bytes = frames * size
        }
        bytes += padding
    }
    let next = position + bytes
    guard frames >= 1, next <= packet.count else { return nil }
    return (opusPacketSamples(toc, UInt8(truncatingIfNeeded: frames)), next)
}

