import ArgumentParser
import AudioFormat
import Capture
import Encoding
import RecordPermission
import Recorder
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `hark record`: capture from an ALSA device into a FLAC file or stdout.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record from an ALSA capture device until Ctrl-C, SIGTERM, SIGHUP or the end of -d.",
        discussion: """
            The codec follows the output's extension (.flac); --format overrides it. With -o -, a FLAC \
            stream goes to stdout and nothing else does. On stop, hark drains everything captured, \
            finishes the file (STREAMINFO with total samples and MD5) and prints a one-line summary on stderr.

            Exit codes: 0 normal stop; 64 invalid usage; 69 capture device missing, unavailable or refusing \
            the parameters; 70 encoder set-up failed; 71 system error; 73 output cannot be created; 74 I/O \
            error while recording (disk full, reader gone, device lost), file finalized as far as possible; \
            77 microphone access denied, restricted, undecided with no terminal, or revoked while recording.
            """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file, or - for stdout.", valueName: "path"))
    var output: String

    @Option(help: ArgumentHelp("Codec: flac. Default: from the output's extension; flac for stdout.",
                               valueName: "codec"))
    var format: OutputFormat?

    @Option(name: [.customShort("D"), .long], help: ArgumentHelp("ALSA capture device (see 'hark devices').", valueName: "name"))
    var device = "default"

    @Option(name: .shortAndLong, help: ArgumentHelp("Sample rate in Hz (1000–768000).", valueName: "hz"))
    var rate = 48_000

    @Option(name: .shortAndLong, help: ArgumentHelp("Channels (1–8).", valueName: "n"))
    var channels = 2

    @Option(name: [.customShort("f"), .customLong("sample-format")],
            help: ArgumentHelp("S16_LE, S24_LE, S32_LE or FLOAT_LE (stored as 24-bit).", valueName: "format"))
    var sampleFormat = "S16_LE"

    @Option(name: .shortAndLong, help: ArgumentHelp("Stop after this many seconds (decimals allowed).", valueName: "seconds"))
    var duration: Double?

    @Option(name: .customLong("period-time"),
            help: ArgumentHelp("Device period in microseconds (default 25000).", valueName: "µs"))
    var periodTime = CaptureRequest.defaultPeriodMicroseconds

    @Option(name: .customLong("buffer-time"),
            help: ArgumentHelp("Device buffer in microseconds (default 500000).", valueName: "µs"))
    var bufferTime = CaptureRequest.defaultBufferMicroseconds

    @Option(name: .customLong("compression-level"), help: ArgumentHelp("FLAC compression level 0–8.", valueName: "n"))
    var compressionLevel = 5

    @Flag(help: "FLAC: decode every frame while encoding and compare with the input.")
    var verify = false

    @Flag(name: .shortAndLong, help: "Print what the device negotiated and how the capture thread runs.")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        guard SampleFormat(alsaName: sampleFormat) != nil else {
            throw ValidationError("unknown sample format '\(sampleFormat)'; use S16_LE, S24_LE, S32_LE or FLOAT_LE")
        }
        guard (1_000...768_000).contains(rate) else { throw ValidationError("rate \(rate) Hz is outside 1000–768000") }
        guard (1...8).contains(channels) else { throw ValidationError("channels \(channels) is outside 1–8") }
        if let duration {
            guard duration.isFinite, duration > 0 else {
                throw ValidationError("duration must be a positive number of seconds")
            }
            guard duration <= 366 * 86_400 else { throw ValidationError("duration \(duration) s is longer than a year") }
        }
        guard (1_000...2_000_000).contains(periodTime) else {
            throw ValidationError("period time \(periodTime) µs is outside 1000–2000000")
        }
        guard bufferTime >= 2 * periodTime, bufferTime <= 10_000_000 else {
            throw ValidationError("buffer time \(bufferTime) µs must be at least twice the period time and at most 10 s")
        }
        guard FLACSettings.compressionLevels.contains(compressionLevel) else {
            throw ValidationError("compression level \(compressionLevel) is outside 0–8")
        }
        guard !(verbose && quiet) else { throw ValidationError("--verbose and --quiet cannot be used together") }
        guard !output.isEmpty else { throw ValidationError("the output path is empty; use -o - for stdout") }
        guard output != "-" || isatty(STDOUT_FILENO) == 0 else {
            throw ValidationError("stdout is a terminal; redirect it to a file or a program, or use -o FILE")
        }
        _ = try resolvedFormat()
    }

    private func resolvedFormat() throws -> OutputFormat {
        if let format { return format }
        if output == "-" { return .flac }
        guard let format = OutputFormat(pathExtensionOf: output) else {
            throw ValidationError("cannot tell the codec from '\(output)'; name it .flac or add --format flac")
        }
        return format
    }

    func run() throws {
        // Before any thread exists, so every thread inherits the blocked stop signals.
        StopSignals.block()
        let pcm = PCMFormat(sampleFormat: SampleFormat(alsaName: sampleFormat)!, channels: channels, sampleRate: rate)
        let codec: CodecSettings
        switch try resolvedFormat() {
        case .flac: codec = .flac(FLACSettings(compressionLevel: compressionLevel, verify: verify))
        }
        let configuration = RecordingConfiguration(
            capture: CaptureRequest(device: device, format: pcm, periodMicroseconds: periodTime, bufferMicroseconds: bufferTime),
            output: output == "-" ? .standardOutput : .file(path: output),
            codec: codec, durationSeconds: duration)

        let gate = HarkManifest.gate
        let session: RecordingSession
        let scheduling: String
        do {
            // Consent is asked for here: after the arguments and the output are known to be good,
            // right before the device is opened.
            session = try RecordingSession(configuration) { gate.requestAccess(for: .audio) }
            scheduling = try session.start().description
        } catch {
            throw CommandFailure(message: error.description, exitCode: error.exitCode)
        }
        let started = Date()
        if verbose {
            Console.notice("device '\(device)': \(session.negotiated)")
            Console.notice("capture thread: \(scheduling); ring: \(session.ringCapacityFrames) frames "
                + "(\(formatSeconds(pcm.seconds(forFrames: session.ringCapacityFrames))) s); libFLAC \(FLACEncoder.libraryVersion); "
                + "consent: \(session.grant.consent.rawValue)")
        }
        if !quiet {
            let until = duration.map { "for \(formatSeconds($0)) s" } ?? "until Ctrl-C"
            Console.notice("● recording from '\(device)' (\(pcm)) to \(configuration.output) \(until)")
        }

        var statusLine = StatusLine(device: device, quiet: quiet)
        var watch = PermissionWatch(gate: gate)
        var lastWatch = MonotonicSeconds.now
        let summary = session.waitUntilFinished { progress in
            statusLine.update(progress)
            // Twice a second keeps "stops within a second" with room for the drain; two lstat calls.
            guard MonotonicSeconds.now - lastWatch >= 0.5 else { return nil }
            lastWatch = MonotonicSeconds.now
            return watch.isRevoked() ? .permissionRevoked : nil
        }
        statusLine.clear()
        logAccess(summary, grant: session.grant, started: started)
        if !quiet { Console.notice(summary.description) }
        if let failure = summary.end.failureMessage {
            throw CommandFailure(message: failure, exitCode: summary.end.exitCode)
        }
    }

    /// Appends this recording to the access log. A failure is a warning: the recording is done.
    private func logAccess(_ summary: RecordingSummary, grant: MicrophoneGrant, started: Date) {
        let entry = AccessLogEntry(
            start: started, end: Date(), app: grant.manifest.appIdentifier, device: device,
            format: "\(summary.format), \(try! resolvedFormat().rawValue)", output: absolutePath(summary.output),
            frames: summary.frames, consent: grant.consent, ended: summary.end.logName)
        do throws(PermissionChangeError) {
            try AccessLog().append(entry)
        } catch {
            Console.error("warning: \(error.message)")
        }
    }
}

/// `path` made absolute against the working directory ("stdout" stays as it is), for the log.
private func absolutePath(_ path: String) -> String {
    guard path != "stdout", !path.hasPrefix("/"), let directory = getcwd(nil, 0) else { return path }
    defer { free(directory) }
    return String(cString: directory) + "/" + path
}

/// Seconds on the monotonic clock, for intervals on the session thread.
enum MonotonicSeconds {
    static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

func formatSeconds(_ seconds: Double) -> String {
    let milliseconds = Int((seconds * 1000).rounded())
    let fraction = milliseconds % 1000
    return fraction == 0 ? "\(milliseconds / 1000)" : "\(milliseconds / 1000).\(String(fraction).leftPaddedZeros(3))"
}

extension String {
    func leftPaddedZeros(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
