import Foundation
import Glibc
import RingBuffer
import Synchronization
import Testing

/// Two threads, one ring: after rigtorp/SPSCQueue's `SPSCQueueTest.cpp` checksum test.
///
/// A producer thread writes frames carrying a counter 0, 1, 2, … in chunks of pseudo-random size;
/// a consumer thread reads them in chunks of other pseudo-random sizes and checks that each frame
/// is exactly the next counter value: strict FIFO, nothing lost, nothing duplicated, no torn frame.
/// Both sides mix the zero-copy region API (sometimes committing fewer frames than offered) with
/// the copy helpers. Neither side blocks: on a full or empty ring it spins with `sched_yield()`.
///
/// CI runs this suite alone under ThreadSanitizer:
/// `swift test --sanitize=thread --filter RingBufferStressTests`.
@Suite struct RingBufferStressTests {
    static let capacityFrames = 1024
    static let bytesPerFrame = MemoryLayout<UInt64>.size
    /// Frames sent through the ring. On two unloaded cores, 20 million take about 4.5 s in a debug
    /// build; under AddressSanitizer 9 s, under ThreadSanitizer 37 s (Swift 6.3.1), too long for a
    /// sanitizer phase that runs other suites alongside. A sanitizer needs each kind of hand-over
    /// to happen, not to happen millions of times (ThreadSanitizer reports the first unordered pair
    /// of accesses; AddressSanitizer the first bad access), so under one the test sends fewer
    /// frames: 4 million under ASan, 2 million under TSan, still thousands of wraps of the ring and
    /// thousands of full and empty rings (the printed line counts them).
    static let totalFrames = switch StressLoad.sanitizer {
    case "thread": 2_000_000
    case "address": 4_000_000
    default: 20_000_000
    }
    /// A side that makes no progress for this long gives up, so a lost frame fails the test instead
    /// of hanging it. No progress at all means the other thread got no CPU for that long.
    static let stallLimit = Duration.seconds(30) * StressLoad.slowdown
    /// Minutes before Swift Testing fails the test: only a guard against a hang (a lost frame is
    /// caught by `stallLimit`), so far beyond any run's length: 5, or 5 × the slowdown. Both sides
    /// spin, so the test is as slow as the worse-served of its two threads: 64 s for the 20 million
    /// frames with `stress-ng --cpu 2` and other tests loading both cores, against 4.5 s unloaded.
    static let timeLimit = TimeLimitTrait.Duration.minutes(5 * StressLoad.slowdown)

    @Test(.timeLimit(timeLimit))
    func framesCrossThreadsInOrderWithoutLossOrDuplication() async {
        let ring = FrameRingBuffer(minimumCapacityFrames: Self.capacityFrames, bytesPerFrame: Self.bytesPerFrame)
        let control = StressControl()
        let total = Self.totalFrames

        async let producer = runOnThread(named: "ring producer") {
            produce(into: ring, frames: total, seed: 0x5EED_0001, control: control)
        }
        async let consumer = runOnThread(named: "ring consumer") {
            consume(from: ring, frames: total, seed: 0x5EED_0002, control: control)
        }
        let (sent, received) = await (producer, consumer)

        #expect(!sent.stalled, "producer made no progress for \(Self.stallLimit)")
        #expect(!received.stalled, "consumer made no progress for \(Self.stallLimit)")
        #expect(sent.frames == total)
        #expect(received.frames == total)
        #expect(received.firstMismatch == nil, "first frame out of order: \(String(describing: received.firstMismatch))")
        #expect(received.mismatches == 0)
        let expectedChecksum = UInt64(total) &* UInt64(total - 1) / 2
        #expect(received.checksum == expectedChecksum)
        #expect(ring.readableFrames == 0)
        print("stress: \(received.frames) frames; producer spun \(sent.fullSpins) times on a full ring, consumer \(received.emptySpins) times on an empty one")
    }
}

/// The slowdown to allow for, as HarkCLITests' `TestLoad` (a separate test target): 1, or 3 when
/// this test process runs under a sanitizer; `HARK_TEST_SLOWDOWN` overrides it.
private enum StressLoad {
    static let sanitizer: String? = {
        let process = dlopen(nil, RTLD_NOW)
        if dlsym(process, "__asan_init") != nil { return "address" }
        if dlsym(process, "__tsan_init") != nil { return "thread" }
        return nil
    }()
    static let slowdown: Int = {
        if let text = ProcessInfo.processInfo.environment["HARK_TEST_SLOWDOWN"], let value = Double(text), value >= 1 {
            return Int(value.rounded(.up))
        }
        return sanitizer == nil ? 1 : 3
    }()
}

// MARK: - The two sides

/// State both threads share: a flag to stop early once either side gives up.
private final class StressControl: Sendable {
    let stop = Atomic<Bool>(false)
}

private struct ProducerReport: Sendable {
    var frames = 0
    var fullSpins = 0
    var stalled = false
}

private struct ConsumerReport: Sendable {
    struct Mismatch: Sendable, CustomStringConvertible {
        let position: Int
        let expected: UInt64
        let actual: UInt64
        var description: String { "frame \(position) carried \(actual), expected \(expected)" }
    }
    var frames = 0
    var emptySpins = 0
    var mismatches = 0
    var firstMismatch: Mismatch?
    var checksum: UInt64 = 0
    var stalled = false
}

/// What a side does after finding the ring full (producer) or empty (consumer).
private enum SpinOutcome { case keepGoing, otherSideStopped, stalled }

/// Yields once, and every 4096 spins checks whether to give up: the other side stopped, or this
/// side has made no progress for `stallLimit` (then it tells the other side to stop too).
private func spin(count spins: Int, since lastProgress: ContinuousClock.Instant, control: StressControl)
    -> SpinOutcome
{
    sched_yield()
    guard spins % 4096 == 0 else { return .keepGoing }
    if control.stop.load(ordering: .relaxed) { return .otherSideStopped }
    if ContinuousClock.now - lastProgress > RingBufferStressTests.stallLimit {
        control.stop.store(true, ordering: .relaxed)
        return .stalled
    }
    return .keepGoing
}

private func produce(into ring: FrameRingBuffer, frames total: Int, seed: UInt64, control: StressControl)
    -> ProducerReport
{
    let width = ring.bytesPerFrame
    var random = SplitMix64(seed: seed)
    var report = ProducerReport()
    var next = 0
    var lastProgress = ContinuousClock.now
    let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: ring.capacityFrames * width)
    scratch.initialize(repeating: 0, count: ring.capacityFrames * width)
    defer { scratch.deallocate() }

    func stamp(_ region: UnsafeMutableRawBufferPointer, frames: Int, from first: Int) {
        guard frames > 0 else { return }
        stamp(region.bindMemory(to: UInt8.self).baseAddress!, frames: frames, from: first)
    }
    func stamp(_ bytes: UnsafeMutablePointer<UInt8>, frames: Int, from first: Int) {
        for index in 0..<frames {
            storeFrame(UInt64(first + index), at: bytes + index * width)
        }
    }

    while next < total {
        let want = min(random.next(in: 1...ring.capacityFrames), total - next)
        let written: Int
        if random.next() & 1 == 0 {
            // Zero-copy, sometimes committing fewer frames than offered.
            let partial = random.next() % 8 == 0
            let roll = random.next()
            written = ring.withWritableRegions(maxFrames: want) { regions in
                let kept = partial ? Int(roll % UInt64(regions.frameCount + 1)) : regions.frameCount
                let inFirst = min(kept, regions.firstFrameCount)
                stamp(regions.first, frames: inFirst, from: next)
                stamp(regions.second, frames: kept - inFirst, from: next + inFirst)
                return kept
            }
        } else {
            stamp(scratch, frames: want, from: next)
            written = ring.write(from: UnsafeRawBufferPointer(start: scratch, count: want * width))
        }
        if written > 0 {
            next += written
            lastProgress = .now
        } else {
            report.fullSpins += 1
            let outcome = spin(count: report.fullSpins, since: lastProgress, control: control)
            if outcome != .keepGoing {
                report.stalled = outcome == .stalled
                break
            }
        }
    }
    report.frames = next
    return report
}

private func consume(from ring: FrameRingBuffer, frames total: Int, seed: UInt64, control: StressControl)
    -> ConsumerReport
{
    let width = ring.bytesPerFrame
    var random = SplitMix64(seed: seed)
    var report = ConsumerReport()
    var lastProgress = ContinuousClock.now
    let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: ring.capacityFrames * width)
    scratch.initialize(repeating: 0, count: ring.capacityFrames * width)
    defer { scratch.deallocate() }

    func check(_ region: UnsafeMutableRawBufferPointer, frames: Int) {
        guard frames > 0 else { return }
        check(region.bindMemory(to: UInt8.self).baseAddress!, frames: frames)
    }
    func check(_ bytes: UnsafeMutablePointer<UInt8>, frames: Int) {
        for index in 0..<frames {
            let value = loadFrame(at: bytes + index * width)
            let expected = UInt64(report.frames)
            if value != expected {
                report.mismatches += 1
                if report.firstMismatch == nil {
                    report.firstMismatch = .init(position: report.frames, expected: expected, actual: value)
                }
            }
            report.checksum &+= value
            report.frames += 1
        }
    }

    while report.frames < total {
        let want = random.next(in: 1...ring.capacityFrames)
        let read: Int
        if random.next() & 1 == 0 {
            // Zero-copy, sometimes consuming fewer frames than offered.
            let partial = random.next() % 8 == 0
            let roll = random.next()
            read = ring.withReadableRegions(maxFrames: want) { regions in
                let consumed = partial ? Int(roll % UInt64(regions.frameCount + 1)) : regions.frameCount
                let inFirst = min(consumed, regions.firstFrameCount)
                check(regions.first, frames: inFirst)
                check(regions.second, frames: consumed - inFirst)
                return consumed
            }
        } else {
            read = ring.read(into: UnsafeMutableRawBufferPointer(start: scratch, count: want * width))
            check(scratch, frames: read)
        }
        if report.mismatches > 1000 {
            control.stop.store(true, ordering: .relaxed)
            break
        }
        if read > 0 {
            lastProgress = .now
        } else {
            report.emptySpins += 1
            let outcome = spin(count: report.emptySpins, since: lastProgress, control: control)
            if outcome != .keepGoing {
                report.stalled = outcome == .stalled
                break
            }
        }
    }
    return report
}

// Frame bytes are stored and loaded one by one through `UInt8` pointers, not with `storeBytes` /
// `loadUnaligned`: in a debug build those are calls into the uninstrumented standard library, so
// ThreadSanitizer would not see the accesses at all (checked on Swift 6.3.1 / Linux; the typed
// pointer subscript is inlined and instrumented). The copies inside `write(from:)` / `read(into:)`
// go through the standard library too, so under TSan only the zero-copy half of this test checks
// the ordering of frame bytes against the indices; the copy half still checks FIFO order.

private func storeFrame(_ value: UInt64, at frame: UnsafeMutablePointer<UInt8>) {
    for byte in 0..<8 {
        frame[byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(byte)))
    }
}

private func loadFrame(at frame: UnsafeMutablePointer<UInt8>) -> UInt64 {
    var value: UInt64 = 0
    for byte in 0..<8 {
        value |= UInt64(frame[byte]) << (8 * UInt64(byte))
    }
    return value
}

/// Runs `work` on a new thread of its own (not the cooperative pool, which must not spin) and
/// returns its result.
private func runOnThread<Result: Sendable>(
    named name: String, _ work: @escaping @Sendable () -> Result
) async -> Result {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.name = name
        thread.start()
    }
}
