import AudioFormat
import Capture
import Realtime
import RingBuffer
import Testing

/// A source whose timeline steps by 280 ms: once because it lost that much audio (a sound server
/// that threw a stalled client's oldest audio away), once because it holds that much more before
/// handing it over (PipeWire asked for 5.1 from a stereo source). The timeline alone cannot tell
/// them apart; the source's own answer to "when was your next frame captured" can. Only the loss
/// is an overrun.
@Suite struct LatencyStepTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    static let period = 480  // 10 ms
    static let step = 13_440  // 280 ms

    enum Change { case loses, holdsBack, losesAndHoldsBack }

    /// A live source paced by the monotonic clock: frame n is captured at start + n / rate and
    /// can be read 20 ms later; from `changeAt` on, it either skips `step` frames (they are never
    /// delivered) or holds every frame `step` longer. It answers the timing question as a sound
    /// server does: the capture time of the frame the next read returns.
    final class SteppingSource: CaptureSource, @unchecked Sendable {
        let negotiated = NegotiatedCapture(device: "stepping", format: LatencyStepTests.format,
                                           periodFrames: LatencyStepTests.period, bufferFrames: 4 * LatencyStepTests.period)
        let change: Change
        let changeAt = 48_000  // the first second as it starts, then the step
        private var startTime = 0
        /// The source's own index of the frame the next read returns (ahead of the frames handed
        /// out by those it skipped).
        private var nextIndex = 0

        init(_ change: Change) { self.change = change }

        private func readable(now: Int) -> Int {
            let elapsed = (now - startTime) / 1000 * LatencyStepTests.format.sampleRate / 1_000_000
            let holds = change == .holdsBack || change == .losesAndHoldsBack
            let held = 960 + (holds && elapsed >= changeAt ? LatencyStepTests.step : 0)
            return max(0, elapsed - held - nextIndex)
        }

        func start() -> CaptureStep { startTime = MonotonicClock.nanoseconds(); return .frames(0) }
        func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> CaptureStep {
            if change != .holdsBack, nextIndex >= changeAt, nextIndex < changeAt + LatencyStepTests.step {
                nextIndex = changeAt + LatencyStepTests.step
            }
            let count = min(frames, readable(now: MonotonicClock.nanoseconds()))
            guard count > 0 else { return .wouldBlock }
            buffer.initializeMemory(as: UInt8.self, repeating: 0, count: count * negotiated.format.bytesPerFrame)
            nextIndex += count
            return .frames(count)
        }
        func readIntoScratch(frames: Int) -> CaptureStep { .frames(0) }
        func waitForFrames(milliseconds: Int32) -> CaptureStep {
            MonotonicClock.sleep(nanoseconds: 5_000_000)
            return .frames(0)
        }
        func recoverFromOverrun() -> Int? { 0 }
        func resumeAfterSuspend(shouldGiveUp: () -> Bool) -> Bool { true }
        func timeOfNextFrame() -> Int? {
            startTime + nextIndex * 1_000_000_000 / negotiated.format.sampleRate
        }
        func drop() {}
    }

    /// Three seconds of the source's timeline into one ring.
    static func capture(_ source: SteppingSource) -> CaptureMonitor {
        let ring = FrameRingBuffer(minimumCapacityFrames: 4 * 48_000, bytesPerFrame: format.bytesPerFrame)
        let monitor = CaptureMonitor()
        CaptureLoop(device: source, lanes: [CaptureLane(ring: ring, padsLostTime: false)], monitor: monitor,
                    frameLimit: 3 * 48_000 - step).run()
        return monitor
    }

    /// What capturing the source's change should show: overruns, frames lost, latency steps.
    /// Losses are found from the timeline, to within its delivery granularity (a period or two)
    /// and 50 ms of a loaded machine's scheduling.
    static func expect(_ change: Change, overruns: Int, lost: Int, latencySteps: Int,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        let monitor = capture(SteppingSource(change))
        let found = monitor.framesLostToOverruns.load(ordering: .relaxed)
        #expect(monitor.overruns.load(ordering: .relaxed) == overruns, "\(found) frames lost", sourceLocation: sourceLocation)
        #expect(abs(found - lost) <= 2 * period + 2_400, "lost \(found) frames, not \(lost)", sourceLocation: sourceLocation)
        #expect(monitor.latencySteps.load(ordering: .relaxed) == latencySteps, sourceLocation: sourceLocation)
    }

    @Test func audioTheSourceLostIsAnOverrun() {
        Self.expect(.loses, overruns: 1, lost: Self.step, latencySteps: 0)
    }

    /// Both at once (a 560 ms step): the half the latency explains is latency, the rest a loss.
    @Test func aStepPartlyLatencyIsALossOfTheRestOnly() {
        Self.expect(.losesAndHoldsBack, overruns: 1, lost: Self.step, latencySteps: 1)
    }

    @Test func latencyTheSourceAddedIsNoOverrun() {
        Self.expect(.holdsBack, overruns: 0, lost: 0, latencySteps: 1)
    }
}
