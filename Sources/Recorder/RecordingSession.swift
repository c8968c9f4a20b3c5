import AudioFormat
import Capture
import Encoding
import Realtime
import RecordPermission
import RingBuffer
import SoundServer
#if canImport(Glibc)
import Glibc
#endif

/// One recording: outputs → consent → device → encoders → rings → capture and encoder threads →
/// summary.
///
///     let session = try RecordingSession(configuration) {  // outputs, consent, device, encoders
///         gate.requestAccess(for: .audio)
///     }
///     let scheduling = try session.start()                 // threads run; each file is named with its first audio
///     let summary = session.waitUntilFinished { progress in nil }  // signal, -d, failure or revocation
///
/// Threads: one capture thread reads the device once per period into every output's ring (a ring
/// each, see `CaptureLane`), and each output has an encoder thread of its own (see `EncoderLoop`),
/// so a stalled or failed output costs no other output a frame. An output that fails or reaches
/// its size limit is finished at once while the others go on; the last one to end stops capture.
///
/// Call `StopSignals.block()` before creating a session, so the threads it starts inherit the
/// blocked stop signals and the session's thread can take them.
public final class RecordingSession {
    public let configuration: RecordingConfiguration
    /// Each output, in the order given (`RecordingSession+Outputs` describes them).
    let outputs: [SessionOutput]
    /// Outputs that failed while their headers were written (several outputs only), with their
    /// places among the outputs given: the summary lists them there.
    private let failedAtStart: [(position: Int, summary: OutputSummary)]
    private let device: any CaptureSource
    private let monitor = CaptureMonitor()
    private let meter: LevelMeter?
    private var captureThread: PosixThread?
    /// The consent this recording runs under.
    public let grant: CaptureGrant
    /// When the recording started (the device open, the encoders about to write their headers):
    /// the DATE tag's moment and the access log's start.
    public let startTime: WallClockTime
    /// Which speaker each channel is taken to be: `--channel-map`'s layout first, else the
    /// device's (or the sound server's) own; nil when neither says.
    public let channelLayout: ChannelLayout?

    /// Creates the outputs, asks for consent (`authorize`), opens and configures the device and
    /// sets up the encoders, in that order: an output that cannot be created fails before anyone is
    /// asked, and nobody is asked for anything that would fail anyway. On failure nothing is left
    /// behind. A sound-server recording's stream uses `soundServer`, the connection made when its
    /// source was looked up, if it is still up. An output that is a FIFO nobody reads yet is
    /// waited for, first telling `waitingForReader` its path, when one is given (it takes the
    /// stop signals while it waits, so only where no other thread waits for them; a stop ends
    /// the wait: `.stoppedWaitingForReader`); without one, such a FIFO is refused.
    public init(_ configuration: RecordingConfiguration, soundServer: SoundServerConnection? = nil,
                waitingForReader: ((String) -> Void)? = nil,
                authorize: () -> AccessResult) throws(RecordingError) {
        self.configuration = configuration
        var created: [CreatedOutput] = []
        func discardAll() { for output in created { output.target.discard() } }
        for output in configuration.outputs {
            do throws(RecordingError) {
                created.append(try CreatedOutput(output, waitingForReader: waitingForReader))
            } catch {
                discardAll()
                throw error
            }
        }
        switch authorize() {
        case .granted(let grant):
            self.grant = grant
        case .refused(let refusal):
            discardAll()
            throw .permissionRefused(refusal)
        }
        do {
            device = try Self.open(configuration.capture, grant: grant, soundServer: soundServer)
        } catch {
            discardAll()
            throw .captureDevice(error)
        }
        // The recording's start for DATE, the access log and a name's strftime conversions: the
        // consent prompt and the device's opening are behind it, and the encoders write their
        // headers (tags included) before the first sample.
        startTime = .now()
        if configuration.soundActivation == nil {
            do throws(RecordingError) {
                // A name with strftime conversions was expanded when the output was made, before
                // the prompt: it is named again for the start (a sound-activated output is named
                // when its first sound comes).
                for index in created.indices {
                    created[index].nameAgain(at: Int(startTime.secondsSinceEpoch.rounded(.down)))
                }
                // A file that must have a new name takes it now, before its splitter and the access
                // log learn it (another recorder may have taken the name meanwhile); there is no
                // old file to keep, and one that gets no audio gives the name back at the end.
                for output in created where output.keepsExisting { try output.target.commit() }
            } catch {
                discardAll()
                throw error
            }
        }
        let negotiated = device.negotiated
        let format = negotiated.format
        // Which speaker each channel is: the user's word first, else the device's own map.
        let layout = configuration.channelLayout ?? negotiated.channelLayout
        channelLayout = layout
        let hasOpusOutput = configuration.outputs.contains { if case .opus = $0.codec { true } else { false } }
        // The user's layout (checked by the command before consent too), else the device's.
        let opusRefusal: RecordingError? = if !hasOpusOutput {
            nil
        } else if let named = configuration.channelLayout {
            RecordingError.opusRefusal(ofNamed: named)
        } else if format.channels > 2 && layout?.vorbisOrder == nil {
            RecordingError.unusableOpusLayout(negotiated: negotiated)
        } else {
            nil
        }
        if let opusRefusal {
            discardAll()
            throw opusRefusal
        }
        var ringFrames = max(format.frames(forSeconds: configuration.ringSeconds), 4 * negotiated.periodFrames)
        if let activation = configuration.soundActivation {
            // An armed output keeps its pre-roll in the ring: the ring grows to hold it and still
            // leave the usual room (a second, or four periods) for the encoder to fall behind.
            ringFrames = max(ringFrames, activation.heldFrames(format) + max(format.sampleRate, 4 * negotiated.periodFrames))
        }
        // Every ring before any header is written (`SessionRings`).
        let rings: [FrameRingBuffer]
        do throws(RecordingError) {
            rings = try SessionRings.make(count: created.count, frames: ringFrames, format: format,
                                          requestedSeconds: configuration.ringSeconds)
        } catch {
            discardAll()
            throw error
        }
        meter = configuration.measuresLevels ? LevelMeter(format: format) : nil
        // The status line's levels: the first output measures them, the next one still running
        // once it ends early.
        let meterBaton = MeterBaton()
        var outputs: [SessionOutput] = []
        var failedAtStart: [(position: Int, summary: OutputSummary)] = []
        for (position, output) in created.enumerated() {
            do throws(EncoderError) {
                outputs.append(try SessionOutput(
                    output, recording: configuration, negotiated: negotiated, layout: layout, startTime: startTime,
                    ring: rings[position], monitor: monitor,
                    meter: meter.map { MeterShare(meter: $0, baton: meterBaton, output: outputs.count) }))
            } catch {
                // Writing the header failed (a full disk, a reader already gone): with several
                // outputs that output ends alone, as it would a moment later, and its file (which
                // holds no audio) is removed. A codec that refused its settings stops them all.
                guard case .writeFailed = error, created.count > 1 else {
                    discardAll()
                    throw .encoderSetup(error, output: created.count > 1 ? output.destination.description : nil)
                }
                output.target.discard()
                failedAtStart.append((position, OutputSummary(failedAtStart: output.destination.description,
                                                              codec: output.configuration.codec.name, failure: error)))
            }
        }
        if outputs.isEmpty, let first = failedAtStart.first, let failure = first.summary.failure {
            discardAll()
            throw .encoderSetup(failure, output: first.summary.output)
        }
        for output in outputs {
            let smallest = output.loop.smallestLimitHoldingAPeriod
            guard let limit = output.configuration.maxBytes, limit < smallest else { continue }
            discardAll()
            throw .sizeLimitTooSmall(output: created.count > 1 ? output.destination.description : nil,
                                     limitBytes: limit, smallestBytes: smallest)
        }
        self.outputs = outputs
        self.failedAtStart = failedAtStart
    }

    /// What the device negotiated.
    public var negotiated: NegotiatedCapture { device.negotiated }

    /// Times the source's timeline stepped by latency it added, not audio it lost (`CaptureLoop`).
    public var sourceLatencySteps: Int { monitor.latencySteps.load(ordering: .relaxed) }

    /// Starts the encoder and capture threads. Each output's file is named when its first audio
    /// comes (`SplittingEncoder`); a name that had to be new was taken when it was made.
    /// Returns how the capture thread is scheduled.
    public func start() throws(RecordingError) -> ThreadScheduling {
        let runCapture = captureThreadBody(device)
        for (position, output) in outputs.enumerated() {
            do throws(ThreadStartError) {
                try output.start(position: position)
            } catch {
                abandonStart()
                throw .system("\(error)")
            }
        }
        let scheduling: ThreadScheduling
        do {
            let capture = try PosixThread(name: "hark-capture", realtimePriority: configuration.captureRealtimePriority) {
                runCapture()
            }
            scheduling = capture.scheduling
            captureThread = consume capture
        } catch {
            abandonStart()
            throw .system("\(error)")
        }
        return scheduling
    }

    /// Capture never started: the encoder threads wait for it to finish, so say it has; a loop
    /// whose thread did not start runs here, on an empty ring. No output keeps its name.
    private func abandonStart() {
        monitor.finish(because: .stopRequested)
        for output in outputs {
            if output.thread == nil { output.loop.run() } else { output.lane.dataReady.signal() }
        }
        _ = waitUntilFinished()
        for output in outputs { output.target.discard() }
    }

    /// Frames captured so far (a snapshot, for status displays).
    public var framesCaptured: Int { monitor.framesCaptured.load(ordering: .relaxed) }

    /// A snapshot for a status display. Takes the level meter's window, so one caller only.
    private var progress: RecordingProgress {
        // Armed or recording, the segment and the level: the first output still running, as for the
        // levels (`MeterBaton`); one that ended early (its --max-size) would show its last state.
        let gate = (outputs.first { !$0.loop.isDone } ?? outputs[0]).soundGate
        let centibels = gate?.lastBlockCentibels.load(ordering: .relaxed) ?? Int.min
        return RecordingProgress(
            framesCaptured: framesCaptured, format: device.negotiated.format,
            bytesWritten: outputs.reduce(0) { $0 + $1.loop.bytesWritten.load(ordering: .relaxed) },
            levels: meter?.takeWindow(),
            sound: gate.map { gate in
                SoundProgress(isArmed: gate.isArmed.load(ordering: .relaxed),
                              segments: gate.segmentsStarted.load(ordering: .relaxed),
                              level: centibels == Int.min ? -.infinity : Double(centibels) / 100)
            })
    }

    private var allOutputsDone: Bool { outputs.allSatisfy(\.loop.isDone) }

    /// Waits for a stop signal, the end of `-d`, a device failure, every output ending, or `tick`
    /// asking to stop; then stops capture, lets each encoder drain its ring and finish its file,
    /// and returns the summary, whose `end` says whether the recording failed and whose outputs
    /// say which of them did.
    ///
    /// The thread sleeps until something happens (see `SessionWait`): a signal, the encoders
    /// finishing, a descriptor from `watching` becoming readable, or `tickMilliseconds` passing
    /// (nil: never; the default, 100 ms, suits a status line), or sooner `pollMilliseconds` (asked
    /// before each wait: a watch that can no longer be notified must start to poll). After each wake-up while capture
    /// runs, `tick` runs on this thread (a status line, the revocation watch, which must read
    /// whatever made its descriptors readable); returning `.permissionRevoked` stops the recording.
    /// `watching` is asked again before each wait, as descriptors may close.
    /// A second signal during the drain is ignored: every remaining step is needed for a valid file.
    public func waitUntilFinished(
        tickMilliseconds: Int? = 100, tick: (RecordingProgress) -> RecordingEnd? = { _ in nil },
        watching descriptors: () -> [Int32] = { [] }, pollMilliseconds: () -> Int? = { nil }
    ) -> RecordingSummary {
        var stopSignal: Int32?
        var externalStop: RecordingEnd?
        let isWokenByTheEncoder = StopSignals.areBlocked
        if isWokenByTheEncoder {
            for output in outputs { output.loop.waiterThread.store(UInt(pthread_self()), ordering: .sequentiallyConsistent) }
        }
        let waiting = SessionWait()
        while !allOutputsDone {
            // Once capture has finished nothing is left to tick for: only the encoders' wake.
            let isCapturing = !monitor.isFinished
            var timeout: Int?
            if isCapturing {
                switch (tickMilliseconds, pollMilliseconds()) {
                case (let tick?, let poll?): timeout = min(tick, poll)
                case (let tick?, nil): timeout = tick
                case (nil, let poll): timeout = poll
                }
            }
            // Without the encoders' wake (the signals not blocked) only looking again shows they are done.
            if !isWokenByTheEncoder { timeout = min(timeout ?? 100, 100) }
            let event = waiting.next(watching: isCapturing ? descriptors() : [], timeoutMilliseconds: timeout)
            if case .signal(let signal) = event {
                if signal == StopSignals.wake {
                    continue  // an encoder finished: `allOutputsDone` says whether it was the last
                } else if signal == StopSignals.newFile {
                    // Every output splits at the same frame, which the capture thread chooses
                    // (`SplitSchedule`).
                    monitor.requestSplit()
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
        // Each encoder thread signals this thread after marking itself done; joining them means
        // every signal was sent while this thread was alive. Those that came after the loop saw
        // the last one done are still pending here: taken, so none is left for a caller that
        // unblocks SIGUSR2 later (several pending wakes of one signal are one).
        for output in outputs { output.joinAndSynchronize() }
        if isWokenByTheEncoder { StopSignals.discardPendingWake() }

        let outputSummaries = outputs.map(\.summary)
        let end = RecordingEnd.decided(
            outputs: outputSummaries,
            stoppedOnSilence: outputs.map { $0.soundGate?.stoppedOnSilence.load(ordering: .relaxed) == true },
            externalStop: externalStop, stopSignal: stopSignal.map(StopSignals.name(of:)),
            captureEnd: monitor.endReason, deviceErrorCode: monitor.deviceErrorCode,
            stopAfterSeconds: configuration.soundActivation?.stopAfterSeconds)
        var everyOutputSummary = outputSummaries
        for (position, summary) in failedAtStart { everyOutputSummary.insert(summary, at: position) }  // in ascending order
        var summary = RecordingSummary(
            format: device.negotiated.format, outputs: everyOutputSummary,
            overruns: monitor.overruns.load(ordering: .relaxed),
            framesLostToOverruns: monitor.framesLostToOverruns.load(ordering: .relaxed),
            padsLostTime: configuration.padsLostTime, framesPadded: monitor.framesPadded.load(ordering: .relaxed),
            framesCaptured: monitor.framesCaptured.load(ordering: .relaxed), end: end)
        // The capture thread has been joined: its timestamps are final. The encoders have
        // finished: their files can take the stamps.
        summary.clock = CaptureClock.measure(monitor, sampleRate: device.negotiated.format.sampleRate)
        summary.astrayFiles = outputs.flatMap { $0.stampFiles(clock: summary.clock, sampleRate: device.negotiated.format.sampleRate) }
        return summary
    }

    /// Opens what `request` names: an ALSA PCM, or a record stream of the sound server's own.
    private static func open(_ request: CaptureRequest, grant: CaptureGrant,
                             soundServer: SoundServerConnection?) throws(CaptureOpenError) -> any CaptureSource {
        switch request.route {
        case .alsa: try CaptureDevice(opening: request, grant: grant)
        case .soundServer(let source): try SoundServerCapture(opening: request, source: source, grant: grant, connection: soundServer)
        }
    }

    /// The capture thread's work for this session's outputs: a loop over the source's own type,
    /// the existential opened here, once. (Opened at run time the generic loop is not specialised:
    /// its calls to the source go through the witness table, which allocates nothing, rather than
    /// through an existential box on every call.)
    private func captureThreadBody<Source: CaptureSource>(_ source: Source) -> @Sendable () -> Void {
        let loop = CaptureLoop(device: source, lanes: outputs.map(\.lane), monitor: monitor,
                               frameLimit: configuration.frameLimit)
        return { loop.run() }
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
    /// Sound activation's state; nil when every frame is recorded.
    public let sound: SoundProgress?
    public var seconds: Double { format.seconds(forFrames: framesCaptured) }
}

/// A sound-activated recording's state, for a status display.
public struct SoundProgress: Sendable, Equatable {
    /// Waiting for sound (nothing is being written).
    public let isArmed: Bool
    /// Segments started so far.
    public let segments: Int
    /// The last level block's loudest channel, in dBFS (what `--start-above` is compared with).
    public let level: Double
}
