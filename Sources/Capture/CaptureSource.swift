#if canImport(Glibc)
import Glibc
#endif

/// Where the capture loop reads audio from: an ALSA PCM (`CaptureDevice`), or the sound server's
/// own record stream (`SoundServerCapture`, module SoundServer), which spares a recording from a
/// PulseAudio or PipeWire desktop the ALSA plugin's extra thread and its wake-ups (#16).
///
/// Threads: the opener configures the source; once `CaptureLoop.run()` starts, only the capture
/// thread calls it. Every method below is called on the capture thread and must be real-time safe
/// in the steady state: no allocation, no lock held across a wait, no file I/O. `waitForFrames`
/// is the one call that sleeps.
public protocol CaptureSource: AnyObject, Sendable {
    /// What the source agreed to.
    var negotiated: NegotiatedCapture { get }
    /// Starts the stream so frames accumulate from now.
    func start() -> CaptureStep
    /// Reads up to `frames` interleaved frames into `buffer` without blocking.
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> CaptureStep
    /// Reads up to one period into space of the source's own, whose contents are thrown away
    /// (every ring is full).
    func readIntoScratch(frames: Int) -> CaptureStep
    /// Sleeps until about a period more is readable, an error occurs, or `milliseconds` pass.
    func waitForFrames(milliseconds: Int32) -> CaptureStep
    /// After `.overrun`: restarts the stream and says how many frames were lost, or nil when it
    /// cannot be restarted.
    func recoverFromOverrun() -> Int?
    /// After `.suspended`: resumes; false when the device is gone.
    func resumeAfterSuspend(shouldGiveUp: () -> Bool) -> Bool
    /// When the frame the next read returns was captured, in `MonotonicClock` nanoseconds; nil
    /// when the source cannot tell. Called after the first read that brought audio, and after the
    /// next few until one answers (at most four calls); then once at a moment everything was read,
    /// for the latency a later step in the timeline is measured against (at most four more); and
    /// once per step the timeline confirms, which is rare (`CaptureLoop`).
    func timeOfNextFrame() -> Int?
    /// Stops the stream and drops what it holds.
    func drop()
    /// Why nothing came for the stall timeout, as an errno, asked once as the capture thread gives
    /// up: ESTRPIPE when the source is suspended (a sound server's source suspended by its server
    /// or a user, which delivers nothing until resumed), ETIMEDOUT when the source cannot tell.
    func reasonForNoAudio() -> Int32
}

extension CaptureSource {
    /// A source that cannot tell why it went quiet (an ALSA PCM reports a suspension itself, as
    /// `.suspended`, so a quiet one is simply late).
    public func reasonForNoAudio() -> Int32 { ETIMEDOUT }
}

/// The outcome of one step of the capture loop. Expected outcomes are values, not errors, so the
/// hot path never throws (see swift-nio's `IOResult`).
public enum CaptureStep: Equatable, Sendable {
    case frames(Int)
    case wouldBlock
    case overrun
    case suspended
    /// The source failed in a way that cannot be recovered (unplugged, server gone): the errno
    /// that says why.
    case failed(errno: Int32)
}
