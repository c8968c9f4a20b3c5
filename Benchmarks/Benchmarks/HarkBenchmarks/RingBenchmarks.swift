import Benchmark
import CSPSCRing
import Realtime
import RingBuffer
#if canImport(Glibc)
import Glibc
#endif

/// 16-bit stereo frames: 4 bytes.
private let bytesPerFrame = 4
/// Each iteration moves this many bytes, so `throughput` reads as MiB/s.
private let bytesPerIteration = 1 << 20
/// The two-thread runs move more per iteration, so thread start-up is noise.
private let bytesPerThreadedIteration = 64 << 20

private let chunkSizes = [64, 256, 1024, 4096]
private let ringSizes: [(name: String, bytes: Int)] = [("64KiB", 64 << 10), ("1MiB", 1 << 20)]

/// The same copy-in/copy-out interface over the Swift ring and the C yardstick. Used as a generic
/// constraint, never as an existential: a dynamic call per chunk would cost more than the ring
/// (measured: it tripled the time per 64-frame chunk).
private protocol MeasuredRing: AnyObject, Sendable {
    init(bytes: Int)
    func write(_ source: UnsafeRawPointer, frames: Int) -> Int
    func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> Int
}

private final class SwiftRing: MeasuredRing, @unchecked Sendable {
    let ring: FrameRingBuffer
    init(bytes: Int) { ring = FrameRingBuffer(minimumCapacityFrames: bytes / bytesPerFrame, bytesPerFrame: bytesPerFrame) }
    @inline(__always) func write(_ source: UnsafeRawPointer, frames: Int) -> Int {
        ring.write(from: UnsafeRawBufferPointer(start: source, count: frames * bytesPerFrame))
    }
    @inline(__always) func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> Int {
        ring.read(into: UnsafeMutableRawBufferPointer(start: destination, count: frames * bytesPerFrame))
    }
}

private final class CRing: MeasuredRing, @unchecked Sendable {
    let ring: OpaquePointer
    init(bytes: Int) { ring = spsc_ring_create(bytes / bytesPerFrame, bytesPerFrame) }
    deinit { spsc_ring_destroy(ring) }
    @inline(__always) func write(_ source: UnsafeRawPointer, frames: Int) -> Int { spsc_ring_write(ring, source, frames) }
    @inline(__always) func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> Int {
        spsc_ring_read(ring, destination, frames)
    }
}

/// Chunk buffers for both sides, allocated once.
private final class Buffers: @unchecked Sendable {
    let source = UnsafeMutableRawPointer.allocate(byteCount: 4096 * bytesPerFrame, alignment: 64)
    let destination = UnsafeMutableRawPointer.allocate(byteCount: 4096 * bytesPerFrame, alignment: 64)
    init() { source.initializeMemory(as: UInt8.self, repeating: 0x5A, count: 4096 * bytesPerFrame) }
}

func registerRingBenchmarks() {
    let buffers = Buffers()
    for (ringName, ringBytes) in ringSizes {
        for chunk in chunkSizes {
            register(SwiftRing.self, "Swift", ringName: ringName, ringBytes: ringBytes, chunk: chunk, buffers: buffers)
            register(CRing.self, "C11", ringName: ringName, ringBytes: ringBytes, chunk: chunk, buffers: buffers)
        }
    }
}

private func register<Ring: MeasuredRing>(
    _ type: Ring.Type, _ implementation: String, ringName: String, ringBytes: Int, chunk: Int, buffers: Buffers
) {
    let state = SetupState<Ring>()
    Benchmark("Ring_\(implementation)_push_pop_\(chunk)_frame_chunks_\(ringName)_ring",
              configuration: HotPath.configuration) { benchmark in
        pushAndPop(state.value!, chunk: chunk, iterations: benchmark.scaledIterations.count, buffers: buffers)
    } setup: {
        state.value = Ring(bytes: ringBytes)
    }

    let threaded = SetupState<Ring>()
    Benchmark("Ring_\(implementation)_two_threads_\(chunk)_frame_chunks_\(ringName)_ring_64MiB") { benchmark in
        for _ in benchmark.scaledIterations {
            moveAcrossThreads(threaded.value!, chunk: chunk, buffers: buffers)
        }
    } setup: {
        threaded.value = Ring(bytes: ringBytes)
    }
}

/// One thread pushes a chunk and pops it again, 1 MiB per iteration.
@inline(never)
private func pushAndPop<Ring: MeasuredRing>(_ ring: Ring, chunk: Int, iterations: Int, buffers: Buffers) {
    let chunksPerIteration = bytesPerIteration / (chunk * bytesPerFrame)
    for _ in 0..<iterations {
        for _ in 0..<chunksPerIteration {
            blackHole(ring.write(buffers.source, frames: chunk))
            blackHole(ring.read(buffers.destination, frames: chunk))
        }
    }
}

/// A producer thread pushes 64 MiB while this thread pops it; neither blocks, both yield when
/// the ring is full or empty.
private func moveAcrossThreads<Ring: MeasuredRing>(_ ring: Ring, chunk: Int, buffers: Buffers) {
    let totalFrames = bytesPerThreadedIteration / bytesPerFrame
    let producerRing = ring
    let producer = try! PosixThread(name: "bench-producer") {
        var sent = 0
        while sent < totalFrames {
            let written = producerRing.write(buffers.source, frames: min(chunk, totalFrames - sent))
            if written == 0 { sched_yield() }
            sent += written
        }
    }
    var received = 0
    while received < totalFrames {
        let read = ring.read(buffers.destination, frames: chunk)
        if read == 0 { sched_yield() }
        received += read
    }
    producer.join()
}
