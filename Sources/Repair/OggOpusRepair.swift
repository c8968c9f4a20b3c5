import Encoding

/// Repairs an Ogg Opus file from any writer: cuts it after its last whole packet, drops damaged
/// pages and the packets they cost, puts silence in their place where the pages' granules say
/// how long they lasted (`OggOpusGap`), and ends the stream with the end-of-stream flag on a
/// page whose granule position counts exactly the samples kept.
///
/// A stream damaged only at its end (a killed recorder, a full disk) keeps every byte up to its
/// last intact page, whose flags, segment table and CRC are rewritten. A stream damaged in the
/// middle has its audio packets, and the silent ones, laid out on new pages (at most one second
/// or 255 segments each), numbered in order with granule positions that count them: the same as
/// before where every loss became silence, and fewer where one could not be measured and its
/// packets were only dropped. The header pages are kept as they are either way.
enum OggOpusRepair {
    /// Samples at most on a rebuilt page: one second, which keeps seeking as fine as opusenc's.
    static let samplesPerRebuiltPage = 48_000

    static func analyse(_ bytes: UnsafeRawBufferPointer, shouldStop: @escaping () -> Bool = { false }) throws(RepairFailure) -> RepairAnalysis {
        let stream = try OggOpusStream(bytes, shouldStop: shouldStop)
        let audio = Array(stream.packets.dropFirst(stream.firstAudioPacket))
        var problems: [String] = []
        if stream.tagsLost { problems.append("its OpusTags header is damaged: a new, empty one in its place (the tags are lost)") }
        // A tagger's ID3v1 tag (the last 128 bytes, "TAG" first, in no page) is kept at the end, as
        // a FLAC or WAV file's is; only what lies before it in the tail is cut.
        let id3v1 = stream.tail.flatMap { $0.count >= 128 && bytes.matches("TAG", at: bytes.count - 128) ? (bytes.count - 128)..<bytes.count : nil }
        guard !audio.isEmpty else {
            // Killed before its first audio page: ended as hark ends a recording stopped before
            // any audio, with one silent packet that the pre-skip hides (0 samples decoded).
            let headerPages = stream.pages.filter { $0.range.upperBound <= stream.headerEnd }
            let last = headerPages.last!
            let end = OggPage.silentEndOfStream(serialNumber: last.serial, sequence: last.sequence &+ 1, preSkip: stream.preSkip,
                                                streams: stream.elementaryStreams, coupledStreams: stream.coupledElementaryStreams)
            return RepairAnalysis(container: .oggOpus, problems: ["no audio page (stopped before any audio): ended as an empty stream"],
                                  seconds: 0, verdict: .repairable(RepairPlan(segments: [.original(0..<stream.headerEnd), .bytes(end)] + (id3v1.map { [.original($0)] } ?? []))))
        }
        let lastPageIndex = audio.last!.pageIndex
        let lastPage = stream.pages[lastPageIndex]
        // What each damaged place lost, by the first packet kept after it (nil: the timeline
        // cannot say, and the packets there are only dropped).
        let lost = Dictionary(stream.damage.map { ($0.beforePacket, OggOpusGap.lostSamples(at: $0, in: stream)) }) { first, _ in first }
        // The audio packets kept, with silence where the timeline says audio was lost.
        var laidOut: [RebuiltPacket] = []
        for (offset, packet) in audio.enumerated() {
            if let samples = lost[stream.firstAudioPacket + offset] ?? nil {
                laidOut += OggOpusGap.silentPackets(lasting: samples, for: stream).map { RebuiltPacket.silent($0.bytes, samples: $0.samples) }
            }
            laidOut.append(.kept(packet))
        }
        let totalSamples = laidOut.reduce(0) { $0 + $1.samples }
        // The first audio page's granule, less its packets, is where the stream's count starts
        // (0 for a recording; more for a stream cut from a longer one).
        let firstPage = stream.pages[audio[0].pageIndex]
        let firstPageSamples = audio.prefix { $0.pageIndex == audio[0].pageIndex }.reduce(0) { $0 + $1.samples }
        let base = stream.damage.first.map { $0.beforePacket <= stream.firstAudioPacket } == true ? 0 : max(0, Int(firstPage.granule) - firstPageSamples)

        for damage in stream.damage.prefix(3) {
            let keptBefore = audio.prefix(max(0, damage.beforePacket - stream.firstAudioPacket))
            let filledBefore = lost.filter { $0.key < damage.beforePacket }.reduce(0) { $0 + ($1.value ?? 0) }
            let at = Double(keptBefore.reduce(base + filledBefore) { $0 + $1.samples } - stream.preSkip) / 48_000
            let what = damage.bytes.isEmpty ? "pages missing" : "\(damage.bytes.count) damaged bytes"
            if let samples = lost[damage.beforePacket] ?? nil {
                // As a FLAC repair says it: "85 ms lost at 5.547 s (9072 damaged bytes), made silence".
                problems.append(samples == 0 ? "\(what) at \(durationText(max(0, at))), no audio lost"
                                : "\(formatted(Double(samples) / 48, decimals: 0)) ms lost at \(durationText(max(0, at))) (\(what)), made silence")
            } else {
                problems.append("\(what) at \(durationText(max(0, at))), the packets there dropped")
            }
        }
        if stream.damage.count > 3 { problems.append("and \(stream.damage.count - 3) more damaged places") }
        let pagesAfterLastPacket = stream.pages.count - 1 - lastPageIndex
        if stream.endsInsidePacket || lastPage.lacing.last == 255 { problems.append("a packet cut short at the end, dropped") }
        if pagesAfterLastPacket > 0 && !stream.endsInsidePacket { problems.append("\(pagesAfterLastPacket) page\(pagesAfterLastPacket == 1 ? "" : "s") with no whole packet at the end, dropped") }
        let stray = stream.tail.flatMap { tail in id3v1 == nil ? tail : tail.count > 128 ? tail.lowerBound..<(tail.upperBound - 128) : nil }
        if let tail = stray {
            let isZeros = bytes[tail].allSatisfy { $0 == 0 }
            problems.append(isZeros ? "\(tail.count) zero bytes at the end (left by a crash), cut"
                                    : lastPage.isEndOfStream && pagesAfterLastPacket == 0 ? "\(counted(tail.count, "byte")) after the end of the stream, cut"
                                    : "\(counted(tail.count, "byte")) at the end that \(tail.count == 1 ? "is" : "are") no whole page, cut")
        }
        if !stream.pages.last!.isEndOfStream || pagesAfterLastPacket > 0 { problems.append("no end-of-stream page") }

        // End trimming an intact end-of-stream page carried: its granule short of its packets' end.
        // Counted against every packet laid out when the timeline is whole (no damage, or every
        // loss made silence); else from the last two pages alone.
        let timelineWhole = lost.values.allSatisfy { $0 != nil }
        let untrimmedEnd = base + totalSamples
        let endTrimRead = timelineWhole ? (lastPage.isEndOfStream && lastPage.granule >= 0 ? max(0, untrimmedEnd - Int(lastPage.granule)) : 0)
                                        : endTrimAfterDamage(stream, lastPageIndex: lastPageIndex)
        // Rebuilt pages end on the last packet: a trim longer than it (granules a writer got
        // wrong) would put the last page's granule before the page before it.
        let endTrim = stream.damage.isEmpty ? endTrimRead : min(endTrimRead, laidOut.last!.samples)
        let finalGranule = base + totalSamples - endTrim
        let seconds = Double(max(0, finalGranule - base - stream.preSkip)) / 48_000
        guard !problems.isEmpty else { return RepairAnalysis(container: .oggOpus, problems: [], seconds: seconds, verdict: .sound) }

        var plan: RepairPlan
        if stream.damage.isEmpty && !stream.tagsLost {
            plan = endAt(lastPage, of: stream, finalGranule: Int64(finalGranule), in: bytes)
        } else {
            plan = rebuilt(laidOut, of: stream, base: base, finalGranule: Int64(finalGranule), in: bytes)
        }
        if let id3v1 { plan = RepairPlan(segments: plan.segments + [.original(id3v1)]) }
        return RepairAnalysis(container: .oggOpus, problems: problems, seconds: seconds, verdict: .repairable(plan))
    }

    /// The end trimming of a stream damaged before its end: the samples its intact end-of-stream
    /// page's granule leaves out of that page's packets, counted from the granule of the page
    /// before it, when that page is intact and came right before (consecutive sequence numbers):
    /// the granules after damage still count the samples lost, so the kept packets cannot be
    /// counted against the last granule, but the last two pages' difference is their own. 0 when
    /// the end is not so (no end-of-stream page, a page missing there): the last packet is then
    /// decoded whole, up to its 20 ms of the encoder's padding.
    private static func endTrimAfterDamage(_ stream: OggOpusStream, lastPageIndex: Int) -> Int {
        let lastPage = stream.pages[lastPageIndex]
        guard lastPage.isEndOfStream, lastPage.granule >= 0, lastPageIndex > 0 else { return 0 }
        let before = stream.pages[lastPageIndex - 1]
        // Stray bytes between them cost a packet continued onto the last page, which its granule counts.
        guard before.sequence &+ 1 == lastPage.sequence, before.granule >= 0,
              !stream.damage.contains(where: { $0.bytes.upperBound == lastPage.offset })
        else { return 0 }
        let endingOnLastPage = stream.packets.filter { $0.pageIndex == lastPageIndex }.reduce(0) { $0 + $1.samples }
        return max(0, Int(before.granule) + endingOnLastPage - Int(lastPage.granule))
    }

    /// Everything up to `page` as it is, then `page` with the end-of-stream flag, without the
    /// start of a packet it does not finish.
    private static func endAt(_ page: OggPageHeader, of stream: OggOpusStream, finalGranule: Int64, in bytes: UnsafeRawBufferPointer) -> RepairPlan {
        let kept = page.lacing.lastIndex { $0 < 255 }! + 1
        let lacing = Array(page.lacing.prefix(kept))
        let bodyLength = lacing.reduce(0) { $0 + Int($1) }
        let body = Array(bytes[page.bodyOffset..<(page.bodyOffset + bodyLength)])
        let last = OggPageHeader.build(flags: page.flags | OggPageHeader.endOfStream, granule: finalGranule, serial: page.serial,
                                       sequence: page.sequence, lacing: lacing, body: body)
        return RepairPlan(segments: [.original(0..<page.offset), .bytes(last)])
    }

    /// The header pages as they are (a new, empty OpusTags page for a damaged one), then every
    /// kept audio packet on new pages.
    /// The last page's granule is `finalGranule`: the end trimming an intact end-of-stream page
    /// carried stays (a stream with no damage in its audio, only in its tags).
    private static func rebuilt(_ audio: [RebuiltPacket], of stream: OggOpusStream, base: Int, finalGranule: Int64,
                                in bytes: UnsafeRawBufferPointer) -> RepairPlan {
        let headerPages = stream.pages.filter { $0.range.upperBound <= stream.headerEnd }
        var segments: [RepairPlan.Segment] = [.original(0..<stream.headerEnd)]
        var sequence = headerPages.last!.sequence &+ 1
        if stream.tagsLost {
            let tags = emptyTags
            segments.append(.bytes(OggPageHeader.build(flags: 0, granule: 0, serial: stream.pages[0].serial, sequence: sequence,
                                                       lacing: OggPageHeader.lacing(forPacketOf: tags.count), body: tags)))
            sequence &+= 1
        }
        var granule = Int64(base)
        var lacing: [UInt8] = []
        var body: [UInt8] = []
        var pageSamples = 0
        // Whether the page being filled begins with the rest of a packet from the page before.
        var continues = false
        for (index, packet) in audio.enumerated() {
            var packetLacing = OggPageHeader.lacing(forPacketOf: packet.length)
            if !lacing.isEmpty && (lacing.count + packetLacing.count > 255 || pageSamples + packet.samples > samplesPerRebuiltPage) {
                segments.append(.bytes(OggPageHeader.build(flags: continues ? OggPageHeader.continued : 0, granule: granule,
                                                           serial: stream.pages[0].serial, sequence: sequence, lacing: lacing, body: body)))
                sequence &+= 1
                lacing = []; body = []; pageSamples = 0; continues = false
            }
            var packetBody: ArraySlice<UInt8>
            switch packet {
            case .kept(let kept): packetBody = stream.bytes(of: kept, in: bytes)[...]
            case .silent(let silence, _): packetBody = silence[...]
            }
            // A packet of 255 × 255 bytes or more (padding makes one legal Opus; a page holds 255
            // lacing values) spans pages: whole pages of it, which complete no packet (granule -1),
            // then its rest begins the next page. It trapped here until 2026-11-28.
            while packetLacing.count > 255 {
                segments.append(.bytes(OggPageHeader.build(flags: continues ? OggPageHeader.continued : 0, granule: -1,
                                                           serial: stream.pages[0].serial, sequence: sequence,
                                                           lacing: Array(packetLacing.prefix(255)), body: Array(packetBody.prefix(255 * 255)))))
                sequence &+= 1
                packetLacing.removeFirst(255)
                packetBody = packetBody.dropFirst(255 * 255)
                continues = true
            }
            lacing += packetLacing
            body += packetBody
            pageSamples += packet.samples
            granule += Int64(packet.samples)
            if index == audio.count - 1 {
                segments.append(.bytes(OggPageHeader.build(flags: OggPageHeader.endOfStream | (continues ? OggPageHeader.continued : 0),
                                                           granule: min(granule, finalGranule),
                                                           serial: stream.pages[0].serial,
                                                           sequence: sequence, lacing: lacing, body: body)))
            }
        }
        return RepairPlan(segments: segments)
    }

    /// A packet of a rebuilt stream: one kept from the file, or silence where audio was lost.
    enum RebuiltPacket {
        case kept(OggOpusStream.Packet)
        case silent([UInt8], samples: Int)

        var samples: Int {
            switch self {
            case .kept(let packet): packet.samples
            case .silent(_, let samples): samples
            }
        }

        var length: Int {
            switch self {
            case .kept(let packet): packet.length
            case .silent(let bytes, _): bytes.count
            }
        }
    }

    /// An OpusTags packet with no comments (RFC 7845 §5.2), its vendor string naming the repair.
    static var emptyTags: [UInt8] {
        let vendor = Array("hark repair".utf8)
        func littleEndian(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        return Array("OpusTags".utf8) + littleEndian(vendor.count) + vendor + littleEndian(0)
    }

    /// Checks a written repair: it must analyse as sound, and libopus must decode every packet.
    static func verify(_ bytes: UnsafeRawBufferPointer, shouldStop: @escaping () -> Bool = { false }) -> String? {
        let analysis: RepairAnalysis
        do throws(RepairFailure) {
            analysis = try analyse(bytes, shouldStop: shouldStop)
        } catch {
            return error.kind == .interrupted ? FileRepair.interruptedCheck : "it is no longer an Ogg Opus stream"
        }
        guard case .sound = analysis.verdict else { return "it still needs repair (\(analysis.problems.joined(separator: ", ")))" }
        // Read once already without a failure: a stop signal is all that can fail it now.
        guard let stream = try? OggOpusStream(bytes, shouldStop: shouldStop) else { return FileRepair.interruptedCheck }
        return OpusDecoding.firstFailure(stream, in: bytes, shouldStop: shouldStop)
    }
}
