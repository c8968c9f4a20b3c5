import RingBuffer
import Testing

/// Where the regions lent by `withWritableRegions` / `withReadableRegions` lie, for every start
/// offset and fill level of small rings, and what the readable ones hold.
@Suite struct RingRegionTests {
    /// The `maxFrames` values each state is probed with: every limit up to past the capacity, and no limit.
    static func frameLimits(capacity: Int) -> [Int] { Array(0...capacity + 1) + [Int.max] }

    // MARK: Worked examples

    @Test func writeRegionSplitsAtEndOfStorage() {
        let state = RingState(capacity: 8, bytesPerFrame: 4, start: 6, fill: 0)
        let (ring, storage) = makeRing(state)
        _ = ring.withWritableRegions(maxFrames: 8) { regions in
            #expect(regions.firstFrameCount == 2)
            #expect(regions.first.baseAddress == storage + 6 * 4)
            #expect(regions.secondFrameCount == 6)
            #expect(regions.second.baseAddress == storage)
            return 0
        }
    }

    @Test func readRegionSplitsAtEndOfStorage() {
        let state = RingState(capacity: 8, bytesPerFrame: 4, start: 6, fill: 5)
        let (ring, storage) = makeRing(state)
        _ = ring.withReadableRegions(maxFrames: 8) { regions in
            #expect(regions.firstFrameCount == 2)
            #expect(regions.first.baseAddress == storage + 6 * 4)
            #expect(regions.secondFrameCount == 3)
            #expect(regions.second.baseAddress == storage)
            #expect(bytes(of: regions) == patternFrames(6..<11, bytesPerFrame: 4))
            return 0
        }
    }

    @Test func regionEndingExactlyAtEndOfStorageHasNoSecondPart() {
        let state = RingState(capacity: 8, bytesPerFrame: 4, start: 5, fill: 3)
        let (ring, storage) = makeRing(state)
        _ = ring.withReadableRegions(maxFrames: 8) { regions in
            #expect(regions.firstFrameCount == 3)
            #expect(regions.first.baseAddress == storage + 5 * 4)
            #expect(regions.second.isEmpty)
            return 0
        }
        _ = ring.withWritableRegions(maxFrames: 8) { regions in
            #expect(regions.firstFrameCount == 5)
            #expect(regions.first.baseAddress == storage, "the free space starts back at slot 0")
            #expect(regions.second.isEmpty)
            return 0
        }
    }

    // MARK: Every small state

    @Test(arguments: smallCapacities, frameSizes)
    func readableFramesCountsTheUnreadFrames(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            let (ring, _) = makeRing(state)
            #expect(ring.readableFrames == state.fill, "\(state)")
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func writableRegionsCoverTheFreeSpaceFromTheWriteSlot(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            let (ring, storage) = makeRing(state)
            for maxFrames in Self.frameLimits(capacity: capacity) {
                let context = "\(state), maxFrames \(maxFrames)"
                let committed = ring.withWritableRegions(maxFrames: maxFrames) { regions in
                    expectRegions(regions, frames: min(maxFrames, state.free), startSlot: state.writeSlot,
                                  capacity: capacity, storage: storage, context)
                    return 0
                }
                #expect(committed == 0, "\(context)")
                #expect(ring.readableFrames == state.fill, "looking commits nothing; \(context)")
            }
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func readableRegionsCoverTheUnreadFramesFromTheReadSlot(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            let (ring, storage) = makeRing(state)
            for maxFrames in Self.frameLimits(capacity: capacity) {
                let context = "\(state), maxFrames \(maxFrames)"
                let frames = min(maxFrames, state.fill)
                let committed = ring.withReadableRegions(maxFrames: maxFrames) { regions in
                    expectRegions(regions, frames: frames, startSlot: state.readSlot,
                                  capacity: capacity, storage: storage, context)
                    #expect(bytes(of: regions) == patternFrames(state.start..<state.start + frames,
                                                                bytesPerFrame: bytesPerFrame),
                            "regions hold the oldest unread frames in order; \(context)")
                    return 0
                }
                #expect(committed == 0, "\(context)")
                #expect(ring.readableFrames == state.fill, "looking consumes nothing; \(context)")
            }
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func writableAndReadableRegionsNeverOverlap(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            let (ring, storage) = makeRing(state)
            var owner = [Character](repeating: ".", count: capacity * bytesPerFrame)
            func mark(_ region: UnsafeMutableRawBufferPointer, _ side: Character) {
                guard let base = region.baseAddress, !region.isEmpty else { return }
                let offset = base - storage
                #expect(offset >= 0 && offset + region.count <= owner.count, "region outside storage; \(state)")
                let lower = min(max(offset, 0), owner.count)
                for index in lower..<max(lower, min(offset + region.count, owner.count)) {
                    #expect(owner[index] == ".", "byte \(index) lent twice; \(state)")
                    owner[index] = side
                }
            }
            _ = ring.withWritableRegions(maxFrames: .max) { regions in
                mark(regions.first, "w"); mark(regions.second, "w"); return 0
            }
            _ = ring.withReadableRegions(maxFrames: .max) { regions in
                mark(regions.first, "r"); mark(regions.second, "r"); return 0
            }
            #expect(!owner.contains("."), "free and unread regions together cover all of storage; \(state)")
        }
    }
}
