import RingBuffer

/// The recording frames at which an output starts a new file because SIGUSR1 asked for one, as
/// the capture thread chose them: every output splits at the same moment of the recording however
/// far behind its encoder is (the same frame of the capture, given in the output's own count of
/// frames, which is behind by those it dropped with no silence in their place:
/// `CaptureLane.outputFrame`), and two signals in quick succession are two splits in every output.
///
/// Why the capture thread chooses the frame: it is the one thread that knows no encoder has passed
/// it. The session thread's own reading of the capture's count could be stale by the time each
/// output got it (the thread preempted between the two), and an encoder that had encoded past
/// it split wherever it was, a period or more later than the others. The capture thread takes the
/// request (`CaptureMonitor.requestSplit`) between periods and schedules its count, which every
/// frame in every ring is at or before, in each splitting output's schedule before it commits
/// another frame. A schedule rather than one pending frame: an output that had not yet reached the
/// first of two splits lost the second (only one could be pending).
///
/// Single producer (the capture thread), single consumer (the output's encoder thread),
/// lock-free and allocation-free after `init`: a `FrameRingBuffer` of 8-byte frames, one split
/// each. Memory ordering: the capture thread schedules a split (release on this ring's index)
/// before it commits any frame after it to the audio ring (release on that ring's index); the
/// encoder looks here after acquiring the audio ring's index for the frames it encodes, so a
/// split at or before any of those frames is visible to it by then.
public final class SplitSchedule: Sendable {
    private let splits: FrameRingBuffer

    /// A schedule holding up to `capacity` splits not yet reached (rounded up to a power of two).
    /// Splits are at least a period apart (one per frame), and an encoder is at most its ring
    /// behind, so the default covers a ring of two minutes of 125 ms periods. Not real-time safe.
    public init(capacity: Int = 1024) {
        splits = FrameRingBuffer(minimumCapacityFrames: capacity, bytesPerFrame: MemoryLayout<Int>.stride)
    }

    // MARK: Capture thread

    /// Adds a split at recording frame `frame`, after those already scheduled (`frame` never
    /// decreases). Returns false, scheduling nothing, when the schedule is full. Real-time safe.
    public func schedule(atFrame frame: Int) -> Bool {
        splits.withWritableRegions(maxFrames: 1) { regions in
            guard !regions.isEmpty else { return 0 }
            regions.first.storeBytes(of: frame, as: Int.self)
            return 1
        } == 1
    }

    // MARK: Encoder thread

    /// The earliest split not yet reached, left in the schedule. Real-time safe.
    public var next: Int? {
        var frame: Int?
        _ = splits.withReadableRegions(maxFrames: 1) { regions in
            guard !regions.isEmpty else { return 0 }
            frame = regions.first.load(as: Int.self)
            return 0
        }
        return frame
    }

    /// The split after `next`, left in the schedule. Real-time safe.
    public var second: Int? {
        var frame: Int?
        _ = splits.withReadableRegions(maxFrames: 2) { regions in
            guard regions.frameCount == 2 else { return 0 }
            let secondRegion = regions.firstFrameCount == 2 ? regions.first : regions.second
            frame = secondRegion.load(fromByteOffset: regions.firstFrameCount == 2 ? MemoryLayout<Int>.stride : 0, as: Int.self)
            return 0
        }
        return frame
    }

    /// Removes the split `next` returned, once it is reached. Real-time safe.
    public func removeNext() {
        let removed = splits.withReadableRegions(maxFrames: 1) { regions in regions.isEmpty ? 0 : 1 }
        precondition(removed == 1, "no split to remove")
    }
}
