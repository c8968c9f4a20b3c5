import AudioFormat
import Capture
import Encoding
import RecordPermission

/// Everything that can stop a recording from starting or from finishing well, each with the
/// sysexits-style exit code hark documents.
public enum RecordingError: Error, Equatable, CustomStringConvertible {
    /// The output file cannot be created (before any device is opened).
    case cannotCreateOutput(path: String, reason: String)
    /// The user or the administrator did not allow the microphone (checked after the output is
    /// created and before the device is opened).
    case permissionRefused(AccessRefusal)
    /// The capture device is missing, unavailable, or refuses the parameters.
    case captureDevice(CaptureOpenError)
    /// The encoder could not be set up: the codec refused a setting (70), or writing its header
    /// failed (74, as a write that fails while recording: a full disk, a reader already gone).
    /// `output` names the output when there are several.
    case encoderSetup(EncoderError, output: String?)
    /// Surround Opus without a layout it can use: the device has no channel map (or one naming a
    /// position hark cannot place) and no `--channel-map` named one, or the layout is not one of
    /// mapping family 1's (`unusableOpusLayout`).
    case unusableChannelLayout(String)
    /// `--max-size` below what an output needs to record one period with these settings: its
    /// header, a period, and what its encoder may still hold back at the end (FLAC: a block;
    /// Opus: `--max-delay`). Known only once the device has given its period and the header is
    /// written, so it is found after the device opened; without it, the output would end at once
    /// with no audio and exit 0. `output` names the output when there are several.
    case sizeLimitTooSmall(output: String?, limitBytes: Int, smallestBytes: Int)
    /// `--max-file-time` for an output that is written in place (a FIFO, a device), which cannot
    /// be split into files.
    case cannotSplit(path: String)
    /// A thread could not be started, or memory for the rings could not be had.
    case system(String)
    /// A stop signal came while an output (a FIFO) waited for a program to read it: nothing was
    /// recorded, nobody was asked for consent, and the stop is a normal one (exit 0).
    case stoppedWaitingForReader(path: String, signal: String)

    public var description: String {
        switch self {
        case .cannotCreateOutput(let path, let reason): "cannot create '\(path)': \(reason)"
        case .permissionRefused(let refusal): refusal.message
        case .captureDevice(let error): error.description
        case .encoderSetup(let error, let output): output.map { "output \($0): \(error)" } ?? error.description
        case .unusableChannelLayout(let reason): reason
        case .sizeLimitTooSmall(let output, let limit, let smallest):
            (output.map { "output \($0): " } ?? "") + "--max-size \(Self.sizeText(limit)) cannot hold any audio at these settings; "
                + "it needs at least \((smallest + 1023) / 1024)k (the header, one period, and what the encoder may hold back until it ends)"
        case .system(let reason): reason
        case .cannotSplit(let path): "--max-file-time splits into files, and '\(path)' is not a regular file: a FIFO or a device is written in place, as stdout is"
        case .stoppedWaitingForReader(let path, let signal):
            "stopped by \(signal) while waiting for a program to open '\(path)' for reading: nothing was recorded"
        }
    }

    /// A size as `--max-size` takes it: "500k" when it is whole kibibytes, else bytes.
    static func sizeText(_ bytes: Int) -> String {
        bytes % 1024 == 0 ? "\(bytes / 1024)k" : "\(bytes) bytes"
    }

    /// The process exit code (sysexits.h): 64 EX_USAGE (a layout the user must name, a size limit
    /// too small), 69 EX_UNAVAILABLE, 70 EX_SOFTWARE, 71 EX_OSERR, 73 EX_CANTCREAT, 74 EX_IOERR (a
    /// header that could not be written), 77 EX_NOPERM; 0 for a stop before anything was recorded.
    /// Failures after the start are `RecordingEnd`s (74, or 77 when permission is revoked).
    public var exitCode: Int32 {
        switch self {
        case .cannotCreateOutput: 73
        case .permissionRefused: 77
        case .captureDevice(.notCoveredByGrant): 77
        case .captureDevice: 69
        case .encoderSetup(.writeFailed, _): 74
        case .encoderSetup: 70
        case .unusableChannelLayout, .sizeLimitTooSmall, .cannotSplit: 64
        case .system: 71
        case .stoppedWaitingForReader: 0
        }
    }

    /// The user's `--channel-map` refused for Opus, or nil when Opus can carry it. One or two
    /// channels go as Opus's mono or stereo (mapping family 0), which name no speakers, so any
    /// other one or two (`FC,LFE`) would be lost; three to eight need one of mapping family 1's
    /// layouts. Known from the arguments alone, so the command asks before consent is asked for,
    /// and the session again with the device's word.
    public static func opusRefusal(ofNamed named: ChannelLayout) -> RecordingError? {
        let channels = named.positions.count
        if channels <= 2 {
            return named.isMonoOrLeftRight ? nil : .unusableChannelLayout(
                "\(named) cannot be kept in Opus, whose \(channels)-channel stream means "
                + "\(channels == 1 ? "MONO or FC" : "FL and FR (stereo)"); record FLAC or WAV, which keep it")
        }
        return named.vorbisOrder != nil ? nil : .unusableChannelLayout(
            "\(named) is not one of Opus's surround layouts (RFC 7845 mapping family 1); \(opusLayoutRemedy(channels: channels))")
    }

    /// What to do about a layout Opus cannot carry; the example is the channel count's usual
    /// layout (WAVE's order), one Opus can carry.
    private static func opusLayoutRemedy(channels: Int) -> String {
        let example = ChannelLayout.waveDefault(channels: channels).map(\.description) ?? "FL,FR,FC,LFE,RL,RR"
        return "name one with --channel-map, e.g. \(example), or record FLAC or WAV"
    }

    /// Surround Opus refused for the device's own layout (no `--channel-map`), saying what the
    /// device said (a map, even one with positions hark cannot place, or none) and what to do.
    static func unusableOpusLayout(negotiated: NegotiatedCapture) -> RecordingError {
        let channels = negotiated.format.channels
        let example = ChannelLayout.waveDefault(channels: channels).map(\.description) ?? "FL,FR,FC,LFE,RL,RR"
        let remedy = opusLayoutRemedy(channels: channels)
        if let layout = negotiated.channelLayout {
            return .unusableChannelLayout("the device's channel map \(layout) is not one of Opus's surround layouts (RFC 7845 mapping family 1); \(remedy)")
        }
        if let map = negotiated.deviceChannelMap {
            return .unusableChannelLayout("the device's channel map \(map) names a position hark cannot place in Opus's surround layouts; \(remedy)")
        }
        return .unusableChannelLayout("the device does not say which speaker each of its \(channels) channels is (ALSA has no channel map for it); name them with --channel-map, e.g. \(example)")
    }
}
