import Foundation

/// Feeds a PulseAudio `module-pipe-source` FIFO at real-time pace, as a microphone delivers:
/// the source passes on exactly what is written (it reads only while a stream records from it,
/// and as fast as the FIFO fills, so the pace is the writer's). Writes are non-blocking and
/// polled, so `stop()` ends the thread even when the source has stopped reading.
final class PipeSourceFeeder: @unchecked Sendable {
    private let lock = NSLock()
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    /// `bytes` go out in 10 ms chunks of `bytesPerSecond / 100`, on time by the monotonic clock
    /// (a writer that fell behind catches up), `lead` seconds ahead of it: 0 for PulseAudio's
    /// source, which takes the writer's pace; PipeWire's takes its graph's and fills what the FIFO
    /// lacks with silence, so there the writer keeps it a second ahead even on a loaded machine.
    init(fifo: String, bytes: Data, bytesPerSecond: Int, lead: Double = 0) throws {
        // A server that goes away leaves the FIFO without a reader: the write then fails with
        // EPIPE and ends the feeder, instead of SIGPIPE ending the test process.
        signal(SIGPIPE, SIG_IGN)
        let descriptor = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw TestRigError("cannot open the FIFO \(fifo) for writing: errno \(errno)") }
        let chunk = bytesPerSecond / 100
        let payload = [UInt8](bytes)
        let thread = Thread { [self] in
            defer { close(descriptor); finished.signal() }
            let start = DispatchTime.now().uptimeNanoseconds
            let leadNanoseconds = Int(lead * 1e9)
            var offset = 0
            while offset < payload.count, !isStopping {
                let elapsed = Int(DispatchTime.now().uptimeNanoseconds - start) + leadNanoseconds
                let due = min(payload.count, (elapsed / 10_000_000 + 1) * chunk)
                if offset >= due { usleep(2_000); continue }
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                guard poll(&ready, 1, 20) > 0 else { continue }
                let written = payload[offset..<due].withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
                if written > 0 { offset += written } else if errno != EAGAIN && errno != EINTR { return }
            }
        }
        thread.start()
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    /// Ends the feeding thread and waits for it. Idempotent.
    func stop() {
        let wasStopping = lock.withLock { () -> Bool in
            defer { stopping = true }
            return stopping
        }
        if !wasStopping { finished.wait() }
    }
}
