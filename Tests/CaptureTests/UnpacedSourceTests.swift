import AudioFormat
import Capture
import Foundation
import Realtime
import RingBuffer
import Testing

/// A source that is not live (a file, the test rig's `filecap`) loses nothing by waiting, so the
/// capture loop waits for its outputs' encoders instead of dropping: also once an encoder slower
/// than real time has spent the ring's lead over the wall clock, which is what a split's fsync on
/// a loaded machine does. Only an output whose encoder takes nothing for seconds (a stalled pipe
/// reader) is given up on, so that it cannot hold the others back.
@Suite struct UnpacedSourceTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    static let period = 480
    /// One second of frames; each frame holds its own index (4 bytes), so a lost, repeated or
    /// reordered frame shows.
    static let limit = 48_000

    /// Hands out every frame at once, numbered, as the `file` plugin over the `null` PCM does.
    final class NumberedSource: CaptureSource, @unchecked Sendable {
        let negotiated = NegotiatedCapture(device: "numbered", format: UnpacedSourceTests.format,
                                           periodFrames: UnpacedSourceTests.period, bufferFrames: 4 * UnpacedSourceTests.period)
        private var next: UInt32 = 0

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

    /// An encoder thread's share: takes `chunk` frames every `interval` (nothing when `interval`
    /// is nil: a stalled reader), checking that each frame is the next one.
    final class Reader: @unchecked Sendable {
        let lane: CaptureLane
        private(set) var framesRead = 0
        private(set) var outOfOrder = 0
        init(lane: CaptureLane) { self.lane = lane }

        func drain(chunk: Int, every interval: TimeInterval, until isDone: () -> Bool) {
            while !isDone() || lane.ring.readableFrames > 0 {
                _ = lane.ring.withReadableRegions(maxFrames: chunk) { regions in
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
                Thread.sleep(forTimeInterval: interval)
            }
        }
    }

    static func lane(ringFrames: Int) -> CaptureLane {
        CaptureLane(ring: FrameRingBuffer(minimumCapacityFrames: ringFrames, bytesPerFrame: format.bytesPerFrame), padsLostTime: false)
    }

    /// Captures `limit` frames into `lanes` on a thread of its own while `readers` drain theirs
    /// (lanes without a reader are never read), and returns once all of it is read.
    static func capture(lanes: [CaptureLane], readers: [(Reader, chunk: Int, interval: TimeInterval)]) -> CaptureMonitor {
        let monitor = CaptureMonitor()
        let loop = CaptureLoop(device: NumberedSource(), lanes: lanes, monitor: monitor, frameLimit: limit)
        let capture = Thread { loop.run() }
        capture.start()
        let group = DispatchGroup()
        for (reader, chunk, interval) in readers {
            DispatchQueue.global().async(group: group) {
                reader.drain(chunk: chunk, every: interval) { monitor.isFinished }
            }
        }
        group.wait()
        return monitor
    }

    /// The reader takes half a period every 10 ms, half real time: a second of audio takes two,
    /// and the ring (0.17 s) and device buffer hold far less than the second it falls behind.
    @Test func aReaderSlowerThanRealTimeGetsEveryFrame() {
        let lane = Self.lane(ringFrames: 8_192)
        let reader = Reader(lane: lane)
        let monitor = Self.capture(lanes: [lane], readers: [(reader, Self.period / 2, 0.01)])
        #expect(monitor.endReason == .frameLimitReached)
        #expect(reader.framesRead == Self.limit && reader.outOfOrder == 0, "\(reader.framesRead) frames, \(reader.outOfOrder) out of order")
        #expect(lane.framesDropped.load(ordering: .relaxed) == 0)
    }

    /// Two outputs, one slow and one fast: the slow one is waited for, not dropped into, and the
    /// fast one is not harmed by waiting.
    @Test func aSlowOutputBesideAFastOneIsWaitedFor() {
        let slow = Self.lane(ringFrames: 8_192), fast = Self.lane(ringFrames: 8_192)
        let slowReader = Reader(lane: slow), fastReader = Reader(lane: fast)
        _ = Self.capture(lanes: [fast, slow], readers: [(slowReader, Self.period / 2, 0.01), (fastReader, 4_096, 0.001)])
        for (name, lane, reader) in [("slow", slow, slowReader), ("fast", fast, fastReader)] {
            #expect(reader.framesRead == Self.limit && reader.outOfOrder == 0, "\(name): \(reader.framesRead) frames")
            #expect(lane.framesDropped.load(ordering: .relaxed) == 0, "\(name)")
        }
    }

    /// An output nobody reads (a pipe whose reader stopped) is given up on after a while: the
    /// other gets every frame, the stalled one keeps what its ring held and counts the rest as
    /// dropped, and the capture ends rather than waiting for ever. Its ring (8192 frames, not a
    /// whole number of 480-frame periods) is left short of a period, not full: the last frames
    /// that fit are written once it is given up on, which must not count as its encoder taking
    /// frames (that would mean a second 2 s wait; the other reader needs milliseconds).
    @Test func anOutputThatTakesNothingCannotHoldTheOthersBack() {
        let stalled = Self.lane(ringFrames: 8_192), read = Self.lane(ringFrames: 8_192)
        let reader = Reader(lane: read)
        let start = Date()
        let monitor = Self.capture(lanes: [stalled, read], readers: [(reader, 4_096, 0.001)])
        let seconds = Date().timeIntervalSince(start)
        print("UnpacedSourceTests: the stalled output held the capture for \(seconds) s")
        #expect(seconds >= 2 && seconds < 3.9, "one wait of 2 s for the stalled output, not two: \(seconds) s")
        #expect(monitor.endReason == .frameLimitReached)
        #expect(reader.framesRead == Self.limit && reader.outOfOrder == 0, "\(reader.framesRead) frames")
        #expect(read.framesDropped.load(ordering: .relaxed) == 0)
        #expect(stalled.ring.readableFrames == stalled.ring.capacityFrames)
        #expect(stalled.framesDropped.load(ordering: .relaxed) == Self.limit - stalled.ring.capacityFrames)
    }
}
