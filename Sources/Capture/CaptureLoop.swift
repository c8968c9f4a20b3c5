import RingBuffer
import Realtime
#if canImport(Glibc)
import Glibc
#endif

/// The capture thread's loop: device → the outputs' rings, one period at a time. Generic over the
/// source (ALSA's `CaptureDevice`, or the sound server's own stream), so each is called directly.
///
/// Real-time rules: after `run()` starts, nothing here allocates, locks, or does file I/O; it reads
/// the source (non-blocking, waiting in its `waitForFrames`: `snd_pcm_wait` for ALSA, a one-period
/// cadence for the sound server's stream) straight into the first output's ring that
/// has room, copies the period into the other outputs' rings (one `memcpy` each; none with one
/// output), and wakes each output's encoder with a semaphore post. Overruns (-EPIPE) and suspends
/// (-ESTRPIPE) are recovered as arecord recovers them and counted, audio a sound server dropped
/// without saying so is found by `TimelineGuard`, and either loss can be padded with silence (a
/// gap in each lane's schedule, which that output's encoder thread fills); any other device error
/// ends capture with `.deviceLost`. A full ring costs only its own output frames (see `CaptureLane`),
/// and an output that has ended is no longer fed; once every output has ended, capture stops. A
/// source that is not live (it got ahead of the wall clock: a file) waits for a full ring instead,
/// unless that ring's encoder has stalled and another output has room.
public struct CaptureLoop<Source: CaptureSource>: Sendable {
    public let device: Source
    /// One per output, in the order the outputs were given.
    public let lanes: [CaptureLane]
    public let monitor: CaptureMonitor
    /// Stop after exactly this many frames (`-d`), or run until asked to stop.
    public let frameLimit: Int?
    /// A device that delivers nothing for this long is treated as lost.
    public let stallTimeoutNanoseconds: Int

    public init(
        device: Source, lanes: [CaptureLane], monitor: CaptureMonitor,
        frameLimit: Int?, stallTimeoutNanoseconds: Int = 5_000_000_000
    ) {
        precondition(!lanes.isEmpty, "a capture needs an output")
        precondition(lanes.allSatisfy { $0.ring.bytesPerFrame == device.negotiated.format.bytesPerFrame },
                     "ring and device frame sizes differ")
        self.device = device
        self.lanes = lanes
        self.monitor = monitor
        self.frameLimit = frameLimit
        self.stallTimeoutNanoseconds = stallTimeoutNanoseconds
    }

    /// Runs until stopped, the frame limit is reached, every output has ended, or the device
    /// fails. Call on the capture thread.
    public func run() {
        let (reason, code) = captureUntilDone()
        // Frames dropped up to the end still get their silence, after what each ring holds.
        for lane in lanes where !lane.isClosed { lane.padDroppedFrames() }
        device.drop()
        monitor.finish(because: reason, errorCode: code)
        for lane in lanes { lane.dataReady.signal() }
    }

    private func captureUntilDone() -> (CaptureEndReason, Int32) {
        var timeline = TimelineGuard(rate: device.negotiated.format.sampleRate, periodFrames: device.negotiated.periodFrames)
        let ending = capture(watching: &timeline)
        monitor.clockDriftPartsPerBillion.store(timeline.driftPartsPerBillion ?? Int.min, ordering: .relaxed)
        return ending
    }

    private func capture(watching timeline: inout TimelineGuard) -> (CaptureEndReason, Int32) {
        let periodFrames = device.negotiated.periodFrames
        let rate = device.negotiated.format.sampleRate
        // A source more than one device buffer (plus 0.1% of the time elapsed) ahead of the wall
        // clock is not live (a file, not a microphone): waiting for ring space then loses nothing,
        // so it waits instead of dropping. The 0.1% covers a live device whose crystal runs fast
        // (±100 ppm is common): without it, hours into a recording such a device would look like
        // a file, and a full ring would block the capture thread into a device overrun instead of
        // a counted drop. A file source is ahead by orders of magnitude more.
        let liveSlackFrames = device.negotiated.bufferFrames
        // Once ahead, a source stays "not live" for the rest of the recording: a paced one cannot
        // get ahead (the slack above covers a fast crystal), and one that is not paced does not
        // start to be. Judged afresh each time (as it was), a file source read by an encoder
        // slower than real time (a machine too slow or too loaded for it) fell behind the wall
        // clock once the ring's lead was spent, was taken for live, and lost whole periods it
        // could have waited for (`UnpacedSourceTests.aReaderSlowerThanRealTimeGetsEveryFrame`).
        var isSourceAhead = false
        // How long one wait for the device may last: two periods (at least 100 ms). A period's
        // audio wakes it sooner; the timeout only bounds a stall. At 100 ms, shorter than the
        // default 125 ms period, every wait timed out before the period was complete, which cost a
        // wake-up and a partial read each period (strace, #16); a stop is still seen within a
        // period, since audio keeps waking the thread.
        let waitMilliseconds = max(100, 2 * periodFrames * 1000 / rate)
        let startTime = MonotonicClock.nanoseconds()
        // Invariant: `captured` counts the frames of the recording's timeline (read from the device,
        // stored or dropped, plus silence scheduled); `accounted` counts what the source delivered
        // plus what it was found to have lost; each lane's `framesCommitted` counts the frames
        // stored in its ring, the positions of its silence gaps. All of them only grow.
        var captured = 0
        var accounted = 0
        let padsLostTime = lanes.contains { $0.silence != nil }
        // Time spent in waits that brought no audio, each wait counted at most twice its timeout.
        // Not wall time since the last audio: a process that was stopped (SIGSTOP, a paused VM)
        // comes back to a long gap, which is not a sign of a dead device.
        var waitedWithoutAudio = 0
        // The first reads that brought audio ask the device when its next frame comes, until one
        // answers: the sound server's answer is a round trip (at most 200 ms, on this thread), and
        // a loaded server can miss it once. Four tries bound what a device without timestamps costs.
        var timingTriesLeft = 4
        // A step in the timeline that the source's own latency grew by as well is latency it added,
        // not audio it lost. PipeWire, asked for 5.1 from a stereo source, holds about 280 ms
        // more a second or so into some recordings, and the timeline alone took that for a loss
        // (and `--pad-overruns` put silence into whole audio). So the loop keeps, from a caught-up
        // moment once the first frame is timed (one more question, at most four tries; none of a
        // source that never answered), the timeline's rise above its floor less the source's
        // latency, both at the same `now`: a thread preempted before `now` was taken adds to both
        // alike, and the floor follows the clock's drift. At a step, that difference moves by the
        // audio lost; what the latency explains is latency. A source that cannot say leaves it
        // nil: every step is then a loss, as before.
        var latencyBaseline: Int?
        var baselineTriesLeft = 4
        var firstFrameTimed = false
        // New files asked for (SIGUSR1) and taken so far, and the frame of the last one scheduled:
        // requests taken at one frame are one split (no empty file between them).
        var splitsTaken = monitor.splitsRequested
        var lastSplitFrame = -1
        // At `now`, the moment the timeline's deficit was taken: the next frame to read is the
        // same one however late the answer comes (nothing is read meanwhile), so a thread that
        // was preempted, or a slow round trip, does not add to the latency.
        func latencyFrames(at now: Int) -> Int? {
            guard let next = device.timeOfNextFrame() else { return nil }
            return (now - next) / 1000 * rate / 1_000_000
        }
        if case .failed(let code) = device.start() { return (.deviceLost, code) }

        func account(lostFrames: Int) {
            accounted += lostFrames
            monitor.overruns.add(1, ordering: .relaxed)
            monitor.framesLostToOverruns.add(lostFrames, ordering: .relaxed)
            guard padsLostTime else { return }
            // A loss found late (on a loaded machine the timeline settles seconds after the stall)
            // may be longer than what is left of a `-d` recording: the recording then ends with
            // silence, exactly `-d` long, and the rest of the loss is reported as not padded.
            let room = frameLimit.map { $0 - captured } ?? lostFrames
            let padding = min(lostFrames, room)
            guard padding > 0 else { return }
            // Each output's gap goes where its own ring has got to. A schedule that is full (its
            // encoder minutes behind) leaves that output without this silence; the padding counts
            // only when every output has it.
            var scheduledEverywhere = true
            for lane in lanes where !lane.isClosed {
                lane.padDroppedFrames()  // gaps in order: its drops came first
                let gap = SilenceSchedule.Gap(position: lane.framesCommitted, frames: padding)
                if lane.silence?.schedule(gap) == true { lane.dataReady.signal() } else { scheduledEverywhere = false }
            }
            if scheduledEverywhere {
                captured += padding
                monitor.framesPadded.add(padding, ordering: .relaxed)
                monitor.framesCaptured.store(captured, ordering: .relaxed)
            }
        }

        while !monitor.isStopRequested {
            // A new file asked for: at the count now (in each output's own count of frames), which
            // every frame committed to any ring is at or before, scheduled in each splitting lane
            // before another frame is committed (`SplitSchedule` says why the frame is chosen here
            // and how it is ordered). A full schedule leaves that output without this split.
            let splitsRequested = monitor.splitsRequested
            if splitsRequested != splitsTaken {
                splitsTaken = splitsRequested
                if captured != lastSplitFrame {
                    lastSplitFrame = captured
                    for lane in lanes where !lane.isClosed {
                        if lane.splits?.schedule(atFrame: lane.outputFrame(ofCaptured: captured)) == true { lane.dataReady.signal() }
                    }
                }
            }
            let wanted = frameLimit.map { min(periodFrames, $0 - captured) } ?? periodFrames
            if wanted <= 0 { return (.frameLimitReached, 0) }

            // The period is read into the first open lane with room, and copied to the others.
            var target: CaptureLane?
            var isSomeRingShort = false
            var isSomeRingRoomy = false
            var openLanes = 0
            for lane in lanes where !lane.isClosed {
                openLanes += 1
                let room = lane.ring.writableFrames(upTo: wanted)
                if room < wanted { isSomeRingShort = true } else { isSomeRingRoomy = true; lane.forgetWait() }
                if room > 0, target == nil { target = lane }
            }
            if openLanes == 0 { return (.stopRequested, 0) }  // every output has ended
            if isSomeRingShort {
                let now = MonotonicClock.nanoseconds()
                if !isSourceAhead {
                    let elapsedFrames = (now - startTime) / 1000 * rate / 1_000_000
                    isSourceAhead = captured > elapsedFrames + liveSlackFrames + elapsedFrames / 1000
                }
                // A source that is not live loses nothing by waiting, so it waits for a ring
                // without room for the whole period, unless the ring's encoder has taken nothing
                // for a long while (a pipe whose reader stopped reading) and another output has
                // room: only then does that one drop, so it cannot hold the others back. With no
                // output that has room, a drop would help nobody. A live source never waits: its
                // device would overrun. Every lane is looked at, so each one's stall clock sees
                // every wait.
                if isSourceAhead {
                    var isSomeLaneWaitedFor = false
                    for lane in lanes where !lane.isClosed {
                        // A whole ring taken as one batch and written at a quarter of real time.
                        let stalledAfter = max(2_000_000_000, 4 * lane.ring.capacityFrames * 1_000_000_000 / rate)
                        if lane.isWaitedFor(wanted: wanted, now: now, stalledAfterNanoseconds: stalledAfter) {
                            isSomeLaneWaitedFor = true
                        }
                    }
                    if isSomeLaneWaitedFor || !isSomeRingRoomy {
                        MonotonicClock.sleep(nanoseconds: 1_000_000)
                        continue
                    }
                }
            }

            let step: CaptureStep
            var requested = wanted
            if let target {
                target.padDroppedFrames()  // it has room: the silence goes before the frames
                var timed = false
                (step, requested) = read(wanted, into: target) { count in
                    // Before any lane sees these frames (`read` says why). The count first, so
                    // that no status shows an output ahead of the capture. Relaxed: a snapshot
                    // (the frame a SIGUSR1 splits at is chosen on this thread, above).
                    monitor.framesCaptured.store(captured + count, ordering: .relaxed)
                    guard timingTriesLeft > 0 else { return }
                    timed = stampFirstFrame(afterReading: count, accounted: accounted)
                }
                if case .frames(let count) = step, count > 0, timingTriesLeft > 0 { timingTriesLeft = timed ? 0 : timingTriesLeft - 1 }
                if timed { firstFrameTimed = true }
            } else {
                step = discardOnePeriod(frames: wanted)
                if case .frames(let count) = step, count > 0, timingTriesLeft > 0 {
                    let timed = stampFirstFrame(afterReading: count, accounted: accounted)
                    timingTriesLeft = timed ? 0 : timingTriesLeft - 1
                    if timed { firstFrameTimed = true }
                }
            }

            // Whether everything the source had is read. A read that brought fewer frames than it
            // asked for says so as well as one that would block: going straight to the wait saves
            // the read that would only say "would block", a call into the plugin (for the pulse
            // plugin a wake-up of its thread too) every period (#16).
            var isDrained = false
            switch step {
            case .frames(let count) where count > 0:
                captured += count
                accounted += count
                waitedWithoutAudio = 0
                monitor.framesCaptured.store(captured, ordering: .relaxed)  // already, unless discarded
                isDrained = count < requested
            case .frames, .wouldBlock:
                isDrained = true
            case .overrun:
                guard let lost = device.recoverFromOverrun() else { return (.deviceLost, EPIPE) }
                account(lostFrames: lost)
            case .suspended:
                guard device.resumeAfterSuspend(shouldGiveUp: { monitor.isStopRequested }) else {
                    return (.deviceLost, ESTRPIPE)
                }
            case .failed(let code):
                return (.deviceLost, code)
            }
            if isDrained {
                // Everything the source had is read: the moment to check its timeline.
                let now = MonotonicClock.nanoseconds()
                var missing = timeline.observeCaughtUp(elapsedNanoseconds: now - startTime, accounted: accounted)
                if missing > 0, let baseline = latencyBaseline, let latency = latencyFrames(at: now) {
                    // The audio lost: how far rise less latency moved, to within a period (at
                    // least 50 ms: each is measured to about that). Latency grown well past the
                    // step is not believed (a source whose timestamps stopped moving): the step is
                    // then a loss, as without the check.
                    let tolerance = max(periodFrames, rate / 20)
                    let unexplained = (missing - latency) - baseline
                    let lost = unexplained < -tolerance ? missing : min(max(unexplained, 0), missing)
                    let added = missing - lost
                    let taken = lost <= tolerance ? missing : added <= tolerance ? 0 : added
                    if taken > 0 {
                        timeline.acceptLatencyStep(frames: taken)
                        missing -= taken
                        monitor.latencySteps.add(1, ordering: .relaxed)
                    }
                    // Once the step is taken (as latency, loss or both) the rise is back to 0.
                    latencyBaseline = -latency
                }
                if missing > 0 {
                    account(lostFrames: missing)
                } else if latencyBaseline == nil, firstFrameTimed, baselineTriesLeft > 0 {
                    latencyBaseline = latencyFrames(at: now).map { timeline.lastRise - $0 }
                    baselineTriesLeft -= 1
                }
                switch device.waitForFrames(milliseconds: Int32(waitMilliseconds)) {
                case .failed(let code): return (.deviceLost, code)
                case .overrun, .suspended, .frames, .wouldBlock: break  // the next read reports it
                }
                if step == .wouldBlock || step == .frames(0) {
                    waitedWithoutAudio += min(MonotonicClock.nanoseconds() - now, 2 * waitMilliseconds * 1_000_000)
                    if waitedWithoutAudio > stallTimeoutNanoseconds { return (.deviceLost, device.reasonForNoAudio()) }
                }
            }
        }
        return (.stopRequested, 0)
    }

    /// Asks the source when its next frame comes, after a read of `count` frames with `accounted`
    /// before it, and stores when frame 0 came: every frame the source has delivered or lost,
    /// this read's included, before the next one. Returns whether the source answered.
    ///
    /// Memory ordering: stored with release before the frames are committed to any ring (see
    /// `read`), so an encoder that has acquired a ring's write index covering them, and starts a
    /// sound-activated segment on them, finds the time (and the time suspended, stored before
    /// it) with an acquiring load (`CaptureClock.firstSampleTime`). A source that never answers
    /// leaves 0: the device's open time then stands in.
    private func stampFirstFrame(afterReading count: Int, accounted: Int) -> Bool {
        guard let next = device.timeOfNextFrame() else { return false }
        let rate = device.negotiated.format.sampleRate
        monitor.firstFrameSuspendedNanoseconds.store(MonotonicClock.nanosecondsSuspended(), ordering: .relaxed)
        monitor.firstFrameTime.store(next - (accounted + count) * 1_000_000_000 / rate, ordering: .releasing)
        return true
    }

    /// Reads up to `frames` from the device into `target`'s ring (its first free region; a
    /// wrapped one is filled by the next step), copies what came to every other open lane, and
    /// wakes each lane whose ring now holds enough to be worth a wake-up (`CaptureLane.wakeFrames`).
    /// A lane without room for all of them keeps what fits and drops the rest (counted, and with
    /// `--pad-overruns` padded with silence once it has room again).
    /// `afterDeviceRead` runs with the count right after a read that brought frames, before any
    /// lane sees them (the first frame's time is taken there). Returns the step and how many
    /// frames it asked the device for.
    private func read(_ frames: Int, into target: CaptureLane,
                      afterDeviceRead: (Int) -> Void) -> (CaptureStep, requested: Int) {
        var step = CaptureStep.wouldBlock
        var requested = 0
        let bytesPerFrame = target.ring.bytesPerFrame
        let stored = target.ring.withWritableRegions(maxFrames: frames) { regions in
            requested = regions.firstFrameCount
            step = device.read(into: regions.first.baseAddress!, frames: requested)
            guard case .frames(let count) = step, count > 0 else { return 0 }
            afterDeviceRead(count)
            let period = UnsafeRawBufferPointer(start: regions.first.baseAddress!, count: count * bytesPerFrame)
            for lane in lanes where lane !== target && !lane.isClosed {
                // The room first, then the silence of earlier drops, then the frames: a gap is
                // scheduled before the ring takes a frame after it. The room only grows until
                // this thread writes (the encoder frees it), so all of it is written.
                let room = lane.ring.writableFrames(upTo: count)
                guard room > 0 else { lane.drop(count); continue }
                lane.padDroppedFrames()
                let copied = lane.ring.write(from: UnsafeRawBufferPointer(rebasing: period[..<(room * bytesPerFrame)]))
                lane.framesCommitted += copied
                if copied < count { lane.drop(count - copied) }
                if copied > 0 { lane.wakeIfDue() }
            }
            return count
        }
        if stored > 0 {
            target.framesCommitted += stored
            target.wakeIfDue()
        }
        return (step, requested)
    }

    /// Every open ring is full and the source is live: keep the device from overrunning by
    /// reading one period into the device-owned scratch space, and drop those frames for every
    /// open output (counted, and padded with silence once it has room again).
    private func discardOnePeriod(frames: Int) -> CaptureStep {
        let step = device.readIntoScratch(frames: frames)
        if case .frames(let count) = step, count > 0 {
            for lane in lanes where !lane.isClosed { lane.drop(count) }
        }
        return step
    }
}
