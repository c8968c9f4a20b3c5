import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A lock-free single-producer/single-consumer ring of fixed-size audio frames.
///
/// One thread (the producer, hark's capture thread) writes; one other thread (the consumer,
/// the encoder thread) reads. Neither ever blocks or allocates: every operation is a handful of
/// loads and stores, so both sides are real-time safe.
///
/// Layout and invariants (after rigtorp/SPSCQueue and JACK's ringbuffer):
///
///     storage: [ capacityFrames × bytesPerFrame bytes, preallocated and pre-faulted ]
///     writeIndex, readIndex: free-running frame counters; a slot is `index & mask`
///     0 <= writeIndex &- readIndex <= capacityFrames      (frames readable)
///
/// - `writeIndex` is stored only by the producer, `readIndex` only by the consumer.
/// - Each side keeps a private cached copy of the other side's index and re-reads the shared one
///   only when the cache says the ring is full (producer) or empty (consumer). This keeps the
///   cache line of the other index from bouncing between cores on every call.
/// - The producer's index and cache share one cache line, the consumer's another, 128 bytes
///   apart (two lines, since adjacent-line prefetch would otherwise couple them).
///
/// Memory ordering: a side publishes its index with `release` after touching the frames, and
/// loads the other side's index with `acquire` before touching frames. So the consumer sees the
/// frames the producer wrote before it sees the index that covers them, and the producer never
/// overwrites a slot until the consumer's read of it has happened. Loads of a side's own index
/// are `relaxed`: only that thread ever stores it.
public final class FrameRingBuffer: @unchecked Sendable {
    /// Frames the ring holds when full; always a power of two.
    public let capacityFrames: Int
    /// Bytes per frame, fixed for the ring's life.
    public let bytesPerFrame: Int

    // @usableFromInline so the whole push/pop path inlines into callers in other modules: a call
    // per chunk cost the ring 60% of its throughput on 64-frame chunks (Benchmarks/).
    @usableFromInline let mask: Int
    @usableFromInline let storage: UnsafeMutableRawPointer
    private let control: UnsafeMutableRawPointer
    @usableFromInline let writeIndex: UnsafeMutablePointer<Atomic<Int>>
    @usableFromInline let cachedReadIndex: UnsafeMutablePointer<Int>   // producer-private
    @usableFromInline let readIndex: UnsafeMutablePointer<Atomic<Int>>
    @usableFromInline let cachedWriteIndex: UnsafeMutablePointer<Int>  // consumer-private

    private static let lineSpacing = 128

    /// Creates a ring holding at least `minimumCapacityFrames` frames of `bytesPerFrame` bytes, or
    /// nil when the memory for it cannot be had (a recording's ring can be gigabytes: 60 s of
    /// 768 kHz × 8 × 32-bit audio; the caller says so in a line rather than crashing).
    ///
    /// The capacity is rounded up to a power of two so slots are found with a mask. All memory is
    /// allocated and touched here, so neither side page-faults or allocates later. Not real-time safe.
    /// The corresponding C function is `posix_memalign`.
    public init?(allocatingFrames minimumCapacityFrames: Int, bytesPerFrame: Int) {
        precondition(minimumCapacityFrames > 0, "a ring needs room for at least one frame")
        precondition(bytesPerFrame > 0, "a frame has at least one byte")
        let capacity = Self.capacity(holding: minimumCapacityFrames)
        let (byteCount, overflows) = capacity.multipliedReportingOverflow(by: bytesPerFrame)
        var allocated: UnsafeMutableRawPointer?
        guard !overflows, posix_memalign(&allocated, Self.lineSpacing, byteCount) == 0, let allocated else { return nil }
        self.capacityFrames = capacity
        self.bytesPerFrame = bytesPerFrame
        self.mask = capacity - 1
        storage = allocated
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)

        control = UnsafeMutableRawPointer.allocate(byteCount: 2 * Self.lineSpacing, alignment: Self.lineSpacing)
        writeIndex = control.bindMemory(to: Atomic<Int>.self, capacity: 1)
        writeIndex.initialize(to: Atomic(0))
        cachedReadIndex = (control + MemoryLayout<Atomic<Int>>.stride).bindMemory(to: Int.self, capacity: 1)
        cachedReadIndex.initialize(to: 0)
        readIndex = (control + Self.lineSpacing).bindMemory(to: Atomic<Int>.self, capacity: 1)
        readIndex.initialize(to: Atomic(0))
        cachedWriteIndex = (control + Self.lineSpacing + MemoryLayout<Atomic<Int>>.stride)
            .bindMemory(to: Int.self, capacity: 1)
        cachedWriteIndex.initialize(to: 0)
    }

    /// The capacity a ring made for `minimumCapacityFrames` frames has: the next power of two.
    public static func capacity(holding minimumCapacityFrames: Int) -> Int {
        var capacity = 1
        while capacity < minimumCapacityFrames { capacity <<= 1 }
        return capacity
    }

    /// The same for a ring whose memory is small enough to be taken for granted (a test's, a
    /// schedule's few kilobytes): a failure to get it stops the program, as any allocation would.
    public convenience init(minimumCapacityFrames: Int, bytesPerFrame: Int) {
        self.init(allocatingFrames: minimumCapacityFrames, bytesPerFrame: bytesPerFrame)!
    }

    deinit {
        writeIndex.deinitialize(count: 1)
        readIndex.deinitialize(count: 1)
        control.deallocate()
        free(storage)
    }

    // MARK: Producer side (one thread only)

    /// Lends the producer the free space, up to `maxFrames`, as one or two regions, and publishes
    /// the number of frames `body` returns as written.
    ///
    /// `body` must fill the regions in order (first, then second) and return how many frames it
    /// wrote, at most `regions.frameCount`. Do not let the pointers escape `body`.
    /// Real-time safe: no allocation, no locks, no system calls.
    @inlinable
    public func withWritableRegions<E: Error>(
        maxFrames: Int, _ body: (RingRegions) throws(E) -> Int
    ) throws(E) -> Int {
        let regions = writableRegions(maxFrames: maxFrames)
        let written = try body(regions)
        commitWrite(frames: written, offered: regions.frameCount)
        return written
    }

    /// Free frames, up to `maxFrames`: what a write could store now. Producer's thread only;
    /// real-time safe (it may refresh the producer's cached read index, as a write would).
    @inlinable
    public func writableFrames(upTo maxFrames: Int) -> Int {
        writableRegions(maxFrames: maxFrames).frameCount
    }

    @inlinable
    func writableRegions(maxFrames: Int) -> RingRegions {
        precondition(maxFrames >= 0, "maxFrames must not be negative")
        let write = writeIndex.pointee.load(ordering: .relaxed)
        // Wrapping arithmetic: the indices are free-running and may wrap past Int.max.
        var free = capacityFrames &- (write &- cachedReadIndex.pointee)
        if free < maxFrames {
            // Acquire: the consumer's reads of the slots it released happen before we reuse them.
            cachedReadIndex.pointee = readIndex.pointee.load(ordering: .acquiring)
            free = capacityFrames &- (write &- cachedReadIndex.pointee)
        }
        return regions(startingAt: write, frames: min(free, maxFrames))
    }

    @inlinable
    func commitWrite(frames: Int, offered: Int) {
        precondition(frames >= 0 && frames <= offered, "wrote more frames than the ring offered")
        guard frames > 0 else { return }
        let write = writeIndex.pointee.load(ordering: .relaxed)
        // Release: the frames written above become visible before the index that covers them.
        writeIndex.pointee.store(write &+ frames, ordering: .releasing)
    }

    // MARK: Consumer side (one thread only)

    /// Lends the consumer the readable frames, up to `maxFrames`, as one or two regions, and
    /// releases the number of frames `body` returns as consumed.
    ///
    /// Do not let the pointers escape `body`. Real-time safe: no allocation, no locks, no system calls.
    @inlinable
    public func withReadableRegions<E: Error>(
        maxFrames: Int, _ body: (RingRegions) throws(E) -> Int
    ) throws(E) -> Int {
        let regions = readableRegions(maxFrames: maxFrames)
        let consumed = try body(regions)
        commitRead(frames: consumed, offered: regions.frameCount)
        return consumed
    }

    @inlinable
    func readableRegions(maxFrames: Int) -> RingRegions {
        precondition(maxFrames >= 0, "maxFrames must not be negative")
        let read = readIndex.pointee.load(ordering: .relaxed)
        var available = cachedWriteIndex.pointee &- read
        if available < maxFrames {
            // Acquire: pairs with the producer's release, so the frames are visible before we read them.
            cachedWriteIndex.pointee = writeIndex.pointee.load(ordering: .acquiring)
            available = cachedWriteIndex.pointee &- read
        }
        return regions(startingAt: read, frames: min(available, maxFrames))
    }

    @inlinable
    func commitRead(frames: Int, offered: Int) {
        precondition(frames >= 0 && frames <= offered, "consumed more frames than the ring offered")
        guard frames > 0 else { return }
        let read = readIndex.pointee.load(ordering: .relaxed)
        // Release: our reads of these slots happen before the producer may overwrite them.
        readIndex.pointee.store(read &+ frames, ordering: .releasing)
    }

    // MARK: Observers (any thread)

    /// Frames readable now. Exact on the consumer's thread, a snapshot elsewhere.
    public var readableFrames: Int {
        let write = writeIndex.pointee.load(ordering: .acquiring)
        let read = readIndex.pointee.load(ordering: .acquiring)
        return write &- read
    }

    /// Splits `frames` frames starting at free-running `index` into at most two contiguous regions.
    @inlinable
    func regions(startingAt index: Int, frames: Int) -> RingRegions {
        let slot = index & mask
        let firstFrames = min(frames, capacityFrames - slot)
        let first = UnsafeMutableRawBufferPointer(
            start: storage + slot * bytesPerFrame, count: firstFrames * bytesPerFrame)
        let secondFrames = frames - firstFrames
        let second = UnsafeMutableRawBufferPointer(
            start: secondFrames > 0 ? storage : nil, count: secondFrames * bytesPerFrame)
        return RingRegions(first: first, second: second, bytesPerFrame: bytesPerFrame)
    }
}
