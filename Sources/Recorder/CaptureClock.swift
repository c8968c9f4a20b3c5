import Capture
import Realtime
import RecordPermission

/// When a recording's first sample was captured, and how fast the device's clock ran against the
/// system's: what syncing several recorders needs.
///
/// The first sample's time comes from the device's status timestamp (CLOCK_MONOTONIC, less the
/// frames captured and not yet read), taken by the capture thread right after its first read, not
/// from when the file was opened or the thread woke. It is made wall-clock time through
/// CLOCK_BOOTTIME, fixed at that moment (a suspend later in the recording, which the monotonic
/// clock does not count, does not move it), and the wall clock's present offset from it: a step
/// NTP makes during the recording (a Raspberry Pi that started recording before its clock was
/// set) corrects it, as it corrects every time the system tells from then on.
///
/// The drift is the device's frames per second of system time, less the nominal rate, in parts
/// per million, from the slope of `TimelineGuard`'s latency floor. It is given once two 5 s
/// buckets are complete (recordings of about 10 s and more; good to the steadiness of the latency
/// floor over the span: through PulseAudio, a millisecond or more, so hundreds of ppm over 5 s and
/// about ±0.3 ppm over an hour), and left out beyond ±1000 ppm, which no
/// crystal drifts: such a source is not a clock (a file read as fast as it goes).
public struct CaptureClock: Sendable, Equatable {
    /// The first sample's wall-clock time, to the microsecond.
    public let firstSampleTime: WallClockTime
    /// Device clock against the system clock: positive when the device runs fast.
    public let driftPPM: Double?

    static let largestDriftPPM = 1_000.0

    /// Reads the capture thread's timestamps once it has finished; nil when it took none.
    static func measure(_ monitor: CaptureMonitor, sampleRate: Int) -> CaptureClock? {
        guard let time = firstSampleTime(monitor) else { return nil }
        var drift: Double?
        let partsPerBillion = monitor.clockDriftPartsPerBillion.load(ordering: .relaxed)
        if partsPerBillion != Int.min, abs(Double(partsPerBillion) / 1_000) <= largestDriftPPM { drift = Double(partsPerBillion) / 1_000 }
        return CaptureClock(firstSampleTime: time, driftPPM: drift)
    }

    /// The first sample's wall-clock time, to the microsecond, once the capture thread has taken
    /// it (nil before, or from a device that gives no timestamps). Allocates nothing (a segment's
    /// start asks on the encoder thread). Acquire pairs with the capture thread's release, made
    /// before the first frames reach any ring (`CaptureLoop.stampFirstFrame`), and makes the
    /// time suspended stored before that release visible.
    static func firstSampleTime(_ monitor: CaptureMonitor) -> WallClockTime? {
        let first = monitor.firstFrameTime.load(ordering: .acquiring)
        guard first > 0 else { return nil }
        let offset = monitor.firstFrameSuspendedNanoseconds.load(ordering: .relaxed) + MonotonicClock.wallClockLessBootClock()
        return WallClockTime(secondsSinceEpoch: Double((first + offset) / 1_000) / 1_000_000)
    }

    /// "+3.2 ppm", "-41.0 ppm": tenths are all a measurement this fine can claim.
    public var driftText: String? {
        driftPPM.map { drift in
            let tenths = Int((abs(drift) * 10).rounded())
            return (drift < 0 && tenths > 0 ? "-" : "+") + "\(tenths / 10).\(tenths % 10) ppm"
        }
    }
}
