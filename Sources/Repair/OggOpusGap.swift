import Encoding

/// The audio a damaged place in an Ogg Opus stream cost, measured on the stream's own timeline,
/// and the silent packets that take its place, so a repaired stream keeps its length and the
/// audio after the damage stays at its time (as a FLAC repair makes a lost frame silence).
///
/// The timeline is the pages' granule positions (RFC 7845 §4): a page's granule counts every
/// sample up to the end of the last packet completed on it, so a packet's end is its page's
/// granule less the packets after it on that page, and what a damaged place lost is the start of
/// the first packet kept after it less the end of the last packet kept before it. Packets dropped
/// because a piece of them was lost fall inside that span and are counted with it.
enum OggOpusGap {
    /// The samples lost at `damage` (48 kHz), or nil when the timeline cannot say: the damage is
    /// before the first audio packet or after the last, a page around it has no granule, the
    /// packet after it ends on the end-of-stream page (whose granule is short of its packets by
    /// the end trimming, which nothing here tells), the span is negative or longer than an hour
    /// (granules not to be trusted), or it is no whole number of the shortest Opus frame
    /// (2.5 ms). 0 when nothing was lost there (stray bytes between whole pages).
    static func lostSamples(at damage: OggOpusStream.Damage, in stream: OggOpusStream) -> Int? {
        let after = damage.beforePacket
        guard after > stream.firstAudioPacket, after < stream.packets.count,
              !stream.pages[stream.packets[after].pageIndex].isEndOfStream,
              let endBefore = endPosition(ofPacket: after - 1, in: stream),
              let endAfter = endPosition(ofPacket: after, in: stream)
        else { return nil }
        let lost = endAfter - stream.packets[after].samples - endBefore
        guard lost >= 0, lost <= 3_600 * 48_000, lost % shortestFrame == 0 else { return nil }
        return lost
    }

    /// Where packet `index` ends on the stream's timeline, or nil when its page has no granule.
    private static func endPosition(ofPacket index: Int, in stream: OggOpusStream) -> Int? {
        let page = stream.packets[index].pageIndex
        let granule = stream.pages[page].granule
        guard granule >= 0 else { return nil }
        // Packets are in stream order: those after it on the same page follow it directly.
        let later = stream.packets[(index + 1)...].prefix { $0.pageIndex == page }.reduce(0) { $0 + $1.samples }
        return Int(granule) - later
    }

    /// The shortest Opus frame, 2.5 ms at 48 kHz: every packet lasts a whole number of them.
    static let shortestFrame = 120

    /// Silent packets lasting `samples` (a multiple of `shortestFrame`): 20 ms ones, then one each
    /// of 10, 5 and 2.5 ms as the remainder needs. Each is `OggPage.silentPacket` with its frame size.
    static func silentPackets(lasting samples: Int, for stream: OggOpusStream) -> [(bytes: [UInt8], samples: Int)] {
        var packets: [(bytes: [UInt8], samples: Int)] = []
        var left = samples
        for frame in [960, 480, 240, 120] {
            let packet = silentPacket(frameSamples: frame, for: stream)
            while left >= frame {
                packets.append((packet, frame))
                left -= frame
            }
        }
        return packets
    }

    /// One packet of digital silence of `frameSamples` for every elementary stream of `stream`.
    static func silentPacket(frameSamples: Int, for stream: OggOpusStream) -> [UInt8] {
        OggPage.silentPacket(frameSamples: frameSamples, streams: stream.elementaryStreams, coupledStreams: stream.coupledElementaryStreams)
    }
}
