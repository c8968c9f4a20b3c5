import Capture
import Encoding
import Realtime
import RingBuffer
import Synchronization

/// One output's encoder thread loop: its lane's ring → encoder → output, until capture has
/// finished and the ring is empty (or the output ends early: it failed, or reached `--max-size`),
/// then `finish()`.
///
/// Each output has a loop and a thread of its own, so an output whose writes block (a pipe
/// reader that stopped reading, a slow disk) holds up only its own thread and fills only its own
/// ring (see `CaptureLane`). It sleeps on its lane's `dataReady` between periods and never spins.
/// Per period it allocates nothing and takes no locks: it borrows the ring's readable regions and
/// hands them to the encoder, which converts them in place into its preallocated buffer. Silence
/// for lost time (`--pad-overruns`) comes from a preallocated zero buffer, at the places the
/// capture thread scheduled.
final class EncoderLoop: @unchecked Sendable {
    let lane: CaptureLane
    let ring: FrameRingBuffer
    private let encoder: any AudioEncoder
    let monitor: CaptureMonitor
    /// Gaps of silence to insert between ring frames; nil when lost time is not padded.
    let silence: SilenceSchedule?
    /// Zeros (silence in every sample format) to encode for a gap, a chunk at a time; empty
    /// without a schedule.
    private let zeros: UnsafeRawBufferPointer
    /// Frames taken from the ring so far (encoded, or passed over by `soundGate`): where the
    /// encoder is in the positions of `silence`. Encoder thread only.
    var ringFramesConsumed = 0
    /// Sound activation's drain, in place of `drainRing`'s; nil when every frame is recorded.
    let soundGate: SoundGatedDrain?

    /// Frames handed to the encoder. Written by the encoder thread, read by others as a snapshot.
    let framesEncoded = Atomic<Int>(0)
    /// Bytes of output written, published after each drain. Same rules as `framesEncoded`.
    let bytesWritten = Atomic<Int>(0)
    /// Levels for a status line, when one is shown (measuring costs a pass over every sample);
    /// measured while this output holds the meter (`MeterBaton`).
    let meter: MeterShare?
    /// `--max-size`: no region is encoded that could take the output past it (see `fitsUnderLimit`).
    private let maxBytes: Int?
    /// The most one frame can add to the output: the codec's own bound (WAV, raw, Opus), or its
    /// raw size plus 1/64 (FLAC's worst case, verbatim frames and their headers, stays under that).
    private let bytesPerFrameBound: Double
    /// Headroom for the codec's final flush, which writes what it still buffers (libFLAC: under one
    /// 4096-frame block, which 8192 frames at the bound cover). A codec that knows says what its
    /// finish adds beyond the frames it has yet to write: WAV and raw exactly, Ogg Opus a bound.
    private let flushReserveBytes: Int
    /// Under the size limit, fewer frames than this (one period) are not worth a step: the limit is
    /// then reached. Without it, the last steps would shrink towards single frames.
    private let minimumStepFrames: Int
    /// Set once the output reached the size limit; it then takes no more frames and is finished.
    let sizeLimitReached = Atomic<Bool>(false)
    /// The thread (`pthread_t`) that waits in `StopSignals.wait` with the signals blocked, stored
    /// by it before it first looks at `isDone`; 0 when none. The loop wakes that thread, and only
    /// that thread, when done. Without one it is left to poll: a wake directed at the process
    /// could land on a thread of an embedding program that does not block it, and end the process.
    ///
    /// Each side stores its own flag and then loads the other's (the waiter: `waiterThread`, then
    /// `done`; the loop: `done`, then `waiterThread`). All four accesses are sequentially
    /// consistent: with release stores and acquire loads both loads may see the old values (each
    /// store still in its core's store buffer), so the loop would send no wake and the waiter,
    /// with no timeout once capture has ended, would sleep for good. In one total order at least
    /// one of the loads sees the other's store.
    let waiterThread = Atomic<UInt>(0)
    /// Set once the loop has returned; `outcome` is then final (sequentially consistent, which
    /// includes release/acquire for `failure`: see `waiterThread`).
    private let done = Atomic<Bool>(false)
    /// Written only by the encoder thread before `done` is released; read only after acquiring it.
    private var failure: EncoderError?

    init(lane: CaptureLane, encoder: any AudioEncoder, monitor: CaptureMonitor,
         meter: MeterShare? = nil, maxBytes: Int? = nil, periodFrames: Int = 0, soundGate: SoundGatedDrain? = nil) {
        self.lane = lane
        ring = lane.ring
        silence = lane.silence
        // 4096 frames a chunk: one FLAC block, a few dozen encoder calls a second of silence.
        let zeroBytes = silence == nil ? 0 : 4096 * ring.bytesPerFrame
        let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: zeroBytes, alignment: 16)
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        self.zeros = UnsafeRawBufferPointer(zeros)
        self.meter = meter
        self.maxBytes = maxBytes
        bytesPerFrameBound = Self.bytesPerFrameBound(bytesPerFrame: ring.bytesPerFrame, encoder: encoder)
        flushReserveBytes = encoder.maximumFinishBytes ?? Int((8192 * bytesPerFrameBound).rounded(.up))
        minimumStepFrames = max(periodFrames, 1)
        self.encoder = encoder
        self.monitor = monitor
        self.soundGate = soundGate
    }

    /// The most output one input frame of `bytesPerFrame` bytes can cost with `encoder`: its
    /// codec's own bound, or the raw size with 1/64 for framing (FLAC's verbatim frames). The
    /// codec's even where it is above the raw size: Opus encodes at 48 kHz whatever the input's
    /// rate, so 8 kHz stereo at 512 kb/s costs twice its raw size (capped at raw, such a file
    /// passed the limit).
    static func bytesPerFrameBound(bytesPerFrame: Int, encoder: any AudioEncoder) -> Double {
        encoder.maximumBytesPerFrame ?? Double(bytesPerFrame) * 65 / 64
    }

    deinit { zeros.deallocate() }

    /// Whether the loop has returned (pairs with the store at the end of `run()`; sequentially
    /// consistent for the wake handshake, see `waiterThread`).
    var isDone: Bool { done.load(ordering: .sequentiallyConsistent) }

    /// The encoder's failure, if any. Valid once `isDone` is true.
    var outcome: EncoderError? {
        precondition(isDone, "the encoder loop is still running")
        return failure
    }

    /// Runs on the encoder thread.
    func run() {
        failure = drainUntilCaptureEnds()
        meter?.outputEnded()
        soundGate?.reportOpenSegment(self)
        if let failure {
            // The output is broken: it takes no more audio (capture stops once no output takes
            // any; see `CaptureLoop`), and what was written is left valid.
            lane.close()
            if case .writeFailed = failure { encoder.salvageAfterWriteFailure() }
            // What the file holds now, its header included (the last drain's count was never
            // published when its write failed, or the first one's, leaving 0 beside a header).
            bytesWritten.store(encoder.bytesWritten, ordering: .relaxed)
            // And the frames it holds, when the codec can tell: the drain that failed was never
            // counted (nor, at a split, the frames it gave the file it was finishing), and a salvage
            // may have cut frames that were.
            if let held = encoder.framesHeld { framesEncoded.store(held, ordering: .relaxed) }
        } else {
            defer { bytesWritten.store(encoder.bytesWritten, ordering: .relaxed) }
            do throws(EncoderError) { try encoder.finish() } catch {
                failure = error
                if case .writeFailed = error { encoder.salvageAfterWriteFailure() }
                // The flush that failed may have cut frames that were counted (FLAC's last frames).
                if let held = encoder.framesHeld { framesEncoded.store(held, ordering: .relaxed) }
            }
        }
        done.store(true, ordering: .sequentiallyConsistent)
        let waiter = waiterThread.load(ordering: .sequentiallyConsistent)
        if waiter != 0 { StopSignals.wake(waiter) }
    }

    private func drainUntilCaptureEnds() -> EncoderError? {
        do throws(EncoderError) {
            while true {
                // Read `isFinished` before draining: if it was already true, this drain sees every
                // frame capture will ever commit (acquire/release in CaptureMonitor).
                let captureFinished = monitor.isFinished
                if let soundGate { try soundGate.drain(self) } else { try drainRing() }
                if captureFinished || sizeLimitReached.load(ordering: .relaxed)
                    || soundGate?.stoppedOnSilence.load(ordering: .relaxed) == true { return nil }
                // Capture posts when there is work and once when it ends, so the timeout is only a
                // safety net: a short one woke this thread between periods for nothing (#16).
                lane.dataReady.wait(timeoutNanoseconds: 2_000_000_000)
            }
        } catch {
            return error
        }
    }

    private func drainRing() throws(EncoderError) {
        while true {
            // Ring frames up to the next gap, then the gap, then on. The gap is due only where it
            // is: a fill read as 0 may be older than a gap scheduled after more frames (the fill
            // is read first), and taken for "due" it put the silence before those frames.
            let (gap, maxFrames) = nextGap(afterFrames: ringFramesConsumed)
            if let gap, gap.position == ringFramesConsumed {
                try encodeSilence(frames: gap.frames)
                silence?.removeNext()
                continue
            }
            let consumed = try ring.withReadableRegions(maxFrames: maxFrames) { regions throws(EncoderError) in
                let frames = framesUnderLimit(available: regions.frameCount)
                guard frames > 0 else { return 0 }  // empty, or at the size limit: the output is done
                let firstBytes = min(regions.first.count, frames * ring.bytesPerFrame)
                let secondBytes = frames * ring.bytesPerFrame - firstBytes
                let first = UnsafeRawBufferPointer(rebasing: regions.first[..<firstBytes])
                let second = UnsafeRawBufferPointer(rebasing: regions.second[..<secondBytes])
                if !first.isEmpty { try encoder.encode(first) }
                if !second.isEmpty { try encoder.encode(second) }
                meter?.measure(first, second)
                return frames
            }
            if consumed == 0 { return }
            ringFramesConsumed += consumed
            framesEncoded.add(consumed, ordering: .relaxed)
            bytesWritten.store(encoder.bytesWritten, ordering: .relaxed)
        }
    }

    /// The next gap of silence not yet encoded, and how many ring frames may be taken from
    /// `position` (the frames already taken from the ring) before it: the frames readable now, or
    /// fewer when the gap comes first; the gap is due when its position is `position`.
    ///
    /// Memory ordering: the ring's fill is read first (an acquire of its write index), then the
    /// schedule. The capture thread schedules a gap at position P before it commits any frame
    /// after P, so a frame after P that this fill includes was committed after the gap was
    /// scheduled, and the schedule read next shows the gap. Read the other way round, a gap
    /// scheduled between the two reads went unseen while the frames after it were taken, and the
    /// encoder ran past the gap (a crash seen under load in `padOverrunsFillsAnOverrunWithExactlyItsSilence`).
    func nextGap(afterFrames position: Int) -> (gap: SilenceSchedule.Gap?, framesBefore: Int) {
        let readable = ring.readableFrames
        guard let gap = silence?.next else { return (nil, readable) }
        precondition(gap.position >= position, "a gap at frame \(gap.position) was passed (now at \(position))")
        return (gap, min(readable, gap.position - position))
    }

    /// Encodes whole frames taken from the ring, under the size limit, and counts them. Returns
    /// the frames encoded: all of them, or fewer once the output reached its size limit.
    func encodeFrames(_ bytes: UnsafeRawBufferPointer) throws(EncoderError) -> Int {
        let available = bytes.count / ring.bytesPerFrame
        var encoded = 0
        // In steps: one may stop short of the limit, at a second file's start.
        while encoded < available {
            let frames = framesUnderLimit(available: available - encoded)
            guard frames > 0 else { break }
            let start = encoded * ring.bytesPerFrame
            try encoder.encode(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + frames * ring.bytesPerFrame)]))
            encoded += frames
            framesEncoded.add(frames, ordering: .relaxed)
            bytesWritten.store(encoder.bytesWritten, ordering: .relaxed)
        }
        return encoded
    }

    /// Ends the output at its size limit now (sound activation: a segment that does not fit whole
    /// ends it, rather than being cut at an arbitrary frame and going on).
    func endAtSizeLimit() {
        sizeLimitReached.store(true, ordering: .relaxed)
        lane.close()
    }

    /// Encodes `frames` of silence for a gap (not metered: it is not what the microphone heard).
    /// At the size limit the rest is left out, as ring frames are.
    func encodeSilence(frames: Int) throws(EncoderError) {
        let chunkFrames = zeros.count / ring.bytesPerFrame
        var remaining = frames
        while remaining > 0 {
            let chunk = framesUnderLimit(available: min(remaining, chunkFrames))
            guard chunk > 0 else { return }
            try encoder.encode(UnsafeRawBufferPointer(rebasing: zeros[..<(chunk * ring.bytesPerFrame)]))
            remaining -= chunk
            framesEncoded.add(chunk, ordering: .relaxed)
            bytesWritten.store(encoder.bytesWritten, ordering: .relaxed)
        }
    }

    /// How many of `available` frames may be encoded under `--max-size` (all of them without one).
    /// Fewer, short of the limit, where a second file would start among them (the one header kept
    /// in reserve covers one; see `framesBeforeSecondFileStart`): the caller takes another step.
    ///
    /// The output may not pass the limit, and what frames will add is only known afterwards, so it
    /// is bounded by `bytesPerFrameBound` per frame (those given earlier and not yet written too),
    /// plus the final flush's reserve. Once fewer than one
    /// period's frames fit, this step takes those that do and the output ends (the last output to
    /// end stops the capture): the file ends under the limit, never over it. Ending there rather
    /// than going on in smaller and smaller steps: what a step writes is usually well under the
    /// bound, so the room left would shrink towards single frames over many steps.
    private func framesUnderLimit(available: Int) -> Int {
        guard let maxBytes else { return available }
        if sizeLimitReached.load(ordering: .relaxed) { return 0 }
        let available = min(available, encoder.framesBeforeSecondFileStart ?? .max)
        let awaiting = Int((Double(encoder.framesAwaitingOutput) * bytesPerFrameBound).rounded(.up))
        let room = maxBytes - encoder.bytesWritten - encoder.headerBytesAhead - flushReserveBytes - awaiting
        let fitting = Int(Double(max(0, room)) / bytesPerFrameBound)
        if fitting >= min(available, minimumStepFrames) { return min(available, fitting) }
        sizeLimitReached.store(true, ordering: .relaxed)
        lane.close()
        return min(available, fitting)
    }

    /// The smallest `--max-size` under which this output records at least one period: what it has
    /// written (its header), the header a next file may begin with (`headerBytesAhead`: a file
    /// output keeps one in reserve, for an armed output's first file or a split), the final
    /// flush's reserve, and a period at the bound.
    var smallestLimitHoldingAPeriod: Int {
        encoder.bytesWritten + encoder.headerBytesAhead + flushReserveBytes
            + Int((Double(minimumStepFrames) * bytesPerFrameBound).rounded(.up))
    }
}
