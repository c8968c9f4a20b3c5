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
/// (-ESTRPIPE) are recovered as arecord recovers them and counted; any other device error ends
/// capture with `.deviceLost`.
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

    public init(
        device: CaptureDevice, ring: FrameRingBuffer, monitor: CaptureMonitor, dataReady: WakeSignal,
        frameLimit: Int?, stallTimeoutNanoseconds: Int = 5_000_000_000
    ) {
        precondition(ring.bytesPerFrame == device.negotiated.format.bytesPerFrame, "ring and device frame sizes differ")
        self.device = device
        self.ring = ring
        self.monitor = monitor
        self.dataReady = dataReady
        self.frameLimit = frameLimit
        self.stallTimeoutNanoseconds = stallTimeoutNanoseconds
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
        // A source more than one device buffer ahead of the wall clock is not live (a file, not a
        // microphone): waiting for ring space then loses nothing, so it waits instead of dropping.
        let liveSlackFrames = device.negotiated.bufferFrames
        let startTime = MonotonicClock.nanoseconds()
        var lastDataTime = startTime
        var captured = 0
        if case .failed(let error) = device.start() { return (.deviceLost, error.code) }

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
                if captured > elapsedFrames + liveSlackFrames {
                    MonotonicClock.sleep(nanoseconds: 1_000_000)
                    continue
                }
                step = discardOnePeriod(frames: wanted)
            }

            switch step {
            case .frames(let count) where count > 0:
                captured += count
                lastDataTime = MonotonicClock.nanoseconds()
                monitor.framesCaptured.store(captured, ordering: .relaxed)
                dataReady.signal()
            case .frames, .wouldBlock:
                switch device.waitForFrames(milliseconds: 100) {
                case .failed(let error): return (.deviceLost, error.code)
                case .overrun, .suspended, .frames, .wouldBlock: break  // the next read reports it
                }
                if MonotonicClock.nanoseconds() - lastDataTime > stallTimeoutNanoseconds {
                    return (.deviceLost, ETIMEDOUT)
                }
            case .overrun:
                guard let lost = device.recoverFromOverrun() else { return (.deviceLost, EPIPE) }
                monitor.overruns.add(1, ordering: .relaxed)
                monitor.framesLostToOverruns.add(lost, ordering: .relaxed)
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
