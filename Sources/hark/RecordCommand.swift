import ArgumentParser
import AudioFormat
import Capture
import Encoding
import Loudness
import RecordPermission
import Realtime
import Recorder
#if canImport(Glibc)
import Glibc
#endif

/// `hark record`: capture from a sound-server source or an ALSA device into FLAC, Ogg Opus, WAV or raw files, or stdout.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        // Read only when `record` is parsed on its own (Hark.parseCommand): its usage lines then
        // still say `hark record`, and the root's completion-script probes are skipped.
        _superCommandName: "hark",
        abstract: "Record from a sound-server source or an ALSA capture device until Ctrl-C, SIGTERM, SIGHUP, SIGQUIT or the end of -d.",
        discussion: """
            The codec follows the output's extension (.flac, .opus, .ogg, .wav, .raw, .pcm); --format overrides it. \
            With -o -, the stream (FLAC unless --format says otherwise; raw with --speech) goes to stdout and \
            nothing else does. On stop, hark drains everything captured, finishes the file (FLAC: STREAMINFO \
            with total samples and MD5; Opus: the last page with end trimming and EOS; WAV: the exact sizes, \
            which it also rewrites after every half second of audio, so a killed hark leaves a valid file) and \
            prints a summary on stderr: one line, or with several -o a line for the capture and one per output.

            Exit codes: 0 normal stop (also --max-size reached, or --stop-after's silence); 64 invalid usage; 69 capture device \
            missing, unavailable or refusing the parameters; 70 encoder set-up failed; 71 system error; 73 \
            output or recordings library folder cannot be created; 74 I/O error while recording or writing \
            the header (disk full, reader gone, device lost; with several -o, one output failed while the \
            others went on), file finalized as far as possible; 77 microphone, system-audio or recordings-library access denied, \
            restricted (by the administrator or the desktop's microphone switch) or undecided with no \
            terminal, or access revoked while recording.
            """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file, or - for stdout. Without -o, a new file in your recordings library (the music folder's Recordings, or ~/Recordings), which hark asks once to be allowed to add to. Give -o again for more outputs of the same capture (one consent, one access-log entry), each followed by its own --format, codec options, --max-size and --max-file-time; an output that fails ends alone, finalized, while the others go on (exit 74).", valueName: "path"),
            completion: .file())
    var output: [String] = []

    @Option(help: ArgumentHelp("Codec: flac, opus, wav (RF64 past 4 GiB) or raw (the samples alone). Default: from the output's extension (.flac, .opus, .ogg, .wav, .raw, .pcm); flac for stdout (raw with --speech).",
                               valueName: "codec"))
    var format: OutputFormat?

    @Option(name: [.customShort("d"), .customLong("duration")], parsing: .unconditional,
            help: ArgumentHelp("Stop after this long: seconds (decimals allowed), or with a unit, as the other durations (500ms, 90s, 10m, 1.5h).",
                               valueName: "duration"))
    var durationArgument: DurationArgument?

    /// `-d` in seconds.
    var duration: Double? { durationArgument?.seconds }

    @Option(name: .customLong("ring-seconds"), parsing: .unconditional,
            help: ArgumentHelp("Audio the ring between capture and encoder holds, 0.05–60 s (rounded up to a power of two frames, at least four periods). Frames are dropped, and counted, only when it is full.",
                               valueName: "seconds"))
    var ringSeconds = RecordingConfiguration.defaultRingSeconds

    @OptionGroup(title: "Capture") var capture: CaptureOptions
    @OptionGroup(title: "FLAC") var flac: FLACOptions
    @OptionGroup(title: "Opus") var opus: OpusOptions
    @OptionGroup(title: "Tags") var tags: TagOptions
    @OptionGroup(title: "Limits and splitting") var limits: LimitOptions
    @OptionGroup(title: "Sound activation") var sound: SoundOptions

    @Flag(name: .shortAndLong, help: "Print what the device negotiated and how the capture thread runs.")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if let durationArgument {
            let duration = durationArgument.seconds
            guard duration.isFinite, duration > 0 else {
                throw ValidationError("duration must be a positive number of seconds")
            }
            guard duration <= 366 * 86_400 else { throw ValidationError("duration \(durationArgument.text) is longer than a year") }
            guard Int((duration * Double(capture.rate)).rounded()) >= 1 else {
                throw ValidationError("duration \(durationArgument.text) is shorter than one sample at \(capture.rate) Hz")
            }
        }
        guard ringSeconds.isFinite, (0.05...60).contains(ringSeconds) else {
            throw ValidationError("ring size \(ringSeconds) s is outside 0.05–60")
        }
        guard !(verbose && quiet) else { throw ValidationError("--verbose and --quiet cannot be used together") }
        // Standard output carries one stream however it is named (-, /dev/stdout, /dev/fd/1).
        let standardOutputs = output.filter(OutputRequest.namesStandardOutput)
        if standardOutputs.count > 1 {
            let spelled = standardOutputs.map { $0 == "-" ? "-o -" : "-o '\($0)'" }
            throw ValidationError(spelled[0] == spelled[1] ? "\(spelled[1]) is given twice; stdout can carry one stream"
                                  : "\(spelled[1]) is stdout, as \(spelled[0]) is; stdout can carry one stream")
        }
        guard standardOutputs.isEmpty || isatty(STDOUT_FILENO) == 0 else {
            throw ValidationError("stdout is a terminal; redirect it to a file or a program, or use -o FILE")
        }
        if let messages = output.first(where: OutputPath.namesStandardError) {
            throw ValidationError("-o '\(messages)' is stderr, where hark writes its messages; use -o - for stdout, or a file")
        }
        // One file however it is spelled (x.flac, ./x.flac, a symbolic link to x.flac).
        let paths = output.filter { !OutputRequest.namesStandardOutput($0) }
        let files = paths.map(OutputPath.identity)
        for (index, file) in files.enumerated() {
            guard let earlier = files[..<index].firstIndex(of: file) else { continue }
            if paths[earlier] == paths[index] {
                throw ValidationError("-o '\(paths[index])' is given twice; give each output its own file")
            }
            throw ValidationError("-o '\(paths[index])' is the same file as -o '\(paths[earlier])'; give each output its own file")
        }
        try firstOutput.validate(speech: capture.speech, isOnlyOutput: output.count <= 1)
    }

    /// The first output: the first `-o` (or the library without one) and the output options
    /// swift-argument-parser gave this command.
    private var firstOutput: OutputRequest {
        OutputRequest(path: output.first, format: format, flac: flac, opus: opus, limits: limits)
    }

    /// Every output, in order: the first, then one per later `-o` with its own options.
    private func outputRequests(later: [OutputOptions]) throws -> [OutputRequest] {
        guard later.count == max(0, output.count - 1) else {
            throw ValidationError("cannot tell which options belong to which -o; write each output as -o PATH followed by its options")
        }
        let requests = [firstOutput] + zip(output.dropFirst(), later).map { path, options in
            OutputRequest(path: path, format: options.format, flac: options.flac, opus: options.opus, limits: options.limits)
        }
        for request in requests.dropFirst() { try request.validate(speech: capture.speech, isOnlyOutput: false) }
        // Tags go to every output that carries them; an output of raw samples alone has no room.
        if let option = tags.firstGiven, try requests.allSatisfy({ try $0.resolvedFormat(speech: capture.speech) == .raw }) {
            throw ValidationError("\(option): raw output is the samples alone and has no tags; record WAV, FLAC or Opus to keep them")
        }
        // A layout the user named that Opus cannot carry needs no device to be found: said before
        // consent is asked for (until 2026-11-29 only once the device was open).
        if let named = capture.channelLayout, let refusal = RecordingError.opusRefusal(ofNamed: named),
           try requests.contains(where: { try $0.resolvedFormat(speech: capture.speech) == .opus }) {
            throw CommandFailure(message: refusal.description, exitCode: refusal.exitCode)
        }
        for path in requests.compactMap(\.path) {
            if let stream = ProcessStart.closedStandardStream(named: path) {
                throw CommandFailure(message: "cannot create '\(path)': standard \(stream) is closed", exitCode: ExitStatus.cannotCreate)
            }
            if let descriptor = ProcessStart.closedDescriptor(named: path) {
                throw CommandFailure(message: "cannot create '\(path)': descriptor \(descriptor) is not open", exitCode: ExitStatus.cannotCreate)
            }
        }
        return requests
    }

    func run() throws {
        try run(laterOutputs: [])
    }

    /// Records to the first output and to `laterOutputs`, the options of each later `-o` (see
    /// `OutputArguments`).
    func run(laterOutputs: [OutputOptions]) throws {
        let requests = try outputRequests(later: laterOutputs)
        // main() has blocked the stop signals already; again here (idempotent) for callers that run
        // this command directly, before any thread exists, so every thread inherits the mask.
        StopSignals.block()
        // Before the first connection to the sound server, which looking the device up may make.
        StreamIdentity.announce(appName: HarkManifest.manifest.displayName, appIdentifier: HarkManifest.manifest.appIdentifier)
        // The desktop switch's helper loads GIO while the device name is resolved.
        DesktopPrivacySwitch.shared.prepare()
        let pcm = capture.format
        // Before consent: a name that fits no device, or several sources, is the user's to fix.
        let choice = try DeviceChoice.resolve(capture.device)
        let device = choice.label
        var request = capture.request
        request.device = choice.alsaName
        request.route = choice.route
        request.channelLayout = capture.channelLayout  // the recording's layout, and what the sound server delivers
        var streamTags = try tags.parsed()
        if let source = choice.soundServerSource, !tags.leavesOutDateAndCapture, !streamTags.contains(key: "HARK_SOURCE") {
            // HARK_CAPTURE's device field names the source (pulse:DEVICE=name); this says which it is.
            _ = streamTags.add("HARK_SOURCE", source.description)
        }
        // A monitor source (what the system plays) needs the system-audio grant, not the microphone's.
        let media: MediaType = choice.resource == .systemAudio ? .systemAudio : .audio
        // A device access already refused is said before the library is asked about: a Yes there
        // would make a folder and store a decision for a recording that cannot happen.
        if requests.contains(where: { $0.path == nil }), case .refused(let refusal) = HarkManifest.gate.existingGrant(for: media),
           refusal.kind != .notDetermined {
            throw CommandFailure(message: refusal.message, exitCode: ExitStatus.noPermission)
        }
        let savesToLibrary = requests.contains { $0.path == nil }
        var outputs: [OutputConfiguration] = []
        // Library folders made for this recording are removed again if it never starts.
        var libraryNames: [LibraryName] = []
        var started = false
        defer { if !started { libraryNames.forEach { $0.withdraw() } } }
        for output in requests {
            let destination: OutputDestination
            switch output.path {
            case _ where output.isStandardOutput: destination = .standardOutput
            case let path?: destination = .file(path: path)
            case nil:
                let name = try libraryPath(extension: output.resolvedFormat(speech: capture.speech).fileExtension)
                libraryNames.append(name)
                destination = .file(path: name.path)
            }
            var configured = try output.configuration(destination: destination, speech: capture.speech, tags: streamTags)
            if output.path == nil { configured.keepsExisting = true }
            outputs.append(configured)
        }
        var configuration = RecordingConfiguration(
            capture: request, outputs: outputs, durationSeconds: duration, ringSeconds: ringSeconds,
            addsDateAndCaptureTags: !tags.leavesOutDateAndCapture, padsLostTime: capture.padOverruns,
            measuresLevels: !quiet && isatty(STDERR_FILENO) == 1,
            soundActivation: sound.activation)
        configuration.measuresLoudness = !tags.noLoudness

        let gate = HarkManifest.gate
        let recordingID = RecordingStart.newID()
        // Before consent: a deny or reset while the device opens must still stop the recording.
        var watch = PermissionWatch(gate: gate, resource: choice.resource)
        let session: RecordingSession
        let scheduling: String
        do {
            // Consent is asked for here: after the arguments and the output are known to be good,
            // right before the device is opened.
            session = try RecordingSession(configuration, soundServer: choice.soundServer, waitingForReader: { [quiet] path in
                if !quiet { Console.notice("waiting for a program to open '\(path)' for reading (Ctrl-C stops)") }
            }) { gate.requestAccess(for: media) }
            watch.startsFrom(session.grant)
            // A desktop switch that cannot be read does not restrict (a broken install must not
            // lock every user out), but it is said, even with -q: its silence is not the switch on.
            if choice.resource == .microphone, case .unreadable(let reason) = watch.desktopSwitchAtStart() {
                Console.notice("warning: the desktop's microphone switch cannot be read (\(reason)); recording without it")
            }
            // The access log learns of every file a split starts, so an unfinished recording's
            // last file is known too (`hark repair --unfinished`).
            session.whenFileStarts { path in try? AccessLog().appendEvent(.file(absolutePath(path)), recordingID: recordingID) }
            // A file that replaces one is the recording's only once named, with its first audio:
            // until then `hark repair --unfinished` must leave the file at that path alone.
            session.whenFirstFileIsNamed { path in try? AccessLog().appendEvent(.named(absolutePath(path)), recordingID: recordingID) }
            // A sound-activated recording logs each segment as it ends, beside its own entry.
            let segmentEntry = SegmentLogEntry(recordingID: recordingID, device: device, format: pcm,
                                               grant: session.grant, codecs: outputs.map(\.codec.name),
                                               savedToLibrary: savesToLibrary)
            session.whenSegmentEnds { segment in segmentEntry.append(segment) }
            scheduling = try session.start().description
            started = true
        } catch {
            throw CommandFailure(message: error.description, exitCode: error.exitCode)
        }
        // The access log learns of the recording now, so one that never ends (SIGKILL, a power cut)
        // is still known to `hark repair --unfinished`; its entry at the end carries the same id.
        let recordingStart = RecordingStart(id: recordingID, outputs: session.outputFiles.map(absolutePath),
                                            namedAtFirstAudio: session.outputFilesNamedAtFirstAudio.map(absolutePath), device: device,
                                            start: session.startTime, waitsForSound: configuration.soundActivation != nil)
        do throws(PermissionChangeError) {
            try AccessLog().appendStart(recordingStart)
        } catch {
            // Said now, not only when the recording ends: this recording will not be in the log.
            Console.error("warning: \(error.message); this recording is not in the access log")
        }
        if !quiet { UnfinishedNotice.announce(except: recordingStart.id) }
        if verbose {
            let fromServer = if case .soundServer = request.route { true } else { false }
            let route = fromServer ? " (the sound server's own stream)" : ""
            // Which speaker each channel is taken to be, and on whose word.
            let speakers = session.channelLayout.map { layout in
                let source = capture.channelLayout != nil ? "--channel-map" : fromServer ? "the sound server's channel map" : "the device's channel map"
                return "; speakers \(layout) (\(source))"
            } ?? ""
            Console.notice("device '\(device)'\(route): \(session.negotiated)\(speakers)")
            Console.notice("capture thread: \(scheduling); ring: \(session.ringCapacityFrames) frames "
                + "(\(SecondsText.format(pcm.seconds(forFrames: session.ringCapacityFrames))) s)\(outputs.count > 1 ? " per output" : ""); "
                + "\(Set(outputs.map(\.encoderName)).sorted().joined(separator: ", ")); "
                + "consent: \(session.grant.consent.rawValue)")
        }
        if !quiet {
            let until = duration.map { "for \(SecondsText.format($0)) s" } ?? "until Ctrl-C"
            if let activation = configuration.soundActivation {
                Console.notice("◌ armed on '\(device)' (\(pcm)) \(until): recording to \(session.outputDescription) "
                    + activation.plan(splitsIntoFiles: session.splitsIntoFiles))
            } else {
                Console.notice("● recording from '\(device)' (\(pcm)) to \(session.outputDescription) \(until)")
            }
        }

        var statusLine = StatusLine(device: device, quiet: quiet)
        let pluginStream = PluginStreamWatch(choice: choice)
        // The session's thread sleeps until something happens (#16): a signal, the encoders
        // finishing, a change of the permission files or the desktop switch (the watch's
        // descriptors). It wakes on a timer only for a status line (10 Hz), or twice a second where
        // no change notification exists (which still stops a revoked recording within a second) or
        // where the plugin's stream must be followed (`PluginStreamWatch`).
        let summary = session.waitUntilFinished(tickMilliseconds: statusLine.isEnabled ? 100 : nil) { progress in
            statusLine.update(progress)
            var revoked: RecordingEnd? = watch.isRevoked(consent: session.grant.consent)
                ? .permissionRevoked(because: watch.revocation ?? "access was revoked") : nil
            if revoked == nil, let moved = pluginStream?.revocation() { revoked = .permissionRevoked(because: moved) }
            for warning in [watch.takeWarning(), pluginStream?.takeWarning()].compactMap({ $0 }) {
                // Even with -q, as at the start: a watch that cannot see is not one that saw nothing.
                statusLine.clear()
                Console.notice(warning)
            }
            return revoked
        } watching: {
            watch.wakeDescriptors
        } pollMilliseconds: {
            watch.needsPolling || pluginStream != nil ? 500 : nil
        }
        statusLine.clear()
        logAccess(summary, grant: session.grant, started: session.startTime, device: device, recordingID: recordingStart.id,
                  savedToLibrary: savesToLibrary)
        if verbose {
            // What the drain did, so a stop that lost the ring's contents would show.
            Console.notice("ring drained: \(summary.framesCaptured) frames captured, \(summary.frames) encoded")
            let latencySteps = session.sourceLatencySteps
            if latencySteps > 0 {
                Console.notice("the source's latency grew \(latencySteps == 1 ? "once" : "\(latencySteps) times") in the recording; "
                    + "its own report showed it, so it was not counted as lost audio")
            }
            if let clock = summary.clock {
                Console.notice("first sample captured at \(clock.firstSampleTime.iso8601Microseconds ?? "?") (device timestamps)"
                    + (clock.driftText.map { "; device clock \($0) against the system's" } ?? "; too short, or no clock, for the drift"))
            }
        }
        if !quiet {
            if let activation = configuration.soundActivation, summary.fullestOutput.segments == 0 {
                Console.notice("nothing rose above \(activation.levelText) in "
                    + "\(SecondsText.format(pcm.seconds(forFrames: summary.framesCaptured), alwaysMilliseconds: true)) s armed; "
                    + "no audio was written; \(summary.end)")
            } else {
                summary.lines.forEach(Console.notice)
            }
        }
        for file in summary.astrayFiles { Console.error("warning: " + file.warning) }
        var failures = summary.failureMessages
        if let last = failures.popLast() {
            failures.forEach(Console.error)
            throw CommandFailure(message: last, exitCode: summary.exitCode)
        }
    }

    /// A new file's name pattern in the recordings library (`rec-%Y%m%d-%H%M%S`), after asking
    /// (once) to be allowed to add to it.
    private func libraryPath(extension fileExtension: String) throws -> LibraryName {
        switch HarkManifest.gate.requestAccess(for: .addOnly) {
        case .granted(let grant):
            do throws(LibraryError) {
                // A pattern, expanded when each file starts: the first when the recording starts
                // (after the microphone's prompt), each part of a split or each sound-activated
                // segment for its own first sample, and never over a file that is there.
                return try RecordingsLibrary.current().newRecordingPattern(grant: grant, fileExtension: fileExtension)
            } catch {
                throw CommandFailure(message: error.message, exitCode: ExitStatus.cannotCreate)
            }
        case .refused(let refusal):
            throw CommandFailure(message: refusal.message, exitCode: ExitStatus.noPermission)
        }
    }

    /// Appends this recording to the access log. A failure is a warning: the recording is done.
    private func logAccess(_ summary: RecordingSummary, grant: CaptureGrant, started: WallClockTime, device: String, recordingID: String,
                           savedToLibrary: Bool) {
        var entry = AccessLogEntry(
            start: started, end: .now(), app: grant.manifest.appIdentifier, device: device,
            format: (["\(summary.format)"] + summary.recordedOutputs.map(\.codec)).joined(separator: ", "),
            output: summary.recordedOutputs.flatMap(\.paths).map(absolutePath).joined(separator: ", "),
            frames: summary.frames, consent: grant.consent, resource: grant.resource, ended: summary.end.logName,
            framesDropped: summary.framesDropped, overruns: summary.overruns, framesLostToOverruns: summary.framesLostToOverruns,
            framesPadded: summary.padsLostTime ? summary.framesPadded : nil, recordingID: recordingID)
        entry.framesDroppedPadded = summary.padsLostTime ? summary.framesDroppedPadded : nil
        entry.firstSample = summary.clock?.firstSampleTime
        entry.clockDriftPPM = summary.clock?.driftPPM
        // A library recording no audio came for left no file there (`hark list` has nothing to list).
        entry.savedToLibrary = savedToLibrary && !entry.output.isEmpty
        for (key, value) in summary.loudness?.logFields ?? [] { entry.loudness[key] = value }
        do throws(PermissionChangeError) {
            try AccessLog().append(entry)
        } catch {
            Console.error("warning: \(error.message)")
        }
    }
}

/// `path` absolute and spelled one way (`OutputPath.canonical`; "stdout" stays as it is), for the
/// log: `hark list` tells by it whether a file is in the library folder.
func absolutePath(_ path: String) -> String {
    path == "stdout" ? path : OutputPath.canonical(path)
}
