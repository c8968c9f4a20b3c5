import RingBuffer
import Testing

/// Long pseudo-random sequences of single-thread operations, each checked against a plain array
/// model of the FIFO. Where the exhaustive tests start from a ring that was only ever filled and
/// drained whole, these interleave partial writes and reads, so each side's cached copy of the
/// other side's index is often stale: the ring must still offer exactly what is there.
@Suite struct RingModelTests {
    static let operations = 4000

    /// The frames the ring should hold, by sequence number, and the counters that locate them.
    struct Model {
        let capacity: Int
        var unread: [Int] = []
        var written = 0     // frames ever committed by the producer
        var free: Int { capacity - unread.count }
        var writeSlot: Int { written % capacity }
        var readSlot: Int { (written - unread.count) % capacity }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func interleavedOperationsMatchAFIFOModel(capacity: Int, bytesPerFrame: Int) {
        let (ring, storage) = makeRing(RingState(capacity: capacity, bytesPerFrame: bytesPerFrame, start: 0, fill: 0))
        var model = Model(capacity: capacity)
        var random = SplitMix64(seed: UInt64(capacity * 100 + bytesPerFrame))

        for step in 0..<Self.operations {
            let limit = random.next() % 8 == 0 ? Int.max : random.next(in: 0...capacity + 1)
            switch random.next() % 4 {
            case 0:  // Zero-copy write, committing all, none, or some of what is offered.
                let context = "step \(step): write regions, maxFrames \(limit)"
                let roll = random.next()
                let committed = ring.withWritableRegions(maxFrames: limit) { regions in
                    expectRegions(regions, frames: min(limit, model.free), startSlot: model.writeSlot,
                                  capacity: capacity, storage: storage, context)
                    let offered = regions.frameCount
                    let kept = roll % 3 == 0 ? Int(roll / 3 % UInt64(offered + 1)) : offered
                    let frames = patternFrames(model.written..<model.written + kept, bytesPerFrame: bytesPerFrame)
                    let inFirst = min(frames.count, regions.first.count)
                    for index in 0..<inFirst { regions.first[index] = frames[index] }
                    for index in inFirst..<min(frames.count, inFirst + regions.second.count) {
                        regions.second[index - inFirst] = frames[index]
                    }
                    return kept
                }
                model.unread += model.written..<model.written + committed
                model.written += committed

            case 1:  // Copying write of a pseudo-random number of frames.
                let frames = random.next(in: 0...capacity + 1)
                let written = writeFrames(model.written..<model.written + frames, to: ring)
                #expect(written == min(frames, model.free), "step \(step): write(from:) \(frames) frames")
                model.unread += model.written..<model.written + written
                model.written += written

            case 2:  // Zero-copy read, consuming all, none, or some of what is offered.
                let context = "step \(step): read regions, maxFrames \(limit)"
                let roll = random.next()
                let expected = Array(model.unread.prefix(limit))
                let consumed = ring.withReadableRegions(maxFrames: limit) { regions in
                    expectRegions(regions, frames: expected.count, startSlot: model.readSlot,
                                  capacity: capacity, storage: storage, context)
                    #expect(bytes(of: regions) == expected.flatMap { patternFrames($0..<$0 + 1, bytesPerFrame: bytesPerFrame) },
                            "\(context)")
                    let offered = regions.frameCount
                    return roll % 3 == 0 ? Int(roll / 3 % UInt64(offered + 1)) : offered
                }
                #expect(consumed <= expected.count, "\(context)")
                model.unread.removeFirst(min(consumed, model.unread.count))

            default:  // Copying read into a buffer of a pseudo-random number of frames.
                let frames = random.next(in: 0...capacity + 1)
                let expected = Array(model.unread.prefix(frames))
                let read = readFrames(maxFrames: frames, from: ring)
                #expect(read == expected.flatMap { patternFrames($0..<$0 + 1, bytesPerFrame: bytesPerFrame) },
                        "step \(step): read(into:) \(frames) frames")
                #expect(read.count == expected.count * bytesPerFrame, "step \(step): read(into:) \(frames) frames")
                model.unread.removeFirst(expected.count)
            }
            #expect(ring.readableFrames == model.unread.count, "after step \(step)")
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func readerSeesFramesWrittenAfterItsLastPartialRead(capacity: Int, bytesPerFrame: Int) {
        // The consumer's cached write index is stale but non-zero here: it must look again.
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            guard state.fill >= 2 else { return }
            let (ring, _) = makeRing(state)
            #expect(readFrames(maxFrames: 1, from: ring).count == bytesPerFrame, "\(state)")
            let next = state.unread.upperBound
            #expect(writeFrames(next..<next + 1, to: ring) == 1, "\(state)")
            _ = ring.withReadableRegions(maxFrames: .max) { regions in
                #expect(regions.frameCount == state.fill, "all unread frames are offered; \(state)")
                #expect(bytes(of: regions) == patternFrames(state.start + 1..<next + 1, bytesPerFrame: bytesPerFrame),
                        "\(state)")
                return 0
            }
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func writerSeesSpaceFreedAfterItsLastPartialWrite(capacity: Int, bytesPerFrame: Int) {
        // The producer's cached read index is stale but leaves some room: it must look again.
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            guard state.fill >= 1, state.free >= 1 else { return }
            let (ring, _) = makeRing(state)
            _ = ring.withWritableRegions(maxFrames: .max) { _ in 0 }  // the producer now caches the read index
            #expect(readFrames(maxFrames: 1, from: ring).count == bytesPerFrame, "\(state)")
            _ = ring.withWritableRegions(maxFrames: .max) { regions in
                #expect(regions.frameCount == state.free + 1, "all free slots are offered; \(state)")
                return 0
            }
        }
    }
}
