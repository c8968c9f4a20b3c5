import AudioFormat
import Capture
import Encoding

/// The codec and its settings.
public enum CodecSettings: Sendable, Equatable {
    case flac(FLACSettings)
    case opus(OpusSettings)
    /// Uncompressed WAV (RF64 past 4 GiB) with these tags as LIST/INFO.
    case wav(tags: StreamTags)
    /// The captured samples as they are: no header, no tags.
    case raw

    /// The user's tags.
    public var tags: StreamTags {
        switch self {
        case .flac(let settings): settings.tags
        case .opus(let settings): settings.tags
        case .wav(let tags): tags
        case .raw: StreamTags()
        }
    }

    /// The same settings with `tags` in place of the user's.
    func replacingTags(with tags: StreamTags) -> CodecSettings {
        switch self {
        case .flac(var settings):
            settings.tags = tags
            return .flac(settings)
        case .opus(var settings):
            settings.tags = tags
            return .opus(settings)
        case .wav: return .wav(tags: tags)
        case .raw: return .raw
        }
    }

    /// "flac", "opus", "wav" or "raw".
    public var name: String {
        switch self {
        case .flac: "flac"
        case .opus: "opus"
        case .wav: "wav"
        case .raw: "raw"
        }
    }
}

/// One output of a recording: where it goes, its codec, and its own limits.
public struct OutputConfiguration: Sendable, Equatable {
    public var destination: OutputDestination
    public var codec: CodecSettings
    /// Start a new file every this many seconds (`--max-file-time`); file outputs only.
    public var maxFileSeconds: Double?
    /// End this output once it reaches this many bytes (`--max-size`).
    public var maxBytes: Int?
    /// The ENCODER tag written into the stream, e.g. "hark 0.1.0 (libFLAC 1.4.2)".
    public var encoderName: String
    /// Whether the file must not replace one that is there (a recording added to the recordings
    /// library): it takes the next free "-2", "-3" name instead, even against another recorder
    /// that chose the same name at the same moment (`OutputTarget`).
    public var keepsExisting = false

    public init(destination: OutputDestination, codec: CodecSettings, maxFileSeconds: Double? = nil,
                maxBytes: Int? = nil, encoderName: String = "hark") {
        self.destination = destination
        self.codec = codec
        self.maxFileSeconds = maxFileSeconds
        self.maxBytes = maxBytes
        self.encoderName = encoderName
    }
}

/// Everything a recording needs to know before it starts.
public struct RecordingConfiguration: Sendable {
    public var capture: CaptureRequest
    /// Where the audio goes: one or more outputs, each fed the whole capture (`-o` given more
    /// than once), in the order given.
    public var outputs: [OutputConfiguration]
    /// Stop after this many seconds (`-d`), or run until a stop signal.
    public var durationSeconds: Double?
    /// Seconds of audio each output's ring between capture and encoder holds (rounded up to a
    /// power of two frames). Several seconds, so a slow disk or a stalled reader never costs a frame.
    public var ringSeconds: Double
    /// SCHED_FIFO priority tried for the capture thread; nil keeps normal scheduling.
    public var captureRealtimePriority: Int32?
    /// Fill time the source lost (overruns) with silence, so the file's timeline matches the clock.
    public var padsLostTime: Bool
    /// Which speaker each channel is (`--channel-map`); the device's own map when nil. Kept in
    /// `capture`, which asks the sound server for exactly these speakers.
    public var channelLayout: ChannelLayout? {
        get { capture.channelLayout }
        set { capture.channelLayout = newValue }
    }
    /// Measure per-channel levels for a status line (a pass over every sample of the first
    /// output, on its encoder thread).
    public var measuresLevels: Bool
    /// Add the DATE and HARK_CAPTURE tags (see `AutomaticTags`); false for `--no-auto-tags`.
    public var addsDateAndCaptureTags: Bool
    /// Record only while there is sound (`--start-above` and its companions); nil records all.
    public var soundActivation: SoundActivation?
    /// Measure each file's loudness for the summary, the log and its gain tags (`LoudnessLedger`);
    /// false for `--no-loudness`, which saves its CPU (about a tenth of FLAC's at 48 kHz stereo, see README).
    public var measuresLoudness = true

    /// 2.5 s, which the power-of-two rounding makes 2.73 s at 48 kHz (2.97 s at 44.1 kHz): with the
    /// 0.5 s device buffer and the pipe's or page cache's own slack, a reader or disk may stall for
    /// 3 s before a frame is dropped. 4 s rounded up to 5.46 s and a pre-faulted 1 MiB; halving it
    /// brought a 48 kHz stereo Opus recording's peak RSS under 16 MiB. `--ring-seconds` buys more.
    public static let defaultRingSeconds = 2.5
    public static let defaultCaptureRealtimePriority: Int32 = 50

    public init(
        capture: CaptureRequest, outputs: [OutputConfiguration], durationSeconds: Double? = nil,
        ringSeconds: Double = RecordingConfiguration.defaultRingSeconds,
        captureRealtimePriority: Int32? = RecordingConfiguration.defaultCaptureRealtimePriority,
        addsDateAndCaptureTags: Bool = true, padsLostTime: Bool = false,
        measuresLevels: Bool = false, channelLayout: ChannelLayout? = nil, soundActivation: SoundActivation? = nil
    ) {
        precondition(!outputs.isEmpty, "a recording needs an output")
        self.soundActivation = soundActivation
        self.capture = capture
        self.outputs = outputs
        self.durationSeconds = durationSeconds
        self.ringSeconds = ringSeconds
        self.captureRealtimePriority = captureRealtimePriority
        self.addsDateAndCaptureTags = addsDateAndCaptureTags
        self.padsLostTime = padsLostTime
        self.measuresLevels = measuresLevels
        if let channelLayout { self.capture.channelLayout = channelLayout }
    }

    /// A recording to one output.
    public init(
        capture: CaptureRequest, output: OutputDestination, codec: CodecSettings, durationSeconds: Double? = nil,
        ringSeconds: Double = RecordingConfiguration.defaultRingSeconds,
        captureRealtimePriority: Int32? = RecordingConfiguration.defaultCaptureRealtimePriority,
        encoderName: String = "hark", addsDateAndCaptureTags: Bool = true, padsLostTime: Bool = false,
        measuresLevels: Bool = false, maxFileSeconds: Double? = nil, maxBytes: Int? = nil,
        channelLayout: ChannelLayout? = nil
    ) {
        self.init(
            capture: capture,
            outputs: [OutputConfiguration(destination: output, codec: codec, maxFileSeconds: maxFileSeconds,
                                          maxBytes: maxBytes, encoderName: encoderName)],
            durationSeconds: durationSeconds, ringSeconds: ringSeconds, captureRealtimePriority: captureRealtimePriority,
            addsDateAndCaptureTags: addsDateAndCaptureTags, padsLostTime: padsLostTime, measuresLevels: measuresLevels,
            channelLayout: channelLayout)
    }

    /// The exact number of frames `-d` asks for.
    public var frameLimit: Int? {
        durationSeconds.map { capture.format.frames(forSeconds: $0) }
    }
}
