import RingBuffer
import Testing

/// Programmer errors trap (swift-nio's `ByteBufferCrashTests` style): each runs in a child process.
@Suite struct RingMisuseTests {
    @Test func creatingRingWithoutRoomForAFrameTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = FrameRingBuffer(minimumCapacityFrames: 0, bytesPerFrame: 4)
        }
    }

    @Test func creatingRingWithEmptyFramesTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = FrameRingBuffer(minimumCapacityFrames: 4, bytesPerFrame: 0)
        }
    }

    @Test func committingMoreWrittenFramesThanOfferedTraps() async {
        await #expect(processExitsWith: .failure) {
            let ring = FrameRingBuffer(minimumCapacityFrames: 4, bytesPerFrame: 4)
            _ = ring.withWritableRegions(maxFrames: 2) { regions in regions.frameCount + 1 }
        }
    }

    @Test func committingMoreReadFramesThanOfferedTraps() async {
        await #expect(processExitsWith: .failure) {
            let ring = FrameRingBuffer(minimumCapacityFrames: 4, bytesPerFrame: 4)
            _ = ring.withReadableRegions(maxFrames: 2) { regions in regions.frameCount + 1 }
        }
    }

    @Test func committingNegativeFramesTraps() async {
        await #expect(processExitsWith: .failure) {
            let ring = FrameRingBuffer(minimumCapacityFrames: 4, bytesPerFrame: 4)
            _ = ring.withWritableRegions(maxFrames: 2) { _ in -1 }
        }
    }
}
