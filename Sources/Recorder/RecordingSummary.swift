import AudioFormat
import Capture
import Encoding
import Loudness
#if canImport(Glibc)
import Glibc
#endif

/// How a recording ended. The first two are normal stops; the others are failures after which the
/// output was still finalized as far as possible.
public enum RecordingEnd: Sendable, Equatable, CustomStringConvertible {
    case signal(String)
    case durationReached
    /// The device vanished or failed (unplugged, sound server gone, stopped delivering audio).
    case deviceLost(reason: String)
    /// Writing the output failed (disk full, file too large, reader gone).
    case outputFailed(EncoderError)
    /// The user, the administrator or the desktop's switch took access away while it was recording;
    /// `because` says which ("microphone access was revoked").
    case permissionRevoked(because: String)
    /// The output reached `--max-size`.
    case sizeLimitReached
    /// Silence lasted `--stop-after` seconds after the last sound.
    case silence(seconds: Double)

    /// Why a recording ended, from how its outputs ended (`stoppedOnSilence` beside `outputs`),
    /// a stop from outside (a revocation) or a stop signal (its name), and the capture's end.
    static func decided(outputs: [OutputSummary], stoppedOnSilence: [Bool], externalStop: RecordingEnd?,
                        stopSignal: String?, captureEnd: CaptureEndReason, deviceErrorCode: Int32,
                        stopAfterSeconds: Double?) -> RecordingEnd {
        // Every output ended on its own (failed, or reached its size limit): that is why capture
        // stopped. Otherwise the outputs that ended early are reported beside the recording's end.
        let everyOutputEndedEarly = zip(outputs, stoppedOnSilence).allSatisfy { summary, silence in
            summary.failure != nil || summary.reachedSizeLimit || silence
        }
        // The recording failed only if every output did; otherwise the ones that went on say why
        // it ended (a size limit, the silence), and the failed ones are reported beside that.
        let unfailed = outputs.filter { $0.failure == nil }
        if everyOutputEndedEarly, unfailed.isEmpty, let failure = outputs.lazy.compactMap(\.failure).first {
            return .outputFailed(failure)
        } else if everyOutputEndedEarly, unfailed.allSatisfy(\.reachedSizeLimit) {
            return .sizeLimitReached
        } else if everyOutputEndedEarly, externalStop == nil, stopSignal == nil, let seconds = stopAfterSeconds {
            // Not when a signal or a revocation stopped it: the drain after a stop can complete
            // the silence, and the log must still say why the recording ended.
            return .silence(seconds: seconds)
        } else if let externalStop {
            return externalStop
        } else if captureEnd == .deviceLost {
            return .deviceLost(errno: deviceErrorCode)
        } else if let stopSignal {
            return .signal(stopSignal)
        }
        return captureEnd == .frameLimitReached ? .durationReached : .signal("request")
    }

    /// The device failed with `code` (the capture thread's errno): said as the user knows it.
    static func deviceLost(errno code: Int32) -> RecordingEnd {
        switch code {
        case ETIMEDOUT: .deviceLost(reason: "the device stopped delivering audio")
        case ESTRPIPE: .deviceLost(reason: "the device was suspended and did not resume")
        case EPIPE: .deviceLost(reason: "the device overran and could not be restarted")
        case ECONNRESET: .deviceLost(reason: "the sound server went away")
        default: .deviceLost(reason: String(cString: strerror(code)))
        }
    }

    public var description: String {
        switch self {
        case .sizeLimitReached: "size limit reached"
        case .silence(let seconds): "stopped after \(SecondsText.format(seconds)) s of silence"
        case .signal(let name): "stopped by \(name)"
        case .durationReached: "duration reached"
        case .deviceLost: "capture device lost"
        case .outputFailed: "output failed"
        case .permissionRevoked: "access revoked"
        }
    }

    /// The one-line error to print for a failure, or nil for a normal stop.
    public var failureMessage: String? {
        switch self {
        case .signal, .durationReached, .sizeLimitReached, .silence: nil
        case .deviceLost(let reason): "capture device lost: \(reason)"
        case .outputFailed(let error): error.description
        case .permissionRevoked(let because): "\(because); the recording was stopped and finalized"
        }
    }

    /// 0 for a normal stop; 74 (EX_IOERR) when the device or the output failed; 77 (EX_NOPERM)
    /// when access was revoked.
    public var exitCode: Int32 {
        switch self {
        case .signal, .durationReached, .sizeLimitReached, .silence: 0
        case .deviceLost, .outputFailed: 74
        case .permissionRevoked: 77
        }
    }

    /// Whether this end is an output's failure.
    public var isOutputFailure: Bool {
        if case .outputFailed = self { true } else { false }
    }

    /// A short name for the access log: duration, SIGINT, device lost, output failed, revoked.
    public var logName: String {
        switch self {
        case .signal(let name): name
        case .durationReached: "duration"
        case .sizeLimitReached: "size limit"
        case .silence: "silence"
        case .deviceLost: "device lost"
        case .outputFailed: "output failed"
        case .permissionRevoked: "revoked"
        }
    }
}

/// A file of a recording that was not where it was written when the recording ended.
public struct AstrayFile: Sendable, Equatable {
    public let path: String
    let whereabouts: FinishedFile.Whereabouts
    /// Whether its header could not be given what hark writes at the end (the first sample's
    /// time, the loudness), and keeps their placeholders.
    let missedStamps: Bool

    /// The warning for it.
    public var warning: String {
        let missed = missedStamps ? ": its first sample's time and loudness are not in it" : ""
        return switch whereabouts {
        case .inPlace: "'\(path)' is where it was written"
        case .moved: "'\(path)' was moved while it was recorded; it was finished where it went"
        case .nameLost: "'\(path)' was deleted or replaced by another file while it was recorded: this recording is not in it"
        case .gone: "'\(path)' was moved or deleted before the recording ended" + missed
        case .replaced: "'\(path)' now names another file, left as it is: the part written there was moved away or replaced"
            + (missedStamps ? ", without its first sample's time and loudness" : "")
        case .unopenable(let code): "'\(path)' could not be opened again when the recording ended (\(String(cString: strerror(code))))" + missed
        case .unverifiable: "'\(path)' could not be checked when it was made, so is not known again" + missed
        }
    }
}

/// What one output of a finished recording holds.
public struct OutputSummary: Sendable, Equatable {
    /// The files written, in order (one unless the output was split), or "stdout"; none when no
    /// audio came for it (see `unwrittenPath`) or, sound-activated, no sound did.
    public let paths: [String]
    /// The file it would have written, when no audio came for it: that file was never named, so
    /// a file there before is as it was.
    public let unwrittenPath: String?
    /// "flac", "opus", "wav" or "raw".
    public let codec: String
    /// Frames in the output.
    public let frames: Int
    public let bytes: Int
    /// Frames this output missed because its ring was full.
    public let framesDropped: Int
    /// Of those, the frames with silence in their place (`--pad-overruns`); part of `frames`.
    public let framesDroppedPadded: Int
    /// Why the output ended early, if writing it failed; its file was finished as far as possible
    /// (or, when it `failedAtStart`, removed).
    public let failure: EncoderError?
    /// Whether it failed while its header was written, before any audio (several outputs only):
    /// nothing of it was kept, and its path was left as it was.
    public let failedAtStart: Bool
    /// Whether it ended at `--max-size`.
    public let reachedSizeLimit: Bool
    /// Segments recorded when recording was sound-activated (`--start-above`); nil otherwise.
    public let segments: Int?
    /// Its loudness, all its files together (EBU R128); nil when it could not be measured.
    public let loudness: LoudnessMeasurement?

    public init(paths: [String], unwrittenPath: String? = nil, codec: String, segments: Int? = nil,
                loudness: LoudnessMeasurement? = nil, frames: Int,
                bytes: Int, framesDropped: Int, framesDroppedPadded: Int = 0, failure: EncoderError? = nil,
                reachedSizeLimit: Bool = false) {
        precondition(framesDroppedPadded <= framesDropped, "only dropped frames are padded")
        self.paths = paths
        self.unwrittenPath = unwrittenPath
        self.segments = segments
        self.loudness = loudness
        self.codec = codec
        self.frames = frames
        self.bytes = bytes
        self.framesDropped = framesDropped
        self.framesDroppedPadded = framesDroppedPadded
        self.failure = failure
        self.reachedSizeLimit = reachedSizeLimit
        failedAtStart = false
    }

    /// An output whose header could not be written (`failure`), at `path` ("stdout" for
    /// standard output).
    public init(failedAtStart path: String, codec: String, failure: EncoderError) {
        paths = [path]
        unwrittenPath = nil
        self.codec = codec
        segments = nil
        loudness = nil
        frames = 0
        bytes = 0
        framesDropped = 0
        framesDroppedPadded = 0
        self.failure = failure
        reachedSizeLimit = false
        failedAtStart = true
    }

    /// The paths as one text: "talk.flac", or "talk.flac, talk-2.flac" (the unwritten file's).
    public var output: String { unwrittenPath ?? paths.joined(separator: ", ") }
}

/// What a finished recording holds, for the summary on stderr: one line for one output, a line
/// for the capture and one per output for several.
public struct RecordingSummary: Sendable, Equatable, CustomStringConvertible {
    public let format: PCMFormat
    /// Each output, in the order given.
    public let outputs: [OutputSummary]
    public let overruns: Int
    /// Frames the source lost during overruns.
    public let framesLostToOverruns: Int
    /// Whether lost time was to be padded with silence (`--pad-overruns`).
    public let padsLostTime: Bool
    /// Frames of silence that stand in for lost ones (`--pad-overruns`); part of each output's
    /// frames. Equal to `framesLostToOverruns` unless a loss was found when less than its length
    /// was left of a `-d` recording: the recording then ends with the silence that fits.
    public let framesPadded: Int
    /// Lost frames for which no silence is in the file (all of them without `--pad-overruns`).
    public var framesNotPadded: Int { framesLostToOverruns - framesPadded }
    /// Frames the capture thread read or padded. Once the encoders have drained their rings, an
    /// output's `frames` equals it unless the output dropped frames it could not pad or ended early.
    public let framesCaptured: Int
    public let end: RecordingEnd
    /// The first sample's time and the device clock's drift, when the device gave timestamps.
    public var clock: CaptureClock?
    /// Files that were not where they were written when the recording ended.
    public var astrayFiles: [AstrayFile] = []

    public init(format: PCMFormat, outputs: [OutputSummary], overruns: Int, framesLostToOverruns: Int,
                padsLostTime: Bool, framesPadded: Int, framesCaptured: Int, end: RecordingEnd) {
        precondition(!outputs.isEmpty, "a recording has an output")
        self.format = format
        self.outputs = outputs
        self.overruns = overruns
        self.framesLostToOverruns = framesLostToOverruns
        self.padsLostTime = padsLostTime
        self.framesPadded = framesPadded
        self.framesCaptured = framesCaptured
        self.end = end
    }

    /// Every output's files as one text: "talk.flac", or "talk.flac, stdout".
    public var output: String { outputs.map(\.output).joined(separator: ", ") }
    /// Frames in the fullest output: the recording's length.
    public var frames: Int { outputs.map(\.frames).max() ?? 0 }
    /// Bytes written to all outputs.
    public var bytes: Int { outputs.reduce(0) { $0 + $1.bytes } }
    /// Every output that got audio: the files and streams the recording made (not one that failed
    /// at the start, nor a file no audio came for).
    public var recordedOutputs: [OutputSummary] { outputs.filter { !$0.failedAtStart && $0.unwrittenPath == nil } }
    /// The output that recorded the most frames (the first of those): every output gets the same
    /// audio, but one may end early (its --max-size, a reader gone, a full disk) or drop frames, so
    /// the recording's own figures (its loudness, its segments) are this output's.
    public var fullestOutput: OutputSummary { recordedOutputs.max { $0.frames < $1.frames } ?? outputs[0] }
    /// The recording's loudness: the fullest output's.
    public var loudness: LoudnessMeasurement? { fullestOutput.loudness }
    /// The most frames any one output dropped.
    public var framesDropped: Int { outputs.map(\.framesDropped).max() ?? 0 }
    /// Of the frames dropped by the output that dropped the most, those padded with silence.
    public var framesDroppedPadded: Int { outputs.max { $0.framesDropped < $1.framesDropped }?.framesDroppedPadded ?? 0 }

    public var durationSeconds: Double { format.seconds(forFrames: frames) }

    /// The summary's lines.
    public var lines: [String] {
        let duration = SecondsText.format(durationSeconds, alwaysMilliseconds: true) + " s"
        let milliseconds = { (frames: Int) in SecondsText.milliseconds(format.seconds(forFrames: frames)) }
        let lost = milliseconds(framesLostToOverruns)
        // With padding the parts add up to the loss: padded, plus what a -d recording had no room
        // left for (found after its time was up).
        var padding = ""
        if padsLostTime && framesLostToOverruns > 0 {
            padding = ", \(milliseconds(framesPadded)) ms padded with silence"
            if framesNotPadded > 0 { padding += ", \(milliseconds(framesNotPadded)) ms found too late to pad" }
        }
        // "1 frame", "2 frames": a one-frame recording said "1 frames".
        func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
        // Frames a full ring dropped, and with padding how many of them have silence in their place.
        func dropped(_ output: OutputSummary) -> String {
            let padded = output.framesDroppedPadded
            let padding = !padsLostTime || output.framesDropped == 0 ? ""
                : padded == output.framesDropped ? " (padded with silence)" : " (\(counted(padded, "frame")) padded with silence)"
            return "\(counted(output.framesDropped, "frame")) dropped\(padding)"
        }
        let losses = "\(counted(overruns, "overrun")) (\(lost) ms lost\(padding))"
        let drift = clock?.driftText.map { "; device clock \($0) against the system's" } ?? ""
        let segments = fullestOutput.segments.map { " in \($0) segment\($0 == 1 ? "" : "s")" } ?? ""
        let loudness = self.loudness.map { "; \($0.summaryText)" } ?? ""
        // An output whose file was never named (no audio came for it, or naming it failed), so
        // nothing there was replaced.
        let unwritten = { (output: OutputSummary) in
            "nothing written to \(output.output) (\(output.failure == nil ? "no audio came" : "it could not be named"); nothing there was replaced)"
        }
        if outputs.count == 1, outputs[0].unwrittenPath != nil {
            return ["recorded \(duration), \(unwritten(outputs[0])); \(losses), \(dropped(outputs[0])); \(end)\(drift)"]
        }
        if outputs.count == 1 {
            return ["recorded \(duration)\(segments), \(counted(frames, "frame")), \(counted(bytes, "byte")) to \(output); "
                + "\(losses), \(dropped(outputs[0]))\(loudness); \(end)\(drift)"]
        }
        return ["recorded \(duration)\(segments) to \(outputs.count) outputs; \(losses)\(loudness); \(end)\(drift)"]
            + outputs.map { output in
                if output.unwrittenPath != nil { return "  \(unwritten(output))" }
                let failed = output.failedAtStart ? "failed at the start" : "failed"
                let ending = output.failure.map { "; \(failed): \($0)" } ?? (output.reachedSizeLimit ? "; size limit reached" : "")
                return "  \(output.output) (\(output.codec)): \(counted(output.frames, "frame")), \(counted(output.bytes, "byte")), "
                    + "\(dropped(output))\(ending)"
            }
    }

    public var description: String { lines.joined(separator: "\n") }

    /// The outputs that failed while the recording went on (several outputs only: a single
    /// output's failure is the recording's `end`).
    public var failedOutputs: [OutputSummary] {
        outputs.count == 1 ? [] : outputs.filter { $0.failure != nil }
    }

    /// One line per failure to print: the recording's own (device lost, access revoked, its only
    /// output failed) and each output that failed while the others went on.
    public var failureMessages: [String] {
        var messages = failedOutputs.map { output in
            let othersWentOn = !end.isOutputFailure
            // One that failed at the start has nothing to finalize (its file, if any, was removed).
            return output.failedAtStart || output.unwrittenPath != nil
                ? "output \(output.output) failed\(output.failedAtStart ? " at the start" : ""): \(output.failure!)"
                    + (othersWentOn ? "; the other outputs went on" : "")
                : "output \(output.output) failed: \(output.failure!); it was finalized" + (othersWentOn ? " and the other outputs went on" : "")
        }
        if case .permissionRevoked(let because) = end, outputs.allSatisfy({ $0.segments == 0 || $0.unwrittenPath != nil }) {
            // Armed with no sound yet, or no audio came: there is nothing to finalize.
            messages.append("\(because); hark stopped before anything was recorded")
        } else if let message = end.failureMessage, !(end.isOutputFailure && outputs.count > 1) {
            messages.append(message)
        }
        return messages
    }

    /// The process's exit code: the end's, or 74 (EX_IOERR) when an output failed while the others
    /// went on.
    public var exitCode: Int32 {
        end.exitCode != 0 ? end.exitCode : (failedOutputs.isEmpty ? 0 : 74)
    }
}

/// Seconds as people read them in hark's messages: "10", "0.25", "3.000".
public enum SecondsText {
    /// Millisecond precision; trailing ".000" is left out unless `alwaysMilliseconds`.
    public static func format(_ seconds: Double, alwaysMilliseconds: Bool = false) -> String {
        let milliseconds = Int((seconds * 1000).rounded())
        let fraction = milliseconds % 1000
        if fraction == 0 && !alwaysMilliseconds { return "\(milliseconds / 1000)" }
        return "\(milliseconds / 1000).\(zeroPadded(fraction, width: 3))"
    }

    /// Whole milliseconds, rounded up so that any loss at all never reads as 0.
    public static func milliseconds(_ seconds: Double) -> Int {
        Int((seconds * 1000).rounded(.up))
    }

    /// `value` with leading zeros to `width` digits.
    public static func zeroPadded(_ value: Int, width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
