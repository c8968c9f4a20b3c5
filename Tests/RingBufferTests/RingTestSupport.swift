import RingBuffer
import Testing

// Shared fixtures for the exhaustive small-state tests, after swift-collections'
// `Tests/DequeTests/DequeInternals.swift`: build a ring in a chosen state (indices advanced by
// `start` frames, `fill` frames unread), then check it from every angle.

/// Capacities the exhaustive tests visit. All are powers of two, so each is also the ring's capacity.
let smallCapacities = [1, 2, 4, 8, 16]

/// Frame sizes the exhaustive tests visit: a single byte, an aligned size, and one that is not a
/// power of two (three channels of 16-bit samples).
let frameSizes = [1, 4, 6]

/// The byte at `offset` in the frame with sequence number `sequence`.
///
/// 13 is odd, so multiplication by it is a bijection on `UInt8`: frames with sequence numbers
/// less than 256 never share a pattern, even one-byte frames. Every test stays far below that, so
/// a stale frame left behind in storage never looks like the frame that is expected there.
func patternByte(sequence: Int, offset: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: sequence &* 13 &+ offset &* 101 &+ 7)
}

/// The frames with sequence numbers `sequences`, back to back.
func patternFrames(_ sequences: Range<Int>, bytesPerFrame: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(sequences.count * bytesPerFrame)
    for sequence in sequences {
        for offset in 0..<bytesPerFrame {
            bytes.append(patternByte(sequence: sequence, offset: offset))
        }
    }
    return bytes
}

/// One state an exhaustive test visits: a fresh ring whose indices were advanced by writing and
/// reading `start` frames (sequence numbers `0..<start`), then `fill` more frames written and left
/// unread (sequence numbers `start..<start + fill`).
struct RingState: CustomStringConvertible {
    let capacity: Int
    let bytesPerFrame: Int
    let start: Int
    let fill: Int

    var free: Int { capacity - fill }
    /// Storage slot of the oldest unread frame.
    var readSlot: Int { start % capacity }
    /// Storage slot the next written frame goes to.
    var writeSlot: Int { (start + fill) % capacity }
    /// Sequence numbers of the unread frames, oldest first.
    var unread: Range<Int> { start..<start + fill }

    var description: String {
        "capacity \(capacity), \(bytesPerFrame) B/frame, start \(start), fill \(fill)"
    }
}

/// Calls `body` for every start offset in `0..<2 * capacity` and every fill level in `0...capacity`.
func forEachState(capacity: Int, bytesPerFrame: Int, _ body: (RingState) throws -> Void) rethrows {
    for start in 0..<2 * capacity {
        for fill in 0...capacity {
            try body(RingState(capacity: capacity, bytesPerFrame: bytesPerFrame, start: start, fill: fill))
        }
    }
}

/// Writes the frames `sequences` with `write(from:)`; returns the number of frames written.
@discardableResult
func writeFrames(_ sequences: Range<Int>, to ring: FrameRingBuffer) -> Int {
    let bytes = patternFrames(sequences, bytesPerFrame: ring.bytesPerFrame)
    return bytes.withUnsafeBytes { ring.write(from: $0) }
}

/// Reads up to `maxFrames` frames with `read(into:)`; returns the bytes of the frames read.
func readFrames(maxFrames: Int, from ring: FrameRingBuffer) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: maxFrames * ring.bytesPerFrame)
    let read = bytes.withUnsafeMutableBytes { ring.read(into: $0) }
    return Array(bytes.prefix(read * ring.bytesPerFrame))
}

/// The frames a region pair holds, first region then second.
func bytes(of regions: RingRegions) -> [UInt8] {
    Array(regions.first) + Array(regions.second)
}

/// A ring put into `state`, with the address of its storage (learned from the first writable
/// region of the fresh ring, which starts at slot 0).
///
/// The returned pointer is only for comparing addresses while `ring` is alive.
func makeRing(
    _ state: RingState, sourceLocation: SourceLocation = #_sourceLocation
) -> (ring: FrameRingBuffer, storage: UnsafeMutableRawPointer) {
    let ring = FrameRingBuffer(minimumCapacityFrames: state.capacity, bytesPerFrame: state.bytesPerFrame)
    #expect(ring.capacityFrames == state.capacity, sourceLocation: sourceLocation)
    var storage: UnsafeMutableRawPointer?
    _ = ring.withWritableRegions(maxFrames: state.capacity) { regions in
        storage = regions.first.baseAddress
        return 0
    }
    var sequence = 0
    while sequence < state.start {
        let chunk = sequence..<min(sequence + state.capacity, state.start)
        let written = writeFrames(chunk, to: ring)
        let read = readFrames(maxFrames: chunk.count, from: ring)
        #expect(written == chunk.count, "advancing \(state)", sourceLocation: sourceLocation)
        #expect(read == patternFrames(chunk, bytesPerFrame: state.bytesPerFrame),
                "advancing \(state)", sourceLocation: sourceLocation)
        sequence = chunk.upperBound
    }
    let filled = writeFrames(state.unread, to: ring)
    #expect(filled == state.fill, "filling \(state)", sourceLocation: sourceLocation)
    return (ring, storage!)
}

/// Checks that `regions` lend `frames` frames starting at storage slot `startSlot`: the first
/// region runs from that slot toward the end of storage, and the second is non-empty only when
/// the stretch wraps, in which case the first ends exactly at the end of storage and the second
/// starts at the beginning of storage.
func expectRegions(
    _ regions: RingRegions, frames: Int, startSlot: Int, capacity: Int,
    storage: UnsafeMutableRawPointer, _ context: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let bytesPerFrame = regions.bytesPerFrame
    let firstFrames = min(frames, capacity - startSlot)
    let secondFrames = frames - firstFrames
    #expect(regions.frameCount == frames, "\(context)", sourceLocation: sourceLocation)
    #expect(regions.firstFrameCount == firstFrames, "\(context)", sourceLocation: sourceLocation)
    #expect(regions.secondFrameCount == secondFrames, "\(context)", sourceLocation: sourceLocation)
    #expect(regions.first.count == firstFrames * bytesPerFrame, "\(context)", sourceLocation: sourceLocation)
    #expect(regions.second.count == secondFrames * bytesPerFrame, "\(context)", sourceLocation: sourceLocation)
    #expect(regions.isEmpty == (frames == 0), "\(context)", sourceLocation: sourceLocation)
    if frames > 0 {
        #expect(regions.first.baseAddress == storage + startSlot * bytesPerFrame,
                "\(context)", sourceLocation: sourceLocation)
    }
    if secondFrames > 0 {
        let endOfStorage = storage + capacity * bytesPerFrame
        #expect(regions.first.baseAddress.map { $0 + regions.first.count } == endOfStorage,
                "first region must end at the end of storage when wrapping; \(context)",
                sourceLocation: sourceLocation)
        #expect(regions.second.baseAddress == storage,
                "second region must start at the start of storage; \(context)",
                sourceLocation: sourceLocation)
    }
}

/// SplitMix64: a tiny deterministic PRNG, so every pseudo-random test replays exactly.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}
