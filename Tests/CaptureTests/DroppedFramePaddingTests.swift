import AudioFormat
import Capture
import Foundation
import Realtime
import RingBuffer
import Testing

/// With `--pad-overruns`, frames an output's full ring had no room for get silence in their
/// place, as time the device lost does: the output stays as long as the capture and every later
/// frame stays where it happened. Each source frame holds its own number, so the output's
/// timeline (ring frames and silence, read as the encoder reads them) shows any frame out of place.
@Suite struct DroppedFramePaddingTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    static let period = 480
    static let limit = 5 * 48_000 / 2

    /// A live source: numbered frames as the wall clock makes them due, never ahead of it, so the
    /// capture loop drops into a full ring rather than waiting. Once, after `overrunAt` frames, it
    /// delivers nothing until `overrunFrames` more are due, then reports an overrun that lost
    /// them (their numbers are skipped), as a device does: the time passed, the frames did not
    /// come. Skipping them at once would put the source ahead of the clock, no longer live.
    final class PacedNumberedSource: CaptureSource, @unchecked Sendable {
        let negotiated: NegotiatedCapture
        private var next = 0
        private var startTime = 0
        private let overrunAt: Int
        let overrunFrames: Int
        private var hasOverrun = false

        init(overrunAt: Int, overrunFrames: Int) {
            negotiated = NegotiatedCapture(device: "paced", format: DroppedFramePaddingTests.format,
                                           periodFrames: DroppedFramePaddingTests.period,
                                           bufferFrames: 4 * DroppedFramePaddingTests.period)
            self.overrunAt = overrunAt
            self.overrunFrames = overrunFrames
        }

        private var dueFrames: Int {
            (MonotonicClock.nanoseconds() - startTime) / 1000 * DroppedFramePaddingTests.format.sampleRate / 1_000_000 - next
        }

        func start() -> CaptureStep {
            startTime = MonotonicClock.nanoseconds()
            return .frames(0)
        }
        /// Up to `frames` due now, numbered into `buffer` when there is one; or the overrun, once
        /// its frames' time has passed.
        private func take(_ frames: Int, into buffer: UnsafeMutableRawPointer?) -> CaptureStep {
            if !hasOverrun && next >= overrunAt {
                guard dueFrames >= overrunFrames else { return .wouldBlock }
                hasOverrun = true
                return .overrun
            }
            let count = min(frames, dueFrames)
            guard count > 0 else { return .wouldBlock }
            if let slots = buffer?.bindMemory(to: UInt32.self, capacity: count) {
                for slot in 0..<count { slots[slot] = UInt32(next + slot) }
            }
            next += count
            return .frames(count)
        }
        func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> CaptureStep { take(frames, into: buffer) }
        func readIntoScratch(frames: Int) -> CaptureStep { take(frames, into: nil) }
        func waitForFrames(milliseconds: Int32) -> CaptureStep {
            MonotonicClock.sleep(nanoseconds: 5_000_000)
            return .frames(0)
        }
        func recoverFromOverrun() -> Int? { next += overrunFrames; return overrunFrames }
        func resumeAfterSuspend(shouldGiveUp: () -> Bool) -> Bool { true }
        func timeOfNextFrame() -> Int? { nil }
        func drop() {}
    }

    /// An encoder thread's share, as `EncoderLoop` takes it: the ring's fill, then the schedule;
    /// ring frames up to the next gap, the gap's silence, and on. Each ring frame's number must be
    /// its place in the output. Reads nothing between `stall` seconds after it starts.
    final class TimelineReader: @unchecked Sendable {
        let lane: CaptureLane
        private let stall: ClosedRange<Double>?
        private(set) var timelineFrames = 0
        private(set) var silenceFrames = 0
        private(set) var misplacedFrames = 0
        private var ringFramesConsumed = 0

        init(lane: CaptureLane, stall: ClosedRange<Double>? = nil) {
            self.lane = lane
            self.stall = stall
        }

        func drain(until isDone: () -> Bool) {
            let start = Date()
            while true {
                let finished = isDone()
                if let stall, stall.contains(Date().timeIntervalSince(start)) && !finished {
                    Thread.sleep(forTimeInterval: 0.005)
                    continue
                }
                drainWhatIsThere()
                if finished { return }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }

        private func drainWhatIsThere() {
            while true {
                let readable = lane.ring.readableFrames
                let gap = lane.silence?.next
                if let gap, gap.position == ringFramesConsumed {
                    timelineFrames += gap.frames
                    silenceFrames += gap.frames
                    lane.silence?.removeNext()
                    continue
                }
                let frames = gap.map { min(readable, $0.position - ringFramesConsumed) } ?? readable
                guard frames > 0 else { return }
                _ = lane.ring.withReadableRegions(maxFrames: frames) { regions in
                    for region in [regions.first, regions.second] {
                        for number in region.bindMemory(to: UInt32.self) {
                            if Int(number) != timelineFrames { misplacedFrames += 1 }
                            timelineFrames += 1
                        }
                    }
                    return regions.frameCount
                }
                ringFramesConsumed += frames
            }
        }
    }

    static func lane(ringFrames: Int) -> CaptureLane {
        CaptureLane(ring: FrameRingBuffer(minimumCapacityFrames: ringFrames, bytesPerFrame: format.bytesPerFrame), padsLostTime: true)
    }

    /// A reader that stops for 1.2 s against a 0.17 s ring, beside one that keeps reading, with
    /// an overrun of 100 ms while the first is stopped: the stopped output's drops and the
    /// overrun each get their silence in order, and both outputs hold every frame in its place
    /// and are exactly as long as the capture. The stopped output first (the period is read into
    /// its ring while it has room, and copied to it otherwise) and second (always copied to).
    @Test(arguments: [true, false])
    func droppedFramesAreSilenceInTheirPlace(stalledFirst: Bool) throws {
        let source = PacedNumberedSource(overrunAt: 48_000, overrunFrames: 4_800)
        let stalled = TimelineReader(lane: Self.lane(ringFrames: 8_192), stall: 0.3...1.5)
        let steady = TimelineReader(lane: Self.lane(ringFrames: 65_536))
        let monitor = CaptureMonitor()
        let lanes = stalledFirst ? [stalled.lane, steady.lane] : [steady.lane, stalled.lane]
        let loop = CaptureLoop(device: source, lanes: lanes, monitor: monitor, frameLimit: Self.limit)
        Thread { loop.run() }.start()
        let done = DispatchSemaphore(value: 0)
        for reader in [stalled, steady] {
            Thread {
                reader.drain { monitor.isFinished }
                done.signal()
            }.start()
        }
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 60) == .success, "not done within a minute") }

        #expect(monitor.endReason == .frameLimitReached)
        #expect(monitor.framesPadded.load(ordering: .relaxed) == source.overrunFrames)
        let dropped = stalled.lane.framesDropped.load(ordering: .relaxed)
        #expect(dropped > 0, "a 0.17 s ring holds less than the 1.2 s stop")
        #expect(stalled.lane.framesDroppedPadded.load(ordering: .relaxed) == dropped)
        #expect(stalled.silenceFrames == dropped + source.overrunFrames)
        for reader in [stalled, steady] {
            #expect(reader.timelineFrames == Self.limit && reader.misplacedFrames == 0,
                    "\(reader.timelineFrames) frames in the output, \(reader.misplacedFrames) out of place")
            #expect(reader.lane.framesDroppedPadded.load(ordering: .relaxed) == reader.lane.framesDropped.load(ordering: .relaxed))
        }
    }

    /// An output nobody reads until the capture has ended: its drops run to the end, and their
    /// silence is scheduled after what its ring holds when capture stops (a source that is not
    /// live waits 2 s for it first, then drops into it while the other output has room).
    @Test func dropsUpToTheEndGetTheirSilenceAfterTheRing() throws {
        let stalled = Self.lane(ringFrames: 8_192)
        let reader = TimelineReader(lane: Self.lane(ringFrames: 65_536))
        let monitor = CaptureMonitor()
        let loop = CaptureLoop(device: UnpacedSourceTests.NumberedSource(), lanes: [stalled, reader.lane], monitor: monitor,
                               frameLimit: UnpacedSourceTests.limit)
        Thread { loop.run() }.start()
        let done = DispatchSemaphore(value: 0)
        Thread {
            reader.drain { monitor.isFinished }
            done.signal()
        }.start()
        try #require(done.wait(timeout: .now() + 60) == .success, "not done within a minute")

        let expectedGap = SilenceSchedule.Gap(position: stalled.ring.capacityFrames,
                                              frames: UnpacedSourceTests.limit - stalled.ring.capacityFrames)
        #expect(stalled.silence?.next == expectedGap)
        #expect(stalled.framesDroppedPadded.load(ordering: .relaxed) == expectedGap.frames)
        #expect(reader.timelineFrames == UnpacedSourceTests.limit && reader.misplacedFrames == 0 && reader.silenceFrames == 0)
        let late = TimelineReader(lane: stalled)
        late.drain { true }
        #expect(late.timelineFrames == UnpacedSourceTests.limit && late.misplacedFrames == 0)
    }
}
