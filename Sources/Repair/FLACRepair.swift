/// Repairs a FLAC file from any writer: keeps every intact frame, puts silence of the same length
/// in place of damaged ones (so the timeline holds), cuts a torn or zero-filled tail, and sets
/// STREAMINFO's total samples, frame sizes and MD5 from the frames, and the seek points.
///
/// The MD5 is a witness, not a field to tidy: when it is set, no frame is damaged or missing, and
/// the audio's MD5 differs, something changed the audio that no CRC caught, and the file is left
/// alone with a line saying so rather than given a new MD5 that would hide it.
enum FLACRepair {
    static func analyse(_ bytes: UnsafeRawBufferPointer, shouldStop: @escaping () -> Bool = { false }) throws(RepairFailure) -> RepairAnalysis {
        let metadata = try FLACMetadata(bytes)
        let stream = metadata.streamInfo
        let walk = try FLACFrameWalk(bytes, metadata: metadata, shouldStop: shouldStop)
        let first = walk.frames.first
        if first == nil {
            // A recording stopped before its first frame: an empty stream, whole as it is.
            if bytes.count == metadata.audioStart && stream.totalSamples == 0 {
                return RepairAnalysis(container: .flac, problems: [], seconds: 0, verdict: .sound)
            }
            // One killed inside its first frame (its count never set, and after the header no more
            // than a frame's bytes, or zeros): its torn tail is cut to an empty stream, as an Ogg
            // Opus or WAV file killed before its first audio becomes (until 2026-11-29 refused).
            // More, or a finished stream's, is audio that is not there to recover.
            let tornFirstFrame = stream.totalSamples == 0 && walk.damaged.isEmpty
                && walk.tail.map { walk.isTailZeroFilled || $0.count <= FLACFrameEndIndex.longestFrame(stream: stream) } == true
            guard tornFirstFrame else {
                let what = bytes.count > metadata.audioStart ? "no intact audio frame" : "no audio after the header"
                return RepairAnalysis(container: .flac, problems: [what], seconds: 0, verdict: .unrepairable("\(what): nothing to recover"))
            }
        }
        let firstBlockSize = first?.header.blockSize ?? stream.maximumBlockSize
        // A fixed block size stream numbers its frames in blocks of the size all but its last frame
        // have: the first kept frame's, when another follows it. STREAMINFO's maximum only for a
        // lone frame that ends the file (it may be the stream's short last one; one with damage or
        // a torn tail after it is not the last, so its size is the stream's), and only when its
        // minimum agrees (RFC 9639: both count every block but the last, which in a fixed block
        // size stream are one size). Taken always, a maximum that lied (8192 over frames of 4096)
        // put silence after every frame of a whole file; one off by one (4097, the minimum 4096),
        // or 65535 over a first frame of 4096 and a damaged rest, made a repair whose frames were
        // out of place at the next check.
        let streamInfoAgrees = stream.minimumBlockSize == stream.maximumBlockSize && stream.maximumBlockSize >= firstBlockSize
        let loneLastFrame = walk.frames.count == 1 && walk.tail == nil
        let nominalBlockSize = loneLastFrame && streamInfoAgrees ? stream.maximumBlockSize : firstBlockSize
        var layout = FrameLayout(stream: stream, nominalBlockSize: nominalBlockSize, isVariable: first?.header.isVariableBlockSize ?? false)
        var problems: [String] = []
        var damageNotes: [String] = []
        var droppedFrames = 0
        var damageCursor = 0
        var pendingDamage = 0
        var strayDamage = 0
        for frame in walk.frames {
            while damageCursor < walk.damaged.count && walk.damaged[damageCursor].upperBound <= frame.range.lowerBound {
                pendingDamage += walk.damaged[damageCursor].count
                damageCursor += 1
            }
            let start = layout.isVariable ? frame.header.codedNumber : frame.header.codedNumber * UInt64(nominalBlockSize)
            if start < layout.nextSample { droppedFrames += 1; continue }
            if start > layout.nextSample {
                let missing = start - layout.nextSample
                // More than an hour lost between two intact frames is frame numbers not to be
                // trusted, not audio to make silence of (a frame numbered 2^31 asked for days of it).
                guard missing <= UInt64(3_600 * stream.sampleRate) else {
                    let text = "frame numbers jump by \(durationText(Double(missing) / Double(stream.sampleRate))) "
                        + "at byte \(frame.range.lowerBound): not audio hark can place"
                    return RepairAnalysis(container: .flac, problems: [text], seconds: 0, verdict: .unrepairable(text))
                }
                damageNotes.append(silenced(missing, at: layout.nextSample, of: stream, damage: "\(pendingDamage) damaged bytes"))
                layout.appendSilence(samples: missing)
            } else {
                strayDamage += pendingDamage
            }
            pendingDamage = 0
            layout.append(original: frame.range, start: start, blockSize: frame.header.blockSize)
        }
        if !damageNotes.isEmpty {
            problems += damageNotes.count <= 3 ? damageNotes : Array(damageNotes.prefix(3)) + ["and \(damageNotes.count - 3) more damaged places"]
        }
        if strayDamage > 0 { problems.append("\(strayDamage) stray bytes between frames, dropped") }
        if droppedFrames > 0 { problems.append("\(droppedFrames) frame\(droppedFrames == 1 ? "" : "s") out of place, dropped") }
        // A finished stream (STREAMINFO counts its samples) whose frames hold one last block fewer,
        // with at most a frame's bytes after them: its last frame is there, damaged, not torn off
        // (a recorder killed mid-frame never set the count). It becomes silence like any damaged
        // frame, so the file keeps the length STREAMINFO recorded.
        var tail = walk.tail
        if let torn = tail, !walk.isTailZeroFilled, stream.totalSamples > layout.nextSample,
           stream.totalSamples - layout.nextSample <= UInt64(nominalBlockSize),
           torn.count <= (stream.maximumFrameSize > 0 ? stream.maximumFrameSize : nominalBlockSize * stream.channels * 4 + 64) {
            let missing = stream.totalSamples - layout.nextSample
            problems.append(silenced(missing, at: layout.nextSample, of: stream, damage: "the last frame, \(counted(torn.count, "damaged byte"))"))
            layout.appendSilence(samples: missing)
            tail = nil
        }
        for block in metadata.damagedBlocks {
            let what = switch block.type {
            case FLACMetadata.streamInfoType: "a second STREAMINFO block (readers take it for the stream's format)"
            case FLACMetadata.applicationType: "its APPLICATION block is damaged"
            case FLACMetadata.vorbisCommentType: "its VORBIS_COMMENT block is damaged (the tags are lost)"
            default: "its PICTURE block is damaged (the picture is lost)"
            }
            problems.append("\(what), made padding")
        }
        if let tail {
            problems.append(walk.isTailZeroFilled ? "\(tail.count) zero bytes at the end (left by a crash), cut"
                                                  : "\(counted(tail.count, "byte")) at the end that \(tail.count == 1 ? "is" : "are") no whole frame, cut")
        }
        let audioChanged = !problems.isEmpty

        var repaired = stream
        repaired.totalSamples = layout.nextSample
        repaired.minimumFrameSize = layout.frames.map(\.length).min() ?? 0
        repaired.maximumFrameSize = layout.frames.map(\.length).max() ?? 0
        repaired.md5 = [UInt8](repeating: 0, count: 16)
        if stream.totalSamples == 0 {
            problems.append("total samples unset")
        } else if stream.totalSamples != repaired.totalSamples {
            problems.append("STREAMINFO says \(stream.totalSamples) samples, the frames hold \(repaired.totalSamples)")
        }
        // After frames were cut or silenced, frame sizes and seek offsets change as a matter of
        // course: they are set again without being listed as problems of their own.
        if !audioChanged && stream.minimumFrameSize != 0 && stream.maximumFrameSize != 0
            && (stream.minimumFrameSize, stream.maximumFrameSize) != (repaired.minimumFrameSize, repaired.maximumFrameSize) {
            problems.append("frame sizes wrong")
        }
        let seekTable = metadata.seekTableBlock.map { block in
            FLACSeekPoint.points(in: UnsafeRawBufferPointer(rebasing: bytes[block.bodyOffset..<(block.bodyOffset + block.length)]))
        }
        var newSeekTable = seekTable
        if let seekTable {
            switch layout.check(seekTable) {
            case .valid: break
            // Placeholders are legal (`flac -S X` writes them for a later tool to fill): a finished,
            // whole stream keeps them, byte for byte; one being mended (a killed hark recording has
            // only placeholders) gets them filled. Until 2026-11-29 a whole file was rewritten.
            case .unfilled where stream.totalSamples == 0 || !stream.isMD5Set || !problems.isEmpty:
                problems.append("seek points unfilled")
                newSeekTable = layout.seekPoints(capacity: seekTable.count)
            case .unfilled: break
            case .wrong:
                if !audioChanged { problems.append("seek points wrong") }
                newSeekTable = layout.seekPoints(capacity: seekTable.count)
            }
        }

        // Decode the repaired stream as it would be written (MD5 still zero) for its MD5; without
        // a trailing ID3v1 tag, which is no FLAC and which libFLAC would report as lost sync.
        var plan = layout.plan(metadata: metadata, streamInfo: repaired, seekTable: newSeekTable, trailing: nil, in: bytes)
        let decoded = FLACDecoding.decode(length: plan.length, checkMD5: false, shouldStop: shouldStop) { range, destination in
            plan.copy(range, from: bytes, into: destination)
        }
        if decoded?.interrupted == true { throw .interruptedAnalysis }
        guard let decoded, decoded.errors.isEmpty, decoded.samples == repaired.totalSamples else {
            let why = decoded?.errors.first ?? "libFLAC could not start"
            return RepairAnalysis(container: .flac, problems: problems, seconds: 0,
                                  verdict: .unrepairable("the kept frames do not decode cleanly (\(why))"))
        }
        if !stream.isMD5Set {
            problems.append("MD5 unset")
        } else if stream.md5 != decoded.md5 && !audioChanged {
            let seconds = Double(repaired.totalSamples) / Double(stream.sampleRate)
            return RepairAnalysis(container: .flac, problems: problems + ["MD5 does not match the audio"], seconds: seconds,
                                  verdict: .unrepairable("the MD5 does not match the audio and no frame is damaged: something changed the audio that no CRC caught, so it is left as it is"))
        }
        let seconds = Double(repaired.totalSamples) / Double(stream.sampleRate)
        guard !problems.isEmpty else { return RepairAnalysis(container: .flac, problems: [], seconds: seconds, verdict: .sound) }
        repaired.md5 = decoded.md5
        plan = layout.plan(metadata: metadata, streamInfo: repaired, seekTable: newSeekTable, trailing: walk.trailingID3v1, in: bytes)
        return RepairAnalysis(container: .flac, problems: problems, seconds: seconds, verdict: .repairable(plan))
    }

    /// "85 ms lost at 5.547 s (9072 damaged bytes), made silence": `samples` from sample `start`.
    private static func silenced(_ samples: UInt64, at start: UInt64, of stream: FLACStreamInfo, damage: String) -> String {
        "\(formatted(Double(samples) * 1000 / Double(stream.sampleRate), decimals: 0)) ms lost at "
            + "\(durationText(Double(start) / Double(stream.sampleRate))) (\(damage)), made silence"
    }

    /// Checks a written repair: every frame whole from the header to the end, and libFLAC decoding
    /// exactly STREAMINFO's total samples with no complaint and a matching MD5 (libFLAC's own
    /// MD5 check, in C: one decode, not the analysis's two).
    static func verify(_ bytes: UnsafeRawBufferPointer, shouldStop: @escaping () -> Bool = { false }) -> String? {
        guard let metadata = try? FLACMetadata(bytes) else { return "it is no longer a FLAC stream" }
        // The walk throws only when a stop signal ended it.
        guard let walk = try? FLACFrameWalk(bytes, metadata: metadata, shouldStop: shouldStop) else { return FileRepair.interruptedCheck }
        guard walk.damaged.isEmpty, walk.tail == nil else { return "its frames are not whole" }
        guard metadata.streamInfo.isMD5Set || walk.frames.isEmpty else { return "its MD5 is not set" }
        // Up to a trailing ID3v1 tag, which the walk kept apart (libFLAC would lose sync on it).
        let audioEnd = walk.trailingID3v1?.lowerBound ?? bytes.count
        let decoded = FLACDecoding.decode(length: audioEnd, checkMD5: true, shouldStop: shouldStop) { range, destination in
            destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[range]))
        }
        if decoded?.interrupted == true { return FileRepair.interruptedCheck }
        guard let decoded, decoded.errors.isEmpty, decoded.md5Matches, decoded.samples == metadata.streamInfo.totalSamples else {
            return "libFLAC does not decode it cleanly"
        }
        return nil
    }
}

/// The frames of the repaired stream, in order, where each lies in the output's audio.
private struct FrameLayout {
    struct Frame {
        let start: UInt64
        let blockSize: Int
        /// Bytes from the first frame's start (as seek points count).
        let offset: Int
        let length: Int
        let segment: RepairPlan.Segment
    }

    enum SeekTableState { case valid, unfilled, wrong }

    let stream: FLACStreamInfo
    let nominalBlockSize: Int
    let isVariable: Bool
    var frames: [Frame] = []
    var nextSample: UInt64 = 0
    private var nextOffset = 0

    init(stream: FLACStreamInfo, nominalBlockSize: Int, isVariable: Bool) {
        self.stream = stream
        self.nominalBlockSize = nominalBlockSize
        self.isVariable = isVariable
    }

    mutating func append(original range: Range<Int>, start: UInt64, blockSize: Int) {
        frames.append(Frame(start: start, blockSize: blockSize, offset: nextOffset, length: range.count, segment: .original(range)))
        nextOffset += range.count
        nextSample = start + UInt64(blockSize)
    }

    /// Silent frames for `samples` lost samples, of the nominal block size (a fixed block size
    /// stream numbers frames, so every one but a stream's last must be that size).
    mutating func appendSilence(samples: UInt64) {
        var left = samples
        while left > 0 {
            let size = Int(min(left, UInt64(nominalBlockSize)))
            let number = isVariable ? nextSample : nextSample / UInt64(nominalBlockSize)
            let frame = FLACFrameHeader.silentFrame(number: number, isVariableBlockSize: isVariable, blockSize: size, stream: stream)
            frames.append(Frame(start: nextSample, blockSize: size, offset: nextOffset, length: frame.count, segment: .bytes(frame)))
            nextOffset += frame.count
            nextSample += UInt64(size)
            left -= UInt64(size)
        }
    }

    /// Whether each real point names a kept frame exactly, in order; `unfilled` when the table
    /// holds only placeholders though there is audio (a recording that never finished).
    func check(_ points: [FLACSeekPoint]) -> SeekTableState {
        let real = points.filter { !$0.isPlaceholder }
        if real.isEmpty { return points.isEmpty || nextSample == 0 ? .valid : .unfilled }
        var byStart: [UInt64: Frame] = [:]
        for frame in frames { byStart[frame.start] = frame }
        var previous: UInt64?
        for point in real {
            guard let frame = byStart[point.sample], UInt64(frame.offset) == point.offset, frame.blockSize == point.frameSamples,
                  previous.map({ point.sample > $0 }) ?? true
            else { return .wrong }
            previous = point.sample
        }
        return points.drop(while: { !$0.isPlaceholder }).contains { !$0.isPlaceholder } ? .wrong : .valid
    }

    /// `capacity` points: one at the frame holding each multiple of 10 s (20, 40… when the table
    /// is too small for that), as hark's encoder lays them out; the rest placeholders.
    func seekPoints(capacity: Int) -> [FLACSeekPoint] {
        var spacing = UInt64(10 * stream.sampleRate)
        while capacity > 0 && (nextSample + spacing - 1) / spacing > UInt64(capacity) { spacing *= 2 }
        var points: [FLACSeekPoint] = []
        var frameIndex = 0
        var target: UInt64 = 0
        while target < nextSample && points.count < capacity {
            while frameIndex + 1 < frames.count && frames[frameIndex + 1].start <= target { frameIndex += 1 }
            let frame = frames[frameIndex]
            if points.last?.sample != frame.start {
                points.append(FLACSeekPoint(sample: frame.start, offset: UInt64(frame.offset), frameSamples: frame.blockSize))
            }
            target += spacing
        }
        return points + [FLACSeekPoint](repeating: .placeholder, count: capacity - points.count)
    }

    /// The whole file: the header as it was with STREAMINFO's and SEEKTABLE's bodies replaced and
    /// damaged blocks made padding (same sizes, so nothing moves), the frames, and a trailing
    /// ID3v1 tag if there was one.
    func plan(metadata: FLACMetadata, streamInfo: FLACStreamInfo, seekTable: [FLACSeekPoint]?, trailing: Range<Int>?,
              in bytes: UnsafeRawBufferPointer) -> RepairPlan {
        let info = metadata.streamInfoBlock
        var replaced: [(range: Range<Int>, bytes: [UInt8])] = [(info.bodyOffset..<(info.bodyOffset + info.length), streamInfo.bytes)]
        if let block = metadata.seekTableBlock, let seekTable {
            replaced.append((block.bodyOffset..<(block.bodyOffset + block.length),
                             seekTable.flatMap(\.bytes) + [UInt8](repeating: 0, count: block.length % FLACSeekPoint.size)))
        }
        for block in metadata.damagedBlocks {
            replaced.append((block.offset..<(block.bodyOffset + block.length), FLACMetadata.padding(replacing: block, in: bytes)))
        }
        var segments: [RepairPlan.Segment] = []
        var position = 0
        for (range, bytes) in replaced.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            segments += [.original(position..<range.lowerBound), .bytes(bytes)]
            position = range.upperBound
        }
        segments.append(.original(position..<metadata.audioStart))
        segments += frames.map(\.segment)
        if let trailing { segments.append(.original(trailing)) }
        return RepairPlan(segments: segments)
    }
}
