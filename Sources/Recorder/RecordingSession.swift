import AudioFormat
import Capture
import Encoding
import Realtime
import RecordPermission
import RingBuffer
#if canImport(Glibc)
import Glibc
#endif

/// One recording: output → device → encoder → ring → capture and encoder threads → summary.
///
///     let session = try RecordingSession(configuration) {  // output, consent, device, encoder
///         gate.requestAccess(for: .audio)
///     }
///     let scheduling = try session.start()                 // threads run; the file gets its name
///     let summary = session.waitUntilFinished { progress in nil }  // signal, -d, failure or revocation
///
/// Call `StopSignals.block()` before creating a session, so the threads it starts inherit the
/// blocked stop signals and the session's thread can take them.
public final class RecordingSession {
    public let configuration: RecordingConfiguration
    private let output: OutputTarget
    private let device: CaptureDevice
    private let ring: FrameRingBuffer
    private let monitor = CaptureMonitor()
    private let dataReady = WakeSignal()
    /// Silence for lost time, scheduled by the capture thread, made by the encoder thread
    /// (`--pad-overruns`); nil when lost time is left out.
    private let silence: SilenceSchedule?
    private let encoderLoop: EncoderLoop
    private let meter: LevelMeter?
    /// Splits a file output into consecutive files; nil for standard output.
    private let splitter: SplittingEncoder?
    private var captureThread: PosixThread?
    private var encoderThread: PosixThread?
    /// The consent this recording runs under.
    public let grant: CaptureGrant
    /// When the recording started (the device open, the encoder about to write its header): the
    /// DATE tag's moment and the access log's start.
    public let startTime: WallClockTime

    /// Creates the output, asks for consent (`authorize`), opens and configures the device and sets
    /// up the encoder, in that order: an output that cannot be created fails before anyone is asked,
    /// and nobody is asked for anything that would fail anyway. On failure nothing is left behind.
    public init(_ configuration: RecordingConfiguration, authorize: () -> AccessResult) throws(RecordingError) {
        self.configuration = configuration
        // A file's name may hold strftime conversions, expanded now for the first file.
        var naming: OutputNaming?
        var destination = configuration.output
        if case .file(let pattern) = configuration.output {
            var fileNaming = OutputNaming(pattern: pattern)
            destination = .file(path: fileNaming.next(at: time(nil)))
            naming = fileNaming
        }
        output = try OutputTarget(destination)
        switch authorize() {
        case .granted(let grant):
            self.grant = grant
        case .refused(let refusal):
            output.discard()
            throw .permissionRefused(refusal)
        }
        do {
            device = try CaptureDevice(opening: configuration.capture, grant: grant)
        } catch {
            output.discard()
            throw .captureDevice(error)
        }
        let format = device.negotiated.format
        // Which speaker each channel is: the user's word first, else the device's own map.
        let layout = configuration.channelLayout ?? device.negotiated.channelLayout
        if case .opus = configuration.codec, format.channels > 2, layout?.vorbisOrder == nil {
            output.discard()
            throw .unusableChannelLayout(layout.map {
                "\($0) is not one of Opus's surround layouts (RFC 7845 mapping family 1); name one with --channel-map, e.g. FL,FR,FC,LFE,RL,RR, or record FLAC or WAV"
            } ?? "the device does not say which speaker each of its \(format.channels) channels is (ALSA has no channel map for it); name them with --channel-map, e.g. FL,FR,FC,LFE,RL,RR")
        }
        // The recording's start for DATE and the access log: the encoder writes its header (tags
        // included) before the first sample, so this is the last moment before capture begins.
        startTime = .now()
        let sink = OutputSink(fileDescriptor: output.fileDescriptor)
        // Each file of a split recording holds at most --max-file-time seconds (sizes its seek
        // table), and its DATE is when that file starts.
        let expectedSeconds = [configuration.durationSeconds, configuration.maxFileSeconds].compactMap { $0 }.min()
        let makeEncoder: SplittingEncoder.MakeEncoder = { [configuration, negotiated = device.negotiated] sink, start throws(EncoderError) in
            let tags = AutomaticTags(
                encoderName: configuration.encoderName,
                recordingDetails: configuration.addsDateAndCaptureTags ? (start, negotiated) : nil
            ).appended(to: configuration.codec.tags)
            return try Self.makeEncoder(codec: configuration.codec.replacingTags(with: tags), format: format, sink: sink,
                                        expectedSeconds: expectedSeconds, layout: layout)
        }
        var encoder: any AudioEncoder
        do throws(EncoderError) {
            encoder = try makeEncoder(sink, startTime)
        } catch {
            output.discard()
            throw .encoderSetup(error)
        }
        // A file output can be split (--max-file-time, SIGUSR1); standard output is one stream.
        if let naming, case .file(let path) = destination {
            let splitter = SplittingEncoder(
                output: output, path: path, encoder: encoder, naming: naming,
                framesPerFile: configuration.maxFileSeconds.map { max(1, format.frames(forSeconds: $0)) },
                bytesPerFrame: format.bytesPerFrame, makeEncoder: makeEncoder)
            self.splitter = splitter
            encoder = splitter
        } else {
            splitter = nil
        }
        let ringFrames = max(format.frames(forSeconds: configuration.ringSeconds), 4 * device.negotiated.periodFrames)
        ring = FrameRingBuffer(minimumCapacityFrames: ringFrames, bytesPerFrame: format.bytesPerFrame)
        meter = configuration.measuresLevels ? LevelMeter(format: format) : nil
        silence = configuration.padsLostTime ? SilenceSchedule() : nil
        encoderLoop = EncoderLoop(ring: ring, encoder: encoder, monitor: monitor, dataReady: dataReady,
                                  silence: silence, meter: meter,
                                  maxBytes: configuration.maxBytes, periodFrames: device.negotiated.periodFrames)
    }

    private static func makeEncoder(
        codec: CodecSettings, format: PCMFormat, sink: OutputSink, expectedSeconds: Double?, layout: ChannelLayout?
    ) throws(EncoderError) -> any AudioEncoder {
        switch codec {
        case .flac(let settings):
            try FLACEncoder(format: format, settings: settings, sink: sink, expectedSeconds: expectedSeconds, layout: layout)
        case .opus(let settings):
            try OggOpusEncoder(format: format, settings: settings, sink: sink, layout: layout)
        case .wav(let tags):
            try WAVEncoder(format: format, tags: tags, sink: sink, layout: layout)
        case .raw:
            RawPCMEncoder(format: format, sink: sink)
        }
    }

    /// What the device negotiated.
    public var negotiated: NegotiatedCapture { device.negotiated }

    /// Where the recording goes: the first file's name (strftime patterns expanded), or "stdout".
    public var outputDescription: String { output.destination.description }

    /// Frames the ring holds.
    public var ringCapacityFrames: Int { ring.capacityFrames }

    /// Starts the encoder and capture threads and gives the output file its name.
    /// Returns how the capture thread is scheduled.
    public func start() throws(RecordingError) -> ThreadScheduling {
        let loop = CaptureLoop(device: device, ring: ring, monitor: monitor, dataReady: dataReady,
                               frameLimit: configuration.frameLimit, silence: silence)
        let encoderLoop = self.encoderLoop
        do {
            encoderThread = try PosixThread(name: "hark-encode") { encoderLoop.run() }
        } catch {
            // Nothing runs yet: nothing to stop or wait for.
            output.discard()
            throw .system("\(error)")
        }
        let scheduling: ThreadScheduling
        do {
            let capture = try PosixThread(name: "hark-capture", realtimePriority: configuration.captureRealtimePriority) {
                loop.run()
            }
            scheduling = capture.scheduling
            captureThread = consume capture
        } catch {
            // The encoder thread waits for capture to finish; capture never started, so say so.
            monitor.finish(because: .stopRequested)
            dataReady.signal()
            _ = waitUntilFinished()
            output.discard()
            throw .system("\(error)")
        }
        do {
            try output.commit()
        } catch {
            monitor.requestStop()
            _ = waitUntilFinished()
            throw error
        }
        return scheduling
    }

    /// Frames captured so far (a snapshot, for status displays).
    public var framesCaptured: Int { monitor.framesCaptured.load(ordering: .relaxed) }

    /// A snapshot for a status display. Takes the level meter's window, so one caller only.
    private var progress: RecordingProgress {
        RecordingProgress(framesCaptured: framesCaptured, format: device.negotiated.format,
                          bytesWritten: encoderLoop.bytesWritten.load(ordering: .relaxed), levels: meter?.takeWindow())
    }

    /// Waits for a stop signal, the end of `-d`, a device failure, an output failure, or `tick`
    /// asking to stop; then stops capture, lets the encoder drain the ring and finish the file, and
    /// returns the summary, whose `end` says whether the recording failed.
    ///
    /// `tick` runs on this thread about every 100 ms while capture runs (for a status line and the
    /// revocation watch); returning `.permissionRevoked` stops the recording.
    /// A second signal during the drain is ignored: every remaining step is needed for a valid file.
    public func waitUntilFinished(tick: (RecordingProgress) -> RecordingEnd? = { _ in nil }) -> RecordingSummary {
        var stopSignal: Int32?
        var externalStop: RecordingEnd?
        let isWokenByTheEncoder = StopSignals.areBlocked
        if isWokenByTheEncoder { encoderLoop.waiterThread.store(UInt(pthread_self()), ordering: .releasing) }
        while !encoderLoop.isDone {
            // 100 ms: ten wake-ups a second are enough for a status line and a stop within a second.
            if let signal = StopSignals.wait(milliseconds: 100) {
                if signal == StopSignals.wake {
                    continue  // the encoder finished: `isDone` says so now
                } else if signal == StopSignals.newFile {
                    splitter?.requestSplit()
                } else if stopSignal == nil, externalStop == nil {
                    stopSignal = signal
                    monitor.requestStop()
                }
            }
            if stopSignal == nil, externalStop == nil, !monitor.isFinished,
               let stop = tick(progress) {
                externalStop = stop
                monitor.requestStop()
            }
        }
        captureThread.take()?.join()
        // The encoder thread signals this thread after marking itself done; joining it means the
        // signal was sent while this thread was alive. One that came after the loop saw `isDone`
        // is still pending here: taken, so none is left for a caller that unblocks SIGUSR2 later.
        encoderThread.take()?.join()
        if isWokenByTheEncoder { StopSignals.discardPendingWake() }
        if let splitter { splitter.synchronize() } else { output.synchronize() }

        let end: RecordingEnd
        if let failure = encoderLoop.outcome {
            end = .outputFailed(failure)
        } else if encoderLoop.sizeLimitReached.load(ordering: .relaxed) {
            end = .sizeLimitReached
        } else if let externalStop {
            end = externalStop
        } else if monitor.endReason == .deviceLost {
            end = .deviceLost(reason: Self.deviceFailureText(errno: monitor.deviceErrorCode))
        } else if let stopSignal {
            end = .signal(StopSignals.name(of: stopSignal))
        } else {
            end = monitor.endReason == .frameLimitReached ? .durationReached : .signal("request")
        }
        let summary = RecordingSummary(
            format: device.negotiated.format, outputs: splitter?.paths ?? [configuration.output.description],
            frames: encoderLoop.framesEncoded.load(ordering: .relaxed), bytes: encoderLoop.bytesWritten.load(ordering: .relaxed),
            overruns: monitor.overruns.load(ordering: .relaxed),
            framesLostToOverruns: monitor.framesLostToOverruns.load(ordering: .relaxed),
            padsLostTime: silence != nil, framesPadded: monitor.framesPadded.load(ordering: .relaxed),
            framesDropped: monitor.framesDropped.load(ordering: .relaxed),
            framesCaptured: monitor.framesCaptured.load(ordering: .relaxed), end: end)
        return summary
    }

    private static func deviceFailureText(errno code: Int32) -> String {
        code == ETIMEDOUT ? "the device stopped delivering audio" : String(cString: strerror(code))
    }
}

/// A snapshot of a running recording, for status displays.
public struct RecordingProgress: Sendable {
    public let framesCaptured: Int
    public let format: PCMFormat
    /// Bytes of output written so far.
    public let bytesWritten: Int
    /// Levels since the previous snapshot; nil when not measured or nothing arrived meanwhile.
    public let levels: LevelWindow?
    public var seconds: Double { format.seconds(forFrames: framesCaptured) }
}
