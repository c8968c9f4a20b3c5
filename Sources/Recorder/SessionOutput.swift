import AudioFormat
import Capture
import Encoding
import Loudness
import Realtime
import RecordPermission
import RingBuffer
#if canImport(Glibc)
import Glibc
#endif

/// An output as a session makes it before asking for consent: its file exists under a temporary
/// name (or it is standard output) and holds nothing yet.
struct CreatedOutput {
    let configuration: OutputConfiguration
    private(set) var target: OutputTarget
    /// The first file's destination: the user's path with its strftime conversions expanded (and
    /// a counter added, when a name that must be new was taken at commit).
    var destination: OutputDestination { target.destination }
    /// Names the next files of a split; nil for standard output.
    private(set) var naming: OutputNaming?
    /// Whether its first file must not replace one that is there: a recording added to the library
    /// (`OutputConfiguration.keepsExisting`), or a name with strftime conversions, which is meant
    /// to be new each time (run twice in one minute, `rec-%H%M.flac` would have replaced the first
    /// run's file and numbered the second's parts among the first's).
    let keepsExisting: Bool

    /// `waitingForReader`: told of a FIFO nobody reads yet, which is waited for (refused without it).
    init(_ configuration: OutputConfiguration, waitingForReader: ((String) -> Void)?) throws(RecordingError) {
        self.configuration = configuration
        var destination = configuration.destination
        var naming: OutputNaming?
        if case .file(let pattern) = destination {
            var fileNaming = OutputNaming(pattern: pattern)
            let path = fileNaming.next(at: time(nil))
            // Only a regular file can be split into files: a FIFO or a device is written in place.
            if configuration.maxFileSeconds != nil, OutputTarget.isWrittenInPlace(path) { throw .cannotSplit(path: path) }
            destination = .file(path: path)
            naming = fileNaming
        }
        self.naming = naming
        keepsExisting = configuration.keepsExisting || naming?.hasTimeConversions == true
        target = try OutputTarget(destination, keepsExisting: keepsExisting, waitingForReader: waitingForReader)
    }

    /// Names the file again for `time` (seconds since the epoch), the recording's start: a name
    /// with strftime conversions was expanded when the output was made, before the consent prompt
    /// and the device's opening, which can take seconds. The file made then is given up for one
    /// made under the new name; nothing changes when the name is the same, or for a file written
    /// in place (a FIFO, a device) or standard output.
    /// A name that cannot be made (a pattern whose folder part has moved on to a folder that does
    /// not exist, or a FIFO nobody reads) keeps the first: the user has answered the prompt by now,
    /// and every output was checked before anyone was asked.
    mutating func nameAgain(at time: Int) {
        guard var renaming = naming.map({ OutputNaming(pattern: $0.pattern) }), renaming.hasTimeConversions,
              target.isUncommittedFile, case .file(let old) = target.destination else { return }
        let name = renaming.next(at: time)
        guard name != old, !(configuration.maxFileSeconds != nil && OutputTarget.isWrittenInPlace(name)),
              let renamed = try? OutputTarget(.file(path: name), keepsExisting: keepsExisting) else { return }
        target.discard()
        target = renamed
        naming = renaming
    }
}

/// One output of a running recording: its codec (behind a splitter for a file), the lane of the
/// capture that feeds it, and the encoder loop and thread that drain the lane into it.
final class SessionOutput {
    let configuration: OutputConfiguration
    let target: OutputTarget
    let destination: OutputDestination
    let lane: CaptureLane
    let loop: EncoderLoop
    /// Splits a regular file output into consecutive files; nil for standard output, a FIFO or a
    /// device (one stream each).
    let splitter: SplittingEncoder?
    var thread: PosixThread?
    /// Whether its files hold room for the clock's stamps (`ClockStamp`).
    let stampsClock: Bool
    /// Whether it writes regular files, which a split makes anew; a FIFO or a device named by -o
    /// is one stream, as stdout is: a sound-activated recording's segments go into it back to
    /// back, SIGUSR1 leaves it alone, and `--max-file-time` for it is refused.
    let writesRegularFiles: Bool
    /// The loudness of each of its files.
    let loudness: LoudnessLedger
    /// Sound activation's drain; nil when every frame is recorded.
    let soundGate: SoundGatedDrain?
    /// Whether the output's first file waits for the first sound (a sound-activated file output).
    let startsOnSound: Bool
    /// Whether its first file is named with its first audio, replacing a file of that name: a
    /// regular file's whose name need not be new (`CreatedOutput.keepsExisting`).
    let namesAtFirstAudio: Bool

    /// Sets up the codec for `created`, writing its header (tags included) to the output.
    init(_ created: CreatedOutput, recording: RecordingConfiguration, negotiated: NegotiatedCapture,
         layout: ChannelLayout?, startTime: WallClockTime, ring: FrameRingBuffer, monitor: CaptureMonitor,
         meter: MeterShare?) throws(EncoderError) {
        configuration = created.configuration
        target = created.target
        destination = created.destination
        let format = negotiated.format
        let codec = configuration.codec
        // Each file of a split recording holds at most --max-file-time seconds (sizes its seek
        // table), and its DATE is when that file starts.
        let expectedSeconds = [recording.durationSeconds, configuration.maxFileSeconds].compactMap { $0 }.min()
        let addsDetails = recording.addsDateAndCaptureTags
        // Files get the first sample's time and the clock's drift once the recording ends
        // (`ClockStamp`): room for them is made now. A stream on stdout cannot be written over.
        // Only a regular file: a FIFO or a device named by -o (/dev/stdout on a pipe) cannot be
        // written over, as stdout cannot, and would keep the placeholders.
        let isRewritableFile: Bool
        if case .file = created.destination, created.target.isRegularFile { isRewritableFile = true } else { isRewritableFile = false }
        let stampsClock = addsDetails && isRewritableFile
        self.stampsClock = stampsClock
        writesRegularFiles = isRewritableFile
        // Each file's loudness is measured as its audio passes (`LoudnessLedger`), and a file gets
        // it in its tags (or WAV's bext) when the recording ends, over room made now.
        // EBU R128's K-weighting is not defined below 3400 Hz: no measurement and no placeholders
        // there, as with --no-loudness.
        let measuresLoudness = recording.measuresLoudness && LoudnessMeter.sampleRates.contains(format.sampleRate)
        let loudness = LoudnessLedger(format: format, layout: layout, codec: configuration.codec)
        self.loudness = loudness
        // WAV's bext chunk carries the clock's fields and the loudness: a file gets it when either
        // is written there, so --no-auto-tags keeps a WAV's loudness as it keeps FLAC's and
        // Opus's gain tags (its date and time fields then stay empty).
        let broadcastExtension = stampsClock || (isRewritableFile && measuresLoudness)
        let makeCodec: SplittingEncoder.MakeEncoder = { [encoderName = configuration.encoderName] sink, start, firstFrame throws(EncoderError) in
            var automatic = AutomaticTags(encoderName: encoderName, recordingDetails: addsDetails ? (start, negotiated) : nil)
            automatic.reservesClockTags = stampsClock
            automatic.firstSampleNumber = firstFrame
            automatic.loudnessPlaceholders = isRewritableFile && measuresLoudness ? LoudnessStamp.placeholders(for: codec) : []
            let tags = automatic.appended(to: codec.tags)
            return try Self.makeEncoder(codec: codec.replacingTags(with: tags), format: format, sink: sink,
                                        expectedSeconds: expectedSeconds, layout: layout, broadcastExtension: broadcastExtension)
        }
        let makeEncoder: SplittingEncoder.MakeEncoder = measuresLoudness ? { sink, start, firstFrame throws(EncoderError) in
            loudness.measuring(try makeCodec(sink, start, firstFrame))
        } : makeCodec
        // A sound-activated file output has no file until the first sound: the codec made here
        // only checks its settings (so a bad one fails now, as always), into the uncommitted file
        // that showed the directory writable; that file is never named (a hidden one is removed;
        // one without a name is freed when the splitter lets go of it), so an armed hark (even a
        // killed one) leaves nothing behind, and the first segment makes its file afresh, named
        // and dated when it starts. A FIFO or a device is written in place, as without sound
        // activation: it gets its stream's header now and the segments back to back.
        let startsOnSound = recording.soundActivation != nil && created.naming != nil && target.isUncommittedFile
        var encoder = try (startsOnSound ? makeCodec : makeEncoder)(OutputSink(fileDescriptor: target.fileDescriptor), startTime, 0)
        if startsOnSound {
            try encoder.finish()
            target.discard()
        } else {
            // Room for the first second of audio (at most 1 MiB, or the size limit), set aside
            // before the file replaces anything: a disk too full for it fails the output now, as
            // a header that cannot be written does, and an existing file of that name stays. A
            // recording shorter than that second (-d 0.3) needs only room for itself: a disk with
            // room for the whole recording refused it as full.
            let bytesPerFrame = EncoderLoop.bytesPerFrameBound(bytesPerFrame: format.bytesPerFrame, encoder: encoder)
            let firstFrames = Double(format.sampleRate) * min(1, expectedSeconds ?? 1)
            // (`--max-size` counts the header too.)
            let roomAtStart = min(Int((firstFrames * bytesPerFrame).rounded(.up)), 1 << 20,
                                  configuration.maxBytes.map { max(0, $0 - encoder.bytesWritten) } ?? .max)
            let error = target.setAsideRoom(bytes: roomAtStart, after: encoder.bytesWritten)
            if error != 0 { throw .writeFailed(errno: error) }
        }
        self.startsOnSound = startsOnSound
        namesAtFirstAudio = !startsOnSound && !created.keepsExisting && target.isUncommittedFile
        // A regular file can be split (--max-file-time, SIGUSR1, a sound-activated recording's
        // segments); standard output is one stream, and so is a FIFO or a device written in place
        // (a split would have made a regular file beside it: `/dev/null-2`).
        let splits: SplitSchedule?
        if let naming = created.naming, case .file = destination, writesRegularFiles {
            let schedule = SplitSchedule()
            splits = schedule
            let splitter = SplittingEncoder(
                output: target, encoder: startsOnSound ? nil : encoder, boundsOf: encoder, naming: naming, splits: schedule,
                framesPerFile: configuration.maxFileSeconds.map { max(1, format.frames(forSeconds: $0)) },
                bytesPerFrame: format.bytesPerFrame, firstFileKeepsExisting: created.keepsExisting, makeEncoder: makeEncoder)
            splitter.timeOfFrame = { [monitor, rate = format.sampleRate] frame in
                CaptureClock.firstSampleTime(monitor)?.advanced(by: Double(frame) / Double(rate))
            }
            self.splitter = splitter
            encoder = splitter
        } else {
            splitter = nil
            splits = nil
        }
        // A regular file takes audio in batches of half a second (four of the default 125 ms
        // periods), or a period where that is longer: nobody waits for it, and each wake-up costs
        // CPU with cold caches (a paced raw recording's encoder thread: 6.5–7.1 ms per 20 s at four
        // a second, 3.7–3.9 at two, about 75 µs a wake-up; 2026-11-25). A SIGKILL still costs under a second (WAV's header follows
        // every half second, `WAVEncoder`). A pipe or device gets every period, as its reader waits
        // for it.
        let batchFrames = max(negotiated.periodFrames, format.sampleRate / 2)
        lane = CaptureLane(ring: ring, padsLostTime: recording.padsLostTime,
                           wakeFrames: target.isRegularFile ? min(batchFrames, ring.capacityFrames / 2) : 1, splits: splits)
        let fileSplitter = splitter
        let streamName = created.destination.description
        let soundGate = recording.soundActivation.map {
            SoundGatedDrain($0, format: format, splitter: fileSplitter, streamName: streamName, recordingStart: startTime, monitor: monitor)
        }
        if target.isPipeOrSocket { soundGate?.readerWatch = target.fileDescriptor }
        self.soundGate = soundGate
        loop = EncoderLoop(lane: lane, encoder: encoder, monitor: monitor, meter: meter,
                           maxBytes: configuration.maxBytes, periodFrames: negotiated.periodFrames, soundGate: soundGate)
    }

    private static func makeEncoder(
        codec: CodecSettings, format: PCMFormat, sink: OutputSink, expectedSeconds: Double?, layout: ChannelLayout?,
        broadcastExtension: Bool
    ) throws(EncoderError) -> any AudioEncoder {
        switch codec {
        case .flac(let settings):
            try FLACEncoder(format: format, settings: settings, sink: sink, expectedSeconds: expectedSeconds, layout: layout)
        case .opus(let settings):
            try OggOpusEncoder(format: format, settings: settings, sink: sink, layout: layout)
        case .wav(let tags):
            try WAVEncoder(format: format, tags: tags, sink: sink, layout: layout, broadcastExtension: broadcastExtension)
        case .raw:
            RawPCMEncoder(format: format, sink: sink)
        }
    }

    /// Starts the encoder thread of the output at `position` (0 for the first `-o`).
    func start(position: Int) throws(ThreadStartError) {
        let loop = self.loop
        #if DEBUG
        let delay = Self.debugStartDelayMilliseconds(position: position)
        thread = try PosixThread(name: "hark-encode") {
            if delay > 0 { MonotonicClock.sleep(nanoseconds: delay * 1_000_000) }
            loop.run()
        }
        #else
        thread = try PosixThread(name: "hark-encode") { loop.run() }
        #endif
    }

    #if DEBUG
    /// Debug builds only: an encoder that falls behind at will (a disk that stalls, a thread
    /// descheduled on a loaded machine), so a test finds seconds in its ring at the first drain or
    /// makes one output's ring overflow. `HARK_DEBUG_ENCODER_START_DELAY_MS` is one delay for every
    /// output, or one per output separated by commas (`0,2000`: the second output's alone).
    static func debugStartDelayMilliseconds(position: Int) -> Int {
        guard let value = getenv("HARK_DEBUG_ENCODER_START_DELAY_MS") else { return 0 }
        let delays = String(cString: value).split(separator: ",").map { Int($0) ?? 0 }
        return delays.count == 1 ? delays[0] : position < delays.count ? delays[position] : 0
    }
    #endif

    /// Waits for the encoder thread, then for every file to be on storage.
    func joinAndSynchronize() {
        thread.take()?.join()
        // No audio came for it, so its file was never named (`SplittingEncoder`): a file of that
        // name stays as it was, and what this recording made is given back.
        if isUnwritten {
            target.discard()
            return
        }
        if let splitter { splitter.synchronize() } else { target.synchronize() }
    }

    /// Writes the first sample's time and the clock's drift, and each file's loudness, into each
    /// of its files, over the room made for them. Call once the encoder thread has finished.
    /// Returns the files that are not where they were written (`FinishedFile.Whereabouts`).
    func stampFiles(clock: CaptureClock?, sampleRate: Int) -> [AstrayFile] {
        guard case .file(let path) = destination else { return [] }
        // The last (or only) file through the descriptor still open on it, wherever it went;
        // earlier parts, closed, by their names, only where these still lead to them.
        let files: [(path: String, startFrame: Int, reach: FinishedFile.Reach)]
        if let splitter {
            files = splitter.paths.indices.map { index in
                let byName = FinishedFile.Reach.name(splitter.paths[index], splitter.fileIdentities[index])
                let isLast = index == splitter.paths.count - 1
                let reach = isLast ? splitter.lastFileDescriptor.map { .descriptor($0) } ?? byName : byName
                return (splitter.paths[index], splitter.fileStartFrames[index], reach)
            }
        } else {
            files = [(path, 0, .descriptor(target.fileDescriptor))]
        }
        let codec = configuration.codec
        var astray: [AstrayFile] = []
        for (index, (file, startFrame, reach)) in files.enumerated() {
            var edits: [(inout HeaderRoom) -> Bool] = []
            if stampsClock, let clock {
                edits.append(ClockStamp(clock: clock, fileStartFrame: startFrame, sampleRate: sampleRate).edit(for: codec))
            }
            if index < loudness.meters.count, let meter = loudness.meters[index] {
                edits.append(LoudnessStamp(measurement: meter.measurement).edit(for: codec))
            }
            let stampsHeader = !edits.isEmpty && { if case .raw = codec { false } else { true } }()
            let (descriptor, whereabouts) = FinishedFile.reopen(reach, path: file, writing: stampsHeader)
            if whereabouts != .inPlace {
                astray.append(AstrayFile(path: file, whereabouts: whereabouts, missedStamps: stampsHeader && descriptor == nil))
            }
            guard let descriptor else { continue }
            HeaderPatch.apply(to: descriptor, codec: codec, edits: edits)
            close(descriptor)
        }
        return astray
    }

    /// Whether its file got no audio and was never named. Valid once its loop is done.
    var isUnwritten: Bool { splitter?.awaitsFirstAudio == true }

    /// What this output holds. Valid once its loop is done.
    var summary: OutputSummary {
        let frames = loop.framesEncoded.load(ordering: .relaxed)
        // An output that failed on its first write holds no audio, whatever was measured on the way.
        return OutputSummary(
            paths: splitter?.paths ?? [destination.description], unwrittenPath: isUnwritten ? destination.description : nil,
            codec: configuration.codec.name,
            segments: soundGate?.segmentsStarted.load(ordering: .relaxed), loudness: frames > 0 ? loudness.measurement : nil,
            frames: frames, bytes: loop.bytesWritten.load(ordering: .relaxed),
            framesDropped: lane.framesDropped.load(ordering: .relaxed),
            framesDroppedPadded: lane.framesDroppedPadded.load(ordering: .relaxed), failure: loop.outcome,
            reachedSizeLimit: loop.sizeLimitReached.load(ordering: .relaxed))
    }
}
