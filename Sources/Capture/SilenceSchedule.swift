import RingBuffer

/// Silence the encoder thread inserts into the recording for time the source lost
/// (`--pad-overruns`), each gap at a given point of the audio stream.
///
/// Why the encoder makes the silence and not the capture thread: a loss of seconds at a high rate
/// is megabytes of zeros. Written through the audio ring they would cost the capture thread a long
/// `memset` while the device keeps delivering, and would not fit when the ring is nearly full
/// (the padding then fell short of the reported loss). As a gap in this schedule a loss costs the
/// capture thread one 16-byte entry, and the encoder thread encodes the zeros from a buffer of its
/// own, whatever the ring holds.
///
/// A gap's `position` counts the frames the capture thread had committed to the audio ring when
/// it found the loss: the encoder encodes exactly that many ring frames, then the gap's silence,
/// then the ring frames after it. Positions never decrease.
///
/// Single producer (the capture thread), single consumer (the encoder thread), lock-free and
/// allocation-free after `init`: it is a `FrameRingBuffer` of 16-byte frames, one gap each.
/// Memory ordering: the capture thread commits the ring frames up to `position` (release on the
/// audio ring's index) before it schedules the gap (release on this ring's index); the encoder
/// acquires this ring's index before it reads the gap, so every audio frame before the gap is
/// visible to it by then.
public final class SilenceSchedule: Sendable {
    /// A run of silence `frames` long, to go after the first `position` frames of the audio ring.
    public struct Gap: Sendable, Equatable {
        public let position: Int
        public let frames: Int

        public init(position: Int, frames: Int) {
            precondition(position >= 0 && frames > 0, "a gap has a place and a length")
            self.position = position
            self.frames = frames
        }
    }

    private let gaps: FrameRingBuffer

    /// A schedule holding up to `capacity` gaps not yet encoded (rounded up to a power of two).
    /// Losses are at least 100 ms each and found at least 100 ms apart (`TimelineGuard`), so the
    /// default covers an encoder thread more than a minute and a half behind. Not real-time safe.
    public init(capacity: Int = 1024) {
        gaps = FrameRingBuffer(minimumCapacityFrames: capacity, bytesPerFrame: 2 * MemoryLayout<Int>.stride)
    }

    // MARK: Capture thread

    /// Adds a gap after those already scheduled. Returns false, scheduling nothing, when the
    /// schedule is full. Real-time safe.
    public func schedule(_ gap: Gap) -> Bool {
        gaps.withWritableRegions(maxFrames: 1) { regions in
            guard !regions.isEmpty else { return 0 }
            regions.first.storeBytes(of: gap.position, as: Int.self)
            regions.first.storeBytes(of: gap.frames, toByteOffset: MemoryLayout<Int>.stride, as: Int.self)
            return 1
        } == 1
    }

    // MARK: Encoder thread

    /// The earliest gap not yet encoded, left in the schedule. Real-time safe.
    public var next: Gap? {
        var gap: Gap?
        _ = gaps.withReadableRegions(maxFrames: 1) { regions in
            guard !regions.isEmpty else { return 0 }
            gap = Gap(position: regions.first.load(as: Int.self),
                      frames: regions.first.load(fromByteOffset: MemoryLayout<Int>.stride, as: Int.self))
            return 0
        }
        return gap
    }

    /// Removes the gap `next` returned, once its silence is encoded. Real-time safe.
    public func removeNext() {
        let removed = gaps.withReadableRegions(maxFrames: 1) { regions in regions.isEmpty ? 0 : 1 }
        precondition(removed == 1, "no gap to remove")
    }
}
