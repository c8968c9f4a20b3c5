import AudioFormat
import Capture
import Encoding
import Realtime
import RingBuffer
#if canImport(Glibc)
import Glibc
#endif

/// One recording: output → device → encoder → ring → capture and encoder threads → summary.
///
///     let session = try RecordingSession(configuration)   // output, device, encoder (no audio yet)
///     let started = try session.start()                    // threads run; the file gets its name
///     let summary = try session.waitUntilFinished()        // stop signal or -d, then drain and finish
///
/// Call `StopSignals.block()` before creating a session, so the threads it starts inherit the
/// blocked stop signals and the session's thread can take them.
public final class RecordingSession {
    public let configuration: RecordingConfiguration
    private let output: OutputTarget
    private let sink: OutputSink
    private let device: CaptureDevice
    private let ring: FrameRingBuffer
    private let monitor = CaptureMonitor()
    private let dataReady = WakeSignal()
    private let encoderLoop: EncoderLoop
    private var captureThread: PosixThread?
    private var encoderThread: PosixThread?

    /// Creates the output, opens and configures the device and sets up the encoder, in that order,
    /// so an output that cannot be created fails before any device is opened. On failure nothing is
    /// left behind.
    public init(_ configuration: RecordingConfiguration) throws(RecordingError) {
        self.configuration = configuration
        output = try OutputTarget(configuration.output)
        do {
            device = try CaptureDevice(opening: configuration.capture)
        } catch {
            output.discard()
            throw .captureDevice(error)
        }
        let format = device.negotiated.format
        sink = OutputSink(fileDescriptor: output.fileDescriptor)
        let encoder: any AudioEncoder
        do throws(EncoderError) {
            switch configuration.codec {
            case .flac(var settings):
                settings.expectedFrames = configuration.frameLimit
                encoder = try FLACEncoder(format: format, settings: settings, sink: sink)
            }
        } catch {
            output.discard()
            throw .encoderSetup(error)
        }
        let ringFrames = max(format.frames(forSeconds: configuration.ringSeconds), 4 * device.negotiated.periodFrames)
        ring = FrameRingBuffer(minimumCapacityFrames: ringFrames, bytesPerFrame: format.bytesPerFrame)
        encoderLoop = EncoderLoop(ring: ring, encoder: encoder, monitor: monitor, dataReady: dataReady)
    }

    /// What the device negotiated.
    public var negotiated: NegotiatedCapture { device.negotiated }

    /// Frames the ring holds.
    public var ringCapacityFrames: Int { ring.capacityFrames }

    /// Starts the encoder and capture threads and gives the output file its name.
    /// Returns how the capture thread is scheduled.
    public func start() throws(RecordingError) -> ThreadScheduling {
        let loop = CaptureLoop(device: device, ring: ring, monitor: monitor, dataReady: dataReady,
                               frameLimit: configuration.frameLimit)
        let encoderLoop = self.encoderLoop
        do {
            encoderThread = try PosixThread(name: "hark-encode") { encoderLoop.run() }
            let capture = try PosixThread(name: "hark-capture", realtimePriority: configuration.captureRealtimePriority) {
                loop.run()
            }
            let scheduling = capture.scheduling
            captureThread = consume capture
            try output.commit()
            return scheduling
        } catch let error as RecordingError {
            monitor.requestStop()
            _ = waitUntilFinished()
            throw error
        } catch {
            monitor.requestStop()
            _ = waitUntilFinished()
            output.discard()
            throw .system("\(error)")
        }
    }

    /// Frames captured so far (a snapshot, for status displays).
    public var framesCaptured: Int { monitor.framesCaptured.load(ordering: .relaxed) }

    /// Waits for a stop signal, the end of `-d`, a device failure or an output failure; then stops
    /// capture, lets the encoder drain the ring and finish the file, and returns the summary, whose
    /// `end` says whether the recording failed.
    /// A second signal during the drain is ignored: every remaining step is needed for a valid file.
    public func waitUntilFinished() -> RecordingSummary {
        var stopSignal: Int32?
        while !encoderLoop.isDone {
            if let signal = StopSignals.wait(milliseconds: 50), stopSignal == nil {
                stopSignal = signal
                monitor.requestStop()
            }
        }
        captureThread.take()?.join()
        encoderThread.take()?.join()
        output.synchronize()

        let end: RecordingEnd
        if let failure = encoderLoop.outcome {
            end = .outputFailed(failure)
        } else if monitor.endReason == .deviceLost {
            end = .deviceLost(reason: Self.deviceFailureText(errno: monitor.deviceErrorCode))
        } else if let stopSignal {
            end = .signal(StopSignals.name(of: stopSignal))
        } else {
            end = monitor.endReason == .frameLimitReached ? .durationReached : .signal("request")
        }
        let summary = RecordingSummary(
            format: device.negotiated.format, output: configuration.output.description,
            frames: encoderLoop.framesEncoded.load(ordering: .relaxed), bytes: sink.bytesWritten,
            overruns: monitor.overruns.load(ordering: .relaxed),
            framesLostToOverruns: monitor.framesLostToOverruns.load(ordering: .relaxed),
            framesDropped: monitor.framesDropped.load(ordering: .relaxed), end: end)
        return summary
    }

    private static func deviceFailureText(errno code: Int32) -> String {
        code == ETIMEDOUT ? "the device stopped delivering audio" : String(cString: strerror(code))
    }
}
