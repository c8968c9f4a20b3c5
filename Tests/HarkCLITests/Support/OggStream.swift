import Foundation

/// An Ogg page (RFC 3533) as the tests read it, with no code from hark: header fields and body.
struct OggPage {
    let headerType: UInt8
    let granulePosition: Int64
    let serialNumber: UInt32
    let sequenceNumber: UInt32
    /// The segment table: a packet ends at every lacing value below 255.
    let lacingValues: [UInt8]
    let body: [UInt8]

    var isContinuation: Bool { headerType & 0x01 != 0 }
    var isBeginningOfStream: Bool { headerType & 0x02 != 0 }
    var isEndOfStream: Bool { headerType & 0x04 != 0 }
    /// The page's length in the file: the 27-byte header, its segment table and its body.
    var byteCount: Int { 27 + lacingValues.count + body.count }

    /// The whole pages a file holds, from its start.
    static func pages(of data: Data) -> [OggPage] { completePages(in: [UInt8](data)).pages }

    /// The whole pages at the start of `bytes` (a stream still arriving), and how many bytes they
    /// take; a page cut short at the end is left for later.
    static func completePages(in bytes: [UInt8], from start: Int = 0) -> (pages: [OggPage], end: Int) {
        var pages: [OggPage] = []
        var offset = start
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * $1) } }
        while offset + 27 <= bytes.count, bytes[offset..<offset + 4].elementsEqual("OggS".utf8) {
            let segments = Int(bytes[offset + 26])
            guard offset + 27 + segments <= bytes.count else { break }
            let lacing = Array(bytes[(offset + 27)..<(offset + 27 + segments)])
            let bodyStart = offset + 27 + segments
            let bodyEnd = bodyStart + lacing.reduce(0) { $0 + Int($1) }
            guard bodyEnd <= bytes.count else { break }
            let granule = (0..<8).reduce(Int64(0)) { $0 | Int64(bytes[offset + 6 + $1]) << (8 * $1) }
            pages.append(OggPage(headerType: bytes[offset + 5], granulePosition: granule, serialNumber: u32(offset + 14),
                                 sequenceNumber: u32(offset + 18), lacingValues: lacing, body: Array(bytes[bodyStart..<bodyEnd])))
            offset = bodyEnd
        }
        return (pages, offset)
    }

    /// The packets of a stream's pages, joined across page boundaries, each with the index of the
    /// page it ends on.
    static func packets(of pages: [OggPage]) -> [(bytes: [UInt8], page: Int)] {
        var packets: [(bytes: [UInt8], page: Int)] = []
        var current: [UInt8] = []
        for (index, page) in pages.enumerated() {
            var offset = 0
            for value in page.lacingValues {
                current += page.body[offset..<offset + Int(value)]
                offset += Int(value)
                if value < 255 {
                    packets.append((current, index))
                    current = []
                }
            }
        }
        return packets
    }
}

/// The identification header of an Ogg Opus stream (RFC 7845 §5.1).
struct OpusHead {
    let channels: Int
    /// 48 kHz samples the decoder drops at the start: the encoder's lookahead.
    let preSkip: Int
    let inputSampleRate: Int

    init?(_ packet: [UInt8]) {
        guard packet.count >= 19, packet.prefix(8).elementsEqual("OpusHead".utf8) else { return nil }
        channels = Int(packet[9])
        preSkip = Int(packet[10]) | Int(packet[11]) << 8
        inputSampleRate = (0..<4).reduce(0) { $0 | Int(packet[12 + $1]) << (8 * $1) }
    }
}

/// An Opus packet's table-of-contents byte (RFC 6716 §3.1).
struct OpusTOC {
    /// 0–11 SILK-only, 12–15 hybrid, 16–31 CELT-only; within each, bandwidth and frame duration.
    let configuration: Int
    let isStereo: Bool
    /// Frames in the packet: code 0 one, codes 1 and 2 two, code 3 as its frame count byte says.
    let frameCount: Int

    init?(_ packet: [UInt8]) {
        guard let toc = packet.first else { return nil }
        configuration = Int(toc >> 3)
        isStereo = toc & 0x04 != 0
        switch toc & 0x03 {
        case 0: frameCount = 1
        case 1, 2: frameCount = 2
        default:
            guard packet.count >= 2 else { return nil }
            frameCount = Int(packet[1] & 0x3F)
        }
    }

    /// One frame's duration in 48 kHz samples.
    var samplesPerFrame: Int {
        switch configuration {
        case 0..<12: [480, 960, 1920, 2880][configuration % 4]    // SILK: 10, 20, 40, 60 ms
        case 12..<16: [480, 960][configuration % 2]                // hybrid: 10, 20 ms
        default: [120, 240, 480, 960][configuration % 4]           // CELT: 2.5, 5, 10, 20 ms
        }
    }

    /// The packet's duration in 48 kHz samples.
    var samples: Int { samplesPerFrame * frameCount }
}
