import AudioFormat
import Capture
import Realtime
import RingBuffer
import Testing

/// When the recording's first frame was captured, as `CaptureLoop` works it out from the source's
/// answer to "when does your next frame come": a source that cannot answer at once (the sound
/// server's round trip, missed on a loaded machine) is asked again after the next reads, and the
/// frames delivered or lost meanwhile are counted back, so the answer names the same frame 0.
@Suite struct FirstFrameTimingTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    static let period = 480  // 10 ms
    /// The moment the scripted source's next frame comes when it answers (an arbitrary clock).
    static let answer = 50_000_000_000

    /// A source that hands out `period` frames of silence per read at once, loses `lostFrames` in
    /// an overrun at its `overrunAtRead`th read, and answers the timing question from its
    /// `answersFrom`th ask on (nil before).
    final class ScriptedSource: CaptureSource, @unchecked Sendable {
        let negotiated = NegotiatedCapture(device: "scripted", format: FirstFrameTimingTests.format,
                                           periodFrames: FirstFrameTimingTests.period, bufferFrames: 4 * FirstFrameTimingTests.period)
        let answersFrom: Int
        let overrunAtRead: Int?
        let lostFrames: Int
        private(set) var asks = 0
        private var reads = 0

        init(answersFrom: Int, overrunAtRead: Int? = nil, lostFrames: Int = 0) {
            (self.answersFrom, self.overrunAtRead, self.lostFrames) = (answersFrom, overrunAtRead, lostFrames)
        }

        func start() -> CaptureStep { .frames(0) }
        func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> CaptureStep {
            reads += 1
            if reads == overrunAtRead { return .overrun }
            buffer.initializeMemory(as: UInt8.self, repeating: 0, count: frames * negotiated.format.bytesPerFrame)
            return .frames(frames)
        }
        func readIntoScratch(frames: Int) -> CaptureStep { .frames(frames) }
        func waitForFrames(milliseconds: Int32) -> CaptureStep { .frames(0) }
        func recoverFromOverrun() -> Int? { lostFrames }
        func resumeAfterSuspend(shouldGiveUp: () -> Bool) -> Bool { true }
        func timeOfNextFrame() -> Int? {
            asks += 1
            return asks >= answersFrom ? FirstFrameTimingTests.answer : nil
        }
        func drop() {}
    }

    /// Runs 20 periods from `source` into one ring; returns the monitor the loop filled.
    static func capture(_ source: ScriptedSource) -> CaptureMonitor {
        let ring = FrameRingBuffer(minimumCapacityFrames: 64 * period, bytesPerFrame: format.bytesPerFrame)
        let monitor = CaptureMonitor()
        CaptureLoop(device: source, lanes: [CaptureLane(ring: ring, padsLostTime: false)], monitor: monitor,
                    frameLimit: 20 * period).run()
        return monitor
    }

    static func nanoseconds(frames: Int) -> Int { frames * 1_000_000_000 / format.sampleRate }

    @Test func aSourceThatAnswersAtOnceIsAskedOnce() {
        let source = ScriptedSource(answersFrom: 1)
        let monitor = Self.capture(source)
        #expect(source.asks == 1)
        // The answer came after the first read: frame 0 is that read's period before it.
        #expect(monitor.firstFrameTime.load(ordering: .relaxed) == Self.answer - Self.nanoseconds(frames: Self.period))
        // The time the machine had been suspended goes with it (now's: nobody suspends the
        // machine during the test).
        #expect(abs(monitor.firstFrameSuspendedNanoseconds.load(ordering: .relaxed) - MonotonicClock.nanosecondsSuspended()) < 1_000_000)
    }

    /// Asked again after each read until it answers; the reads before the answer count back.
    @Test(arguments: [2, 3, 4])
    func aSourceThatAnswersLateIsAskedAgainAndCountedBack(answersFrom: Int) {
        let source = ScriptedSource(answersFrom: answersFrom)
        let monitor = Self.capture(source)
        #expect(source.asks == answersFrom)
        #expect(monitor.firstFrameTime.load(ordering: .relaxed) == Self.answer - Self.nanoseconds(frames: answersFrom * Self.period))
    }

    /// Frames the source lost before it answered were captured too: frame 0 is before them.
    @Test func framesLostBeforeTheAnswerCountBackToo() {
        let source = ScriptedSource(answersFrom: 3, overrunAtRead: 2, lostFrames: 1_000)
        let monitor = Self.capture(source)
        #expect(monitor.framesLostToOverruns.load(ordering: .relaxed) == 1_000)
        // Reads 1, 3 and 4 brought a period each (read 2 was the overrun); the answer came after read 4.
        #expect(source.asks == 3)
        #expect(monitor.firstFrameTime.load(ordering: .relaxed) == Self.answer - Self.nanoseconds(frames: 3 * Self.period + 1_000))
    }

    /// Four asks at most: a source that never answers costs no more, and the time stays unknown.
    @Test func aSourceThatNeverAnswersIsAskedFourTimes() {
        let source = ScriptedSource(answersFrom: .max)
        let monitor = Self.capture(source)
        #expect(source.asks == 4)
        #expect(monitor.firstFrameTime.load(ordering: .relaxed) == 0)
    }
}
