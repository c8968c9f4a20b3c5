import AudioFormat
import CALSA
import Realtime
import RecordPermission
#if canImport(Glibc)
import Glibc
#endif

/// An open ALSA capture PCM, configured and ready to start. Owns the `snd_pcm_t`.
///
/// A final class rather than a `~Copyable` struct because it is handed from the thread that opens
/// it to the capture thread's escaping closure, which cannot consume a noncopyable value. Only one
/// thread uses it at a time: the opener until `CaptureLoop` starts, then the capture thread.
///
/// Every ALSA call in the capture hot path is in this file; the sound server's own stream is
/// `SoundServerCapture` (module SoundServer).
public final class CaptureDevice: CaptureSource, @unchecked Sendable {
    private let pcm: OpaquePointer
    /// Preallocated once so the overrun path needs no allocation.
    private let status: OpaquePointer
    /// One period of space for frames read while the ring is full, which are then dropped.
    private let scratch: UnsafeMutableRawPointer
    /// What the device agreed to.
    public let negotiated: NegotiatedCapture
    #if DEBUG
    /// Faults tests inject at the `snd_pcm_readi` seam; see `CaptureFaultInjection`.
    private var injectedFaults = CaptureFaultInjection()
    #endif

    /// Opens `request.device` for capture in non-blocking mode and negotiates its parameters.
    ///
    /// Requires the user's consent: a `CaptureGrant` only `PermissionGate.requestAccess(for:)`
    /// can make. A grant whose manifest lacks a microphone purpose string stops the program here,
    /// before the device is touched.
    /// Not real-time safe. The corresponding C functions are `snd_pcm_open` and `snd_pcm_hw_params`.
    public init(opening request: CaptureRequest, grant: CaptureGrant) throws(CaptureOpenError) {
        grant.requireUsageDescription()
        ALSALibrary.silenceErrorMessages()
        var handle: OpaquePointer?
        let opened = snd_pcm_open(&handle, request.device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        guard opened >= 0, let handle else {
            throw Self.openError(device: request.device, code: -opened)
        }
        var statusHandle: OpaquePointer?
        guard snd_pcm_status_malloc(&statusHandle) == 0, let statusHandle else {
            snd_pcm_close(handle)
            throw .unavailable(device: request.device, reason: "out of memory")
        }
        do {
            let parameters = try ALSAHardwareParameters(pcm: handle, device: request.device)
            negotiated = try parameters.negotiate(request)
        } catch {
            snd_pcm_status_free(statusHandle)
            snd_pcm_close(handle)
            throw error
        }
        pcm = handle
        status = statusHandle
        scratch = .allocate(byteCount: negotiated.periodFrames * negotiated.format.bytesPerFrame, alignment: 64)
    }

    deinit {
        snd_pcm_close(pcm)
        snd_pcm_status_free(status)
        scratch.deallocate()
    }

    private static func openError(device: String, code: Int32) -> CaptureOpenError {
        switch code {
        case ENOENT, ENODEV, ENXIO: .notFound(device: device)
        case EBUSY: .unavailable(device: device, reason: "the device is busy (another program is using it)")
        default: .unavailable(device: device, reason: String(cString: snd_strerror(-code)))
        }
    }

    // MARK: Hot path (capture thread only; real-time safe)

    /// Starts the stream so frames accumulate from now. The corresponding C function is `snd_pcm_start`.
    public func start() -> CaptureStep {
        let result = snd_pcm_start(pcm)
        return result < 0 && result != -EBADFD ? Self.step(forError: result) : .frames(0)
    }

    /// Reads up to `frames` interleaved frames into `buffer` without blocking.
    /// The corresponding C function is `snd_pcm_readi`.
    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> CaptureStep {
        #if DEBUG
        if !injectedFaults.isEmpty, injectedFaults.holdsBackTheFirstSample() { return .wouldBlock }
        if !injectedFaults.isEmpty, let fault = injectedFaults.takeDueFault() {
            switch fault {
            case .overrun(let lostFrames):
                discardFromSource(frames: lostFrames)
                return .overrun
            case .suspend:
                return .suspended
            }
        }
        let frames = injectedFaults.isEmpty ? frames : injectedFaults.framesBeforeNextFault(limit: frames)
        #endif
        let result = snd_pcm_readi(pcm, buffer, snd_pcm_uframes_t(frames))
        #if DEBUG
        if result > 0 { injectedFaults.delivered(Int(result)) }
        #endif
        return result >= 0 ? .frames(Int(result)) : Self.step(forError: Int32(result))
    }

    #if DEBUG
    /// An injected overrun loses audio as a real one does: `frames` read from the source and
    /// thrown away.
    private func discardFromSource(frames: Int) {
        var remaining = frames
        while remaining > 0 {
            let result = snd_pcm_readi(pcm, scratch, snd_pcm_uframes_t(min(remaining, negotiated.periodFrames)))
            if result > 0 {
                remaining -= Int(result)
                injectedFaults.delivered(Int(result))
            } else if result == -Int(EAGAIN) {
                _ = snd_pcm_wait(pcm, 100)
            } else {
                return
            }
        }
    }
    #endif

    /// Reads up to one period into scratch space whose contents are thrown away.
    public func readIntoScratch(frames: Int) -> CaptureStep {
        read(into: scratch, frames: min(frames, negotiated.periodFrames))
    }

    /// Sleeps until a period is readable, an error occurs, or `milliseconds` pass.
    /// The corresponding C function is `snd_pcm_wait`.
    public func waitForFrames(milliseconds: Int32) -> CaptureStep {
        let result = snd_pcm_wait(pcm, milliseconds)
        return result >= 0 ? .frames(0) : Self.step(forError: result)
    }

    /// Measures how long the device has been overrun, then prepares and restarts it, as arecord's
    /// `xrun()` does. Returns the frames lost, or nil when the device cannot be recovered.
    /// The corresponding C functions are `snd_pcm_status` and `snd_pcm_prepare`.
    public func recoverFromOverrun() -> Int? {
        var lost = 0
        #if DEBUG
        if let injected = injectedFaults.takeInjectedLoss() {
            guard snd_pcm_prepare(pcm) >= 0 else { return nil }
            _ = snd_pcm_start(pcm)
            return injected
        }
        #endif
        if snd_pcm_status(pcm, status) >= 0, snd_pcm_status_get_state(status) == SND_PCM_STATE_XRUN {
            var now = snd_htimestamp_t()
            var trigger = snd_htimestamp_t()
            snd_pcm_status_get_htstamp(status, &now)
            snd_pcm_status_get_trigger_htstamp(status, &trigger)
            let nanoseconds = (Int(now.tv_sec) - Int(trigger.tv_sec)) * 1_000_000_000
                + (Int(now.tv_nsec) - Int(trigger.tv_nsec))
            // In microseconds first: nanoseconds times the rate passes Int.max after 13 hours at
            // 192 kHz (a device left overrun that long: hark stopped with Ctrl-Z overnight).
            lost = max(0, nanoseconds) / 1000 * negotiated.format.sampleRate / 1_000_000
        }
        guard snd_pcm_prepare(pcm) >= 0 else { return nil }
        _ = snd_pcm_start(pcm)
        return lost
    }

    /// Resumes after a system suspend as arecord's `suspend()` does: retry resume while the driver
    /// says "again", and prepare when resume is not supported. Returns false when the device is gone.
    /// The corresponding C functions are `snd_pcm_resume` and `snd_pcm_prepare`.
    public func resumeAfterSuspend(shouldGiveUp: () -> Bool) -> Bool {
        var result = snd_pcm_resume(pcm)
        while result == -EAGAIN && !shouldGiveUp() {
            var pause = timespec(tv_sec: 0, tv_nsec: 100_000_000)
            nanosleep(&pause, nil)
            result = snd_pcm_resume(pcm)
        }
        if result < 0 {
            guard snd_pcm_prepare(pcm) >= 0 else { return false }
        }
        _ = snd_pcm_start(pcm)
        return true
    }

    /// When the device captured the frame the next read returns, in `MonotonicClock` nanoseconds:
    /// the status timestamp less the frames captured and not yet read (the delay). A device whose
    /// status has no timestamp (some plugins) is timed by the clock at the call instead. Nil when
    /// the status cannot be read. An ioctl, no allocation; called after the capture thread's first
    /// read that brought audio (again after the next few only if it answered nil).
    /// The corresponding C functions are `snd_pcm_status`, `…_get_htstamp` and `…_get_delay`.
    public func timeOfNextFrame() -> Int? {
        guard snd_pcm_status(pcm, status) >= 0 else { return nil }
        let clock = MonotonicClock.nanoseconds()
        var stamp = snd_htimestamp_t()
        snd_pcm_status_get_htstamp(status, &stamp)
        let stamped = Int(stamp.tv_sec) * 1_000_000_000 + Int(stamp.tv_nsec)
        let delay = Int(snd_pcm_status_get_delay(status))
        // A stamp from another clock (the device refused MONOTONIC), or none, or one ahead of now.
        let time = negotiated.hasMonotonicTimestamps && stamped > 0 && stamped <= clock ? stamped : clock
        return time - delay * 1_000_000_000 / negotiated.format.sampleRate
    }

    /// Stops the stream and drops buffered frames. The corresponding C function is `snd_pcm_drop`.
    public func drop() {
        _ = snd_pcm_drop(pcm)
    }

    private static func step(forError result: Int32) -> CaptureStep {
        switch -result {
        case EAGAIN: .wouldBlock
        case EPIPE: .overrun
        case ESTRPIPE: .suspended
        default: .failed(errno: -result)
        }
    }
}

/// Process-wide ALSA settings.
enum ALSALibrary {
    /// hark reports every ALSA error itself, as one line with an exit code, so ALSA's own messages
    /// on stderr are silenced. Idempotent.
    static func silenceErrorMessages() {
        hark_alsa_silence_library_errors()
    }
}
