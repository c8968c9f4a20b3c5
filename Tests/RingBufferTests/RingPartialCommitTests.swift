import RingBuffer
import Testing

/// Commits smaller than the regions offered: the body of `withWritableRegions` /
/// `withReadableRegions` returns how many frames it wrote or consumed, and only those count.
@Suite struct RingPartialCommitTests {
    struct Abandoned: Error {}

    /// Copies `bytes` into the regions in order, first region then second (as much as fits, so a
    /// broken ring fails the expectations instead of crashing the test run).
    static func fill(_ regions: RingRegions, with bytes: [UInt8]) {
        let firstCount = min(bytes.count, regions.first.count)
        let secondCount = min(bytes.count - firstCount, regions.second.count)
        #expect(firstCount + secondCount == bytes.count, "regions too small for the frames being written")
        for index in 0..<firstCount { regions.first[index] = bytes[index] }
        for index in 0..<secondCount { regions.second[index] = bytes[firstCount + index] }
    }

    /// Overwrites every byte of the regions with junk, so uncommitted frames are recognisable.
    static func scribble(over regions: RingRegions) {
        for index in regions.first.indices { regions.first[index] = 0xEE }
        for index in regions.second.indices { regions.second[index] = 0xEE }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func partialWriteCommitPublishesOnlyTheReturnedFrames(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            for kept in 0...state.free {
                let context = "\(state), kept \(kept) of \(state.free)"
                let (ring, storage) = makeRing(state)
                let next = state.unread.upperBound
                let committed = ring.withWritableRegions(maxFrames: .max) { regions in
                    #expect(regions.frameCount == state.free, "\(context)")
                    Self.scribble(over: regions)
                    Self.fill(regions, with: patternFrames(next..<next + kept, bytesPerFrame: bytesPerFrame))
                    return kept
                }
                #expect(committed == kept, "\(context)")
                #expect(ring.readableFrames == state.fill + kept, "\(context)")
                // The next write starts right after the committed frames, over the uncommitted ones.
                _ = ring.withWritableRegions(maxFrames: .max) { regions in
                    expectRegions(regions, frames: state.free - kept,
                                  startSlot: (state.start + state.fill + kept) % capacity,
                                  capacity: capacity, storage: storage, context)
                    return 0
                }
                let rest = next + kept..<state.start + capacity
                #expect(writeFrames(rest, to: ring) == rest.count, "\(context)")
                #expect(readFrames(maxFrames: capacity, from: ring)
                            == patternFrames(state.start..<rest.upperBound, bytesPerFrame: bytesPerFrame),
                        "uncommitted junk never becomes readable; \(context)")
            }
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func partialReadCommitReleasesOnlyTheReturnedFrames(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            for consumed in 0...state.fill {
                let context = "\(state), consumed \(consumed) of \(state.fill)"
                let (ring, storage) = makeRing(state)
                let committed = ring.withReadableRegions(maxFrames: .max) { regions in
                    #expect(bytes(of: regions) == patternFrames(state.unread, bytesPerFrame: bytesPerFrame),
                            "\(context)")
                    return consumed
                }
                #expect(committed == consumed, "\(context)")
                #expect(ring.readableFrames == state.fill - consumed, "\(context)")
                // The next read starts right after the consumed frames and still holds the rest.
                _ = ring.withReadableRegions(maxFrames: .max) { regions in
                    expectRegions(regions, frames: state.fill - consumed,
                                  startSlot: (state.start + consumed) % capacity,
                                  capacity: capacity, storage: storage, context)
                    #expect(bytes(of: regions)
                                == patternFrames(state.start + consumed..<state.unread.upperBound,
                                                 bytesPerFrame: bytesPerFrame), "\(context)")
                    return 0
                }
                // The consumed slots are free for writing again.
                _ = ring.withWritableRegions(maxFrames: .max) { regions in
                    #expect(regions.frameCount == state.free + consumed, "\(context)")
                    return 0
                }
            }
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func alternatingPartialCommitsKeepFIFOOrder(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            // Write and read in steps of one frame fewer than offered (at least one), round the ring twice.
            let (ring, _) = makeRing(state)
            var nextWritten = state.unread.upperBound
            var nextRead = state.start
            let goal = state.start + 2 * capacity + 1
            var steps = 0
            while nextRead < goal && steps < 8 * capacity + 8 {
                steps += 1
                nextWritten += ring.withWritableRegions(maxFrames: goal - nextWritten) { regions in
                    let kept = max(regions.frameCount - 1, min(regions.frameCount, 1))
                    Self.scribble(over: regions)
                    Self.fill(regions, with: patternFrames(nextWritten..<nextWritten + kept,
                                                           bytesPerFrame: bytesPerFrame))
                    return kept
                }
                nextRead += ring.withReadableRegions(maxFrames: .max) { regions in
                    let consumed = max(regions.frameCount - 1, min(regions.frameCount, 1))
                    #expect(Array(bytes(of: regions).prefix(consumed * bytesPerFrame))
                                == patternFrames(nextRead..<nextRead + consumed, bytesPerFrame: bytesPerFrame),
                            "\(state), step \(steps)")
                    return consumed
                }
                #expect(ring.readableFrames == nextWritten - nextRead, "\(state), step \(steps)")
            }
            #expect(nextRead == goal, "\(state)")
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func throwingBodyCommitsNothing(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            let (ring, _) = makeRing(state)
            #expect(throws: Abandoned.self, "\(state)") {
                try ring.withWritableRegions(maxFrames: .max) { (regions) throws(Abandoned) -> Int in
                    Self.scribble(over: regions)
                    throw Abandoned()
                }
            }
            #expect(throws: Abandoned.self, "\(state)") {
                try ring.withReadableRegions(maxFrames: .max) { (_) throws(Abandoned) -> Int in
                    throw Abandoned()
                }
            }
            #expect(ring.readableFrames == state.fill, "\(state)")
            #expect(readFrames(maxFrames: capacity, from: ring)
                        == patternFrames(state.unread, bytesPerFrame: bytesPerFrame), "\(state)")
        }
    }
}
