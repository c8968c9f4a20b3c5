/// The one Ogg page hark writes itself (RFC 3533, RFC 7845): the end of an Opus recording that
/// stopped before any audio arrived, which libopusenc 0.2.1 cannot end (it asserts), also how
/// `hark repair` ends a file killed before its first audio page; the last page of a stream cut
/// short by a full disk, ended in place; and the page checksum, for the recorder's rewrite of the
/// OpusTags pages (`HeaderPatch`) and the repair's page checks.
public enum OggPage {
    /// An end-of-stream page holding one 20 ms Opus silence packet whose granule position equals
    /// the pre-skip, so decoders skip it all and return exactly 0 samples, as captured. The packet
    /// has a part for each of the stream's `streams` elementary streams (RFC 7845 mapping family 1
    /// has several), the first `coupledStreams` of them stereo.
    public static func silentEndOfStream(serialNumber: UInt32, sequence: UInt32, preSkip: Int,
                                         streams: Int, coupledStreams: Int) -> [UInt8] {
        let packet = silentPacket(frameSamples: 960, streams: streams, coupledStreams: coupledStreams)
        var page = [UInt8]("OggS".utf8)
        page += [0, 0x04]                                           // version 0; end of stream
        page += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(preSkip) >> (8 * $0)) }  // granule
        page += littleEndianBytes(serialNumber)
        page += littleEndianBytes(sequence)
        page += [0, 0, 0, 0]                                        // CRC, filled in below
        // The packet's lacing: 255s, then the rest (a repair may ask for OpusHead's 255 streams).
        let lacing = [UInt8](repeating: 255, count: packet.count / 255) + [UInt8(packet.count % 255)]
        page += [UInt8(lacing.count)] + lacing
        page += packet
        return withChecksum(page)
    }

    /// One packet of digital silence for every elementary stream of a stream (RFC 6716, RFC 7845
    /// §5.1.1): per stream a TOC byte for one CELT fullband frame of `frameSamples` (120, 240, 480
    /// or 960: configuration 28–31 for 2.5–20 ms; stereo for a coupled stream) and the two bytes
    /// 0xFF 0xFE, whose first range-coded symbol is CELT's silence flag, so the decoder writes
    /// zeros and reads no more. Streams before the last are self-delimited (RFC 6716 appendix B):
    /// their frame's length, 2, follows the TOC byte. A multistream decoder rejects a packet with
    /// fewer parts than it has streams.
    public static func silentPacket(frameSamples: Int, streams: Int, coupledStreams: Int) -> [UInt8] {
        let configuration: UInt8 = switch frameSamples {
        case 120: 28
        case 240: 29
        case 480: 30
        default: 31
        }
        var packet: [UInt8] = []
        for index in 0..<streams {
            let toc = configuration << 3 | (index < coupledStreams ? 0x04 : 0)
            packet += index < streams - 1 ? [toc, 2, 0xFF, 0xFE] : [toc, 0xFF, 0xFE]
        }
        return packet
    }

    /// The elementary streams and how many of them are coupled (stereo) for `channels` in
    /// `mappingFamily`: family 0 is one stream, coupled when two channels; family 1 is the Vorbis
    /// order's fixed split (RFC 7845 §5.1.1.2; libopus's `opus_multistream_surround_encoder_create`
    /// makes the same), e.g. 5.1 as four streams, two of them coupled.
    public static func elementaryStreams(channels: Int, mappingFamily: Int) -> (streams: Int, coupled: Int) {
        guard mappingFamily == 1, (1...8).contains(channels) else { return (1, channels == 2 ? 1 : 0) }
        let coupled = [0, 1, 1, 2, 2, 2, 3, 3][channels - 1]
        return (channels - coupled, coupled)
    }

    /// `page`, a whole Ogg page holding audio (a granule position that is neither 0, as header
    /// pages have, nor -1, as a page where no packet ends has), with the end-of-stream flag set
    /// and its checksum made again; nil for anything else (not one whole page, a header page).
    public static func endingTheStream(_ page: [UInt8]) -> [UInt8]? {
        guard page.count >= 27, page[0..<4].elementsEqual("OggS".utf8), page[4] == 0 else { return nil }
        let segments = Int(page[26])
        guard page.count >= 27 + segments,
              page.count == 27 + segments + page[27..<(27 + segments)].reduce(0, { $0 + Int($1) }) else { return nil }
        guard let granule = granulePosition(of: page), granule != 0, granule != UInt64.max else { return nil }
        var ended = page
        ended[5] |= 0x04
        return withChecksum(ended)
    }

    /// `page` (a whole page) with its CRC field computed again for the bytes it holds: over the
    /// page with that field zero.
    public static func withChecksum(_ page: [UInt8]) -> [UInt8] {
        var sealed = page
        sealed.replaceSubrange(22..<26, with: [0, 0, 0, 0])
        sealed.replaceSubrange(22..<26, with: littleEndianBytes(crc32(sealed)))
        return sealed
    }

    /// The granule position of `page` (bytes starting with a page header), or nil for no page.
    public static func granulePosition(of page: [UInt8]) -> UInt64? {
        guard page.count >= 14, page[0..<4].elementsEqual("OggS".utf8) else { return nil }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(page[6 + $1]) << (8 * $1) }
    }

    /// The pre-skip OpusHead declares (48 kHz samples a decoder drops first), from the bytes of a
    /// stream's first page; nil when they are not a page holding OpusHead.
    public static func opusHeadPreSkip(firstPage page: [UInt8]) -> Int? {
        guard page.count >= 27, page[0..<4].elementsEqual("OggS".utf8) else { return nil }
        let packet = 27 + Int(page[26])
        guard page.count >= packet + 12, page[packet..<(packet + 8)].elementsEqual("OpusHead".utf8) else { return nil }
        return Int(page[packet + 10]) | Int(page[packet + 11]) << 8
    }

    private static func littleEndianBytes(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, no reflection, initial value 0, no final xor, over a
    /// page whose CRC field holds zeros; `startingAt` continues one over a page read in pieces.
    public static func crc32<Bytes: Sequence>(_ bytes: Bytes, startingAt start: UInt32 = 0) -> UInt32 where Bytes.Element == UInt8 {
        var crc = start
        for byte in bytes { crc = (crc << 8) ^ crcTable[Int(UInt8(crc >> 24) ^ byte)] }
        return crc
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index) << 24
        for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        return crc
    }
}
