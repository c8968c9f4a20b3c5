/// Repairs a RIFF/RF64 WAVE file from any writer: sets the RIFF and data sizes from what the file
/// holds (and a `fact` chunk's frame count with them, for uncompressed formats), cuts a torn last
/// frame, and makes a file past 4 GiB RF64 (EBU Tech 3306) — in place of a JUNK chunk of 28 bytes
/// or more right after the RIFF header where there is one (hark, BWF writers and ffmpeg reserve
/// it), by inserting a ds64 chunk where there is not.
///
/// A data size shorter than the file is trusted only when what follows it is a sequence of whole
/// chunks ending at the end of the file (some writers put LIST or id3 chunks after the audio);
/// otherwise the size is stale (a recorder killed between two size updates) and the audio runs to
/// the end of the file. An ID3v1 tag a tagger appended (the last 128 bytes, "TAG" first, outside
/// the RIFF chunk) is kept where it is, as a FLAC file's is; audio that only happens to end so is
/// still audio when the sizes say it is.
enum WAVRepair {
    static let unknownSize: UInt64 = 0xFFFF_FFFF

    static func analyse(_ bytes: UnsafeRawBufferPointer) throws(RepairFailure) -> RepairAnalysis {
        let layout = try WAVLayout(bytes)
        let tagStart = bytes.count - 128
        let id3v1 = tagStart >= layout.dataStart && bytes.matches("TAG", at: tagStart) ? tagStart..<bytes.count : nil
        var available = bytes.count - layout.dataStart
        var problems: [String] = []
        var dataBytes: Int
        var trailing: Range<Int>?
        // The sizes are believed when they account for the file up to its end, or up to its tag.
        var keptTag: Range<Int>?
        if let declared = layout.declaredDataBytes, let after = chunksAfterData(declared, of: layout, in: bytes, endingAt: bytes.count) {
            dataBytes = declared
            trailing = after.isEmpty ? nil : after
        } else if let id3v1, let declared = layout.declaredDataBytes,
                  let after = chunksAfterData(declared, of: layout, in: bytes, endingAt: id3v1.lowerBound) {
            dataBytes = declared
            trailing = after.isEmpty ? nil : after
            keptTag = id3v1
        } else {
            if let id3v1 {
                available = id3v1.lowerBound - layout.dataStart
                keptTag = id3v1
            }
            dataBytes = available - available % layout.blockAlign
            switch layout.declaredDataBytes {
            case nil: problems.append("sizes unknown (written to a pipe, or never updated)")
            case 0?: problems.append("data size 0 (never updated)")
            case let declared?: problems.append("data size says \(declared) bytes, the file holds \(dataBytes)")
            }
            if available % layout.blockAlign != 0 {
                let torn = available % layout.blockAlign
                problems.append("\(counted(torn, "byte")) of a torn frame at the end, cut")
            }
        }
        let fileBytes = layout.dataStart + dataBytes + dataBytes % 2 + (trailing?.count ?? 0)
        let needsRF64 = fileBytes - 8 > Int(unknownSize) - 1 || dataBytes > Int(unknownSize) - 1
        let frames = dataBytes / layout.blockAlign
        let seconds = layout.seconds(dataBytes: dataBytes)
        if needsRF64 && !layout.isRF64 { problems.append("past 4 GiB as plain RIFF: made RF64") }
        if layout.isRF64 {
            if layout.ds64 == nil { throw RepairFailure(.cannotRepair, "an RF64 file without its ds64 chunk") }
            if problems.isEmpty && (layout.ds64!.riffBytes != UInt64(fileBytes - 8) || layout.ds64!.frames != UInt64(frames)) {
                problems.append("ds64 sizes wrong")
            }
        } else if problems.isEmpty && layout.riffBytes != UInt64(fileBytes - 8) && layout.riffBytes != UInt64(fileBytes + (keptTag?.count ?? 0) - 8) {
            // (A tagger that counted its tag in the RIFF size is believed too.)
            problems.append(layout.riffBytes == unknownSize ? "RIFF size unknown" : "RIFF size says \(layout.riffBytes), the file holds \(fileBytes - 8)")
        }
        // The count is checked only where it is a plain frame count; in RF64 the ds64 holds it.
        if problems.isEmpty && !needsRF64 && !layout.isRF64, let fact = layout.countedFact, fact.sampleCount != UInt64(frames) {
            problems.append(fact.sampleCount == unknownSize ? "fact sample count unknown" : "fact chunk says \(fact.sampleCount) samples, the file holds \(frames)")
        }
        guard !problems.isEmpty else { return RepairAnalysis(container: .wav, problems: [], seconds: seconds, verdict: .sound) }

        var header = Array(bytes[0..<layout.dataStart])
        var dataSizeField = layout.dataStart - 4
        var factCountField = layout.countedFact?.offset
        if needsRF64 || layout.isRF64 {
            var ds64Offset: Int
            if let ds64 = layout.ds64 {
                ds64Offset = ds64.offset
            } else if let junk = layout.junk, junk.size >= 28 {
                ds64Offset = junk.offset
                header.replaceSubrange(ds64Offset..<(ds64Offset + 4), with: Array("ds64".utf8))
            } else {
                ds64Offset = 12
                var chunk = Array("ds64".utf8)
                chunk.appendLittleEndian(28, bytes: 4)
                chunk += [UInt8](repeating: 0, count: 28)
                header.insert(contentsOf: chunk, at: 12)
                dataSizeField += chunk.count
                factCountField? += chunk.count
            }
            let total = fileBytes + header.count - layout.dataStart
            header.replaceSubrange(0..<4, with: Array("RF64".utf8))
            header.putLittleEndian(unknownSize, bytes: 4, at: 4)
            header.putLittleEndian(UInt64(total - 8), bytes: 8, at: ds64Offset + 8)
            header.putLittleEndian(UInt64(dataBytes), bytes: 8, at: ds64Offset + 16)
            header.putLittleEndian(UInt64(frames), bytes: 8, at: ds64Offset + 24)
            header.putLittleEndian(unknownSize, bytes: 4, at: dataSizeField)
            // EBU Tech 3306: -1 in fact's count once the ds64 holds it.
            if let factCountField { header.putLittleEndian(unknownSize, bytes: 4, at: factCountField) }
        } else {
            header.putLittleEndian(UInt64(fileBytes - 8), bytes: 4, at: 4)
            header.putLittleEndian(UInt64(dataBytes), bytes: 4, at: dataSizeField)
            if let factCountField { header.putLittleEndian(UInt64(frames), bytes: 4, at: factCountField) }
        }
        var segments: [RepairPlan.Segment] = [.bytes(header), .original(layout.dataStart..<(layout.dataStart + dataBytes))]
        if dataBytes % 2 == 1 { segments.append(.bytes([0])) }
        if let trailing { segments.append(.original(trailing)) }
        if let keptTag { segments.append(.original(keptTag)) }
        return RepairAnalysis(container: .wav, problems: problems, seconds: seconds, verdict: .repairable(RepairPlan(segments: segments)))
    }

    /// Checks a written repair: it must analyse as sound.
    static func verify(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard let analysis = try? analyse(bytes) else { return "it is no longer a WAV file" }
        guard case .sound = analysis.verdict else { return "it still needs repair (\(analysis.problems.joined(separator: ", ")))" }
        return nil
    }

    /// What follows `declared` bytes of audio up to `end`, when that is whole chunks (or nothing,
    /// or only a data chunk's missing pad byte); nil when the size cannot be so (stale).
    private static func chunksAfterData(_ declared: Int, of layout: WAVLayout, in bytes: UnsafeRawBufferPointer,
                                        endingAt end: Int) -> Range<Int>? {
        guard declared <= end - layout.dataStart else { return nil }
        if declared % 2 == 1 && layout.dataStart + declared == end { return end..<end }
        return wholeChunks(in: bytes, from: layout.dataStart + declared + declared % 2, to: end)
    }

    /// The range from `offset` to `end` if it is whole chunks (each with its pad byte), nil if not.
    private static func wholeChunks(in bytes: UnsafeRawBufferPointer, from offset: Int, to end: Int) -> Range<Int>? {
        var position = offset
        while position < end {
            guard position + 8 <= end, (0..<4).allSatisfy({ (0x20...0x7E).contains(bytes[position + $0]) }) else { return nil }
            let size = Int(bytes.littleEndian(at: position + 4, bytes: 4))
            position += 8 + size + size % 2
        }
        return position == end ? offset..<position : nil
    }
}

/// A WAVE file's chunks up to its audio: the RIFF (or RF64) header, ds64, fmt, fact, and the data chunk's header.
struct WAVLayout {
    struct Chunk { let offset: Int; let size: Int }
    struct DS64 { let offset: Int; let riffBytes: UInt64; let dataBytes: UInt64; let frames: UInt64 }
    /// A `fact` chunk: where its sample count is, and the count.
    struct Fact { let offset: Int; let sampleCount: UInt64 }

    let isRF64: Bool
    let riffBytes: UInt64
    var ds64: DS64?
    var junk: Chunk?
    var fact: Fact?
    /// Whether the fmt chunk's format stores one sample per channel in each block (integer PCM,
    /// float, A-law, µ-law), so a fact chunk's count is the data's frames. A compressed format's
    /// count is what only its decoder knows; repair leaves it alone.
    var hasUncompressedFormat = false
    /// The fact chunk, when its count is the frame count that repair sets.
    var countedFact: Fact? { hasUncompressedFormat ? fact : nil }
    var blockAlign = 0
    var sampleRate = 0
    /// The fmt chunk's average bytes per second.
    var bytesPerSecond = 0
    /// Frames in each block: 1 uncompressed, the fmt chunk's count for ADPCM, nil when only the
    /// codec knows.
    var framesPerBlock: Int?
    /// Where the audio starts, just after the data chunk's header.
    var dataStart = 0
    /// The data chunk's size as the file states it; nil for "unknown" (0xFFFFFFFF in a RIFF file).
    var declaredDataBytes: Int?

    init(_ bytes: UnsafeRawBufferPointer) throws(RepairFailure) {
        guard bytes.count >= 12, bytes.matches("RIFF", at: 0) || bytes.matches("RF64", at: 0) || bytes.matches("BW64", at: 0),
              bytes.matches("WAVE", at: 8)
        else { throw RepairFailure(.cannotRepair, "not a WAV file") }
        isRF64 = !bytes.matches("RIFF", at: 0)
        riffBytes = bytes.littleEndian(at: 4, bytes: 4)
        var position = 12
        var hasFormat = false
        while true {
            guard position + 8 <= bytes.count else {
                throw RepairFailure(.cannotRepair, hasFormat ? "no data chunk: nothing to recover" : "the WAV header is cut short: no fmt chunk")
            }
            let size = Int(bytes.littleEndian(at: position + 4, bytes: 4))
            if bytes.matches("data", at: position) {
                dataStart = position + 8
                let declared = UInt64(size)
                if isRF64 && declared == WAVRepair.unknownSize, let ds64 { declaredDataBytes = Int(clamping: ds64.dataBytes) }
                else if declared != WAVRepair.unknownSize { declaredDataBytes = size }
                break
            }
            guard position + 8 + size <= bytes.count else { throw RepairFailure(.cannotRepair, "the WAV header is cut short") }
            if bytes.matches("ds64", at: position) && isRF64 && size >= 24 {
                ds64 = DS64(offset: position, riffBytes: bytes.littleEndian(at: position + 8, bytes: 8),
                            dataBytes: bytes.littleEndian(at: position + 16, bytes: 8), frames: bytes.littleEndian(at: position + 24, bytes: 8))
            } else if bytes.matches("JUNK", at: position) && position == 12 {
                junk = Chunk(offset: position, size: size)
            } else if bytes.matches("fmt ", at: position) && size >= 16 {
                sampleRate = Int(bytes.littleEndian(at: position + 12, bytes: 4))
                bytesPerSecond = Int(bytes.littleEndian(at: position + 16, bytes: 4))
                blockAlign = Int(bytes.littleEndian(at: position + 20, bytes: 2))
                hasFormat = true
                // WAVE_FORMAT_EXTENSIBLE's own code is the first two bytes of its sub-format GUID.
                var formatTag = bytes.littleEndian(at: position + 8, bytes: 2)
                if formatTag == 0xFFFE && size >= 40 { formatTag = bytes.littleEndian(at: position + 32, bytes: 2) }
                hasUncompressedFormat = [1, 3, 6, 7].contains(formatTag)  // PCM, IEEE float, A-law, µ-law
                if hasUncompressedFormat {
                    framesPerBlock = 1
                    // Uncompressed, the fields depend on each other: a flipped bit in one of them
                    // (a rate of 16 MHz, a block of 4100 bytes) shows as a contradiction. Which
                    // field is wrong cannot be told, so the file is not called whole.
                    let channels = Int(bytes.littleEndian(at: position + 10, bytes: 2))
                    let bits = Int(bytes.littleEndian(at: position + 22, bytes: 2))
                    // (A block may pad each sample past its bits, as 24 in 32 does.)
                    guard channels > 0, bits > 0, blockAlign % channels == 0, blockAlign / channels >= (bits + 7) / 8,
                          bytesPerSecond == sampleRate * blockAlign else {
                        throw RepairFailure(.cannotRepair, "its fmt chunk contradicts itself (\(channels) channels of \(bits) bits in "
                            + "blocks of \(blockAlign) bytes, \(sampleRate) Hz, \(bytesPerSecond) bytes a second), and which field is "
                            + "wrong cannot be told")
                    }
                } else if [2, 0x11].contains(formatTag) && size >= 20 {  // MS and IMA ADPCM: wSamplesPerBlock
                    framesPerBlock = Int(bytes.littleEndian(at: position + 26, bytes: 2))
                }
            } else if bytes.matches("fact", at: position) && size >= 4 {
                fact = Fact(offset: position + 8, sampleCount: bytes.littleEndian(at: position + 8, bytes: 4))
            }
            position += 8 + size + size % 2
        }
        guard hasFormat, blockAlign > 0, sampleRate > 0 else { throw RepairFailure(.cannotRepair, "its fmt chunk is missing or describes no audio") }
    }

    /// How long `dataBytes` of audio last: whole blocks of known frames; else (another compressed
    /// format) what the byte rate says, as players estimate it.
    func seconds(dataBytes: Int) -> Double {
        if let framesPerBlock, framesPerBlock > 0 {
            return Double(dataBytes / blockAlign * framesPerBlock) / Double(sampleRate)
        }
        return bytesPerSecond > 0 ? Double(dataBytes) / Double(bytesPerSecond) : 0
    }
}
