import RingBuffer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The capacity a ring is created with: rounded up to a power of two so slots are found with a mask.
@Suite struct RingCapacityTests {
    @Test(arguments: [
        (requested: 1, expected: 1), (2, 2), (3, 4), (4, 4), (5, 8), (7, 8), (9, 16),
        (1000, 1024), (1023, 1024), (1024, 1024), (1025, 2048), (48_000, 65_536),
    ])
    func capacityRoundsUpToPowerOfTwo(requested: Int, expected: Int) {
        let ring = FrameRingBuffer(minimumCapacityFrames: requested, bytesPerFrame: 4)
        #expect(ring.capacityFrames == expected)
    }

    @Test func capacityIsSmallestPowerOfTwoHoldingTheRequestedFrames() {
        for requested in 1...2100 {
            let capacity = FrameRingBuffer(minimumCapacityFrames: requested, bytesPerFrame: 1).capacityFrames
            #expect(capacity.nonzeroBitCount == 1, "requested \(requested), got \(capacity)")
            #expect(capacity >= requested, "requested \(requested), got \(capacity)")
            #expect(capacity / 2 < requested, "requested \(requested), got \(capacity)")
        }
    }

    @Test(arguments: frameSizes)
    func bytesPerFrameIsKept(bytesPerFrame: Int) {
        let ring = FrameRingBuffer(minimumCapacityFrames: 3, bytesPerFrame: bytesPerFrame)
        #expect(ring.bytesPerFrame == bytesPerFrame)
    }

    @Test(arguments: [1, 3, 1000], frameSizes)
    func newRingIsEmptyWithItsWholeRoundedCapacityWritable(requested: Int, bytesPerFrame: Int) {
        let ring = FrameRingBuffer(minimumCapacityFrames: requested, bytesPerFrame: bytesPerFrame)
        #expect(ring.readableFrames == 0)
        var offered = -1
        var wraps = true
        _ = ring.withWritableRegions(maxFrames: .max) { regions in
            offered = regions.frameCount
            wraps = regions.secondFrameCount > 0
            return 0
        }
        #expect(offered == ring.capacityFrames, "a new ring offers its whole capacity for writing")
        #expect(!wraps, "a new ring's free space starts at slot 0, so it does not wrap")
        var readable = -1
        _ = ring.withReadableRegions(maxFrames: .max) { regions in
            readable = regions.frameCount
            return 0
        }
        #expect(readable == 0)
    }

    @Test(arguments: [1, 3, 1000], frameSizes)
    func ringHoldsExactlyItsRoundedCapacity(requested: Int, bytesPerFrame: Int) {
        let ring = FrameRingBuffer(minimumCapacityFrames: requested, bytesPerFrame: bytesPerFrame)
        let capacity = ring.capacityFrames
        #expect(writeFrames(0..<capacity + 1, to: ring) == capacity)
        #expect(ring.readableFrames == capacity)
        #expect(writeFrames(capacity..<capacity + 1, to: ring) == 0, "a full ring takes nothing more")
        #expect(readFrames(maxFrames: capacity + 1, from: ring) == patternFrames(0..<capacity, bytesPerFrame: bytesPerFrame))
    }

    /// Memory that cannot be had is nil, for the caller to say so: more than the address space
    /// holds, and a size whose byte count overflows. Not under a sanitizer, whose allocator stops
    /// the program on such a request instead of failing it (`allocator_may_return_null`).
    @Test(.enabled(if: dlsym(dlopen(nil, RTLD_NOW), "__asan_init") == nil && dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") == nil,
                   "a sanitizer's allocator aborts on a request this large"))
    func aRingWhoseMemoryCannotBeHadIsNil() {
        #expect(FrameRingBuffer(allocatingFrames: 1 << 46, bytesPerFrame: 32) == nil)
        #expect(FrameRingBuffer(allocatingFrames: 1 << 61, bytesPerFrame: 64) == nil)
        #expect(FrameRingBuffer(allocatingFrames: 1000, bytesPerFrame: 4)?.capacityFrames == 1024)
    }
}
