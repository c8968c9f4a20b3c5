/// Walks a FLAC stream's frames from the end of its header, checking each one's CRC-16, without
/// decoding: what is intact, what is damaged in the middle, what is torn or junk at the end.
///
/// A frame's length is not in its header. It ends where the CRC-16 of its bytes, stored CRC
/// included, comes to 0 and either the next frame's header (or the start of one the file cuts
/// short), the end of the file, or a zero-filled tail (what a file system leaves after a crash)
/// begins there. A false end needs a CRC-16 and a CRC-8 to match by chance at once. Past the
/// longest frame the header allows, or at a header that does not check, the bytes up to the next
/// frame that does are damaged; with no such frame, the rest of the file is the torn tail.
///
/// Zeros at the end are ambiguous: the CRC-16 stays 0 over zero bytes, and a frame's own last
/// bytes, its CRC included, can be zeros (a stored CRC of 0x0000 comes once in 65,536 frames,
/// and the test signal has one). So where a frame's end falls in the zeros, libFLAC decides: the
/// end at which the frame alone decodes cleanly, trying the end of the file first.
struct FLACFrameWalk {
    struct Frame: Equatable {
        let range: Range<Int>
        let header: FLACFrameHeader
    }

    /// Intact frames, in file order.
    var frames: [Frame] = []
    /// Bytes between intact frames that belong to no intact frame.
    var damaged: [Range<Int>] = []
    /// What follows the last intact frame (a frame cut short, or junk), to be cut.
    var tail: Range<Int>?
    /// Whether the tail is all zero bytes (a file system's doing, not a torn frame).
    var isTailZeroFilled = false
    /// An ID3v1 tag at the very end, which some taggers add to FLAC files; kept as it is.
    var trailingID3v1: Range<Int>?

    init(_ bytes: UnsafeRawBufferPointer, metadata: FLACMetadata, shouldStop: @escaping () -> Bool = { false }) throws(RepairFailure) {
        var end = bytes.count
        if end - 128 >= metadata.audioStart, bytes.matches("TAG", at: end - 128) {
            trailingID3v1 = (end - 128)..<end
            end -= 128
        }
        var zeroTailStart = end
        while zeroTailStart > metadata.audioStart && bytes[zeroTailStart - 1] == 0 { zeroTailStart -= 1 }
        let walker = Walker(bytes: bytes, end: end, zeroTailStart: zeroTailStart, stream: metadata.streamInfo,
                            header: UnsafeRawBufferPointer(rebasing: bytes[..<metadata.audioStart]))

        // Reading a frame's bytes for its CRC costs its length; at a false header, up to the
        // longest frame the header allows. The index costs a pass over twice the longest frame,
        // each byte a few times a read's work, then a few comparisons per candidate. So the walk
        // reads while reading has cost at most twice its progress and four of the longest frames:
        // an intact file and damage with few false headers (most damage) cost what they did, and
        // false headers in number, in a run or each beside an intact frame, cost the index's passes.
        lazy var ends = FLACFrameEndIndex(bytes: bytes, end: end, zeroTailStart: zeroTailStart, stream: metadata.streamInfo)
        let readingAllowance = 4 * FLACFrameEndIndex.longestFrame(stream: metadata.streamInfo)
        var bytesRead = 0
        var position = metadata.audioStart
        var isVariable: Bool?
        var stopCheck = WalkStopCheck(from: position, shouldStop: shouldStop)
        while position < end {
            try stopCheck.check(at: position)
            let readsOn = bytesRead <= readingAllowance + 2 * (position - metadata.audioStart)
            if let frame = walker.frame(at: position, isVariable: isVariable, ends: readsOn ? nil : ends, bytesRead: &bytesRead) {
                frames.append(frame)
                isVariable = frame.header.isVariableBlockSize
                position = frame.range.upperBound
                continue
            }
            var next = position + 1
            var found: Frame?
            while next < min(end, zeroTailStart) {
                try stopCheck.check(at: next)
                let readsOn = bytesRead <= readingAllowance + 2 * (next - metadata.audioStart)
                if let frame = walker.frame(at: next, isVariable: isVariable, ends: readsOn ? nil : ends, bytesRead: &bytesRead) {
                    found = frame
                    break
                }
                next += 1
            }
            guard let found else {
                tail = position..<end
                isTailZeroFilled = position >= zeroTailStart
                break
            }
            damaged.append(position..<found.range.lowerBound)
            position = found.range.lowerBound
        }
    }

    /// Finds the frame at an offset; internal for the tests, which hold its two ways of finding a
    /// frame's end to the same answers.
    struct Walker {
        let bytes: UnsafeRawBufferPointer
        let end: Int
        let zeroTailStart: Int
        let stream: FLACStreamInfo
        /// The stream's header, for decoding one frame on its own.
        let header: UnsafeRawBufferPointer

        /// Bytes past the first possible end in the zeros that are tried as the frame's end.
        static let zeroRunSearch = 256

        /// The intact frame at `offset`, its end found by reading its bytes for the CRC-16 (or
        /// with `ends`, which gives the same end without reading them); nil when there is none.
        func frame(at offset: Int, isVariable: Bool?, ends: FLACFrameEndIndex? = nil) -> Frame? {
            var bytesRead = 0
            return frame(at: offset, isVariable: isVariable, ends: ends, bytesRead: &bytesRead)
        }

        /// The same, adding to `bytesRead` the bytes it read for the CRC-16.
        func frame(at offset: Int, isVariable: Bool?, ends: FLACFrameEndIndex?, bytesRead: inout Int) -> Frame? {
            guard offset + 1 < end, bytes[offset] == 0xFF,
                  let header = FLACFrameHeader.parse(UnsafeRawBufferPointer(rebasing: bytes[..<end]), at: offset, stream: stream),
                  isVariable == nil || header.isVariableBlockSize == isVariable
            else { return nil }
            let limit = min(end, offset + header.maximumFrameLength(stream: stream))
            let shortest = offset + header.length + 3  // at least one subframe byte and the CRC-16
            if let ends {
                switch ends.frameEnd(start: offset, shortest: shortest, limit: limit) {
                case nil: return nil
                case .at(let frameEnd): return Frame(range: offset..<frameEnd, header: header)
                case .inZeros(let firstEnd):
                    return Frame(range: offset..<endInZeros(frameStart: offset, firstEnd: firstEnd, blockSize: header.blockSize), header: header)
                }
            }
            var crc: UInt16 = 0
            var index = offset
            while index < limit {
                crc = Checksums.crc16(crc, adding: bytes[index])
                index += 1
                guard crc == 0 && index >= shortest else { continue }
                if index == end || startsFrame(at: index) || startsCutHeader(at: index) {
                    bytesRead += index - offset
                    return Frame(range: offset..<index, header: header)
                }
                if index >= zeroTailStart {
                    bytesRead += index - offset
                    return Frame(range: offset..<endInZeros(frameStart: offset, firstEnd: index, blockSize: header.blockSize), header: header)
                }
            }
            bytesRead += index - offset
            return nil
        }

        /// Where a frame whose CRC first comes to 0 at `firstEnd`, inside the zeros at the end,
        /// really ends: the end of the file, `firstEnd`, or a little past it, whichever libFLAC
        /// decodes as exactly this frame; `firstEnd` when none does.
        private func endInZeros(frameStart: Int, firstEnd: Int, blockSize: Int) -> Int {
            let candidates = [end, firstEnd] + Array((firstEnd + 2)..<max(firstEnd + 2, min(end, firstEnd + Self.zeroRunSearch)))
            return candidates.first { decodesAlone(frameStart..<$0, blockSize: blockSize) } ?? firstEnd
        }

        /// Whether the stream's header followed by `range` decodes to one frame of `blockSize`
        /// samples with no complaint from libFLAC (trailing zeros make it lose sync).
        private func decodesAlone(_ range: Range<Int>, blockSize: Int) -> Bool {
            let frame = UnsafeRawBufferPointer(rebasing: bytes[range])
            let decoded = FLACDecoding.decode(length: header.count + frame.count, checkMD5: false) { wanted, destination in
                var written = 0
                for (part, base) in [(header, 0), (frame, header.count)] {
                    let lower = max(wanted.lowerBound, base), upper = min(wanted.upperBound, base + part.count)
                    guard lower < upper else { continue }
                    destination.baseAddress!.advanced(by: written)
                        .copyMemory(from: part.baseAddress!.advanced(by: lower - base), byteCount: upper - lower)
                    written += upper - lower
                }
            }
            return decoded.map { $0.errors.isEmpty && $0.samples == UInt64(blockSize) } ?? false
        }

        /// Whether the few bytes from `offset` to the end are the start of a frame header that the
        /// file cuts short (a recorder killed as it began writing the next frame).
        private func startsCutHeader(at offset: Int) -> Bool {
            end - offset < 16 && bytes[offset] == 0xFF && (offset + 1 == end || bytes[offset + 1] & 0xFE == 0xF8)
        }

        private func startsFrame(at offset: Int) -> Bool {
            offset + 1 < end && bytes[offset] == 0xFF && bytes[offset + 1] & 0xFE == 0xF8
                && FLACFrameHeader.parse(UnsafeRawBufferPointer(rebasing: bytes[..<end]), at: offset, stream: stream) != nil
        }
    }
}
