import AudioFormat
import Capture
import Foundation
import Realtime
import RingBuffer
import Testing

/// A source that is not live (a file, the test rig's `filecap`) loses nothing by waiting, so the
/// capture loop waits for its outputs' encoders instead of dropping: also once an encoder slower
/// than real time (on a machine too slow or too loaded for it) has spent the ring's lead over the
/// wall clock. Only an output whose encoder has taken nothing for a long while (a
/// stalled pipe reader) is dropped into, and only while another output has room, so that it
/// cannot hold the others back.
@Suite struct UnpacedSourceTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    static let period = 480
    /// Three seconds of frames; each frame holds its own index (4 bytes), so a lost, repeated or
    /// reordered frame shows.
    static let limit = 3 * 48_000
    /// 1.37 s: the loop judges the source once a ring is short, and it is then ahead by the ring
    /// less what the half-speed reader has fallen behind, so even a capture thread that first
    /// runs a second late (a loaded machine, sanitizers) finds it ahead.
    static let ringFrames = 65_536

    /// Hands out every frame at once, numbered, as the `file` plugin over the `null` PCM does.
    final class NumberedSource: CaptureSource, @unchecked Sendable {
        let negotiated: NegotiatedCapture
        private var next: UInt32 = 0

        init(periodFrames: Int = UnpacedSourceTests.period) {
            negotiated = NegotiatedCapture(device: "numbered", format: UnpacedSourceTests.format,
                                           periodFrames: periodFrames, bufferFrames: 4 * periodFrames)
        }

        func start() -> CaptureStep { .frames(0) }
        func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> CaptureStep {
            let slots = buffer.bindMemory(to: UInt32.self, capacity: frames)
            for slot in 0..<frames {
                slots[slot] = next
                next += 1
            }
            return .frames(frames)
        }
        func readIntoScratch(frames: Int) -> CaptureStep { next += UInt32(frames); return .frames(frames) }
        func waitForFrames(milliseconds: Int32) -> CaptureStep { .frames(0) }
        func recoverFromOverrun() -> Int? { 0 }
        func resumeAfterSuspend(shouldGiveUp: () -> Bool) -> Bool { true }
        func timeOfNextFrame() -> Int? { nil }
        func drop() {}
    }

    /// How a reader takes its frames.
    enum Pace {
        /// `chunk` frames every `interval` seconds.
        case chunks(Int, every: TimeInterval)
        /// Everything readable at once, then as long as that much audio lasts at `speed` (1 is
        /// real time) writing it: an encoder writing to a pipe read at that pace.
        case batches(speed: Double)
    }

    /// An encoder thread's share: takes frames at its pace, checking that each is the next one.
    final class Reader: @unchecked Sendable {
        let lane: CaptureLane
        let pace: Pace
        private(set) var framesRead = 0
        private(set) var outOfOrder = 0
        init(lane: CaptureLane, pace: Pace) {
            self.lane = lane
            self.pace = pace
        }

        func drain(until isDone: () -> Bool) {
            while !isDone() || lane.ring.readableFrames > 0 {
                switch pace {
                case .chunks(let chunk, let interval):
                    take(upTo: chunk)
                    Thread.sleep(forTimeInterval: interval)
                case .batches(let speed):
                    let taken = take(upTo: .max)
                    Thread.sleep(forTimeInterval: max(0.001, Double(taken) / Double(UnpacedSourceTests.format.sampleRate) / speed))
                }
            }
        }

        @discardableResult
        private func take(upTo maxFrames: Int) -> Int {
            lane.ring.withReadableRegions(maxFrames: maxFrames) { regions in
                var expected = UInt32(framesRead)
                for region in [regions.first, regions.second] {
                    for index in region.bindMemory(to: UInt32.self) {
                        if index != expected { outOfOrder += 1 }
                        expected += 1
                    }
                }
                framesRead += regions.frameCount
                return regions.frameCount
            }
        }
    }

    static func lane(ringFrames: Int) -> CaptureLane {
        CaptureLane(ring: FrameRingBuffer(minimumCapacityFrames: ringFrames, bytesPerFrame: format.bytesPerFrame), padsLostTime: false)
    }

    /// Captures `limit` frames into `lanes` on a thread of its own while `readers` drain theirs
    /// (lanes without a reader are never read), and returns once all of it is read; nil (after
    /// stopping the capture) if that took more than a minute.
    static func capture(lanes: [CaptureLane], readers: [Reader]) -> CaptureMonitor? {
        let monitor = CaptureMonitor()
        let loop = CaptureLoop(device: NumberedSource(), lanes: lanes, monitor: monitor, frameLimit: limit)
        let capture = Thread { loop.run() }
        capture.start()
        // A thread each, started now: Dispatch's pool can start a worker seconds late on a
        // loaded machine, which would look like a stalled output.
        let done = DispatchSemaphore(value: 0)
        for reader in readers {
            Thread {
                reader.drain { monitor.isFinished }
                done.signal()
            }.start()
        }
        let deadline = DispatchTime.now() + 60
        for _ in readers where done.wait(timeout: deadline) == .timedOut {
            monitor.requestStop()
            return nil
        }
        return monitor
    }

    /// The reader takes half a period every 10 ms, half real time: three seconds of audio take
    /// six, and the ring and device buffer hold far less than the three it falls behind.
    @Test func aReaderSlowerThanRealTimeGetsEveryFrame() throws {
        let lane = Self.lane(ringFrames: Self.ringFrames)
        let reader = Reader(lane: lane, pace: .chunks(Self.period / 2, every: 0.01))
        let monitor = try #require(Self.capture(lanes: [lane], readers: [reader]), "not done within a minute")
        #expect(monitor.endReason == .frameLimitReached)
        Self.expectEveryFrame(reader)
    }

    /// Two outputs slower than real time, never both short at once: each is waited for while
    /// the other has room, and both get every frame.
    @Test func slowOutputsAreWaitedForWhileOthersHaveRoom() throws {
        let first = Reader(lane: Self.lane(ringFrames: Self.ringFrames), pace: .chunks(Self.period / 2, every: 0.01))
        let second = Reader(lane: Self.lane(ringFrames: Self.ringFrames), pace: .chunks(Self.period / 2, every: 0.013))
        _ = try #require(Self.capture(lanes: [first.lane, second.lane], readers: [first, second]), "not done within a minute")
        Self.expectEveryFrame(first)
        Self.expectEveryFrame(second)
    }

    /// An encoder takes everything in its ring at once and releases nothing until it has
    /// written it: into a pipe read at real-time pace, 2.7 s for a whole default ring, longer
    /// than the least stall (2 s). Beside a fast output with a ring as large, that is no stall,
    /// however many such waits add up to (a 0.34 s ring's waits make 3 s, past the 2 s): every
    /// frame reaches it.
    @Test(arguments: [16_384, 131_072])
    func anOutputWritingWholeRingsAtRealTimePaceIsNotStalled(ringFrames: Int) throws {
        let batches = Reader(lane: Self.lane(ringFrames: ringFrames), pace: .batches(speed: 1))
        let fast = Reader(lane: Self.lane(ringFrames: ringFrames), pace: .chunks(4_096, every: 0.001))
        _ = try #require(Self.capture(lanes: [batches.lane, fast.lane], readers: [batches, fast]), "not done within a minute")
        Self.expectEveryFrame(batches)
        Self.expectEveryFrame(fast)
    }

    /// An output nobody reads (a pipe whose reader stopped) holds the other back for 2 s only:
    /// the other gets every frame, the stalled one keeps what its ring held and counts the rest
    /// as dropped, and the capture ends rather than waiting for ever.
    @Test func anOutputThatTakesNothingCannotHoldTheOthersBack() throws {
        let stalled = Self.lane(ringFrames: 8_192)
        let reader = Reader(lane: Self.lane(ringFrames: Self.ringFrames), pace: .chunks(4_096, every: 0.001))
        let monitor = try #require(Self.capture(lanes: [stalled, reader.lane], readers: [reader]), "not done within a minute")
        #expect(monitor.endReason == .frameLimitReached)
        Self.expectEveryFrame(reader)
        #expect(stalled.ring.readableFrames == stalled.ring.capacityFrames)
        #expect(stalled.framesDropped.load(ordering: .relaxed) == Self.limit - stalled.ring.capacityFrames)
    }

    /// SIGUSR1 splits every output at the capture's count when it came, so no output may hold a
    /// frame that count does not include yet: an encoder that had, split a period after the
    /// others (a stress run's WAV part, 6000 frames longer). Two readers spin on their rings (the
    /// second gets copies, committed before the first's), each checking the count after every
    /// take, over 9000 short periods.
    @Test func noOutputSeesAFrameTheCaptureCountLacks() throws {
        let lanes = [Self.lane(ringFrames: 1_024), Self.lane(ringFrames: 1_024)]
        let monitor = CaptureMonitor()
        let loop = CaptureLoop(device: NumberedSource(periodFrames: 16), lanes: lanes, monitor: monitor, frameLimit: Self.limit)
        final class Checker: @unchecked Sendable {
            var framesRead = 0
            var countBehind = 0
        }
        let checkers = [Checker(), Checker()]
        let done = DispatchSemaphore(value: 0)
        for (lane, checker) in zip(lanes, checkers) {
            Thread {
                while !monitor.isFinished || lane.ring.readableFrames > 0 {
                    checker.framesRead += lane.ring.withReadableRegions(maxFrames: .max) { $0.frameCount }
                    if monitor.framesCaptured.load(ordering: .acquiring) < checker.framesRead { checker.countBehind += 1 }
                }
                done.signal()
            }.start()
        }
        Thread { loop.run() }.start()
        for _ in lanes { #expect(done.wait(timeout: .now() + 60) == .success, "not done within a minute") }
        for checker in checkers {
            #expect(checker.framesRead == Self.limit && checker.countBehind == 0,
                    "\(checker.framesRead) frames read; the count behind them \(checker.countBehind) times")
        }
    }

    static func expectEveryFrame(_ reader: Reader, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reader.framesRead == limit && reader.outOfOrder == 0,
                "\(reader.framesRead) frames, \(reader.outOfOrder) out of order", sourceLocation: sourceLocation)
        #expect(reader.lane.framesDropped.load(ordering: .relaxed) == 0, sourceLocation: sourceLocation)
    }
}
