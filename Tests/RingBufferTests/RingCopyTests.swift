import RingBuffer
import Testing

/// The copy helpers `write(from:)` and `read(into:)`, from every start offset and fill level of
/// small rings: frames come back exactly, in FIFO order, and only as many as fit or are there.
@Suite struct RingCopyTests {
    @Test(arguments: smallCapacities, frameSizes)
    func framesRoundTripInFIFOOrderFromEveryStartAndFill(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            let (ring, _) = makeRing(state)
            let end = state.start + capacity
            #expect(writeFrames(state.unread.upperBound..<end, to: ring) == state.free, "\(state)")
            #expect(ring.readableFrames == capacity, "\(state)")
            #expect(readFrames(maxFrames: capacity, from: ring)
                        == patternFrames(state.start..<end, bytesPerFrame: bytesPerFrame), "\(state)")
            #expect(ring.readableFrames == 0, "\(state)")
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func writingBeyondCapacityWritesOnlyWhatFits(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            let (ring, _) = makeRing(state)
            let offered = state.unread.upperBound..<state.unread.upperBound + capacity + 3
            #expect(writeFrames(offered, to: ring) == state.free, "\(state)")
            #expect(ring.readableFrames == capacity, "\(state)")
            #expect(writeFrames(offered, to: ring) == 0, "a full ring takes nothing; \(state)")
            #expect(readFrames(maxFrames: capacity + 3, from: ring)
                        == patternFrames(state.start..<state.start + capacity, bytesPerFrame: bytesPerFrame),
                    "the frames that did not fit are dropped, not wrapped over older ones; \(state)")
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func readingFromEmptyRingReturnsZero(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            guard state.fill == 0 else { return }
            let (ring, _) = makeRing(state)
            var destination = [UInt8](repeating: 0xA5, count: 3 * bytesPerFrame)
            let read = destination.withUnsafeMutableBytes { ring.read(into: $0) }
            #expect(read == 0, "\(state)")
            #expect(destination.allSatisfy { $0 == 0xA5 }, "an empty read leaves the destination alone; \(state)")
            #expect(ring.readableFrames == 0, "\(state)")
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func readingDrainedRingReturnsZero(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            let (ring, _) = makeRing(state)
            #expect(readFrames(maxFrames: capacity, from: ring)
                        == patternFrames(state.unread, bytesPerFrame: bytesPerFrame), "\(state)")
            #expect(readFrames(maxFrames: capacity, from: ring).isEmpty, "\(state)")
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func chunkedWritesAndReadsKeepFIFOOrder(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            for chunk in 1...capacity {
                let context = "\(state), chunk \(chunk)"
                let (ring, _) = makeRing(state)
                let next = state.unread.upperBound
                let written = writeFrames(next..<next + chunk, to: ring)
                #expect(written == min(chunk, state.free), "\(context)")
                let unread = state.start..<next + written
                var read: [UInt8] = []
                while true {
                    let piece = readFrames(maxFrames: chunk, from: ring)
                    #expect(piece.count <= chunk * bytesPerFrame, "\(context)")
                    if piece.isEmpty { break }
                    read += piece
                }
                #expect(read == patternFrames(unread, bytesPerFrame: bytesPerFrame), "\(context)")
            }
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func bytesShortOfAWholeFrameAreNotCopied(capacity: Int, bytesPerFrame: Int) {
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            let (ring, _) = makeRing(state)
            let next = state.unread.upperBound
            // The source holds one frame more than fits, cut one byte short: the tail is ignored.
            let source = patternFrames(next..<next + state.free + 1, bytesPerFrame: bytesPerFrame).dropLast()
            let written = Array(source).withUnsafeBytes { ring.write(from: $0) }
            #expect(written == state.free, "\(state)")
            // The destination holds one frame more than is there, cut one byte short: only whole frames land.
            let readable = capacity
            var destination = [UInt8](repeating: 0xA5, count: readable * bytesPerFrame + bytesPerFrame - 1)
            let read = destination.withUnsafeMutableBytes { ring.read(into: $0) }
            #expect(read == readable, "\(state)")
            #expect(Array(destination.prefix(read * bytesPerFrame))
                        == patternFrames(state.start..<state.start + readable, bytesPerFrame: bytesPerFrame),
                    "\(state)")
            #expect(destination.dropFirst(read * bytesPerFrame).allSatisfy { $0 == 0xA5 },
                    "bytes past the last whole frame are left alone; \(state)")
        }
    }

    @Test(arguments: smallCapacities, frameSizes)
    func bufferSmallerThanOneFrameMovesNothing(capacity: Int, bytesPerFrame: Int) {
        guard bytesPerFrame > 1 else { return }
        forEachState(capacity: capacity, bytesPerFrame: bytesPerFrame) { state in
            let (ring, _) = makeRing(state)
            let scrap = [UInt8](repeating: 0x5A, count: bytesPerFrame - 1)
            #expect(scrap.withUnsafeBytes { ring.write(from: $0) } == 0, "\(state)")
            var destination = [UInt8](repeating: 0xA5, count: bytesPerFrame - 1)
            #expect(destination.withUnsafeMutableBytes { ring.read(into: $0) } == 0, "\(state)")
            #expect(ring.readableFrames == state.fill, "\(state)")
        }
    }
}
