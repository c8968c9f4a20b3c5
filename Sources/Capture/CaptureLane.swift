import RingBuffer
import Realtime
import Synchronization

/// One output's share of a capture: the ring its encoder thread drains, the signal that wakes
/// that thread, the silence to pad its lost time with, and the frames dropped because its ring
/// was full (with `--pad-overruns`, silence in their place too).
///
/// Why a ring per output and not one ring several readers share: with one ring, the slowest
/// reader holds the write position back, so a stalled pipe reader would fill the ring and cost
/// every other output its frames. With a ring each, a stalled output fills only its own ring,
/// and only its frames are dropped (and counted here); the capture thread reads each period once
/// and copies it into the other rings, a `memcpy` of a few kilobytes that allocates nothing and
/// takes no lock.
///
/// Threads: the capture thread writes the ring, the schedules and `framesDropped`, and reads
/// `isClosed`; the output's encoder thread reads the ring and the schedules, and closes the lane.
public final class CaptureLane: @unchecked Sendable {
    public let ring: FrameRingBuffer
    /// Posted once a commit leaves `wakeFrames` or more in the ring, when silence is scheduled,
    /// and once at the end of capture.
    public let dataReady = WakeSignal()
    /// How much audio the ring holds before the encoder is woken: a period for a pipe, whose
    /// reader is waiting (`--max-delay`, the first audio); more for a regular file, where nobody
    /// waits and each wake-up is CPU and battery spent for nothing.
    public let wakeFrames: Int
    /// Where lost time is scheduled as silence for this output (`--pad-overruns`); nil to leave it out.
    public let silence: SilenceSchedule?
    /// Where the frames at which this output starts a new file on request (SIGUSR1) are
    /// scheduled; nil for an output that is one stream.
    public let splits: SplitSchedule?
    /// Frames this output missed because its ring was full. Written by the capture thread only,
    /// read by others as a snapshot (relaxed).
    public let framesDropped = Atomic<Int>(0)
    /// Of those, the frames with silence in their place (`--pad-overruns`). Same rules.
    public let framesDroppedPadded = Atomic<Int>(0)
    /// Frames dropped since the ring last took any, whose silence is not scheduled yet: a run of
    /// drops (an encoder stalled for seconds drops every period) becomes one gap, scheduled
    /// before the ring takes its next frame (`padDroppedFrames`). Capture thread only.
    private var framesDroppedUnscheduled = 0
    /// Frames dropped with no silence in their place (no `--pad-overruns`, or a full schedule):
    /// this output's own count of frames is behind the capture's by these. Capture thread only.
    private(set) var framesLeftOut = 0
    /// Frames the encoder keeps in the ring on purpose (a sound-activated recording's pre-roll):
    /// not counted towards `wakeFrames`, so an armed encoder sleeps as long as any other. Written
    /// by the encoder thread, read by the capture thread; relaxed: a stale value moves one wake-up
    /// by a period at most, and the end of capture always wakes.
    public let heldFrames = Atomic<Int>(0)
    /// Frames the capture thread committed to `ring`: the positions of `silence`'s gaps.
    /// Capture thread only.
    var framesCommitted = 0
    /// While a source that is not live waits for this lane: the frames its encoder had taken
    /// from the ring at the last look (-1 while the lane is not waited for), when that was, and
    /// how long the count has not grown. Capture thread only.
    private var framesTakenLastSeen = -1
    private var lastLook = 0
    private var stuckNanoseconds = 0
    private let closed = Atomic<Bool>(false)

    public init(ring: FrameRingBuffer, padsLostTime: Bool, wakeFrames: Int = 1, splits: SplitSchedule? = nil) {
        precondition(wakeFrames >= 1 && wakeFrames <= ring.capacityFrames / 2, "the encoder must be woken before the ring is half full")
        self.ring = ring
        self.wakeFrames = wakeFrames
        silence = padsLostTime ? SilenceSchedule() : nil
        self.splits = splits
    }

    /// Says the output has ended early (it failed, or reached `--max-size`): capture stops
    /// feeding it. Relaxed: a frame or two committed after the close is never read, and costs
    /// nothing but its copy.
    public func close() {
        closed.store(true, ordering: .relaxed)
    }

    public var isClosed: Bool { closed.load(ordering: .relaxed) }

    /// Whether a source that is not live should wait for this lane before reading a period of
    /// `wanted` frames: its ring has less room than that, and its encoder has taken frames within
    /// `stalledAfterNanoseconds` (of time spent looking, in steps of at most 10 ms, so a process
    /// stopped with Ctrl-Z, whose encoder was stopped too, does not come back to a stall). An
    /// encoder takes its frames in batches as large as the ring and releases each once it is
    /// written: the caller allows for one written at a fraction of real time. Capture thread
    /// only; real-time safe (loads and stores).
    func isWaitedFor(wanted: Int, now: Int, stalledAfterNanoseconds: Int) -> Bool {
        guard ring.writableFrames(upTo: wanted) < wanted else { forgetWait(); return false }
        // Every frame committed is either still readable or taken: the count only grows, and
        // only when the encoder releases frames (the capture thread's own writes add to both).
        let framesTaken = framesCommitted - ring.readableFrames
        if framesTaken > framesTakenLastSeen {
            stuckNanoseconds = 0
        } else {
            stuckNanoseconds += min(now - lastLook, 10_000_000)
        }
        framesTakenLastSeen = framesTaken
        lastLook = now
        return stuckNanoseconds < stalledAfterNanoseconds
    }

    /// Counts `frames` the ring had no room for and, when lost time is padded, keeps them for
    /// the gap `padDroppedFrames` schedules. Capture thread only; real-time safe.
    func drop(_ frames: Int) {
        framesDropped.add(frames, ordering: .relaxed)
        if silence != nil { framesDroppedUnscheduled += frames } else { framesLeftOut += frames }
    }

    /// Where the recording's frame `captured` (the capture's count) is in this output's own count
    /// of frames, the one its encoder keeps: behind by the frames it lost with no silence in their
    /// place. A split (SIGUSR1) scheduled there starts every output's file at the same moment;
    /// at the capture's count, an output that had dropped frames split that much later in its
    /// audio. Capture thread only.
    func outputFrame(ofCaptured captured: Int) -> Int { captured - framesLeftOut }

    /// Schedules silence for the frames dropped since the ring last took any, where they were
    /// dropped: after the `framesCommitted` frames the ring has taken. Called before the ring
    /// takes another frame and before any other gap is scheduled (the encoder reads the gaps in
    /// order, positions never decreasing), and at the end of capture. A schedule that is full
    /// (its encoder minutes behind) leaves these frames without silence; they stay counted as
    /// dropped. Capture thread only; real-time safe (one 16-byte entry and a semaphore post).
    func padDroppedFrames() {
        guard framesDroppedUnscheduled > 0, let silence else { return }
        if silence.schedule(SilenceSchedule.Gap(position: framesCommitted, frames: framesDroppedUnscheduled)) {
            framesDroppedPadded.add(framesDroppedUnscheduled, ordering: .relaxed)
            dataReady.signal()
        } else {
            framesLeftOut += framesDroppedUnscheduled
        }
        framesDroppedUnscheduled = 0
    }

    /// The lane has room: a later wait for it starts its stall clock afresh.
    func forgetWait() {
        framesTakenLastSeen = -1
    }

    /// Wakes the encoder if the ring holds `wakeFrames` or more beyond the held frames. Capture
    /// thread, after a commit; real-time safe (three atomic loads, and `sem_post`).
    func wakeIfDue() {
        if ring.readableFrames - heldFrames.load(ordering: .relaxed) >= wakeFrames { dataReady.signal() }
    }
}
