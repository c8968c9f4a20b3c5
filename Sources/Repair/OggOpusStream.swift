/// An Ogg Opus file read page by page (RFC 7845): its intact pages, the packets they carry, what
/// is damaged between them and what is torn at the end.
///
/// Pages are found by their capture pattern and kept only when their CRC matches. A packet is kept
/// only when every piece of it is: one that began on a lost page, or whose end was lost, is dropped
/// with the damage. One logical stream only: a file multiplexing or chaining several is refused.
struct OggOpusStream {
    /// A chained or multiplexed file: another stream's pages beside or after this one's.
    static let moreThanOneStream = RepairFailure(.cannotRepair, "it holds more than one Ogg stream (chained or multiplexed), which repair does not handle")

    struct Packet {
        /// Its bytes in the file: one range per page it spans.
        var pieces: [Range<Int>]
        /// The page it ends on (an index into `pages`).
        var pageIndex: Int
        var samples: Int
        var length: Int { pieces.reduce(0) { $0 + $1.count } }
    }

    /// One gap between intact pages: the damaged bytes, and the packets it cost.
    struct Damage {
        var bytes: Range<Int>
        /// Whether pages' sequence numbers jump there (a page missing whole, or damaged).
        var sequenceGap: Bool
        /// The packet before which the gap falls (an index into `packets`).
        var beforePacket: Int
    }

    var pages: [OggPageHeader] = []
    var packets: [Packet] = []
    var damage: [Damage] = []
    /// Bytes after the last intact page, or after the end-of-stream page.
    var tail: Range<Int>?
    /// Whether a packet was left unfinished at the end of the last intact page.
    var endsInsidePacket = false
    /// Where the header packets (OpusHead, OpusTags) end: the first audio page starts here.
    var headerEnd = 0
    /// Index into `packets` of the first audio packet (2, after the two header packets; 1 when
    /// the OpusTags packet was lost).
    private(set) var firstAudioPacket = 2
    /// Whether the OpusTags page (or a page of it) was damaged while the audio after it is whole:
    /// the repair puts a new, empty OpusTags in its place. hark rewrites that page in place when
    /// a recording ends, so a power cut can leave it so.
    private(set) var tagsLost = false
    var channels = 0
    var preSkip = 0
    var mappingFamily = 0
    /// OpusHead's channel mapping: stream count, coupled count and table (family 1 and up).
    var streams = 1
    var coupledStreams = 0
    var mapping: [UInt8] = []
    /// The elementary streams every packet holds, and how many are stereo: OpusHead's counts for
    /// family 1 and up; one, stereo when two channels, for family 0.
    var elementaryStreams: Int { mappingFamily == 0 ? 1 : streams }
    var coupledElementaryStreams: Int { mappingFamily == 0 ? (channels == 2 ? 1 : 0) : coupledStreams }

    /// A stop signal (`shouldStop`) is looked for once per mebibyte the reading moves on, and ends
    /// it with `RepairFailure.interruptedAnalysis`.
    init(_ bytes: UnsafeRawBufferPointer, shouldStop: @escaping () -> Bool = { false }) throws(RepairFailure) {
        guard let first = OggPageHeader.parse(bytes, at: 0) else {
            throw RepairFailure(.cannotRepair, bytes.matches("OggS", at: 0) ? "its first Ogg page is damaged: nothing to recover" : "not an Ogg stream")
        }
        guard first.flags & OggPageHeader.beginningOfStream != 0, bytes.matches("OpusHead", at: first.bodyOffset),
              first.bodyLength >= 19, first.lacing.count == 1
        else { throw RepairFailure(.cannotRepair, "an Ogg stream, but not Ogg Opus (no OpusHead first)") }
        try readHead(UnsafeRawBufferPointer(rebasing: bytes[first.bodyOffset..<(first.bodyOffset + first.bodyLength)]))

        var position = 0
        var current: Packet?
        var expectedSequence = first.sequence
        var atEnd = false
        let capturePattern = Array("OggS".utf8)
        var crcs = OggCRCWindow(bytes)
        var stopCheck = WalkStopCheck(from: position, shouldStop: shouldStop)
        while position < bytes.count && !atEnd {
            try stopCheck.check(at: position)
            guard let page = OggPageHeader.parse(bytes, at: position) else {
                // Damage: the next intact page of this stream, or the torn tail.
                // A candidate's CRC comes from `crcs` in a fixed number of steps; read whole, a
                // run of false headers cost up to 64 KiB of reading each. The capture pattern is
                // looked for up to the stop check's next look at most, so noise without one is
                // gone through a mebibyte at a time.
                var next = position + 1
                var found: OggPageHeader?
                while next < bytes.count {
                    try stopCheck.check(at: next)
                    guard let candidate = bytes.firstIndex(of: capturePattern, from: next, before: stopCheck.nextLook) else {
                        next = stopCheck.nextLook
                        continue
                    }
                    if let page = OggPageHeader.header(bytes, at: candidate), page.serial == first.serial, crcs.crcMatches(page) {
                        found = page
                        break
                    }
                    next = candidate + 1
                }
                guard let found else { tail = position..<bytes.count; break }
                damage.append(Damage(bytes: position..<found.offset, sequenceGap: found.sequence != expectedSequence, beforePacket: packets.count))
                current = nil
                position = found.offset
                continue
            }
            guard page.serial == first.serial else {
                throw Self.moreThanOneStream
            }
            if page.sequence != expectedSequence && !pages.isEmpty {
                if damage.last?.bytes.upperBound == page.offset { damage[damage.count - 1].sequenceGap = true } else {
                    damage.append(Damage(bytes: page.offset..<page.offset, sequenceGap: true, beforePacket: packets.count))
                }
                current = nil
            }
            expectedSequence = page.sequence &+ 1
            let pageIndex = pages.count
            pages.append(page)
            var segmentStart = page.bodyOffset
            // A continued page whose packet's start was lost: skip to that packet's end.
            var skipping = page.isContinued && current == nil
            if !page.isContinued && current != nil { current = nil }  // its end was lost
            for value in page.lacing {
                let piece = segmentStart..<(segmentStart + Int(value))
                segmentStart += Int(value)
                if skipping {
                    if value < 255 { skipping = false }
                    continue
                }
                if current == nil { current = Packet(pieces: [], pageIndex: pageIndex, samples: 0) }
                if current!.pieces.last?.upperBound == piece.lowerBound {
                    current!.pieces[current!.pieces.count - 1] = current!.pieces.last!.lowerBound..<piece.upperBound
                } else {
                    current!.pieces.append(piece)
                }
                if value < 255 {
                    var packet = current!
                    packet.pageIndex = pageIndex
                    let firstByte = packet.pieces.first.flatMap { $0.isEmpty ? nil : bytes[$0.lowerBound] }
                    let secondByte = Self.byte(1, of: packet, in: bytes)
                    packet.samples = firstByte.map { opusPacketSamples($0, secondByte) } ?? 0
                    current = nil
                    // After the two headers, a packet libopus cannot read (a header page
                    // repeated, garbage on a page whose CRC still matches) is damage: dropped, its
                    // time measured from the granules like a lost page's.
                    if packets.count >= 2, !OpusDecoding.isWellFramed(self.bytes(of: packet, in: bytes), streams: elementaryStreams) {
                        let span = packet.pieces.first!.lowerBound..<packet.pieces.last!.upperBound
                        if let last = damage.last, last.beforePacket == packets.count {
                            damage[damage.count - 1].bytes = min(last.bytes.lowerBound, span.lowerBound)..<max(last.bytes.upperBound, span.upperBound)
                        } else {
                            damage.append(Damage(bytes: span, sequenceGap: false, beforePacket: packets.count))
                        }
                        continue
                    }
                    packets.append(packet)
                    if packets.count == 2 { headerEnd = page.range.upperBound }
                }
            }
            position = page.range.upperBound
            if page.isEndOfStream {
                atEnd = true
                // A whole page after the end is another stream's (chained: `cat a.opus b.opus`), not
                // a torn tail: cutting it lost that stream (until 2026-11-29).
                if OggPageHeader.parse(bytes, at: position) != nil {
                    throw Self.moreThanOneStream
                }
                if position < bytes.count { tail = position..<bytes.count }
            }
        }
        endsInsidePacket = current != nil
        // The OpusTags page damaged, then whole audio pages: RFC 7845 §3 starts the audio on a
        // fresh page, so the first packet after the damage is audio (neither header's magic, and
        // one libopus can read).
        if packets.count >= 2, damage.first?.beforePacket == 1, !Self.packetStarts(packets[1], with: "OpusTags", in: bytes),
           !Self.packetStarts(packets[1], with: "OpusHead", in: bytes),
           OpusDecoding.isWellFramed(self.bytes(of: packets[1], in: bytes), streams: elementaryStreams) {
            tagsLost = true
            firstAudioPacket = 1
            headerEnd = pages[0].range.upperBound
            damage.removeFirst()
        }
        guard packets.count >= 2, tagsLost || Self.packetStarts(packets[1], with: "OpusTags", in: bytes) else {
            throw RepairFailure(.cannotRepair, "its OpusTags header is missing or damaged, and no whole audio page follows")
        }
        // RFC 7845 §3: audio starts on a fresh page, so the header pages can be kept as they are:
        // all the more when they end the stream or begin another (flags no writer sets there,
        // whose page the repair would keep as it is, ending the repaired stream before its audio).
        let headerPagesFlagged = pages.enumerated().contains { index, page in
            page.range.upperBound <= headerEnd && (page.isEndOfStream || (index > 0 && page.flags & OggPageHeader.beginningOfStream != 0))
        }
        guard !headerPagesFlagged else { throw RepairFailure(.cannotRepair, "its header pages are damaged (a header page ends the stream or begins one)") }
        guard packets.count <= firstAudioPacket || packets[firstAudioPacket].pieces[0].lowerBound >= headerEnd,
              damage.allSatisfy({ $0.bytes.lowerBound >= headerEnd })
        else { throw RepairFailure(.cannotRepair, "its header pages are damaged") }
    }

    private mutating func readHead(_ head: UnsafeRawBufferPointer) throws(RepairFailure) {
        channels = Int(head[9])
        preSkip = Int(head.littleEndian(at: 10, bytes: 2))
        mappingFamily = Int(head[18])
        guard channels >= 1 else { throw RepairFailure(.cannotRepair, "its OpusHead names no channels") }
        if mappingFamily != 0 {
            guard head.count >= 21 + channels else { throw RepairFailure(.cannotRepair, "its OpusHead's channel mapping is cut short") }
            streams = Int(head[19])
            coupledStreams = Int(head[20])
            mapping = Array(head[21..<(21 + channels)])
            // RFC 7845 §5.1.1: at least one stream, no more coupled than there are, every channel
            // one of their outputs or silent (255). No decoder can be made for anything else.
            guard streams >= 1, coupledStreams <= streams, streams + coupledStreams <= 255,
                  mapping.allSatisfy({ Int($0) < streams + coupledStreams || $0 == 255 })
            else { throw RepairFailure(.cannotRepair, "its OpusHead's channel mapping is damaged") }
        } else {
            guard channels <= 2 else { throw RepairFailure(.cannotRepair, "its OpusHead is damaged (\(channels) channels in mapping family 0)") }
        }
    }

    private static func byte(_ index: Int, of packet: Packet, in bytes: UnsafeRawBufferPointer) -> UInt8? {
        var skip = index
        for piece in packet.pieces {
            if skip < piece.count { return bytes[piece.lowerBound + skip] }
            skip -= piece.count
        }
        return nil
    }

    private static func packetStarts(_ packet: Packet, with text: String, in bytes: UnsafeRawBufferPointer) -> Bool {
        Array(text.utf8).enumerated().allSatisfy { byte(Int($0.offset), of: packet, in: bytes) == $0.element }
    }

    /// The packet's bytes, joined.
    func bytes(of packet: Packet, in file: UnsafeRawBufferPointer) -> [UInt8] {
        packet.pieces.flatMap { Array(file[$0]) }
    }
}
