/// Where a FLAC frame that starts at a given offset ends, for the search through damage in
/// `FLACFrameWalk`: found in a few comparisons, where reading the candidate frame's bytes for its
/// CRC-16 cost up to the longest frame its header allows (17 KiB for 16-bit stereo, 2 MiB for
/// 32-bit 8-channel audio). A run of false frame headers made that search take about 13 s per MiB
/// (`hark repair`, release build, 16-bit stereo, until 2026-11-28).
///
/// A frame from s ends at e when the CRC-16 of `bytes[s..<e]` is 0 (its stored CRC included) and a
/// frame header, a header that the file cuts short, the zeros at the end or the end itself follows
/// (`FLACFrameWalk`). With R(i) the CRC of the window's bytes before offset i, the stretch's CRC is
/// R(e) ⊕ R(s)·x^(8(e−s)) (`CRCArithmetic`), which is 0 exactly when R(e)·x^(−8e) = R(s)·x^(−8s):
/// when the two offsets' *keys* are equal. The index keeps the key of every offset where a frame can
/// end (each frame header, each header cut short, the start of the zeros at the end, the end) and
/// chains equal keys in order, so a candidate visits only ends whose CRC works out. The first one
/// at or past its shortest length is its end: a header there ends it, so no candidate walks a chain
/// further than the few ends inside its own header. The zeros at the end keep the key as it is (a
/// zero byte adds nothing to the CRC), so each offset in them shares the key of their start.
///
/// The keys of a window come from one pass over its bytes: a CRC step and a product by x^(−8) per
/// byte (two table reads each), one product per end kept. A window covers twice the longest frame
/// and starts again at the candidate that reaches past it, so each byte is read about twice. That
/// pass costs more than reading one candidate, so `FLACFrameWalk` turns to the index only once
/// reading has cost well over its progress through the file.
final class FLACFrameEndIndex {
    /// A frame's end: `at` an offset (a header, a header cut short, or the end of the file), or in
    /// the zeros at the end, where `FLACFrameWalk` asks libFLAC which zero ends it.
    enum End: Equatable {
        case at(Int)
        case inZeros(firstEnd: Int)
    }

    /// x^(−8) as a map of registers, by each register's low and high byte (it is linear).
    private static let undoZeroByte: (low: [UInt32], high: [UInt32]) = {
        let flac = CRCArithmetic.flac, inverse = flac.zeroByteInverse()
        return ((0..<256).map { flac.product(UInt32($0), inverse) }, (0..<256).map { flac.product(UInt32($0) << 8, inverse) })
    }()

    private let bytes: UnsafeRawBufferPointer
    private let end: Int
    private let zeroTailStart: Int
    private let stream: FLACStreamInfo
    /// The longest frame any header of this stream allows: the window's reach past a candidate.
    private let longestFrame: Int

    /// The window: offsets `windowStart...windowEnd`; empty before the first question.
    private var windowStart = 0
    private var windowEnd = -1
    /// The offsets where a frame can end, in order, with their keys.
    private var ends: [Int] = []
    private var keys: [UInt32] = []
    /// For each of `ends`, the index of the next with the same key, or −1.
    private var nextWithSameKey: [Int32] = []
    /// Scratch for chaining: the last index seen for each key, −1 when none.
    private var lastWithKey = [Int32](repeating: -1, count: 1 << 16)

    init(bytes: UnsafeRawBufferPointer, end: Int, zeroTailStart: Int, stream: FLACStreamInfo) {
        self.bytes = bytes
        self.end = end
        self.zeroTailStart = zeroTailStart
        self.stream = stream
        longestFrame = Self.longestFrame(stream: stream)
    }

    /// The longest frame any header of `stream` allows (`FLACFrameHeader.maximumFrameLength` at
    /// the largest block size and header).
    static func longestFrame(stream: FLACStreamInfo) -> Int {
        let blockSize = stream.maximumBlockSize > 0 ? stream.maximumBlockSize : 65_536
        return 16 + stream.channels * (2 + (blockSize * (stream.bitsPerSample + 1) + 7) / 8) + 16
    }

    /// Where the frame whose header starts at `start` ends: the first offset in
    /// `shortest...limit` at which its CRC-16 is 0 and a frame can end; nil when there is none.
    /// `start` must hold a frame header of the stream (`FLACFrameHeader.parse` over `bytes[..<end]`).
    func frameEnd(start: Int, shortest: Int, limit: Int) -> End? {
        if start < windowStart || limit > windowEnd { rebuild(from: start) }
        guard let startIndex = index(of: start) else { preconditionFailure("no frame header at \(start)") }
        var next = Int(nextWithSameKey[startIndex])
        while next >= 0 && ends[next] < shortest { next = Int(nextWithSameKey[next]) }
        if next >= 0 && ends[next] <= limit && ends[next] < zeroTailStart { return .at(ends[next]) }
        // Past the last header: the zeros at the end, where every offset has the key of their start.
        guard zeroTailStart <= limit, let zerosIndex = index(of: zeroTailStart), keys[zerosIndex] == keys[startIndex] else { return nil }
        let first = max(zeroTailStart, shortest)
        guard first <= limit else { return nil }
        return first == end ? .at(end) : .inZeros(firstEnd: first)
    }

    private func index(of offset: Int) -> Int? {
        var low = 0, high = ends.count
        while low < high {
            let middle = (low + high) / 2
            if ends[middle] < offset { low = middle + 1 } else { high = middle }
        }
        return low < ends.count && ends[low] == offset ? low : nil
    }

    /// Whether a frame can end at `offset`: the checks `FLACFrameWalk` makes at a zero CRC.
    private func canEnd(at offset: Int) -> Bool {
        if offset == end || offset == zeroTailStart { return true }
        guard bytes[offset] == 0xFF else { return false }
        if end - offset < 16 && (offset + 1 == end || bytes[offset + 1] & 0xFE == 0xF8) { return true }  // a header cut short
        return offset + 1 < end && FLACFrameHeader.parse(UnsafeRawBufferPointer(rebasing: bytes[..<end]), at: offset, stream: stream) != nil
    }

    private func rebuild(from start: Int) {
        windowStart = start
        windowEnd = min(end, start + 2 * longestFrame)
        ends.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        let arithmetic = CRCArithmetic.flac, undo = Self.undoZeroByte
        var register: UInt32 = 0  // R(offset): the CRC of bytes[windowStart..<offset]
        var scale: UInt32 = 1  // x^(−8(offset − windowStart))
        for offset in windowStart...windowEnd {
            if canEnd(at: offset) {
                ends.append(offset)
                keys.append(arithmetic.product(register, scale))
            }
            guard offset < windowEnd else { break }
            register = arithmetic.adding(bytes[offset], to: register)
            scale = undo.low[Int(scale & 0xFF)] ^ undo.high[Int(scale >> 8)]
        }
        nextWithSameKey = [Int32](repeating: -1, count: ends.count)
        for index in ends.indices.reversed() {
            let key = Int(keys[index])
            nextWithSameKey[index] = lastWithKey[key]
            lastWithKey[key] = Int32(index)
        }
        for key in keys { lastWithKey[Int(key)] = -1 }
    }
}
