import AudioFormat
import Encoding

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

    public var description: String {
        switch self {
        case .sizeLimitReached: "size limit reached"
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
        case .signal, .durationReached, .sizeLimitReached: nil
        case .deviceLost(let reason): "capture device lost: \(reason)"
        case .outputFailed(let error): error.description
        case .permissionRevoked(let because): "\(because); the recording was stopped and finalized"
        }
    }

    /// 0 for a normal stop; 74 (EX_IOERR) when the device or the output failed; 77 (EX_NOPERM)
    /// when access was revoked.
    public var exitCode: Int32 {
        switch self {
        case .signal, .durationReached, .sizeLimitReached: 0
        case .deviceLost, .outputFailed: 74
        case .permissionRevoked: 77
        }
    }

    /// A short name for the access log: duration, SIGINT, device lost, output failed, revoked.
    public var logName: String {
        switch self {
        case .signal(let name): name
        case .durationReached: "duration"
        case .sizeLimitReached: "size limit"
        case .deviceLost: "device lost"
        case .outputFailed: "output failed"
        case .permissionRevoked: "revoked"
        }
    }
}

/// What a finished recording holds, for the one-line summary on stderr.
public struct RecordingSummary: Sendable, Equatable, CustomStringConvertible {
    public let format: PCMFormat
    /// The files written, in order (one unless the recording was split), or "stdout".
    public let outputs: [String]
    /// The outputs as one text: "talk.flac", or "talk.flac, talk-2.flac".
    public var output: String { outputs.joined(separator: ", ") }
    /// Frames in the output.
    public let frames: Int
    public let bytes: Int
    public let overruns: Int
    /// Frames the source lost during overruns.
    public let framesLostToOverruns: Int
    /// Whether lost time was to be padded with silence (`--pad-overruns`).
    public let padsLostTime: Bool
    /// Frames of silence that stand in for lost ones (`--pad-overruns`); part of `frames`. Equal to
    /// `framesLostToOverruns` unless a loss was found when less than its length was left of a `-d`
    /// recording: the recording then ends with the silence that fits.
    public let framesPadded: Int
    /// Lost frames for which no silence is in the file (all of them without `--pad-overruns`).
    public var framesNotPadded: Int { framesLostToOverruns - framesPadded }
    /// Frames dropped because the ring was full.
    public let framesDropped: Int
    /// Frames the capture thread put into the ring (read plus padded). Once the encoder has
    /// drained the ring, `frames` equals it unless the output failed first.
    public let framesCaptured: Int
    public let end: RecordingEnd

    public var durationSeconds: Double { format.seconds(forFrames: frames) }

    public var description: String {
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
        return "recorded \(duration), \(frames) frames, \(bytes) bytes to \(output); "
            + "\(overruns) overruns (\(lost) ms lost\(padding)), \(framesDropped) frames dropped; \(end)"
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
