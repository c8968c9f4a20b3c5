import RingBuffer
import Realtime
#if canImport(Glibc)
import Glibc
#endif

/// The capture thread's loop: device → ring, one period at a time.
///
/// Real-time rules: after `run()` starts, nothing here allocates, locks, or does file I/O; it reads
/// the device (non-blocking, waiting in `snd_pcm_wait`), copies nothing (frames land in the ring
/// directly), and wakes the encoder with a semaphore post. Overruns (-EPIPE) and suspends
/// (-ESTRPIPE) are recovered as arecord recovers them and counted, audio a sound server dropped
/// without saying so is found by `TimelineGuard`, and either loss can be padded with silence (a
/// gap in `silence`, which the encoder thread fills); any other device error ends capture with
/// `.deviceLost`.
public struct CaptureLoop: Sendable {
    public let device: CaptureDevice
    public let ring: FrameRingBuffer
    public let monitor: CaptureMonitor
    /// Posted after every commit and once at the end, so the consumer can sleep between periods.
    public let dataReady: WakeSignal
    /// Stop after exactly this many frames (`-d`), or run until asked to stop.
    public let frameLimit: Int?
    /// A device that delivers nothing for this long is treated as lost.
    public let stallTimeoutNanoseconds: Int
    /// Where time the source lost (overruns, audio a sound server dropped) is scheduled as silence,
    /// so the recording's timeline stays true to the wall clock; nil to leave lost time out.
    public let silence: SilenceSchedule?

    public init(
        device: CaptureDevice, ring: FrameRingBuffer, monitor: CaptureMonitor, dataReady: WakeSignal,
        frameLimit: Int?, silence: SilenceSchedule? = nil, stallTimeoutNanoseconds: Int = 5_000_000_000
    ) {
        precondition(ring.bytesPerFrame == device.negotiated.format.bytesPerFrame, "ring and device frame sizes differ")
        self.device = device
        self.ring = ring
        self.monitor = monitor
        self.dataReady = dataReady
        self.frameLimit = frameLimit
        self.stallTimeoutNanoseconds = stallTimeoutNanoseconds
        self.silence = silence
    }

    /// Runs until stopped, the frame limit is reached, or the device fails. Call on the capture thread.
    public func run() {
        let (reason, code) = captureUntilDone()
        device.drop()
        monitor.finish(because: reason, errorCode: code)
        dataReady.signal()
    }

    private func captureUntilDone() -> (CaptureEndReason, Int32) {
        let periodFrames = device.negotiated.periodFrames
        let rate = device.negotiated.format.sampleRate
        // A source more than one device buffer (plus 0.1% of the time elapsed) ahead of the wall
        // clock is not live (a file, not a microphone): waiting for ring space then loses nothing,
        // so it waits instead of dropping. The 0.1% covers a live device whose crystal runs fast
        // (±100 ppm is common): without it, hours into a recording such a device would look like
        // a file, and a full ring would block the capture thread into a device overrun instead of
        // a counted drop. A file source is ahead by orders of magnitude more.
        let liveSlackFrames = device.negotiated.bufferFrames
        let startTime = MonotonicClock.nanoseconds()
        var timeline = TimelineGuard(rate: rate, periodFrames: periodFrames)
        // Invariant: `captured` counts the frames of the recording's timeline (read from the device,
        // stored or dropped, plus silence scheduled); `accounted` counts what the source delivered
        // plus what it was found to have lost; `committed` counts the frames stored in the ring,
        // the positions of silence gaps. All three only grow.
        var captured = 0
        var accounted = 0
        var committed = 0
        // Time spent in waits that brought no audio, each wait counted at most 200 ms. Not wall
        // time since the last audio: a process that was stopped (SIGSTOP, a paused VM) comes back
        // to a long gap, which is not a sign of a dead device.
        var waitedWithoutAudio = 0
        if case .failed(let error) = device.start() { return (.deviceLost, error.code) }

        func account(lostFrames: Int) {
            accounted += lostFrames
            monitor.overruns.add(1, ordering: .relaxed)
            monitor.framesLostToOverruns.add(lostFrames, ordering: .relaxed)
            guard let silence else { return }
            // A loss found late (on a loaded machine the timeline settles seconds after the stall)
            // may be longer than what is left of a `-d` recording: the recording then ends with
            // silence, exactly `-d` long, and the rest of the loss is reported as not padded.
            let room = frameLimit.map { $0 - captured } ?? lostFrames
            let padding = min(lostFrames, room)
            if padding > 0, silence.schedule(SilenceSchedule.Gap(position: committed, frames: padding)) {
                captured += padding
                monitor.framesPadded.add(padding, ordering: .relaxed)
                monitor.framesCaptured.store(captured, ordering: .relaxed)
                dataReady.signal()
            }
        }

        while !monitor.isStopRequested {
            let wanted = frameLimit.map { min(periodFrames, $0 - captured) } ?? periodFrames
            if wanted <= 0 { return (.frameLimitReached, 0) }

            var step = CaptureStep.wouldBlock
            var isRingFull = false
            _ = ring.withWritableRegions(maxFrames: wanted) { regions in
                guard !regions.isEmpty else {
                    isRingFull = true
                    return 0
                }
                // Frames land in the ring directly; a wrapped region is filled by the next step.
                step = device.read(into: regions.first.baseAddress!, frames: regions.firstFrameCount)
                if case .frames(let count) = step { return count }
                return 0
            }
            if isRingFull {
                let elapsedFrames = (MonotonicClock.nanoseconds() - startTime) / 1000 * rate / 1_000_000
                if captured > elapsedFrames + liveSlackFrames + elapsedFrames / 1000 {
                    MonotonicClock.sleep(nanoseconds: 1_000_000)
                    continue
                }
                step = discardOnePeriod(frames: wanted)
            }

            switch step {
            case .frames(let count) where count > 0:
                if !isRingFull { committed += count }
                captured += count
                accounted += count
                waitedWithoutAudio = 0
                monitor.framesCaptured.store(captured, ordering: .relaxed)
                dataReady.signal()
            case .frames, .wouldBlock:
                // Everything the source had is read: the moment to check its timeline.
                let now = MonotonicClock.nanoseconds()
                let missing = timeline.observeCaughtUp(elapsedNanoseconds: now - startTime, accounted: accounted)
                if missing > 0 { account(lostFrames: missing) }
                switch device.waitForFrames(milliseconds: 100) {
                case .failed(let error): return (.deviceLost, error.code)
                case .overrun, .suspended, .frames, .wouldBlock: break  // the next read reports it
                }
                waitedWithoutAudio += min(MonotonicClock.nanoseconds() - now, 200_000_000)
                if waitedWithoutAudio > stallTimeoutNanoseconds { return (.deviceLost, ETIMEDOUT) }
            case .overrun:
                guard let lost = device.recoverFromOverrun() else { return (.deviceLost, EPIPE) }
                account(lostFrames: lost)
            case .suspended:
                guard device.resumeAfterSuspend(shouldGiveUp: { monitor.isStopRequested }) else {
                    return (.deviceLost, ESTRPIPE)
                }
            case .failed(let error):
                return (.deviceLost, error.code)
            }
        }
        return (.stopRequested, 0)
    }

    /// The ring is full and the source is live: keep the device from overrunning by reading one
    /// period into the device-owned scratch space, and count those frames as dropped.
    private func discardOnePeriod(frames: Int) -> CaptureStep {
        let step = device.readIntoScratch(frames: frames)
        if case .frames(let count) = step, count > 0 {
            monitor.framesDropped.add(count, ordering: .relaxed)
        }
        return step
    }
}
