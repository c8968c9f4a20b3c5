import Capture
import Encoding
import Realtime
import RingBuffer
import Synchronization

/// The encoder thread's loop: ring → encoder → output, until capture has finished and the ring is
/// empty, then `finish()`.
///
/// It sleeps on `dataReady` between periods and never spins. Per period it allocates nothing and
/// takes no locks: it borrows the ring's readable regions and hands them to the encoder, which
/// converts them in place into its preallocated buffer.
final class EncoderLoop: @unchecked Sendable {
    private let ring: FrameRingBuffer
    private let encoder: any AudioEncoder
    private let monitor: CaptureMonitor
    private let dataReady: WakeSignal

    /// Frames handed to the encoder. Written by the encoder thread, read by others as a snapshot.
    let framesEncoded = Atomic<Int>(0)
    /// Bytes of output written, published after each drain. Same rules as `framesEncoded`.
    let bytesWritten = Atomic<Int>(0)
    /// Levels for a status line, when one is shown (measuring costs a pass over every sample).
    let meter: LevelMeter?
    /// Set with release once the loop has returned; `outcome` is then final.
    private let done = Atomic<Bool>(false)
    /// Written only by the encoder thread before `done` is released; read only after acquiring it.
    private var failure: EncoderError?

    init(ring: FrameRingBuffer, encoder: any AudioEncoder, monitor: CaptureMonitor, dataReady: WakeSignal,
         meter: LevelMeter? = nil) {
        self.ring = ring
        self.meter = meter
        self.encoder = encoder
        self.monitor = monitor
        self.dataReady = dataReady
    }

    /// Whether the loop has returned. Acquire pairs with the release at the end of `run()`.
    var isDone: Bool { done.load(ordering: .acquiring) }

    /// The encoder's failure, if any. Valid once `isDone` is true.
    var outcome: EncoderError? {
        precondition(isDone, "the encoder loop is still running")
        return failure
    }

    /// Runs on the encoder thread.
    func run() {
        failure = drainUntilCaptureEnds()
        if let failure {
            // The output is broken: stop capturing, there is nowhere to put more audio, and leave
            // what was written valid.
            monitor.requestStop()
            if case .writeFailed = failure { encoder.salvageAfterWriteFailure() }
        } else {
            do throws(EncoderError) { try encoder.finish() } catch {
                failure = error
                if case .writeFailed = error { encoder.salvageAfterWriteFailure() }
            }
        }
        done.store(true, ordering: .releasing)
    }

    private func drainUntilCaptureEnds() -> EncoderError? {
        do throws(EncoderError) {
            while true {
                // Read `isFinished` before draining: if it was already true, this drain sees every
                // frame capture will ever commit (acquire/release in CaptureMonitor).
                let captureFinished = monitor.isFinished
                try drainRing()
                if captureFinished { return nil }
                dataReady.wait(timeoutNanoseconds: 100_000_000)
            }
        } catch {
            return error
        }
    }

    private func drainRing() throws(EncoderError) {
        while true {
            let consumed = try ring.withReadableRegions(maxFrames: ring.capacityFrames) { regions throws(EncoderError) in
                if !regions.first.isEmpty { try encoder.encode(UnsafeRawBufferPointer(regions.first)) }
                if !regions.second.isEmpty { try encoder.encode(UnsafeRawBufferPointer(regions.second)) }
                if let meter {
                    meter.measure(UnsafeRawBufferPointer(regions.first))
                    meter.measure(UnsafeRawBufferPointer(regions.second))
                }
                return regions.frameCount
            }
            if consumed == 0 { return }
            framesEncoded.add(consumed, ordering: .relaxed)
            bytesWritten.store(encoder.bytesWritten, ordering: .relaxed)
        }
    }
}
